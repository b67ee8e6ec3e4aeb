/* The project's default pipeline, used when a job gives no config. */
#include "kernels/pipeline.h"

/* Written in HistoQC's config.ini format so that a lab can save it, edit
 * it and hand it back. It lists only the steps this project implements;
 * HistoQC's other default steps join it as they are implemented. */
static const char default_config[] =
    "# Default QC pipeline, in HistoQC's config.ini format.\n"
    "#\n"
    "# [pipeline] steps lists the steps in the order they run, one per\n"
    "# indented line. A step's parameters go in a section of the same\n"
    "# name; a suffix after ':' (Module.step:name) runs the same step again\n"
    "# with its own section. Lines starting with # or ; are comments.\n"
    "#\n"
    "# Only the steps implemented so far are listed. HistoQC's tissue,\n"
    "# pen, blur, bubble, morphology, histogram, brightness/contrast,\n"
    "# deconvolution and image-saving steps are not yet available.\n"
    "[pipeline]\n"
    "steps= BasicModule.getBasicStats\n"
    "\n"
    "# Settings every step shares.\n"
    "[BaseImage.BaseImage]\n"
    "# size of the image the steps analyse: a magnification (1.25x), a\n"
    "# downscale factor (0.1), a pyramid level (2) or a longer side in\n"
    "# pixels (500)\n"
    "image_work_size = 1.25x\n"
    "\n"
    "# kept for HistoQC configs; HistoQC has not implemented it either\n"
    "confirm_base_mag: False\n"
    "\n"
    "# how a step reports the tissue it removes: relative2mask (fraction\n"
    "# of the remaining tissue), absolute (pixels) or relative2image\n"
    "mask_statistics = relative2mask\n"
    "\n"
    "# a slide whose metadata has no magnification is recorded with\n"
    "# base_mag NA; uncomment to assume one for such slides\n"
    "#base_mag = 40\n"
    "\n"
    "# Scanner vendor, pyramid levels, size, microns per pixel, comment.\n"
    "[BasicModule.getBasicStats]\n"
    "image_work_size = 1.25x\n";

const char *
qc_pipeline_default_config (void)
{
    return default_config;
}
