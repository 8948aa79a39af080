/* mcugen runtime: average and max pooling, the kernels behind mcugen_pool.h.
 * Ops: AVERAGE_POOL_2D, MAX_POOL_2D; int8, int16. Reference arithmetic: TFLite's reference
 * pooling (in-bounds taps only, the average rounded half away from zero).
 * Fast paths: the int8 channels of each output pixel under MCUGEN_FAST_DSP (Cortex-M4/M7) or
 * MCUGEN_FAST_MVE (Cortex-M55) when the activation is inside int8 (averages: windows of at
 * most 256 taps); the ISA code is in mcugen_pool_fast_dsp.c / _mve.c (see mcugen_pool_fast.h).
 * -DMCUGEN_PORTABLE turns the dispatch off. */
#include "mcugen_pool.h"

#include <stddef.h>
#include <string.h>

#include "mcugen_fixedpoint.h"
#include "mcugen_pool_fast.h" /* MCUGEN_FAST_DSP, MCUGEN_FAST_MVE and their int8 paths */

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


/* --- the portable pixels, and the loops over output pixels -------------------------------- */

/* The average and maximum of channels [first, channels) of one pixel; the int8 ones try the
 * fast path for the leading channels first. TYPE_MIN is the maximum's starting value: TFLite
 * starts at the type's minimum, even for empty windows. */
#define MCUGEN_DEFINE_PIXELS(SUFFIX, TYPE, TYPE_MIN)                                             \
    static void avg_pixel_##SUFFIX(const TYPE *tap, const mcugen_pool_window *win,              \
                                   int32_t first, mcugen_activation act, TYPE *out)             \
    {                                                                                           \
        const int32_t count = win->rows * win->cols;                                            \
        for (int32_t c = first; c < win->channels; ++c) {                                       \
            uint32_t sum = 0; /* TFLite's int32 sum, wrapping: modular here, no overflow */     \
            for (int32_t fy = 0; fy < win->rows; ++fy) {                                        \
                const TYPE *p = tap + (size_t)fy * (size_t)win->pitch + (size_t)c;              \
                for (int32_t fx = 0; fx < win->cols; ++fx) {                                    \
                    sum += (uint32_t)(int32_t)p[(size_t)fx * (size_t)win->channels];            \
                }                                                                               \
            }                                                                                   \
            out[c] = (TYPE)mcugen_clamp(mcugen_pool_rounded_average((int32_t)sum, count),       \
                                        act.min, act.max);                                      \
        }                                                                                       \
    }                                                                                           \
    static void max_pixel_##SUFFIX(const TYPE *tap, const mcugen_pool_window *win,              \
                                   int32_t first, mcugen_activation act, TYPE *out)             \
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

static void avg_pixel_s8(const int8_t *tap, const mcugen_pool_window *win, int32_t first,
                         mcugen_activation act, int8_t *out)
{
    const int32_t done = act_is_s8(act) ? mcugen_avgpool_fast_s8_channels(tap, win, act, out)
                                         : 0;
    avg_pixel_s8_portable(tap, win, first + done, act, out);
}

static void max_pixel_s8(const int8_t *tap, const mcugen_pool_window *win, int32_t first,
                         mcugen_activation act, int8_t *out)
{
    const int32_t done = act_is_s8(act) ? mcugen_maxpool_fast_s8_channels(tap, win, act, out)
                                         : 0;
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
                    mcugen_pool_window win;                                                    \
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
