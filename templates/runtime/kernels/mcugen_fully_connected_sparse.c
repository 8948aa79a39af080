/* mcugen runtime: int8 FULLY_CONNECTED over mask-and-values sparse weights
 * (mcugen_fully_connected_sparse.h). Reference arithmetic: TFLite's reference FullyConnected
 * with filter offset 0, summing only the stored weights (the others are 0). Portable C only. */
#include "mcugen_fully_connected_sparse.h"

#include <stddef.h>
#include <stdint.h>

#include "mcugen_fixedpoint.h"
#include "mcugen_nn_types.h"
#include "mcugen_rescale.h"

/* int32 addition that wraps like TFLite's accumulator, without signed-overflow UB. */
static inline int32_t wrap_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int dims_flat(const mcugen_dims *d)
{
    return d != NULL && d->n > 0 && d->c > 0 && d->h == 1 && d->w == 1;
}

/* The masks set exactly filter->stored bits, none at or past depth: the walk below then reads
 * values[0 .. stored - 1] and input[0 .. depth - 1] only. */
static int masks_ok(const mcugen_sparse_weights *filter, int32_t units, int32_t depth)
{
    if (filter == NULL || filter->mask == NULL || filter->mask_bytes != (depth + 7) / 8 ||
        filter->stored < 0 || (filter->stored > 0 && filter->values == NULL)) {
        return 0;
    }
    int32_t count = 0;
    for (int32_t u = 0; u < units; ++u) {
        const uint8_t *row = filter->mask + u * filter->mask_bytes;
        for (int32_t byte = 0; byte < filter->mask_bytes; ++byte) {
            for (int32_t bit = 0; bit < 8; ++bit) {
                if ((row[byte] >> bit) & 1u) {
                    if (byte * 8 + bit >= depth) {
                        return 0;
                    }
                    ++count;
                }
            }
        }
    }
    return count == filter->stored;
}

static int params_ok(const mcugen_fc_params *params, const mcugen_per_channel_quant_params *quant,
                     int32_t units, int real_scale)
{
    const mcugen_activation act = params->activation;
    if (params->filter_offset != 0 || params->input_offset < -127 || params->input_offset > 128 ||
        act.min < INT8_MIN || act.max > INT8_MAX || act.min > act.max ||
        (params->real_scale != NULL) != real_scale) {
        return 0;
    }
    if (real_scale) {
        return 1;
    }
    if (quant == NULL || quant->multiplier == NULL || quant->shift == NULL) {
        return 0;
    }
    const int32_t count = params->per_channel ? units : 1;
    for (int32_t u = 0; u < count; ++u) {
        if (quant->shift[u] < -31 || quant->shift[u] > 30) {
            return 0;
        }
    }
    return 1;
}

/* sum of w * (x[d] + x_offset) over the stored weights of one row, modulo 2^32; advances
 * *values past the row's weights. */
static int32_t sparse_dot_s8(const int8_t *x, const uint8_t *mask, int32_t mask_bytes,
                             const int8_t **values, int32_t x_offset)
{
    uint32_t acc = 0;
    const int8_t *w = *values;
    for (int32_t byte = 0; byte < mask_bytes; ++byte) {
        uint32_t bits = mask[byte];
        const int8_t *xs = x + byte * 8;
        for (int32_t bit = 0; bits != 0u; ++bit, bits >>= 1) {
            if (bits & 1u) {
                acc += (uint32_t)((int32_t)*w++ * ((int32_t)xs[bit] + x_offset));
            }
        }
    }
    *values = w;
    return (int32_t)acc;
}

/* LiteRT's double-precision rescale, or NULL for TFLM's fixed point: passed in by the public
 * entry points so that firmware using only the fixed point links no double arithmetic. */
typedef int32_t (*requantize_real_fn)(int64_t acc, double scale);

static mcugen_status fully_connected_sparse_s8(
    const mcugen_fc_params *params, const mcugen_per_channel_quant_params *quant,
    const mcugen_dims *input_dims, const int8_t *input, const mcugen_dims *filter_dims,
    const mcugen_sparse_weights *filter, const mcugen_dims *bias_dims, const int32_t *bias,
    const mcugen_dims *output_dims, int8_t *output, requantize_real_fn requantize_real)
{
    if (params == NULL || input == NULL || output == NULL || !dims_flat(input_dims) ||
        !dims_flat(filter_dims) || !dims_flat(output_dims)) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t batch = input_dims->n, depth = input_dims->c, units = output_dims->c;
    if (filter_dims->n != depth || filter_dims->c != units || output_dims->n != batch ||
        !params_ok(params, quant, units, requantize_real != NULL) || !masks_ok(filter, units, depth)) {
        return MCUGEN_ARG_ERROR;
    }
    if (bias != NULL && (bias_dims == NULL || bias_dims->n * bias_dims->h * bias_dims->w *
                                                      bias_dims->c != units)) {
        return MCUGEN_ARG_ERROR;
    }
    for (int32_t b = 0; b < batch; ++b) {
        const int8_t *row = input + b * depth;
        const int8_t *values = filter->values;
        int8_t *out = output + b * units;
        for (int32_t u = 0; u < units; ++u) {
            const int32_t q = params->per_channel ? u : 0;
            int32_t acc = sparse_dot_s8(row, filter->mask + u * filter->mask_bytes,
                                        filter->mask_bytes, &values, params->input_offset);
            if (bias != NULL) {
                acc = wrap_add(acc, bias[u]);
            }
            const int32_t scaled =
                requantize_real != NULL ? requantize_real(acc, params->real_scale[q])
                           : mcugen_requantize(acc, quant->multiplier[q], quant->shift[q]);
            const int32_t y = wrap_add(scaled, params->output_offset);
            out[u] = (int8_t)mcugen_clamp(y, params->activation.min, params->activation.max);
        }
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_fully_connected_sparse_s8(
    const mcugen_context *ctx, const mcugen_fc_params *params,
    const mcugen_per_channel_quant_params *quant, const mcugen_dims *input_dims,
    const int8_t *input, const mcugen_dims *filter_dims, const mcugen_sparse_weights *filter,
    const mcugen_dims *bias_dims, const int32_t *bias, const mcugen_dims *output_dims,
    int8_t *output)
{
    (void)ctx; /* no scratch */
    return fully_connected_sparse_s8(params, quant, input_dims, input, filter_dims, filter,
                                     bias_dims, bias, output_dims, output, NULL);
}

mcugen_status mcugen_fully_connected_sparse_s8_real_scale(
    const mcugen_context *ctx, const mcugen_fc_params *params, const mcugen_dims *input_dims,
    const int8_t *input, const mcugen_dims *filter_dims, const mcugen_sparse_weights *filter,
    const mcugen_dims *bias_dims, const int32_t *bias, const mcugen_dims *output_dims,
    int8_t *output)
{
    (void)ctx;
    return fully_connected_sparse_s8(params, NULL, input_dims, input, filter_dims, filter,
                                     bias_dims, bias, output_dims, output,
                                     mcugen_requantize_double);
}
