/* The module table; see module.h. */
#include "kernels/modules/module.h"

#include <string.h>

/* Every step the pipeline can run. Add a module here (one line) once its
 * descriptor exists. BaseImage is not listed: it is not a step. */
static const qc_module_t *const table[] = {
    &qc_module_basic_stats,
    &qc_module_count_pieces,
    /* group: masks (LightDark, Morphology, BasicModule.final*, SaveModule) */
    &qc_module_ld_percent,
    &qc_module_ld_otsu,
    &qc_module_ld_minfilter,
    &qc_module_ld_brightest,
    &qc_module_ld_folds,
    &qc_module_ld_equalise,
    &qc_module_morph_fatlike,
    &qc_module_morph_holes,
    &qc_module_morph_small,
    &qc_module_final_spur,
    &qc_module_final_area,
    &qc_module_final_compute,
    &qc_module_save_final_mask,
    &qc_module_save_macro,
    &qc_module_save_thumbnails,
    &qc_module_save_mask,
    &qc_module_save_geojson,
    /* group: blur, bubbles, texture */
    &qc_module_bubble_smoothness,
    &qc_module_blur_histoqc,
    &qc_module_blur_local,
    &qc_module_blur_focus,
    &qc_module_texture,
    /* group: histogram, brightness, contrast, deconvolution */
    &qc_module_hist_compare,
    &qc_module_hist_histogram,
    &qc_module_bright_contrast,
    &qc_module_bright_gray,
    &qc_module_bright_channels,
    &qc_module_deconv_stains,
    /* group: classification */
    &qc_module_classify_by_example,
    &qc_module_classify_pixelwise,
    /* group: tiles */
    &qc_module_tile_extract,
    /* group: annotations */
    &qc_module_annot_mask,
    &qc_module_annot_xml_mask,
    &qc_module_annot_geojson_mask,
};

/* HistoQC's step names (its modules' public functions). Names here that
 * the table lacks are refused as "not implemented yet" rather than as
 * typos, so a lab running HistoQC's own config learns what is missing. */
static const char *const histoqc_steps[] = {
    "BasicModule.getBasicStats",
    "BasicModule.finalComputations",
    "BasicModule.finalProcessingSpur",
    "BasicModule.finalProcessingArea",
    "BasicModule.countTissuePieces",
    "AnnotationModule.getParams",
    "AnnotationModule.saveAnnotationMask",
    "TileExtractionModule.extract",
    "BubbleRegionByRegion.roiWise",
    "ClassificationModule.pixelWise",
    "ClassificationModule.byExampleWithFeatures",
    "LightDarkModule.getIntensityThresholdPercent",
    "LightDarkModule.getIntensityThresholdOtsu",
    "LightDarkModule.removeBrightestPixels",
    "LightDarkModule.minimumPixelIntensityNeighborhoodFiltering",
    "LightDarkModule.saveEqualisedImage",
    "BubbleRegionByRegion.detectSmoothness",
    "MorphologyModule.removeFatlikeTissue",
    "MorphologyModule.fillSmallHoles",
    "MorphologyModule.removeSmallObjects",
    "BlurDetectionModule.identifyBlurryRegions",
    "HistogramModule.compareToTemplates",
    "HistogramModule.getHistogram",
    "BrightContrastModule.getContrast",
    "BrightContrastModule.getBrightnessGray",
    "BrightContrastModule.getBrightnessByChannelinColorSpace",
    "DeconvolutionModule.separateStains",
    "SaveModule.saveFinalMask",
    "SaveModule.saveMacro",
    "SaveModule.saveThumbnails",
    "SaveModule.saveMask",
    "SaveModule.saveMask2Geojson",
    "LocalTextureEstimationModule.estimateGreyComatrixFeatures",
};

/* Sections HistoQC's own bundled configs (config.ini and the others)
 * carry for functions HistoQC removed long ago: legal in a config, not
 * steps. */
static const char *const histoqc_old_sections[] = {
    "LightDarkModule.getTissuePercent",
    "LightDarkModule.getDarkTissuePercent",
};

