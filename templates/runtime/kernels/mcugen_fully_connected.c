/* mcugen runtime: the FULLY_CONNECTED kernels behind mcugen_fully_connected.h: int8 with TFLM's
 * fixed-point requantization (mcugen_fully_connected_s8) or LiteRT's double rescale
 * (_s8_real_scale), and int16x8 (_s16). Reference arithmetic: TFLite's reference
 * FullyConnected (int32 sums of offset products, then the rescale, offset and clamp).
 * Fast paths: mcugen_fully_connected_s8 offers the work to mcugen_fully_connected_fast_s8
 * (mcugen_conv_fast.h: DSP on Cortex-M4/M7, Helium on Cortex-M55) when filter_offset is 0, and
 * runs the portable loop when it declines; -DMCUGEN_PORTABLE leaves the dispatch out. */
#include "mcugen_fully_connected.h"

#include <stddef.h>
#include <stdint.h>

#include "mcugen_conv_fast.h"
#include "mcugen_fixedpoint.h"
#include "mcugen_nn_types.h"
#include "mcugen_rescale.h"

/* int32 addition that wraps like TFLite's accumulator, without signed-overflow UB. */
static inline int32_t wrap_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* sum of (w[i] + w_offset) * (x[i] + x_offset) modulo 2^32, as TFLite's int32 accumulates.
 * Each product is at most 255 * 255 in magnitude, exact in int32. */
static inline int32_t dot_s8(const int8_t *x, const int8_t *w, int32_t n, int32_t x_offset,
                             int32_t w_offset)
{
    uint32_t acc = 0;
    if (w_offset == 0) {
        for (int32_t i = 0; i < n; ++i) {
            acc += (uint32_t)((int32_t)w[i] * ((int32_t)x[i] + x_offset));
        }
    } else {
        for (int32_t i = 0; i < n; ++i) {
            acc += (uint32_t)(((int32_t)w[i] + w_offset) * ((int32_t)x[i] + x_offset));
        }
    }
    return (int32_t)acc;
}

#if !defined(__OPTIMIZE_SIZE__)
/* One weight of a MCUGEN_FC_LAYOUT_PAIRS4 unit (mask: see below) times one input. */
static inline uint32_t pairs4_product(int8_t w, int32_t mask, int32_t w_offset, int8_t x,
                                      int32_t x_offset)
{
    return (uint32_t)((((int32_t)w ^ mask) + w_offset) * ((int32_t)x + x_offset));
}
#endif

/* dot_s8 over unit u (u < units & ~3) stored MCUGEN_FC_LAYOUT_PAIRS4 (depth % 4 == 0): in
 * block u / 4, group d / 4 (16 bytes), word 2 (u % 4 / 2) + d % 2 (its pair's word of d),
 * halfword d % 4 / 2; the upper byte for an even unit, the lower byte plus 128 for an odd one
 * (undone by the mask: bit 7 flipped, i.e. XOR -128 of the sign-extended byte). */
static int32_t dot_s8_pairs4(const int8_t *x, const int8_t *filter, int32_t u, int32_t depth,
                             int32_t x_offset, int32_t w_offset)
{
    const int8_t *w = filter + (u & ~3) * depth + 4 * (u & 2) + ((u & 1) == 0);
    const int32_t mask = (u & 1) ? -128 : 0;
    uint32_t acc = 0;
#if defined(__OPTIMIZE_SIZE__) /* -Os: the least code */
    for (int32_t d = 0; d < depth; ++d) {
        const int32_t v = w[16 * (d >> 2) + 4 * (d & 1) + (d & 2)] ^ mask;
        acc += (uint32_t)((v + w_offset) * ((int32_t)x[d] + x_offset));
    }
#else /* depths 4g .. 4g + 3 at bytes 0, 4, 2, 6 of group g */
    for (int32_t g = 0; g < depth; g += 4, w += 16, x += 4) {
        acc += pairs4_product(w[0], mask, w_offset, x[0], x_offset) +
               pairs4_product(w[4], mask, w_offset, x[1], x_offset) +
               pairs4_product(w[2], mask, w_offset, x[2], x_offset) +
               pairs4_product(w[6], mask, w_offset, x[3], x_offset);
    }
#endif
    return (int32_t)acc;
}

