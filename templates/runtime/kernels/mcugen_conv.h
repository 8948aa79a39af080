/* mcugen runtime: int8 CONV_2D and DEPTHWISE_CONV_2D (CMSIS-NN-style API).
 *
 * Arithmetic of TFLite's reference_integer_ops::ConvPerChannel / DepthwiseConvPerChannel:
 * for each output element, acc = sum over the filter taps that fall inside the input of
 * filter * (input + input_offset) in int32 (taps in the padding are skipped), then + bias,
 * then mcugen_requantize with the output channel's multiplier and shift, + output_offset,
 * clamp to the activation range.
 *
 * Layouts are TFLite's, NHWC:
 *   input   {n, h, w, c}
 *   filter  conv {n = out_c, h = kh, w = kw, c = in_c / groups};  depthwise {1, kh, kw, out_c}
 *   bias    out_c int32 values (any dims whose product is out_c), or NULL for no bias
 *   output  {n, out_h, out_w, out_c}
 * A conv whose filter depth divides the input depth is a grouped convolution (as in TFLite):
 * output channel o reads input channels [g * depth, (g + 1) * depth) with
 * g = o / (out_c / groups). Depthwise output channel i * ch_mult + m reads input channel i.
 *
 * quant holds one multiplier and one shift per output channel (a per-tensor weight scale is
 * repeated, as TFLite does). Returns MCUGEN_ARG_ERROR for inconsistent dims or parameters.
 */
#ifndef MCUGEN_CONV_H
#define MCUGEN_CONV_H

#include <stdint.h>

#include "mcugen_nn_types.h"
#include "mcugen_rescale.h"

typedef struct {
    int32_t input_offset;         /* -input zero point, in [-127, 128] */
    int32_t output_offset;        /* output zero point */
    mcugen_tile stride;           /* >= 1 */
    mcugen_tile padding;          /* top (h) and left (w) padding, >= 0 */
    mcugen_tile dilation;         /* >= 1 */
    mcugen_activation activation; /* clamp in the output's quantized domain, within int8 */
    /* Optional, int8 only (NULL: the kernel computes them): per output channel,
     * bias + input_offset * (the sum of the channel's weights), modulo 2^32. The Helium path
     * needs them on every call; mcugen computes them at build time for --target cortex-m55. */
    const int32_t *kernel_sums;
    /* Optional, int8 only (NULL: the kernel builds it in the scratch): the DSP path's
     * requantization table (mcugen_conv_fast.h), four int32 per output channel, then one:
     * 1 when every channel takes the fast requantization, else 0. mcugen makes
     * it at build time for the stripes of a tiled chain on Cortex-M4/M7, which would otherwise
     * rebuild it on every stripe. Its maker vouches for quant's shifts (in [-31, 30]): with a
     * table the kernel does not check them. */
    const int32_t *rq_table;
} mcugen_conv_params;

typedef struct {
    int32_t input_offset;
    int32_t output_offset;
    mcugen_tile stride;
    mcugen_tile padding;
    mcugen_tile dilation;
    mcugen_activation activation;
    int32_t ch_mult; /* depth multiplier: out_c = in_c * ch_mult */
    const int32_t *rq_table; /* optional: as mcugen_conv_params.rq_table, then per channel the
                              * starting sum, per quad and tap the widened weights, and
                              * whether every channel is fast (DSP; dsp_table.py) */
    /* Optional, int8, ch_mult 1, channels >= 8 (NULL: the kernel builds it in the scratch): the
     * Helium path's constants of its eight-channel blocks (mcugen_conv_fast.h), made at build
     * time for the stripes of a tiled chain on Cortex-M55 (mcugen/ops/conv/mve_table.py). */
    const int32_t *mve_table;
} mcugen_dw_conv_params;

mcugen_status mcugen_convolve_s8(const mcugen_context *ctx, const mcugen_conv_params *params,
                                 const mcugen_per_channel_quant_params *quant,
                                 const mcugen_dims *input_dims, const int8_t *input,
                                 const mcugen_dims *filter_dims, const int8_t *filter,
                                 const mcugen_dims *bias_dims, const int32_t *bias,
                                 const mcugen_dims *output_dims, int8_t *output);

