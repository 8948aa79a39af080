/* mcugen runtime: int8 ADD with numpy-style broadcasting (TFLite ADD).
 *
 * The arithmetic is TFLite's reference AddFunc: each input plus its offset is shifted left by
 * left_shift, rescaled by its own multiplier, the two are summed, rescaled by the output
 * multiplier, offset by the output zero point and clamped to the fused activation.
 *
 * Broadcasting is resolved at build time into a loop nest of up to MCUGEN_ADD_MAX_LOOPS
 * levels: the output is written in order, and each input advances by its own element stride
 * per level (0 where that input is broadcast along the level).
 */
#ifndef MCUGEN_ADD_H
#define MCUGEN_ADD_H

#include <stdint.h>

#include "mcugen_nn_types.h"

#define MCUGEN_ADD_MAX_LOOPS 6

typedef struct {
    int32_t extent[MCUGEN_ADD_MAX_LOOPS];        /* outermost first; unused levels are 1 */
    int32_t input1_stride[MCUGEN_ADD_MAX_LOOPS]; /* elements per step of each level */
    int32_t input2_stride[MCUGEN_ADD_MAX_LOOPS];
} mcugen_broadcast;

typedef struct {
    mcugen_broadcast loop;
    mcugen_activation activation;
} mcugen_add_params;

typedef struct {
    int32_t input1_offset;     /* -input1 zero point */
    int32_t input1_multiplier;
    int32_t input1_shift;      /* <= 0 */
    int32_t input2_offset;     /* -input2 zero point */
    int32_t input2_multiplier;
    int32_t input2_shift;      /* <= 0 */
    int32_t output_offset;     /* output zero point */
    int32_t output_multiplier;
    int32_t output_shift;      /* <= 0 */
    int32_t left_shift;        /* 20 for int8 */
} mcugen_add_quant_params;

mcugen_status mcugen_add_s8(const mcugen_add_params *params,
                            const mcugen_add_quant_params *quant,
                            const int8_t *input1, const int8_t *input2, int8_t *output);

#endif /* MCUGEN_ADD_H */
