/* mcugen runtime: int8 FULLY_CONNECTED (CMSIS-NN-style API).
 *
 * For each batch row b and output unit u:
 *   acc = sum_d (filter[u][d] + filter_offset) * (input[b][d] + input_offset)   (int32)
 *   acc += bias[u] (when bias is not NULL)
 *   y   = requantize(acc) + output_offset, clamped to the activation range.
 *
 * Dims (CMSIS-NN's convention):
 *   input   {n = batch, c = accum_depth}     (h = w = 1; mcugen flattens any rank as TFLite)
 *   filter  {n = accum_depth, c = units}     (h = w = 1), data laid out as TFLite stores it:
 *           units rows of accum_depth int8 values
 *   bias    units int32 values (any dims whose product is units), or NULL
 *   output  {n = batch, c = units}           (h = w = 1)
 *
 * Requantization, two ways, one entry point each (so that a firmware with only the first never
 * links double arithmetic):
 *   mcugen_fully_connected_s8, real_scale == NULL: TFLM's MultiplyByQuantizedMultiplier with
 *       quant->multiplier/shift (mcugen_requantize).
 *   mcugen_fully_connected_s8_real_scale, real_scale != NULL: LiteRT's reference kernel, which
 *       rescales in double precision:
 *       round(double(acc) * real_scale[u]), ties away from zero, then to int32 (a result
 *       outside int32 gives INT32_MIN, as the x86-64 LiteRT build does). Needs IEEE double
 *       arithmetic (soft-float on a single-precision FPU).
 * per_channel == 0 means per-tensor: element 0 of quant's arrays (or of real_scale) serves
 * every unit, so the emitter stores one value instead of `units` copies.
 * Returns MCUGEN_ARG_ERROR for inconsistent dims or parameters.
 */
#ifndef MCUGEN_FULLY_CONNECTED_H
#define MCUGEN_FULLY_CONNECTED_H

#include <stdint.h>

#include "mcugen_nn_types.h"
#include "mcugen_rescale.h"

typedef struct {
    int32_t input_offset;         /* -input zero point, in [-127, 128] */
    int32_t filter_offset;        /* -filter zero point, in [-127, 128]; 0 for per-channel */
    int32_t output_offset;        /* output zero point */
    mcugen_activation activation; /* clamp in the output's quantized domain, within int8 */
    int32_t per_channel;          /* 1: one multiplier/shift (or real scale) per unit; 0: one */
    const double *real_scale;     /* non-NULL: LiteRT's double-precision requantization */
    /* Optional, int8 with filter_offset 0 (NULL: the kernel computes them): per unit,
     * bias + input_offset * (the sum of the unit's weights), modulo 2^32, as
     * mcugen_conv_params.kernel_sums; mcugen makes them at build time for the fast paths. */
    const int32_t *kernel_sums;
    /* How the filter is stored: 0, TFLite's rows [units][depth]; MCUGEN_FC_LAYOUT_PAIRS4
     * (mcugen_conv_fast.h, depth % 4 == 0 only), what mcugen builds for the Cortex-M4/M7 fast
     * path: the units in blocks of four, each block group by group (four depth values, 16
     * bytes), a group's words 0, 1 the block's units 0 and 1, words 2, 3 its units 2 and 3;
     * word j of a pair (A, B) holds depths d = 4 g + j and d + 2 as the bytes
     * [B(d) ^ 0x80, A(d), B(d + 2) ^ 0x80, A(d + 2)]; the units % 4 last units as plain rows.
     * As many bytes, so the same flash. */
    int32_t filter_layout;
    /* 1 when mcugen has checked at build time that every unit takes the DSP path's check-free
     * requantization (mcugen_conv_fast_dsp.c's fc_quick: shifts in [-22, -1], no negative
     * multiplier, output zero point in [-128, 128], the int8 clamp, |bias| + depth times the
     * largest product < 2^30): that path then skips the check on every call, and
     * mcugen_fully_connected_s8 its scan of the shifts' range. 0: checked there. */
    int32_t rq_checked;
} mcugen_fc_params;

mcugen_status mcugen_fully_connected_s8(const mcugen_context *ctx, const mcugen_fc_params *params,
                                        const mcugen_per_channel_quant_params *quant,
                                        const mcugen_dims *input_dims, const int8_t *input,
                                        const mcugen_dims *filter_dims, const int8_t *filter,
                                        const mcugen_dims *bias_dims, const int32_t *bias,
                                        const mcugen_dims *output_dims, int8_t *output);

/* LiteRT's double-precision requantization (params->real_scale must be set); no quant. */
mcugen_status mcugen_fully_connected_s8_real_scale(
    const mcugen_context *ctx, const mcugen_fc_params *params, const mcugen_dims *input_dims,
    const int8_t *input, const mcugen_dims *filter_dims, const int8_t *filter,
    const mcugen_dims *bias_dims, const int32_t *bias, const mcugen_dims *output_dims,
    int8_t *output);

/* Scratch bytes mcugen_fully_connected_s8 needs in ctx->buf (mcugen_conv_fast.h). */
int32_t mcugen_fully_connected_s8_get_buffer_size(const mcugen_dims *filter_dims);

/* int16x8: int16 input and output (zero point 0: input_offset and output_offset must be 0),
 * int8 filter (filter_offset as for int8), int64 bias (an int32 bias is widened by mcugen at
 * build time). The sum is exact in 64 bits, then + bias, then rescale (mcugen_rescale.h: TFLM's
 * fixed point or LiteRT's double), then clamp within int16. params->per_channel and
 * params->real_scale are unused (the rescale carries them). Same dims as the int8 kernel. */
mcugen_status mcugen_fully_connected_s16(const mcugen_context *ctx, const mcugen_fc_params *params,
                                         const mcugen_rescale_params *rescale,
                                         const mcugen_dims *input_dims, const int16_t *input,
                                         const mcugen_dims *filter_dims, const int8_t *filter,
                                         const mcugen_dims *bias_dims, const int64_t *bias,
                                         const mcugen_dims *output_dims, int16_t *output);

#endif /* MCUGEN_FULLY_CONNECTED_H */