/* Unit u's dot product under either filter layout (mcugen_fc_params.filter_layout). */
static int32_t unit_dot(const mcugen_fc_params *params, const int8_t *row, const int8_t *filter,
                        int32_t u, int32_t depth, int32_t units)
{
    if (params->filter_layout == MCUGEN_FC_LAYOUT_PAIRS4 && u < (units & ~3)) {
        return dot_s8_pairs4(row, filter, u, depth, params->input_offset,
                             params->filter_offset);
    }
    return dot_s8(row, filter + u * depth, depth, params->input_offset, params->filter_offset);
}

static int dims_flat(const mcugen_dims *d)
{
    return d != NULL && d->n > 0 && d->c > 0 && d->h == 1 && d->w == 1;
}

static int quant_ok(const mcugen_fc_params *params, const mcugen_per_channel_quant_params *quant,
                    int32_t units)
{
    const int32_t count = params->per_channel ? units : 1;
    if (params->real_scale != NULL) {
        return 1;
    }
    if (quant == NULL || quant->multiplier == NULL || quant->shift == NULL) {
        return 0;
    }
    /* outside TFLite's QuantizeMultiplier range the shifts are undefined; rq_checked: mcugen
     * has found every shift in [-22, -1] at build time (no scan of them on every call) */
    return params->rq_checked || mcugen_shifts_in_range(quant->shift, count);
}

static int params_ok(const mcugen_fc_params *params)
{
    const mcugen_activation act = params->activation;
    const int layout_ok = params->filter_layout == 0 || params->filter_layout == MCUGEN_FC_LAYOUT_PAIRS4;
    return layout_ok && params->input_offset >= -127 && params->input_offset <= 128 &&
           params->filter_offset >= -127 && params->filter_offset <= 128 &&
           act.min >= INT8_MIN && act.max <= INT8_MAX && act.min <= act.max;
}

int32_t mcugen_fully_connected_s8_get_buffer_size(const mcugen_dims *filter_dims)
{
    /* the DSP path's int16 input row */
    return mcugen_fully_connected_fast_s8_buffer_size(filter_dims);
}

/* LiteRT's double-precision rescale, or NULL for TFLM's fixed point: passed in by the two
 * public entry points so that a firmware using only the fixed point never links the double
 * arithmetic (soft-float on single-precision FPUs, ~2 KB of code). */
typedef int32_t (*requantize_real_fn)(int64_t acc, double scale);