/* Steps of HistoQC's first versions (2017-2021; its history, read
 * function by function), which its releases since stop on (the module
 * has no such function): what to write now, so that a lab's old
 * config is told. */
static const struct {
    const char *name;
    const char *now;
} histoqc_renamed[] = {
    {"BasicModule.getMag", "remove the line: the magnification is read before the first step "
     "(HistoQC since 2018; [BaseImage.BaseImage] base_mag gives it for a slide that "
     "lacks it)"},
    {"BasicModule.finalProcessing", "write BasicModule.finalProcessingSpur and "
     "BasicModule.finalProcessingArea (since 2018)"},
    {"BrightContrastModule.getBrightness", "write BrightContrastModule.getBrightnessGray, and "
     "BrightContrastModule.getBrightnessByChannelinColorSpace:RGB for the channels "
     "(since 2018)"},
    {"DeconvolutionModule.seperateStains", "write DeconvolutionModule.separateStains (spelt so "
     "since 2021), its section renamed with it"},
    {"LightDarkModule.getTissuePercent", "write LightDarkModule.getIntensityThresholdPercent:"
     "tissue with upper_threshold (since 2018)"},
    {"LightDarkModule.getDarkTissuePercent", "write LightDarkModule.getIntensityThresholdPercent:"
     "darktissue with upper_threshold and invert: True (since 2018)"},
    {"SaveModule.saveImages", "write SaveModule.saveFinalMask (since 2018)"},
    {"SaveModule.saveThumbnail", "write SaveModule.saveThumbnails (since 2018)"},
    {"PenMarkingModule.identifyPenMarking", "write ClassificationModule.byExampleWithFeatures:"
     "pen_markings, or ClassificationModule.pixelWise with the same tsv_file (since 2018)"},
    {"ClassificationModule.byExample", "write ClassificationModule.byExampleWithFeatures with "
     "features: rgb (since 2018)"},
    {"BubbleRegionByRegion.pixelWise", "write BubbleRegionByRegion.detectSmoothness (HistoQC's "
     "later roiWise is not run here)"},
};

#define COUNT(a) (sizeof (a) / sizeof *(a))

static int
name_is (const char *candidate, const char *name, size_t len)
{
    return strlen (candidate) == len && memcmp (candidate, name, len) == 0;
}

const qc_module_t *
qc_module_find (const char *name, size_t len)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < COUNT (table); i++)
        if (name_is (table[i]->name, name, len))
            return table[i];
    return NULL;
}

int
qc_module_is_histoqc (const char *name, size_t len)
{
    if (!name)
        return 0;
    for (size_t i = 0; i < COUNT (histoqc_steps); i++)
        if (name_is (histoqc_steps[i], name, len))
            return 1;
    return 0;
}

const char *
qc_module_renamed (const char *name, size_t len)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < COUNT (histoqc_renamed); i++)
        if (name_is (histoqc_renamed[i].name, name, len))
            return histoqc_renamed[i].now;
    return NULL;
}

int
qc_module_section_known (const char *section)
{
    if (!section)
        return 0;
    const char *colon = strchr (section, ':');
    size_t len = colon ? (size_t) (colon - section) : strlen (section);
    if (qc_module_find (section, len) || qc_module_is_histoqc (section, len))
        return 1;
    for (size_t i = 0; i < COUNT (histoqc_old_sections); i++)
        if (name_is (histoqc_old_sections[i], section, len))
            return 1;
    if (qc_module_renamed (section, len))
        return 1;
    return 0;
}

size_t
qc_module_count (void)
{
    return COUNT (table);
}

const qc_module_t *
qc_module_at (size_t index)
{
    return index < COUNT (table) ? table[index] : NULL;
}

int
qc_module_accepts (const qc_module_t *module, const char *key)
{
    if (!module || !key || !module->params)
        return 0;
    for (const char *const *p = module->params; *p; p++)
        if (strcmp (*p, key) == 0)
            return 1;
    return 0;
}
