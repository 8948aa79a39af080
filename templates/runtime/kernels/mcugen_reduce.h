/* mcugen runtime: reductions over any set of axes (TFLite MEAN, SUM, REDUCE_MAX) and ARG_MAX.
 *
 * Quantized MEAN and SUM (int8, int16) are TFLite's reference QuantizedMeanOrSum: the int32
 * sum over the reduced axes, plus sum_offset (-input_zero_point * count), is requantized
 * (MultiplyByQuantizedMultiplier; for MEAN the multiplier already folds in 1/count), offset by
 * the output zero point and clamped. Float MEAN and SUM add each output's elements one by one,
 * in the input's row-major order, to a float accumulator (0.0f, or the first element when
 * seed_with_first is set), MEAN then divides by the count: the same float operations in the
 * same order as TFLite's reference kernels. REDUCE_MAX keeps `in > max ? in : max`.
 *
 * The axes are resolved at build time into two loop nests over the input: `outer` walks the
 * kept dimensions in output order (one output element per step) and `inner` walks the reduced
 * dimensions. Each output is accumulated in a register, so no scratch memory is needed.
 */
#ifndef MCUGEN_REDUCE_H
#define MCUGEN_REDUCE_H

#include <stdint.h>

#include "mcugen_nn_types.h"

#define MCUGEN_REDUCE_MAX_LOOPS 4

typedef struct {
    int32_t extent[MCUGEN_REDUCE_MAX_LOOPS]; /* outermost first; unused levels are 1 */
    int32_t stride[MCUGEN_REDUCE_MAX_LOOPS]; /* input elements per step of each level */
} mcugen_loop_nest;

typedef struct {
    mcugen_loop_nest outer;  /* kept dimensions, in output order */
    mcugen_loop_nest inner;  /* reduced dimensions, in input order */
    int32_t seed_with_first; /* float SUM / MAX: start from the first element (LiteRT's
                                all-axes path) instead of the neutral value */
} mcugen_reduce_params;

typedef struct {
    int32_t sum_offset;    /* -input_zero_point * count */
    int32_t multiplier;    /* input_scale / output_scale (/ count for MEAN), TFLite's derivation */
    int32_t shift;         /* > 0 is a left shift */
    int32_t output_offset; /* output zero point */
    int32_t output_min;    /* the output dtype's range */
    int32_t output_max;
} mcugen_reduce_quant_params;

/* Quantized MEAN or SUM (the multiplier decides which). */
mcugen_status mcugen_reduce_sum_requant_s8(const mcugen_reduce_params *params,
                                           const mcugen_reduce_quant_params *quant,
                                           const int8_t *input, int8_t *output);

mcugen_status mcugen_reduce_sum_requant_s16(const mcugen_reduce_params *params,
                                            const mcugen_reduce_quant_params *quant,
                                            const int16_t *input, int16_t *output);

/* Float SUM (mean == 0) or MEAN (mean != 0: the sum divided by (float)count). */
mcugen_status mcugen_reduce_sum_f32(const mcugen_reduce_params *params, int32_t mean,
                                    const float *input, float *output);

mcugen_status mcugen_reduce_max_s8(const mcugen_reduce_params *params, const int8_t *input,
                                   int8_t *output);

mcugen_status mcugen_reduce_max_f32(const mcugen_reduce_params *params, const float *input,
                                    float *output);

typedef struct {
    int32_t outer;     /* product of the dimensions before the axis */
    int32_t axis_size; /* >= 1 */
    int32_t inner;     /* product of the dimensions after the axis */
    int32_t nan_aware; /* float only: skip NaNs, as LiteRT does; 0: plain '>' as TFLM */
} mcugen_arg_max_params;

/* The first index of the maximum along the axis, as int32. */
mcugen_status mcugen_arg_max_s8(const mcugen_arg_max_params *params, const int8_t *input,
                                int32_t *output);

mcugen_status mcugen_arg_max_f32(const mcugen_arg_max_params *params, const float *input,
                                 int32_t *output);

#endif /* MCUGEN_REDUCE_H */