static mcugen_status fully_connected_s8(const mcugen_context *ctx, const mcugen_fc_params *params,
                                        const mcugen_per_channel_quant_params *quant,
                                        const mcugen_dims *input_dims, const int8_t *input,
                                        const mcugen_dims *filter_dims, const int8_t *filter,
                                        const mcugen_dims *bias_dims, const int32_t *bias,
                                        const mcugen_dims *output_dims, int8_t *output,
                                        requantize_real_fn requantize_real)
{
    if (params == NULL || input == NULL || filter == NULL || output == NULL ||
        (params->real_scale != NULL) != (requantize_real != NULL) ||
        !dims_flat(input_dims) || !dims_flat(filter_dims) || !dims_flat(output_dims)) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t batch = input_dims->n, depth = input_dims->c, units = output_dims->c;
    if (filter_dims->n != depth || filter_dims->c != units || output_dims->n != batch ||
        !params_ok(params) || !quant_ok(params, quant, units) ||
        (params->filter_layout != 0 && (depth & 3) != 0)) {
        return MCUGEN_ARG_ERROR;
    }
    if (bias != NULL && (bias_dims == NULL || bias_dims->n * bias_dims->h * bias_dims->w *
                                                      bias_dims->c != units)) {
        return MCUGEN_ARG_ERROR;
    }
    (void)ctx; /* scratch: only the fast paths use it */
#if !defined(MCUGEN_PORTABLE)
    const mcugen_fully_connected_fast_params fast = {params->input_offset,
                                                     params->output_offset, params->activation,
                                                     params->per_channel,
                                                     params->kernel_sums,
                                                     params->filter_layout,
                                                     params->rq_checked};
    if (params->filter_offset == 0 && requantize_real == NULL &&
        mcugen_fully_connected_fast_s8(ctx, &fast, quant, input_dims, input, filter_dims, filter,
                                       bias, output_dims, output)) {
        return MCUGEN_OK; /* DSP or MVE inner loops (mcugen_conv_fast.h) */
    }
#endif

    for (int32_t b = 0; b < batch; ++b) {
        const int8_t *row = input + b * depth;
        int8_t *out = output + b * units;
        for (int32_t u = 0; u < units; ++u) {
            const int32_t q = params->per_channel ? u : 0;
            int32_t acc = unit_dot(params, row, filter, u, depth, units);
            if (bias != NULL) {
                acc = wrap_add(acc, bias[u]);
            }
            const int32_t scaled =
                requantize_real != NULL
                    ? requantize_real(acc, params->real_scale[q])
                    : mcugen_requantize(acc, quant->multiplier[q], quant->shift[q]);
            const int32_t y = wrap_add(scaled, params->output_offset);
            out[u] = (int8_t)mcugen_clamp(y, params->activation.min, params->activation.max);
        }
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_fully_connected_s8(const mcugen_context *ctx, const mcugen_fc_params *params,
                                        const mcugen_per_channel_quant_params *quant,
                                        const mcugen_dims *input_dims, const int8_t *input,
                                        const mcugen_dims *filter_dims, const int8_t *filter,
                                        const mcugen_dims *bias_dims, const int32_t *bias,
                                        const mcugen_dims *output_dims, int8_t *output)
{
    return fully_connected_s8(ctx, params, quant, input_dims, input, filter_dims, filter,
                              bias_dims, bias, output_dims, output, NULL);
}

mcugen_status mcugen_fully_connected_s8_real_scale(
    const mcugen_context *ctx, const mcugen_fc_params *params, const mcugen_dims *input_dims,
    const int8_t *input, const mcugen_dims *filter_dims, const int8_t *filter,
    const mcugen_dims *bias_dims, const int32_t *bias, const mcugen_dims *output_dims,
    int8_t *output)
{
    return fully_connected_s8(ctx, params, NULL, input_dims, input, filter_dims, filter,
                              bias_dims, bias, output_dims, output, mcugen_requantize_double);
}

mcugen_status mcugen_fully_connected_s16(const mcugen_context *ctx, const mcugen_fc_params *params,
                                         const mcugen_rescale_params *rescale,
                                         const mcugen_dims *input_dims, const int16_t *input,
                                         const mcugen_dims *filter_dims, const int8_t *filter,
                                         const mcugen_dims *bias_dims, const int64_t *bias,
                                         const mcugen_dims *output_dims, int16_t *output)
{
    (void)ctx; /* no scratch needed */
    if (params == NULL || input == NULL || filter == NULL || output == NULL ||
        !dims_flat(input_dims) || !dims_flat(filter_dims) || !dims_flat(output_dims)) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t batch = input_dims->n, depth = input_dims->c, units = output_dims->c;
    const mcugen_activation act = params->activation;
    if (filter_dims->n != depth || filter_dims->c != units || output_dims->n != batch ||
        params->input_offset != 0 || params->output_offset != 0 || params->filter_layout != 0 ||
        params->filter_offset < -127 || params->filter_offset > 128 || act.min < INT16_MIN ||
        act.max > INT16_MAX || act.min > act.max || !mcugen_rescale_ok(rescale, units)) {
        return MCUGEN_ARG_ERROR;
    }
    if (bias != NULL && (bias_dims == NULL || bias_dims->n * bias_dims->h * bias_dims->w *
                                                      bias_dims->c != units)) {
        return MCUGEN_ARG_ERROR;
    }

    for (int32_t b = 0; b < batch; ++b) {
        const int16_t *row = input + b * depth;
        int16_t *out = output + b * units;
        for (int32_t u = 0; u < units; ++u) {
            const int8_t *weights = filter + u * depth;
            uint64_t acc = 0; /* exact: TFLite's ranges never reach 2^63 */
            for (int32_t d = 0; d < depth; ++d) {
                const int32_t w = (int32_t)weights[d] + params->filter_offset;
                acc += (uint64_t)(int64_t)(w * (int32_t)row[d]); /* |.| <= 255 * 32768 */
            }
            if (bias != NULL) {
                acc += (uint64_t)bias[u];
            }
            const int64_t sum = acc <= (uint64_t)INT64_MAX ? (int64_t)acc : -(int64_t)(~acc) - 1;
            out[u] = (int16_t)mcugen_clamp(mcugen_rescale(rescale, sum, u), act.min, act.max);
        }
    }
    return MCUGEN_OK;
}
