/* Compile-time check that nvjpeg_api.h's declarations are nvJPEG's
 * own: built by the Makefile where the toolkit has nvjpeg.h (or
 * NVJPEG_H names one), never linked, never run. Each enum value the
 * backend uses, the image's layout, and every function of
 * QC_NVJPEG_FUNCTIONS against the library's prototype: as many
 * parameters, each the same type or one passed the same way (an enum
 * of ours for theirs, void * for an allocator's pointer, a structure of
 * the same size). A mismatch stops the build with its name. */
#include <cstddef>
#include <type_traits>

#include <nvjpeg.h>

#include "kernels/ops/cuda/nvjpeg_api.h"

namespace {

/* Same value, one line each. */
#define SAME_VALUE(ours, theirs)                                                  \
    static_assert ((long long) (ours) == (long long) (theirs), #ours " is not " #theirs)

SAME_VALUE (QC_NVJPEG_MAX_COMPONENT, NVJPEG_MAX_COMPONENT);
SAME_VALUE (QC_NVJPEG_STATUS_SUCCESS, NVJPEG_STATUS_SUCCESS);
SAME_VALUE (QC_NVJPEG_STATUS_NOT_INITIALIZED, NVJPEG_STATUS_NOT_INITIALIZED);
SAME_VALUE (QC_NVJPEG_STATUS_INVALID_PARAMETER, NVJPEG_STATUS_INVALID_PARAMETER);
SAME_VALUE (QC_NVJPEG_STATUS_BAD_JPEG, NVJPEG_STATUS_BAD_JPEG);
SAME_VALUE (QC_NVJPEG_STATUS_JPEG_NOT_SUPPORTED, NVJPEG_STATUS_JPEG_NOT_SUPPORTED);
SAME_VALUE (QC_NVJPEG_STATUS_ALLOCATOR_FAILURE, NVJPEG_STATUS_ALLOCATOR_FAILURE);
SAME_VALUE (QC_NVJPEG_STATUS_EXECUTION_FAILED, NVJPEG_STATUS_EXECUTION_FAILED);
SAME_VALUE (QC_NVJPEG_STATUS_ARCH_MISMATCH, NVJPEG_STATUS_ARCH_MISMATCH);
SAME_VALUE (QC_NVJPEG_STATUS_INTERNAL_ERROR, NVJPEG_STATUS_INTERNAL_ERROR);
SAME_VALUE (QC_NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED,
            NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED);
SAME_VALUE (QC_NVJPEG_STATUS_INCOMPLETE_BITSTREAM, NVJPEG_STATUS_INCOMPLETE_BITSTREAM);
SAME_VALUE (QC_NVJPEG_CSS_444, NVJPEG_CSS_444);
SAME_VALUE (QC_NVJPEG_CSS_422, NVJPEG_CSS_422);
SAME_VALUE (QC_NVJPEG_CSS_420, NVJPEG_CSS_420);
SAME_VALUE (QC_NVJPEG_CSS_440, NVJPEG_CSS_440);
SAME_VALUE (QC_NVJPEG_CSS_411, NVJPEG_CSS_411);
SAME_VALUE (QC_NVJPEG_CSS_410, NVJPEG_CSS_410);
SAME_VALUE (QC_NVJPEG_CSS_GRAY, NVJPEG_CSS_GRAY);
SAME_VALUE (QC_NVJPEG_CSS_410V, NVJPEG_CSS_410V);
SAME_VALUE (QC_NVJPEG_CSS_UNKNOWN, NVJPEG_CSS_UNKNOWN);
SAME_VALUE (QC_NVJPEG_OUTPUT_UNCHANGED, NVJPEG_OUTPUT_UNCHANGED);
SAME_VALUE (QC_NVJPEG_BACKEND_DEFAULT, NVJPEG_BACKEND_DEFAULT);
SAME_VALUE (QC_NVJPEG_BACKEND_HYBRID, NVJPEG_BACKEND_HYBRID);
SAME_VALUE (QC_NVJPEG_BACKEND_GPU_HYBRID, NVJPEG_BACKEND_GPU_HYBRID);
SAME_VALUE (QC_NVJPEG_BACKEND_HARDWARE, NVJPEG_BACKEND_HARDWARE);
SAME_VALUE (QC_NVJPEG_FLAGS_DEFAULT, NVJPEG_FLAGS_DEFAULT);
SAME_VALUE (QC_NVJPEG_FLAGS_BITSTREAM_STRICT, NVJPEG_FLAGS_BITSTREAM_STRICT);
SAME_VALUE (QC_NVJPEG_PROPERTY_MAJOR, MAJOR_VERSION);
SAME_VALUE (QC_NVJPEG_PROPERTY_MINOR, MINOR_VERSION);
SAME_VALUE (QC_NVJPEG_PROPERTY_PATCH, PATCH_LEVEL);
static_assert (sizeof (qc_nvjpeg_status_t) == sizeof (nvjpegStatus_t), "status size");
static_assert (sizeof (qc_nvjpeg_css_t) == sizeof (nvjpegChromaSubsampling_t), "css size");

/* the image nvJPEG writes through */
static_assert (sizeof (qc_nvjpeg_image_t) == sizeof (nvjpegImage_t), "image size");
static_assert (offsetof (qc_nvjpeg_image_t, channel) == offsetof (nvjpegImage_t, channel),
               "image channel");
static_assert (offsetof (qc_nvjpeg_image_t, pitch) == offsetof (nvjpegImage_t, pitch),
               "image pitch");
static_assert (sizeof (((qc_nvjpeg_image_t *) 0)->pitch)
                   == sizeof (((nvjpegImage_t *) 0)->pitch),
               "image pitch width");

/* ---- parameters passed alike ---- */

/* A (ours) is passed as B (theirs): the same type; integers or enums of
 * one size; pointers of the same constness to alike types, void * for
 * any; structures of one size (their fields are checked above). if
 * constexpr: a branch not taken is not instantiated (sizeof of an
 * opaque handle's structure would not compile). */
template <class A, class B>
constexpr bool
alike (void)
{
    using std::is_const;
    using std::remove_cv_t;
    using std::remove_pointer_t;
    if constexpr (std::is_same<A, B>::value) {
        return true;
    } else if constexpr (std::is_pointer<A>::value && std::is_pointer<B>::value) {
        using PA = remove_pointer_t<A>;
        using PB = remove_pointer_t<B>;
        if constexpr (is_const<PA>::value != is_const<PB>::value)
            return false;
        else if constexpr (std::is_void<remove_cv_t<PA>>::value)
            return true;
        else
            return alike<remove_cv_t<PA>, remove_cv_t<PB>> ();
    } else if constexpr ((std::is_enum<A>::value || std::is_integral<A>::value)
                         && (std::is_enum<B>::value || std::is_integral<B>::value)) {
        return sizeof (A) == sizeof (B);
    } else if constexpr (std::is_class<A>::value && std::is_class<B>::value) {
        return sizeof (A) == sizeof (B);
    } else {
        return false;
    }
}

template <class Ours, class Theirs> struct same_call : std::false_type {};
template <class R1, class... A1, class R2, class... A2>
struct same_call<R1 (*) (A1...), R2 (A2...)> {
    static constexpr bool
    params (void)
    {
        if constexpr (sizeof...(A1) != sizeof...(A2))
            return false;
        else
            return (true && ... && alike<A1, A2> ());
    }
    static constexpr bool value = alike<R1, R2> () && params ();
};

/* every function of the table */
#define SAME_CALL(name, field, ret, params)                                     \
    static_assert (same_call<decltype (qc_nvjpeg_api_t::field),                 \
                             decltype (::name)>::value,                         \
                   #name ": nvjpeg_api.h's parameters are not the library's");
QC_NVJPEG_FUNCTIONS (SAME_CALL)

} // namespace
