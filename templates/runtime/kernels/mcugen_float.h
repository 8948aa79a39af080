/* mcugen runtime: float32 CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED,
 * AVERAGE_POOL_2D and MAX_POOL_2D (the float islands of a model, or a whole float model).
 *
 * Each kernel runs TensorFlow Lite's reference float kernel (kernels/internal/reference/
 * conv.h, depthwiseconv_float.h, transpose_conv.h, fully_connected.h, pooling.h) in the same
 * order, so that the float32 results are the same to the bit:
 * - a sum starts at +0.0f and adds one rounded product (or input) per tap, in the reference's
 *   loop order; taps in the padding are skipped, not added as zero;
 * - the bias is added after the sum (0.0f when there is none, as the reference does, which
 *   turns a -0.0 sum into +0.0), except TRANSPOSE_CONV, which adds a present bias only;
 * - the fused activation is std::min(std::max(x, min), max): NaN passes, and with no
 *   activation an infinite result becomes +-FLT_MAX;
 * - the average divides the window sum by the number of in-bounds taps.
 * The product and the sum must stay two roundings: compile with -ffp-contract=off (mcugen.mk
 * and the CMake target do), or an FMA changes the last bit.
 */
#ifndef MCUGEN_FLOAT_H
#define MCUGEN_FLOAT_H

#include <stdint.h>

#include "mcugen_nn_types.h"

/* Fused activation clamp in float (CalculateActivationRange<float>). */
typedef struct {
    float min;
    float max;
} mcugen_float_activation;

typedef struct {
    mcugen_tile stride;    /* >= 1 */
    mcugen_tile padding;   /* elements before the first input column (w) / row (h) */
    mcugen_tile dilation;  /* >= 1 */
    int32_t ch_mult;       /* depthwise only: output channels per input channel */
    mcugen_float_activation activation;
} mcugen_conv_f32_params;

typedef struct {
    mcugen_tile stride;
    mcugen_tile padding;
    mcugen_tile filter;
    mcugen_float_activation activation;
} mcugen_pool_f32_params;

/* filter [out_c, kh, kw, in_c]; bias NULL or out_c values. */
mcugen_status mcugen_convolve_f32(const mcugen_conv_f32_params *params,
                                  const mcugen_dims *input_dims, const float *input,
                                  const mcugen_dims *filter_dims, const float *filter,
                                  const float *bias,
                                  const mcugen_dims *output_dims, float *output);

/* filter [1, kh, kw, out_c], out_c = in_c * ch_mult. */
mcugen_status mcugen_depthwise_conv_f32(const mcugen_conv_f32_params *params,
                                        const mcugen_dims *input_dims, const float *input,
                                        const mcugen_dims *filter_dims, const float *filter,
                                        const float *bias,
                                        const mcugen_dims *output_dims, float *output);

/* filter [out_c, kh, kw, in_c]; the output is the accumulator (zeroed first), so it must not
 * overlap the input. dilation and ch_mult are unused. */
mcugen_status mcugen_transpose_conv_f32(const mcugen_conv_f32_params *params,
                                        const mcugen_dims *input_dims, const float *input,
                                        const mcugen_dims *filter_dims, const float *filter,
                                        const float *bias,
                                        const mcugen_dims *output_dims, float *output);

/* input [batches, depth], weights [units, depth], output [batches, units]. */
mcugen_status mcugen_fully_connected_f32(const mcugen_float_activation *activation,
                                         int32_t batches, int32_t depth, int32_t units,
                                         const float *input, const float *weights,
                                         const float *bias, float *output);

/* Returns MCUGEN_ARG_ERROR when a window lies wholly in the padding (TFLite fails too). */
mcugen_status mcugen_avgpool_f32(const mcugen_pool_f32_params *params,
                                 const mcugen_dims *input_dims, const float *input,
                                 const mcugen_dims *output_dims, float *output);

mcugen_status mcugen_maxpool_f32(const mcugen_pool_f32_params *params,
                                 const mcugen_dims *input_dims, const float *input,
                                 const mcugen_dims *output_dims, float *output);

#endif /* MCUGEN_FLOAT_H */
