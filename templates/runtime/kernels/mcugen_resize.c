/* mcugen runtime: NHWC image resizing, the kernels behind mcugen_resize.h.
 * Ops: RESIZE_NEAREST_NEIGHBOR (any dtype), RESIZE_BILINEAR (int8, float32).
 * Reference arithmetic: TFLite's reference kernels (align_corners, half_pixel_centers, the
 * int8 bilinear in fixed point). Fast paths: none. */
#include "mcugen_resize.h"

#include <stddef.h>
#include <string.h>

static int dims_are_valid(const mcugen_dims *input_dims, const void *input,
                          const mcugen_dims *output_dims, const void *output)
{
    return input_dims != NULL && input != NULL && output_dims != NULL && output != NULL &&
           input_dims->n == output_dims->n && input_dims->c == output_dims->c &&
           input_dims->h >= 1 && input_dims->w >= 1;
}

/* Every table entry must name a row (column) of the input. */
static int indices_are_valid(const int32_t *indices, int32_t count, int32_t limit)
{
    if (indices == NULL) {
        return 0;
    }
    for (int32_t i = 0; i < count; ++i) {
        if (indices[i] < 0 || indices[i] >= limit) {
            return 0;
        }
    }
    return 1;
}

/* The element offset of pixel (y, x) of image b. */
static size_t pixel(const mcugen_dims *dims, int32_t b, int32_t y, int32_t x)
{
    return (((size_t)b * (size_t)dims->h + (size_t)y) * (size_t)dims->w + (size_t)x) *
           (size_t)dims->c;
}

mcugen_status mcugen_resize_nearest(const mcugen_resize_nearest_params *params,
                                    const mcugen_dims *input_dims, const void *input,
                                    const mcugen_dims *output_dims, void *output)
{
    if (params == NULL || !dims_are_valid(input_dims, input, output_dims, output) ||
        params->element_bytes < 1 ||
        !indices_are_valid(params->rows, output_dims->h, input_dims->h) ||
        !indices_are_valid(params->cols, output_dims->w, input_dims->w)) {
        return MCUGEN_ARG_ERROR;
    }
    const size_t bytes = (size_t)params->element_bytes;
    const size_t pixel_bytes = (size_t)input_dims->c * bytes;
    const uint8_t *src = (const uint8_t *)input;
    uint8_t *dst = (uint8_t *)output;
    for (int32_t b = 0; b < output_dims->n; ++b) {
        for (int32_t y = 0; y < output_dims->h; ++y) {
            for (int32_t x = 0; x < output_dims->w; ++x) {
                const size_t from = pixel(input_dims, b, params->rows[y], params->cols[x]);
                memcpy(dst, src + from * bytes, pixel_bytes);
                dst += pixel_bytes;
            }
        }
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_resize_bilinear_s8(const mcugen_resize_bilinear_int_params *params,
                                        const mcugen_dims *input_dims, const int8_t *input,
                                        const mcugen_dims *output_dims, int8_t *output)
{
    if (params == NULL || !dims_are_valid(input_dims, input, output_dims, output) ||
        params->row_position == NULL || params->col_position == NULL ||
        !indices_are_valid(params->row_lower, output_dims->h, input_dims->h) ||
        !indices_are_valid(params->row_upper, output_dims->h, input_dims->h) ||
        !indices_are_valid(params->col_lower, output_dims->w, input_dims->w) ||
        !indices_are_valid(params->col_upper, output_dims->w, input_dims->w)) {
        return MCUGEN_ARG_ERROR;
    }
    const int64_t one = 1 << 10;
    const int32_t depth = input_dims->c;
    for (int32_t b = 0; b < output_dims->n; ++b) {
        for (int32_t y = 0; y < output_dims->h; ++y) {
            const int32_t y0 = params->row_lower[y];
            const int32_t y1 = params->row_upper[y];
            const int64_t dy = (int64_t)params->row_position[y] - one * y0;
            for (int32_t x = 0; x < output_dims->w; ++x) {
                const int32_t x0 = params->col_lower[x];
                const int32_t x1 = params->col_upper[x];
                const int64_t dx = (int64_t)params->col_position[x] - one * x0;
                const int8_t *p00 = input + pixel(input_dims, b, y0, x0);
                const int8_t *p10 = input + pixel(input_dims, b, y1, x0);
                const int8_t *p01 = input + pixel(input_dims, b, y0, x1);
                const int8_t *p11 = input + pixel(input_dims, b, y1, x1);
                for (int32_t c = 0; c < depth; ++c) {
                    const int64_t total = p00[c] * (one - dy) * (one - dx) +
                                          p10[c] * dy * (one - dx) +
                                          p01[c] * (one - dy) * dx + p11[c] * dy * dx;
                    const int64_t half = total > 0 ? ((int64_t)1 << 19) : -((int64_t)1 << 19);
                    /* C division truncates: with `half` this rounds half away from zero. */
                    *output++ = (int8_t)((total + half) / ((int64_t)1 << 20));
                }
            }
        }
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_resize_bilinear_f32(const mcugen_resize_bilinear_f32_params *params,
                                         const mcugen_dims *input_dims, const float *input,
                                         const mcugen_dims *output_dims, float *output)
{
    if (params == NULL || !dims_are_valid(input_dims, input, output_dims, output) ||
        params->row_low_weight == NULL || params->row_high_weight == NULL ||
        params->col_low_weight == NULL || params->col_high_weight == NULL ||
        !indices_are_valid(params->row_lower, output_dims->h, input_dims->h) ||
        !indices_are_valid(params->row_upper, output_dims->h, input_dims->h) ||
        !indices_are_valid(params->col_lower, output_dims->w, input_dims->w) ||
        !indices_are_valid(params->col_upper, output_dims->w, input_dims->w)) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t depth = input_dims->c;
    for (int32_t b = 0; b < output_dims->n; ++b) {
        for (int32_t y = 0; y < output_dims->h; ++y) {
            const float wy0 = params->row_low_weight[y];
            const float wy1 = params->row_high_weight[y];
            const int32_t y0 = params->row_lower[y];
            const int32_t y1 = params->row_upper[y];
            for (int32_t x = 0; x < output_dims->w; ++x) {
                const float wx0 = params->col_low_weight[x];
                const float wx1 = params->col_high_weight[x];
                const int32_t x0 = params->col_lower[x];
                const int32_t x1 = params->col_upper[x];
                const float *p00 = input + pixel(input_dims, b, y0, x0);
                const float *p10 = input + pixel(input_dims, b, y1, x0);
                const float *p01 = input + pixel(input_dims, b, y0, x1);
                const float *p11 = input + pixel(input_dims, b, y1, x1);
                for (int32_t c = 0; c < depth; ++c) {
                    /* TFLite's order of float operations, left to right. */
                    float value = p00[c] * wy0 * wx0;
                    value = value + p10[c] * wy1 * wx0;
                    value = value + p01[c] * wy0 * wx1;
                    value = value + p11[c] * wy1 * wx1;
                    *output++ = value + 0.0f;
                }
            }
        }
    }
    return MCUGEN_OK;
}
