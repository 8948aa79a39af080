/* mcugen runtime: the TRANSPOSE_CONV kernels behind mcugen_transpose_conv.h, int8
 * (mcugen_transpose_conv_s8) and int16x8 (_s16). Reference arithmetic: TFLite's
 * reference_integer_ops::TransposeConv (then bias, mcugen_rescale.h's rescale, offset and
 * clamp), computed without its scratch: where TFLite scatters every input pixel into zeroed
 * accumulators of the whole output, this gathers, for one output pixel and channel, the input
 * taps that land there (iy * stride - padding + ky == oy), so one accumulator in a register
 * suffices. The sums are integer (uint32_t wraps like TFLite's int32, the int16 path's int64
 * never overflows), so their order does not change a bit. Fast paths: none. */
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

/* Checks shared by both kernels (they need no scratch: ctx may be NULL). */
static int args_ok(const mcugen_transpose_conv_params *params,
                   const mcugen_rescale_params *rescale, const mcugen_dims *input_dims,
                   const mcugen_dims *filter_dims, const mcugen_dims *bias_dims, int has_bias,
                   const mcugen_dims *output_dims, int32_t out_min, int32_t out_max)
{
    if (params == NULL || !dims_positive(input_dims) || !dims_positive(filter_dims) ||
        !dims_positive(output_dims)) {
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
    return mcugen_rescale_ok(rescale, out_c);
}

/* The input rows (or columns) whose taps reach output row o: the first tap k0 with
 * o + padding - k0 a multiple of the stride, the input index i0 it reads, and the number of
 * taps k0, k0 + stride, ... below `taps` whose input index i0, i0 - 1, ... lies in [0, size). */
typedef struct {
    int32_t k0;
    int32_t i0;
    int32_t count;
} mcugen_tap_range;

static mcugen_tap_range tap_range(int32_t o, int32_t padding, int32_t stride, int32_t taps,
                                  int32_t size)
{
    const int32_t origin = o + padding; /* >= 0 */
    mcugen_tap_range r = { origin % stride, origin / stride, 0 };
    if (r.i0 >= size) { /* skip the taps that read past the input's end */
        const int32_t skip = r.i0 - (size - 1);
        r.k0 += skip * stride;
        r.i0 = size - 1;
    }
    if (r.k0 < taps) {
        const int32_t by_taps = (taps - 1 - r.k0) / stride + 1;
        const int32_t by_input = r.i0 + 1; /* i0, i0 - 1, ..., 0 */
        r.count = by_taps < by_input ? by_taps : by_input;
    }
    return r;
}

/* The gather for one output pixel (b, oy, ox) and every output channel, written once for both
 * accumulator types and inputs; STORE(oc, sum) writes the channel's result. */
#define MCUGEN_TRANSPOSE_CONV_GATHER(ACC_TYPE, INPUT, STORE)                                   \
    for (int32_t b = 0; b < batches; ++b) {                                                    \
        for (int32_t oy = 0; oy < out_h; ++oy) {                                               \
            const mcugen_tap_range ry = tap_range(oy, params->padding.h, params->stride.h, kh,   \
                                                  in_h);                                       \
            for (int32_t ox = 0; ox < out_w; ++ox) {                                           \
                const mcugen_tap_range rx = tap_range(ox, params->padding.w, params->stride.w,   \
                                                      kw, in_w);                               \
                for (int32_t oc = 0; oc < out_c; ++oc) {                                       \
                    ACC_TYPE sum = 0;                                                          \
                    for (int32_t ty = 0; ty < ry.count; ++ty) {                                \
                        const int32_t ky = ry.k0 + ty * params->stride.h, iy = ry.i0 - ty;     \
                        for (int32_t tx = 0; tx < rx.count; ++tx) {                            \
                            const int32_t kx = rx.k0 + tx * params->stride.w;                  \
                            const int32_t ix = rx.i0 - tx;                                     \
                            const int8_t *taps = filter + ((oc * kh + ky) * kw + kx) * in_c;   \
                            const int32_t pixel = ((b * in_h + iy) * in_w + ix) * in_c;        \
                            for (int32_t ic = 0; ic < in_c; ++ic) {                            \
                                const int32_t x = (int32_t)INPUT[pixel + ic] +                 \
                                                  params->input_offset;                        \
                                sum += (ACC_TYPE)(int64_t)(x * (int32_t)taps[ic]);             \
                            }                                                                  \
                        }                                                                      \
                    }                                                                          \
                    STORE(((b * out_h + oy) * out_w + ox) * out_c + oc, oc, sum);              \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }

int32_t mcugen_transpose_conv_s8_get_buffer_size(const mcugen_dims *output_dims)
{
    (void)output_dims;
    return 0;
}

/* bias, the Q31 rescale of the low 32 bits (accumulator_bits 32), offset and clamp */
#define MCUGEN_TRANSPOSE_CONV_STORE_S8(INDEX, OC, SUM)                                         \
    do {                                                                                       \
        const uint32_t total = (SUM) + (bias != NULL ? (uint32_t)bias[OC] : 0u);               \
        const int32_t scaled = mcugen_rescale(rescale, (int64_t)total, (OC));                  \
        const int32_t y = (int32_t)((uint32_t)scaled + (uint32_t)params->output_offset);       \
        output[INDEX] = (int8_t)mcugen_clamp(y, params->activation.min, params->activation.max); \
    } while (0)

mcugen_status mcugen_transpose_conv_s8(const mcugen_context *ctx,
                                       const mcugen_transpose_conv_params *params,
                                       const mcugen_rescale_params *rescale,
                                       const mcugen_dims *input_dims, const int8_t *input,
                                       const mcugen_dims *filter_dims, const int8_t *filter,
                                       const mcugen_dims *bias_dims, const int32_t *bias,
                                       const mcugen_dims *output_dims, int8_t *output)
{
    (void)ctx; /* no scratch */
    if (input == NULL || filter == NULL || output == NULL ||
        !args_ok(params, rescale, input_dims, filter_dims, bias_dims, bias != NULL, output_dims,
                 INT8_MIN, INT8_MAX) ||
        params->input_offset < -127 || params->input_offset > 128) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t batches = input_dims->n, in_h = input_dims->h, in_w = input_dims->w;
    const int32_t in_c = input_dims->c, kh = filter_dims->h, kw = filter_dims->w;
    const int32_t out_h = output_dims->h, out_w = output_dims->w, out_c = output_dims->c;
    MCUGEN_TRANSPOSE_CONV_GATHER(uint32_t, input, MCUGEN_TRANSPOSE_CONV_STORE_S8)
    return MCUGEN_OK;
}

int32_t mcugen_transpose_conv_s16_get_buffer_size(const mcugen_dims *output_dims)
{
    (void)output_dims;
    return 0;
}

/* bias, the exact int64 sum's rescale, clamp */
#define MCUGEN_TRANSPOSE_CONV_STORE_S16(INDEX, OC, SUM)                                        \
    do {                                                                                       \
        const uint64_t total = (SUM) + (bias != NULL ? (uint64_t)bias[OC] : 0u);               \
        const int64_t sum = total <= (uint64_t)INT64_MAX ? (int64_t)total                      \
                                                         : -(int64_t)(~total) - 1;             \
        const int32_t scaled = mcugen_rescale(rescale, sum, (OC));                             \
        output[INDEX] = (int16_t)mcugen_clamp(scaled, params->activation.min,                  \
                                              params->activation.max);                         \
    } while (0)

mcugen_status mcugen_transpose_conv_s16(const mcugen_context *ctx,
                                        const mcugen_transpose_conv_params *params,
                                        const mcugen_rescale_params *rescale,
                                        const mcugen_dims *input_dims, const int16_t *input,
                                        const mcugen_dims *filter_dims, const int8_t *filter,
                                        const mcugen_dims *bias_dims, const int64_t *bias,
                                        const mcugen_dims *output_dims, int16_t *output)
{
    (void)ctx; /* no scratch */
    if (input == NULL || filter == NULL || output == NULL ||
        !args_ok(params, rescale, input_dims, filter_dims, bias_dims, bias != NULL, output_dims,
                 INT16_MIN, INT16_MAX) ||
        params->input_offset != 0 || params->output_offset != 0) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t batches = input_dims->n, in_h = input_dims->h, in_w = input_dims->w;
    const int32_t in_c = input_dims->c, kh = filter_dims->h, kw = filter_dims->w;
    const int32_t out_h = output_dims->h, out_w = output_dims->w, out_c = output_dims->c;
    MCUGEN_TRANSPOSE_CONV_GATHER(uint64_t, input, MCUGEN_TRANSPOSE_CONV_STORE_S16)
    return MCUGEN_OK;
}
