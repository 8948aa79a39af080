/* mcugen runtime: softmax over the last axis, int8 input, int8 or int16 output (TFLite
 * SOFTMAX), and the gemmlowp fixed-point functions it is built from.
 *
 * Per row, as TFLite's reference kernel: diff = x - max(row); elements with diff < diff_min
 * output the minimum and add nothing; the others are rescaled into Q5.26, exponentiated
 * (exp_on_negative_values, Q0.31), summed in Q12.19, and scaled by the reciprocal of the
 * sum. No lookup tables: every value is computed in fixed point, bit-exact with gemmlowp.
 * The output zero point is the type's minimum (-128 or -32768), as TFLite requires.
 */
#ifndef MCUGEN_SOFTMAX_H
#define MCUGEN_SOFTMAX_H

#include <stdint.h>

#include "mcugen_nn_types.h"

/* Rows longer than this could overflow the int32 sum of exponentials. */
#define MCUGEN_SOFTMAX_MAX_ROW 4095

typedef struct {
    int32_t input_multiplier; /* beta * input_scale in Q5.26 steps, from TFLite's Prepare */
    int32_t input_left_shift; /* >= 0 */
    int32_t diff_min;         /* <= 0: smaller differences are ignored */
} mcugen_softmax_params;

/* Return MCUGEN_ARG_ERROR on bad arguments, or when a row's sum of exponentials needs a
 * right shift outside [0, 31] (TFLite aborts there: >= 512 elements tied at the maximum for
 * int8 output). */
mcugen_status mcugen_softmax_s8(const mcugen_softmax_params *params, int32_t num_rows,
                                int32_t row_size, const int8_t *input, int8_t *output);

mcugen_status mcugen_softmax_s8_s16(const mcugen_softmax_params *params, int32_t num_rows,
                                    int32_t row_size, const int8_t *input, int16_t *output);

/* gemmlowp exp_on_negative_values: exp(a) for a <= 0 in Q5.26, result in Q0.31. */
int32_t mcugen_exp_on_negative_values_q5(int32_t a);

/* gemmlowp one_over_one_plus_x_for_x_in_0_1: 1 / (1 + a) for a in [0, 1), Q0.31 in and out. */
int32_t mcugen_one_over_one_plus_x_for_x_in_0_1(int32_t a);

#endif /* MCUGEN_SOFTMAX_H */
