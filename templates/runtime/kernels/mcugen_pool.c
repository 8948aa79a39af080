#include "mcugen_pool.h"

#include <stddef.h>
#include <string.h>

#include "mcugen_fixedpoint.h"
#include "mcugen_platform.h" /* MCUGEN_FAST_DSP, MCUGEN_FAST_MVE */

#if defined(MCUGEN_FAST_DSP)
#include <arm_acle.h>
#elif defined(MCUGEN_FAST_MVE)
#include <arm_mve.h>
#endif

/* The in-bounds part [start, end) of a window of `size` taps starting at `origin`. */
typedef struct {
    int32_t start;
    int32_t end;
} tap_range;

static tap_range clip_window(int32_t origin, int32_t size, int32_t extent)
{
    tap_range range;
    range.start = origin < 0 ? -origin : 0;
    range.end = extent - origin < size ? extent - origin : size;
    return range;
}

static mcugen_status check_args(const mcugen_pool_params *params, const mcugen_dims *input_dims,
                                const void *input, const mcugen_dims *output_dims,
                                const void *output)
{
    if (params == NULL || input_dims == NULL || input == NULL || output_dims == NULL ||
        output == NULL) {
        return MCUGEN_ARG_ERROR;
    }
    if (params->stride.w < 1 || params->stride.h < 1 || params->filter.w < 1 ||
        params->filter.h < 1 || params->activation.min > params->activation.max ||
        input_dims->n != output_dims->n || input_dims->c != output_dims->c) {
        return MCUGEN_ARG_ERROR;
    }
    return MCUGEN_OK;
}

/* Round-half-away-from-zero division of a window sum by its tap count, as TFLite does. */
static int32_t rounded_average(int32_t sum, int32_t count)
{
    return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

/* One output pixel's window: its first in-bounds tap (channel 0), rows x cols taps, `pitch`
 * elements from one row of the image to the next, `channels` from one tap to the next. */
typedef struct {
    int32_t rows;
    int32_t cols;
    int32_t pitch;
    int32_t channels;
} pool_window;

/* --- int8 fast paths: the channels of a pixel in vectors --------------------------------- */

#if defined(MCUGEN_FAST_DSP)

/* SXTAB16 of x rotated right by 8: bytes 1 and 3 sign-extended and added to acc's halfwords. */
static inline int32_t sxtab16_ror8(int32_t acc, int32_t x)
{
#if defined(__GNUC__)
    int32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(x));
    return r;
#else
    const uint32_t u = (uint32_t)x;
    return __sxtab16(acc, (int32_t)((u >> 8) | (u << 24)));
#endif
}

static inline int32_t load32(const int8_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof(v)); /* an LDR: unaligned access is fine on Armv7E-M */
    return v;
}

/* Average, eight channels at a time: SXTAB16 sums the even and the odd channels of a word in
 * halfwords, exact for windows of at most 256 taps (|sum| <= 256 * 128). Returns the
 * channels done (a multiple of 8; 0 for larger windows). */
static int32_t avg_pixel_fast(const int8_t *tap, const pool_window *win, mcugen_activation act,
                              int8_t *out)
{
    const int32_t count = win->rows * win->cols;
    int32_t c = 0;
    for (; count <= 256 && c + 8 <= win->channels; c += 8) {
        int32_t even0 = 0, odd0 = 0, even1 = 0, odd1 = 0;
        const int8_t *row = tap + c;
        for (int32_t fy = win->rows; fy > 0; --fy, row += win->pitch) {
            const int8_t *p = row;
            for (int32_t fx = win->cols; fx > 0; --fx, p += win->channels) {
                const int32_t w0 = load32(p), w1 = load32(p + 4);
                even0 = __sxtab16(even0, w0);
                odd0 = sxtab16_ror8(odd0, w0);
                even1 = __sxtab16(even1, w1);
                odd1 = sxtab16_ror8(odd1, w1);
            }
        }
        const int32_t sums[8] = {(int16_t)even0, (int16_t)odd0, even0 >> 16, odd0 >> 16,
                                 (int16_t)even1, (int16_t)odd1, even1 >> 16, odd1 >> 16};
        for (int32_t k = 0; k < 8; ++k) {
            out[c + k] = (int8_t)mcugen_clamp(rounded_average(sums[k], count), act.min, act.max);
        }
    }
    return c;
}

/* Maximum, four channels at a time: SSUB8 sets the GE flags of the bytes where the tap is
 * not below the running maximum, SEL takes them. */
static int32_t max_pixel_fast(const int8_t *tap, const pool_window *win, mcugen_activation act,
                              int8_t *out)
{
    const uint32_t low = (uint8_t)act.min * 0x01010101u, high = (uint8_t)act.max * 0x01010101u;
    int32_t c = 0;
    for (; c + 4 <= win->channels; c += 4) {
        uint32_t max = low; /* the clamp's minimum: max(max over taps, min) */
        const int8_t *row = tap + c;
        for (int32_t fy = 0; fy < win->rows; ++fy, row += win->pitch) {
            const int8_t *p = row;
            for (int32_t fx = 0; fx < win->cols; ++fx, p += win->channels) {
                const uint32_t w = (uint32_t)load32(p);
                (void)__ssub8((int32_t)w, (int32_t)max);
                max = __sel(w, max);
            }
        }
        (void)__ssub8((int32_t)max, (int32_t)high);
        max = __sel(high, max);
        memcpy(out + c, &max, sizeof(max));
    }
    return c;
}

