/* mcugen runtime: the TRANSPOSE_CONV kernels behind mcugen_transpose_conv.h, int8
 * (mcugen_transpose_conv_s8) and int16x8 (_s16). Reference arithmetic: TFLite's
 * reference_integer_ops::TransposeConv (scatter into zeroed accumulators in the scratch, then
 * bias, mcugen_rescale.h's rescale, offset and clamp). Fast paths: none. */
#include "mcugen_transpose_conv.h"

#include <stddef.h>
#include <stdint.h>

#include "mcugen_fixedpoint.h"
#include "mcugen_nn_types.h"
#include "mcugen_rescale.h"

static int dims_positive(const mcugen_dims *d)
{
    return d != NULL && d->n > 0 && d->h > 0 && d->w > 0 && d->c > 0;
}

static int32_t dims_count(const mcugen_dims *d)
{
    return d->n * d->h * d->w * d->c;
}

/* Checks shared by both kernels; element_bytes is the accumulator size in the scratch. */
static int args_ok(const mcugen_context *ctx, const mcugen_transpose_conv_params *params,
                   const mcugen_rescale_params *rescale, const mcugen_dims *input_dims,
                   const mcugen_dims *filter_dims, const mcugen_dims *bias_dims, int has_bias,
                   const mcugen_dims *output_dims, int32_t element_bytes, int32_t out_min,
                   int32_t out_max)
{
    if (ctx == NULL || params == NULL || !dims_positive(input_dims) ||
        !dims_positive(filter_dims) || !dims_positive(output_dims)) {
        return 0;
    }
    const int32_t out_c = output_dims->c;
    if (input_dims->n != output_dims->n || filter_dims->n != out_c ||
        filter_dims->c != input_dims->c || params->stride.h < 1 || params->stride.w < 1 ||
        params->padding.h < 0 || params->padding.w < 0) {
        return 0;
    }
    if (has_bias && (bias_dims == NULL || !dims_positive(bias_dims) ||
                     dims_count(bias_dims) != out_c)) {
        return 0;
    }
    const mcugen_activation act = params->activation;
    if (act.min < out_min || act.max > out_max || act.min > act.max) {
        return 0;
    }
    if (ctx->buf == NULL || ctx->size < dims_count(output_dims) * element_bytes) {
        return 0;
    }
    return mcugen_rescale_ok(rescale, out_c);
}

/* The scatter loop, written once for both accumulator types (uint32_t wraps like TFLite's
 * int32, uint64_t holds the int64 sum): ACC is the scratch, INPUT the input data. */
