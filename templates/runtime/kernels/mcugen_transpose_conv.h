/* mcugen runtime: int8 and int16x8 TRANSPOSE_CONV (CMSIS-NN-style API).
 *
 * Arithmetic of TFLite's reference_integer_ops::TransposeConv (TFLM and LiteRT): every input
 * pixel (iy, ix) adds (input + input_offset) * filter[oc][ky][kx][ic] to the output pixel
 * (iy * stride.h - padding.h + ky, ix * stride.w - padding.w + kx) when that pixel is inside the
 * output; then each output gets + bias, the rescale (mcugen_rescale.h), + output_offset and the
 * activation clamp. TFLite keeps an accumulator per output element in its scratch; these
 * kernels gather each output's taps instead and need no scratch (get_buffer_size: 0, ctx may be
 * NULL), with the same integer sums.
 *
 * Layouts, NHWC:
 *   input   {n, in_h, in_w, in_c}
 *   filter  {n = out_c, h = kh, w = kw, c = in_c}
 *   bias    out_c values (int32 for s8, int64 for s16), or NULL
 *   output  {n, out_h, out_w, out_c}, not overlapping the input
 * s8: int32 sums that wrap like TFLite's.
 * s16: zero points 0 (input_offset and output_offset must be 0), int64 sums.
 * Returns MCUGEN_ARG_ERROR for inconsistent dims or parameters.
 */
#ifndef MCUGEN_TRANSPOSE_CONV_H
#define MCUGEN_TRANSPOSE_CONV_H

#include <stdint.h>

#include "mcugen_nn_types.h"
#include "mcugen_rescale.h"

typedef struct {
    int32_t input_offset;         /* -input zero point: [-127, 128] for s8, 0 for s16 */
    int32_t output_offset;        /* output zero point (0 for s16) */
    mcugen_tile stride;           /* >= 1 */
    mcugen_tile padding;          /* top (h) and left (w), >= 0 */
    mcugen_activation activation; /* clamp within the output type */
} mcugen_transpose_conv_params;

int32_t mcugen_transpose_conv_s8_get_buffer_size(const mcugen_dims *output_dims);

mcugen_status mcugen_transpose_conv_s8(const mcugen_context *ctx,
                                       const mcugen_transpose_conv_params *params,
                                       const mcugen_rescale_params *rescale,
                                       const mcugen_dims *input_dims, const int8_t *input,
                                       const mcugen_dims *filter_dims, const int8_t *filter,
                                       const mcugen_dims *bias_dims, const int32_t *bias,
                                       const mcugen_dims *output_dims, int8_t *output);

int32_t mcugen_transpose_conv_s16_get_buffer_size(const mcugen_dims *output_dims);

mcugen_status mcugen_transpose_conv_s16(const mcugen_context *ctx,
                                        const mcugen_transpose_conv_params *params,
                                        const mcugen_rescale_params *rescale,
                                        const mcugen_dims *input_dims, const int16_t *input,
                                        const mcugen_dims *filter_dims, const int8_t *filter,
                                        const mcugen_dims *bias_dims, const int64_t *bias,
                                        const mcugen_dims *output_dims, int16_t *output);

#endif /* MCUGEN_TRANSPOSE_CONV_H */
