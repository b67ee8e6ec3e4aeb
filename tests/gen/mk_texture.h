/* The H&E images that tissue is painted with. Each image becomes a mip
 * chain (halved by 2x2 averages) so that every pyramid level samples a
 * texture whose texels are about its own pixel size, and, when blur or
 * bubbles are painted, a second chain of the image blurred with the
 * slide's blur sigma (blurring the source then tiling it equals blurring
 * the tiled tissue, because the tiling only mirrors and shifts), and when
 * focus faults are, a third blurred with their finer sigma. */
#ifndef MK_TEXTURE_H
#define MK_TEXTURE_H

#include <stddef.h>
#include <stdint.h>

#define MK_TEX_MAX 8
#define MK_MIP_MAX 12
#define MK_TEX_NAME 256
/* The textures are 40x scans: a texel is 0.25 um. */
#define MK_TEX_MPP 0.25

typedef struct {
    int w, h;
    uint8_t *sharp;     /* w*h*3 RGB */
    uint8_t *blurred;   /* same size, or NULL when no blur was asked for */
    uint8_t *soft;      /* focus faults' blur, or NULL likewise */
    /* Transposed copies (h wide, w high) of the mips painting reads, so
     * that patches turned by 90 degrees still read memory row by row;
     * NULL for mips no level reads. */
    uint8_t *sharp_t, *blurred_t, *soft_t;
} mk_mip_t;

typedef struct {
    char path[MK_TEX_NAME];
    int loaded;
    int nmips;
    mk_mip_t mip[MK_MIP_MAX];
} mk_texture_t;

typedef struct {
    int n;
    mk_texture_t tex[MK_TEX_MAX];
} mk_texset_t;

/* Finds the texture images in dir (no pixels read yet): the project's
 * known high-magnification H&E images when present, else every *.png in
 * name order. 0, or -1 with err when there are none. */
int mk_texset_open (mk_texset_t *set, const char *dir, char *err,
                    size_t errlen);
/* Reads the textures whose bit is set in used and builds their chains;
 * blur_texels > 0 also builds blurred chains with that sigma in mip-0
 * texels, and focus_texels > 0 the soft chains likewise. Bit m of mips
 * marks mip m as read by painting (a bit past a texture's last mip
 * stands for its last mip), which gets transposed copies. 0 or -1 with
 * err. */
int mk_texset_load (mk_texset_t *set, unsigned used, unsigned mips,
                    double blur_texels, double focus_texels, char *err,
                    size_t errlen);

/* The mip painting reads at downsample d (level-0 px per pixel) with
 * tex_scale mip-0 texels per level-0 px, before clamping to a texture's
 * last mip: the one whose texels are closest to, not larger than, a
 * pixel. */
int mk_mip_for (double d, double tex_scale);
void mk_texset_free (mk_texset_t *set);

#endif
