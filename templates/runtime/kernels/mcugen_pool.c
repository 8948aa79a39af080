#include "mcugen_pool.h"

#include <stddef.h>

#include "mcugen_fixedpoint.h"

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

/* The offset of the element at (y, x, c) of one image; y and x are inside the image. */
static size_t tap_offset(const mcugen_dims *dims, int32_t y, int32_t x, int32_t c)
{
    return ((size_t)y * (size_t)dims->w + (size_t)x) * (size_t)dims->c + (size_t)c;
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

/* The two pooling loops, stamped out once per element type (int8, int16). TYPE_MIN is the
 * maximum's starting value: TFLite starts at the type's minimum, even for empty windows. */
#define MCUGEN_DEFINE_AVGPOOL(NAME, TYPE)                                                      \
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
                    if (ys.end <= ys.start || xs.end <= xs.start) {                            \
                        return MCUGEN_ARG_ERROR;                                               \
                    }                                                                          \
                    const int32_t count = (ys.end - ys.start) * (xs.end - xs.start);           \
                    for (int32_t c = 0; c < channels; ++c) {                                   \
                        int32_t sum = 0;                                                       \
                        for (int32_t fy = ys.start; fy < ys.end; ++fy) {                       \
                            const TYPE *tap = image + tap_offset(input_dims, origin_y + fy,    \
                                                                 origin_x + xs.start, c);      \
                            for (int32_t fx = 0; fx < xs.end - xs.start; ++fx) {               \
                                sum += tap[(size_t)fx * (size_t)channels];                     \
                            }                                                                  \
                        }                                                                      \
                        *output++ = (TYPE)mcugen_clamp(rounded_average(sum, count),            \
                                                       params->activation.min,                 \
                                                       params->activation.max);                \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        return MCUGEN_OK;                                                                      \
    }

#define MCUGEN_DEFINE_MAXPOOL(NAME, TYPE, TYPE_MIN)                                            \
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
                    for (int32_t c = 0; c < channels; ++c) {                                   \
                        int32_t max = TYPE_MIN;                                                \
                        for (int32_t fy = ys.start; fy < ys.end && xs.start < xs.end; ++fy) {  \
                            const TYPE *tap = image + tap_offset(input_dims, origin_y + fy,    \
                                                                 origin_x + xs.start, c);      \
                            for (int32_t fx = 0; fx < xs.end - xs.start; ++fx) {               \
                                const int32_t value = tap[(size_t)fx * (size_t)channels];      \
                                max = value > max ? value : max;                               \
                            }                                                                  \
                        }                                                                      \
                        *output++ = (TYPE)mcugen_clamp(max, params->activation.min,            \
                                                       params->activation.max);                \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        return MCUGEN_OK;                                                                      \
    }

MCUGEN_DEFINE_AVGPOOL(mcugen_avgpool_s8, int8_t)
MCUGEN_DEFINE_AVGPOOL(mcugen_avgpool_s16, int16_t)
MCUGEN_DEFINE_MAXPOOL(mcugen_maxpool_s8, int8_t, INT8_MIN)
MCUGEN_DEFINE_MAXPOOL(mcugen_maxpool_s16, int16_t, INT16_MIN)
