/* mcugen runtime: int8 MEAN over any set of axes (TFLite MEAN).
 *
 * The arithmetic is TFLite's reference QuantizedMeanOrSum: the int32 sum over the reduced
 * axes, minus input_zero_point * count, is requantized by a multiplier that already folds in
 * 1/count, offset by the output zero point and clamped to int8.
 *
 * The axes are resolved at build time into two loop nests over the input: `outer` walks the
 * kept dimensions in output order (one output element per iteration) and `inner` walks the
 * reduced dimensions. Each output is summed in a register, so no scratch memory is needed.
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
    mcugen_loop_nest outer; /* kept dimensions, in output order */
    mcugen_loop_nest inner; /* reduced dimensions */
} mcugen_mean_params;

typedef struct {
    int32_t sum_offset;    /* -input_zero_point * count */
    int32_t multiplier;    /* input_scale / output_scale / count, TFLite's derivation */
    int32_t shift;         /* > 0 is a left shift */
    int32_t output_offset; /* output zero point */
} mcugen_mean_quant_params;

mcugen_status mcugen_mean_s8(const mcugen_mean_params *params,
                             const mcugen_mean_quant_params *quant,
                             const int8_t *input, int8_t *output);

#endif /* MCUGEN_REDUCE_H */
