/* SaveModule.saveThumbnails: the two thumbnails HistoQC's web UI shows:
 * _thumb.png, the slide at image_work_size (default 1.25x), and
 * _thumb_small.png at small_dim (default 500: the longer side in pixels;
 * like HistoQC, any image_work_size form is taken). The big one comes
 * from the run's image cache, so the 1.25x one is the image the masks
 * were made from; the small one is that image shrunk (area average)
 * where HistoQC reads the slide again, unless it would be larger. */
#include <stdio.h>

#include "kernels/modules/masks.h"
#include "kernels/run/run.h"

static int
read_params (const qc_config_section_t *sec, const char **big,
             const char **small, char *err, size_t errlen)
{
    if (qc_config_get_string (sec, "image_work_size", "1.25x", big, err, errlen)
        || qc_config_get_string (sec, "small_dim", "500", small, err, errlen))
        return -1;
    qc_work_size_t ws;
    const char *bad = qc_work_size_parse (*big, &ws) ? "image_work_size"
                    : qc_work_size_parse (*small, &ws) ? "small_dim" : NULL;
    if (bad) {
        snprintf (err, errlen, "[%s] %s = '%.64s' (line %d): not a "
                  "magnification (1.25x), downscale factor (0.1), level (2) "
                  "or size in pixels (500)", sec ? qc_config_section_name (sec)
                  : "SaveModule.saveThumbnails", bad, bad[0] == 'i' ? *big
                  : *small, qc_config_key_line (sec, bad));
        return -1;
    }
    return 0;
}

static int
check (const qc_config_section_t *sec, char *err, size_t errlen)
{
    const char *a, *b;
    return read_params (sec, &a, &b, err, errlen);
}

static int
run (qc_run_t *run)
{
    const char *big, *small;
    char err[256];
    if (read_params (run->params, &big, &small, err, sizeof err))
        return qc_run_fail (run, "%s", err);
    const qc_rgb_t *img = qc_run_image (run, big);
    if (!img || qc_run_save_rgb (run, "thumb", img))
        return -1;
    /* the small one from the big one, not read again (a second read
     * buys nothing here): a picture for the web UI, no numbers */
    img = qc_run_image_shrunk (run, small, img);
    if (!img || qc_run_save_rgb (run, "thumb_small", img))
        return -1;
    return 0;
}

static const char *const params[] = { "image_work_size", "small_dim", NULL };
static const char *const columns[] = { NULL };

const qc_module_t qc_module_save_thumbnails = {
    .name = "SaveModule.saveThumbnails",
    .run = run,
    .check = check,
    .params = params,
    .columns = columns,
};