#define MCUGEN_TRANSPOSE_CONV_SCATTER(ACC_TYPE, ACC, INPUT)                                     \
    for (int32_t b = 0; b < batches; ++b) {                                                    \
        for (int32_t iy = 0; iy < in_h; ++iy) {                                                \
            for (int32_t ix = 0; ix < in_w; ++ix) {                                            \
                const int32_t pixel = ((b * in_h + iy) * in_w + ix) * in_c;                    \
                for (int32_t ky = 0; ky < kh; ++ky) {                                          \
                    const int32_t oy = iy * params->stride.h - params->padding.h + ky;         \
                    if (oy < 0 || oy >= out_h) {                                               \
                        continue;                                                              \
                    }                                                                          \
                    for (int32_t kx = 0; kx < kw; ++kx) {                                      \
                        const int32_t ox = ix * params->stride.w - params->padding.w + kx;     \
                        if (ox < 0 || ox >= out_w) {                                           \
                            continue;                                                          \
                        }                                                                      \
                        ACC_TYPE *target = ACC + ((b * out_h + oy) * out_w + ox) * out_c;      \
                        for (int32_t oc = 0; oc < out_c; ++oc) {                               \
                            const int8_t *taps = filter + ((oc * kh + ky) * kw + kx) * in_c;   \
                            ACC_TYPE sum = 0;                                                  \
                            for (int32_t ic = 0; ic < in_c; ++ic) {                            \
                                const int32_t x = (int32_t)INPUT[pixel + ic] +                 \
                                                  params->input_offset;                        \
                                sum += (ACC_TYPE)(int64_t)(x * (int32_t)taps[ic]);             \
                            }                                                                  \
                            target[oc] += sum;                                                 \
                        }                                                                      \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }

int32_t mcugen_transpose_conv_s8_get_buffer_size(const mcugen_dims *output_dims)
{
    return output_dims->n * output_dims->h * output_dims->w * output_dims->c *
           (int32_t)sizeof(uint32_t);
}

mcugen_status mcugen_transpose_conv_s8(const mcugen_context *ctx,
                                       const mcugen_transpose_conv_params *params,
                                       const mcugen_rescale_params *rescale,
                                       const mcugen_dims *input_dims, const int8_t *input,
                                       const mcugen_dims *filter_dims, const int8_t *filter,
                                       const mcugen_dims *bias_dims, const int32_t *bias,
                                       const mcugen_dims *output_dims, int8_t *output)
{
    if (input == NULL || filter == NULL || output == NULL ||
        !args_ok(ctx, params, rescale, input_dims, filter_dims, bias_dims, bias != NULL,
                 output_dims, (int32_t)sizeof(uint32_t), INT8_MIN, INT8_MAX) ||
        params->input_offset < -127 || params->input_offset > 128) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t batches = input_dims->n, in_h = input_dims->h, in_w = input_dims->w;
    const int32_t in_c = input_dims->c, kh = filter_dims->h, kw = filter_dims->w;
    const int32_t out_h = output_dims->h, out_w = output_dims->w, out_c = output_dims->c;
    const int32_t count = dims_count(output_dims);
    uint32_t *acc = (uint32_t *)ctx->buf; /* wraps like TFLite's int32 accumulators */
    for (int32_t i = 0; i < count; ++i) {
        acc[i] = 0;
    }
    MCUGEN_TRANSPOSE_CONV_SCATTER(uint32_t, acc, input)
    for (int32_t i = 0; i < count; ++i) {
        const int32_t oc = i % out_c;
        uint32_t total = acc[i] + (bias != NULL ? (uint32_t)bias[oc] : 0u);
        /* The low 32 bits are all the Q31 rescale (accumulator_bits 32) looks at. */
        const int32_t scaled = mcugen_rescale(rescale, (int64_t)total, oc);
        const int32_t y = (int32_t)((uint32_t)scaled + (uint32_t)params->output_offset);
        output[i] = (int8_t)mcugen_clamp(y, params->activation.min, params->activation.max);
    }
    return MCUGEN_OK;
}

int32_t mcugen_transpose_conv_s16_get_buffer_size(const mcugen_dims *output_dims)
{
    return output_dims->n * output_dims->h * output_dims->w * output_dims->c *
           (int32_t)sizeof(uint64_t);
}

mcugen_status mcugen_transpose_conv_s16(const mcugen_context *ctx,
                                        const mcugen_transpose_conv_params *params,
                                        const mcugen_rescale_params *rescale,
                                        const mcugen_dims *input_dims, const int16_t *input,
                                        const mcugen_dims *filter_dims, const int8_t *filter,
                                        const mcugen_dims *bias_dims, const int64_t *bias,
                                        const mcugen_dims *output_dims, int16_t *output)
{
    if (input == NULL || filter == NULL || output == NULL ||
        !args_ok(ctx, params, rescale, input_dims, filter_dims, bias_dims, bias != NULL,
                 output_dims, (int32_t)sizeof(uint64_t), INT16_MIN, INT16_MAX) ||
        params->input_offset != 0 || params->output_offset != 0) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t batches = input_dims->n, in_h = input_dims->h, in_w = input_dims->w;
    const int32_t in_c = input_dims->c, kh = filter_dims->h, kw = filter_dims->w;
    const int32_t out_h = output_dims->h, out_w = output_dims->w, out_c = output_dims->c;
    const int32_t count = dims_count(output_dims);
    uint64_t *acc = (uint64_t *)ctx->buf; /* exact: TFLite's ranges never reach 2^63 */
    for (int32_t i = 0; i < count; ++i) {
        acc[i] = 0;
    }
    MCUGEN_TRANSPOSE_CONV_SCATTER(uint64_t, acc, input)
    for (int32_t i = 0; i < count; ++i) {
        const int32_t oc = i % out_c;
        const uint64_t total = acc[i] + (bias != NULL ? (uint64_t)bias[oc] : 0u);
        const int64_t sum = total <= (uint64_t)INT64_MAX ? (int64_t)total : -(int64_t)(~total) - 1;
        const int32_t scaled = mcugen_rescale(rescale, sum, oc);
        output[i] = (int16_t)mcugen_clamp(scaled, params->activation.min, params->activation.max);
    }
    return MCUGEN_OK;
}