#elif defined(MCUGEN_FAST_MVE)

/* Average, sixteen channels at a time, then eight with tail predication, summed in int16
 * lanes: exact for windows of at most 256 taps (|sum| <= 256 * 128). Returns the channels
 * done. */
static int32_t avg_pixel_fast(const int8_t *tap, const pool_window *win, mcugen_activation act,
                              int8_t *out)
{
    const int32_t count = win->rows * win->cols;
    if (count > 256) {
        return 0;
    }
    for (int32_t c = 0; c < win->channels;) {
        const int32_t left = win->channels - c, lanes = left >= 16 ? 16 : 8;
        const mve_pred16_t tail = vctp16q((uint32_t)left);
        int16x8_t sum0 = vdupq_n_s16(0), sum1 = vdupq_n_s16(0);
        const int8_t *row = tap + c;
        for (int32_t fy = win->rows; fy > 0; --fy, row += win->pitch) {
            const int8_t *p = row;
            if (lanes == 16) {
                for (int32_t fx = win->cols; fx > 0; --fx, p += win->channels) {
                    sum0 = vaddq_s16(sum0, vldrbq_s16(p));
                    sum1 = vaddq_s16(sum1, vldrbq_s16(p + 8));
                }
            } else {
                for (int32_t fx = win->cols; fx > 0; --fx, p += win->channels) {
                    sum0 = vaddq_s16(sum0, vldrbq_z_s16(p, tail));
                }
            }
        }
        int16_t sums[16];
        vst1q_s16(sums, sum0);
        vst1q_s16(sums + 8, sum1);
        for (int32_t k = 0; k < (left < lanes ? left : lanes); ++k) {
            out[c + k] = (int8_t)mcugen_clamp(rounded_average(sums[k], count), act.min, act.max);
        }
        c += lanes;
    }
    return win->channels;
}

/* Maximum, sixteen channels at a time (fewer with tail predication); the running maximum
 * starts at the clamp's minimum. */
static int32_t max_pixel_fast(const int8_t *tap, const pool_window *win, mcugen_activation act,
                              int8_t *out)
{
    for (int32_t c = 0; c < win->channels; c += 16) {
        const mve_pred16_t p = vctp8q((uint32_t)(win->channels - c));
        int8x16_t max = vdupq_n_s8((int8_t)act.min);
        const int8_t *row = tap + c;
        for (int32_t fy = 0; fy < win->rows; ++fy, row += win->pitch) {
            const int8_t *q = row;
            for (int32_t fx = 0; fx < win->cols; ++fx, q += win->channels) {
                max = vmaxq_s8(max, vldrbq_z_s8(q, p)); /* (inactive lanes: 0, not stored) */
            }
        }
        vstrbq_p_s8(out + c, vminq_s8(max, vdupq_n_s8((int8_t)act.max)), p);
    }
    return win->channels;
}
#endif

/* --- the portable pixels, and the loops over output pixels -------------------------------- */

/* The average and maximum of channels [first, channels) of one pixel; the int8 ones try the
 * fast path for the leading channels first. TYPE_MIN is the maximum's starting value: TFLite
 * starts at the type's minimum, even for empty windows. */
#define MCUGEN_DEFINE_PIXELS(SUFFIX, TYPE, TYPE_MIN)                                             \
    static void avg_pixel_##SUFFIX(const TYPE *tap, const pool_window *win, int32_t first,      \
                                   mcugen_activation act, TYPE *out)                            \
    {                                                                                           \
        const int32_t count = win->rows * win->cols;                                            \
        for (int32_t c = first; c < win->channels; ++c) {                                       \
            int32_t sum = 0;                                                                    \
            for (int32_t fy = 0; fy < win->rows; ++fy) {                                        \
                const TYPE *p = tap + (size_t)fy * (size_t)win->pitch + (size_t)c;              \
                for (int32_t fx = 0; fx < win->cols; ++fx) {                                    \
                    sum += p[(size_t)fx * (size_t)win->channels];                               \
                }                                                                               \
            }                                                                                   \
            out[c] = (TYPE)mcugen_clamp(rounded_average(sum, count), act.min, act.max);         \
        }                                                                                       \
    }                                                                                           \
    static void max_pixel_##SUFFIX(const TYPE *tap, const pool_window *win, int32_t first,      \
                                   mcugen_activation act, TYPE *out)                            \
    {                                                                                           \
        for (int32_t c = first; c < win->channels; ++c) {                                       \
            int32_t max = TYPE_MIN;                                                             \
            for (int32_t fy = 0; fy < win->rows; ++fy) {                                        \
                const TYPE *p = tap + (size_t)fy * (size_t)win->pitch + (size_t)c;              \
                for (int32_t fx = 0; fx < win->cols; ++fx) {                                    \
                    const int32_t value = p[(size_t)fx * (size_t)win->channels];                \
                    max = value > max ? value : max;                                            \
                }                                                                               \
            }                                                                                   \
            out[c] = (TYPE)mcugen_clamp(max, act.min, act.max);                                 \
        }                                                                                       \
    }