/* Scratch bytes mcugen_convolve_s8 needs in ctx->buf (the fast paths of mcugen_conv_fast.h). */
int32_t mcugen_convolve_s8_get_buffer_size(const mcugen_dims *input_dims,
                                           const mcugen_dims *filter_dims);

mcugen_status mcugen_depthwise_conv_s8(const mcugen_context *ctx,
                                       const mcugen_dw_conv_params *params,
                                       const mcugen_per_channel_quant_params *quant,
                                       const mcugen_dims *input_dims, const int8_t *input,
                                       const mcugen_dims *filter_dims, const int8_t *filter,
                                       const mcugen_dims *bias_dims, const int32_t *bias,
                                       const mcugen_dims *output_dims, int8_t *output);

/* Scratch bytes mcugen_depthwise_conv_s8 needs in ctx->buf (mcugen_conv_fast.h). */
int32_t mcugen_depthwise_conv_s8_get_buffer_size(const mcugen_dims *input_dims,
                                                 const mcugen_dims *filter_dims);

/* The calls of a tiled chain's later stripes (mcugen/codegen/stripes.py): the arithmetic of
 * mcugen_convolve_s8 / mcugen_depthwise_conv_s8 without their argument checks, which cost a
 * stripe of a few pixels about as much as a pixel. The build checked the op (its prepare
 * rules) and made every stripe's dims, and the chain's first call of each op is the checked
 * kernel's. The checked kernel's work, shared code: the fast path, else the portable loops. */
mcugen_status mcugen_convolve_stripe_s8(const mcugen_context *ctx, const mcugen_conv_params *params,
                                        const mcugen_per_channel_quant_params *quant,
                                        const mcugen_dims *input_dims, const int8_t *input,
                                        const mcugen_dims *filter_dims, const int8_t *filter,
                                        const mcugen_dims *bias_dims, const int32_t *bias,
                                        const mcugen_dims *output_dims, int8_t *output);

mcugen_status mcugen_depthwise_conv_stripe_s8(const mcugen_context *ctx,
                                              const mcugen_dw_conv_params *params,
                                              const mcugen_per_channel_quant_params *quant,
                                              const mcugen_dims *input_dims, const int8_t *input,
                                              const mcugen_dims *filter_dims, const int8_t *filter,
                                              const mcugen_dims *bias_dims, const int32_t *bias,
                                              const mcugen_dims *output_dims, int8_t *output);

/* Built for size (-Os), a stripe calls the checked kernel: the checks' few instructions per
 * stripe are not worth the code of a second entry (kws_dscnn's runtime stays under 16 KB). */
#if defined(__OPTIMIZE_SIZE__)
#define mcugen_convolve_stripe_s8 mcugen_convolve_s8
#define mcugen_depthwise_conv_stripe_s8 mcugen_depthwise_conv_s8
#endif

/* int16x8: int16 input and output (zero point 0, so input_offset and output_offset must be 0),
 * int8 filter, int64 bias (an int32 bias is widened by mcugen at build time; the rescale's
 * accumulator_bits then says 32). The sum is exact in 64 bits, then + bias, then rescale
 * (mcugen_rescale.h), then clamp to the activation range (within int16). Same layouts and
 * grouped-convolution rule as the int8 kernel. */
mcugen_status mcugen_convolve_s16(const mcugen_context *ctx, const mcugen_conv_params *params,
                                  const mcugen_rescale_params *rescale,
                                  const mcugen_dims *input_dims, const int16_t *input,
                                  const mcugen_dims *filter_dims, const int8_t *filter,
                                  const mcugen_dims *bias_dims, const int64_t *bias,
                                  const mcugen_dims *output_dims, int16_t *output);

mcugen_status mcugen_depthwise_conv_s16(const mcugen_context *ctx,
                                        const mcugen_dw_conv_params *params,
                                        const mcugen_rescale_params *rescale,
                                        const mcugen_dims *input_dims, const int16_t *input,
                                        const mcugen_dims *filter_dims, const int8_t *filter,
                                        const mcugen_dims *bias_dims, const int64_t *bias,
                                        const mcugen_dims *output_dims, int16_t *output);

#endif /* MCUGEN_CONV_H */
