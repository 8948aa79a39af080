/* mcugen runtime: int8 FULLY_CONNECTED over sparse weights (mcugen build --sparse).
 *
 * The same arithmetic as mcugen_fully_connected_s8 (mcugen_fully_connected.h), for weights
 * stored as:
 *   mask    units rows of mask_bytes = (accum_depth + 7) / 8 bytes; bit (d % 8) of byte d / 8
 *           of row u is set when weight [u][d] is stored (bits past accum_depth are 0)
 *   values  the stored weights, row after row, in depth order (`stored` of them; NULL if none)
 * A weight not stored is 0. With filter_offset 0 (required) a zero weight adds nothing to
 * TFLite's int32 accumulator, so the sum over the stored weights is the dense sum, bit for bit.
 * The kernel checks that the masks set exactly `stored` bits, all within accum_depth, before it
 * reads a value. Returns MCUGEN_ARG_ERROR for inconsistent dims, parameters or masks.
 */
#ifndef MCUGEN_FULLY_CONNECTED_SPARSE_H
#define MCUGEN_FULLY_CONNECTED_SPARSE_H

#include <stdint.h>

#include "mcugen_fully_connected.h"
#include "mcugen_nn_types.h"

typedef struct {
    const uint8_t *mask;  /* units * mask_bytes bytes */
    const int8_t *values; /* `stored` non-zero weights */
    int32_t mask_bytes;   /* (accum_depth + 7) / 8 */
    int32_t stored;
} mcugen_sparse_weights;

/* TFLM's fixed-point requantization (params->real_scale == NULL). */
mcugen_status mcugen_fully_connected_sparse_s8(
    const mcugen_context *ctx, const mcugen_fc_params *params,
    const mcugen_per_channel_quant_params *quant, const mcugen_dims *input_dims,
    const int8_t *input, const mcugen_dims *filter_dims, const mcugen_sparse_weights *filter,
    const mcugen_dims *bias_dims, const int32_t *bias, const mcugen_dims *output_dims,
    int8_t *output);

/* LiteRT's double-precision requantization (params->real_scale set); no quant. */
mcugen_status mcugen_fully_connected_sparse_s8_real_scale(
    const mcugen_context *ctx, const mcugen_fc_params *params, const mcugen_dims *input_dims,
    const int8_t *input, const mcugen_dims *filter_dims, const mcugen_sparse_weights *filter,
    const mcugen_dims *bias_dims, const int32_t *bias, const mcugen_dims *output_dims,
    int8_t *output);

#endif /* MCUGEN_FULLY_CONNECTED_SPARSE_H */