MCUGEN_DEFINE_PIXELS(s8_portable, int8_t, INT8_MIN)
MCUGEN_DEFINE_PIXELS(s16, int16_t, INT16_MIN)

#if defined(MCUGEN_FAST_DSP) || defined(MCUGEN_FAST_MVE)
/* The fast paths need the activation inside int8 (the portable code clamps in int32, then
 * casts). Their maximum starts at the activation's minimum instead of INT8_MIN: the same after
 * the clamp, empty windows included. */
static int act_is_s8(mcugen_activation act)
{
    return act.min >= INT8_MIN && act.max <= INT8_MAX;
}

static void avg_pixel_s8(const int8_t *tap, const pool_window *win, int32_t first,
                         mcugen_activation act, int8_t *out)
{
    const int32_t done = act_is_s8(act) ? avg_pixel_fast(tap, win, act, out) : 0;
    avg_pixel_s8_portable(tap, win, first + done, act, out);
}

static void max_pixel_s8(const int8_t *tap, const pool_window *win, int32_t first,
                         mcugen_activation act, int8_t *out)
{
    const int32_t done = act_is_s8(act) ? max_pixel_fast(tap, win, act, out) : 0;
    max_pixel_s8_portable(tap, win, first + done, act, out);
}
#else
#define avg_pixel_s8 avg_pixel_s8_portable
#define max_pixel_s8 max_pixel_s8_portable
#endif

/* The loop over output pixels, stamped out once per kernel: each pixel's window clipped to the
 * image, then PIXEL does the channels. AVERAGE fails on a window wholly in the padding (TFLite's
 * AveragePool does too); the maximum gives the type's minimum there. */
#define MCUGEN_DEFINE_POOL(NAME, TYPE, PIXEL, AVERAGE)                                          \
    mcugen_status NAME(const mcugen_pool_params *params, const mcugen_dims *input_dims,       \
                       const TYPE *input, const mcugen_dims *output_dims, TYPE *output)        \
    {                                                                                          \
        const mcugen_status status = check_args(params, input_dims, input, output_dims,       \
                                                output);                                       \
        if (status != MCUGEN_OK) {                                                             \
            return status;                                                                     \
        }                                                                                      \
        const int32_t channels = input_dims->c;                                                \
        for (int32_t b = 0; b < output_dims->n; ++b) {                                         \
            const TYPE *image = input + (size_t)b * (size_t)input_dims->h *                    \
                                            (size_t)input_dims->w * (size_t)channels;          \
            for (int32_t oy = 0; oy < output_dims->h; ++oy) {                                  \
                const int32_t origin_y = oy * params->stride.h - params->padding.h;            \
                const tap_range ys = clip_window(origin_y, params->filter.h, input_dims->h);   \
                for (int32_t ox = 0; ox < output_dims->w; ++ox) {                              \
                    const int32_t origin_x = ox * params->stride.w - params->padding.w;        \
                    const tap_range xs =                                                       \
                        clip_window(origin_x, params->filter.w, input_dims->w);                \
                    pool_window win;                                                           \
                    win.rows = ys.end - ys.start;                                              \
                    win.cols = xs.end - xs.start;                                              \
                    win.pitch = input_dims->w * channels;                                      \
                    win.channels = channels;                                                   \
                    if (AVERAGE && (win.rows <= 0 || win.cols <= 0)) {                         \
                        return MCUGEN_ARG_ERROR;                                               \
                    }                                                                          \
                    if (win.rows <= 0 || win.cols <= 0) {                                      \
                        win.rows = win.cols = 0; /* no taps: nothing is read */                \
                    }                                                                          \
                    const TYPE *tap =                                                          \
                        win.rows == 0 ? image                                                  \
                                      : image + ((size_t)(origin_y + ys.start) *               \
                                                     (size_t)input_dims->w +                   \
                                                 (size_t)(origin_x + xs.start)) *              \
                                                    (size_t)channels;                          \
                    PIXEL(tap, &win, 0, params->activation, output);                           \
                    output += channels;                                                        \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        return MCUGEN_OK;                                                                      \
    }

MCUGEN_DEFINE_POOL(mcugen_avgpool_s8, int8_t, avg_pixel_s8, 1)
MCUGEN_DEFINE_POOL(mcugen_avgpool_s16, int16_t, avg_pixel_s16, 1)
MCUGEN_DEFINE_POOL(mcugen_maxpool_s8, int8_t, max_pixel_s8, 0)
MCUGEN_DEFINE_POOL(mcugen_maxpool_s16, int16_t, max_pixel_s16, 0)
