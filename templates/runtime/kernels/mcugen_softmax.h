/* mcugen runtime: softmax over the last axis, int8 input, int8 or int16 output (TFLite
 * SOFTMAX), int16 and float32 softmax, and the gemmlowp fixed-point functions they use.
 *
 * int8 input, per row, as TFLite's reference kernel: diff = x - max(row); elements with
 * diff < diff_min output the minimum and add nothing; the others are rescaled into Q5.26,
 * exponentiated (exp_on_negative_values, Q0.31), summed in Q12.19, and scaled by the
 * reciprocal of the sum, all in gemmlowp fixed point. The output zero point is the type's
 * minimum (-128 or -32768), as TFLite requires.
 * int16 input (zero point 0, output Q0.15) follows reference_ops::SoftmaxInt16: exp and
 * 1/(1+x) come from 513-entry tables that mcugen builds at build time and places in flash.
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

/* int16 softmax (reference_ops::SoftmaxInt16): input zero point 0, output Q0.15. */
typedef struct {
    int32_t input_multiplier; /* beta * input_scale / (10 / 65535), TFLite's QuantizeMultiplier */
    int32_t input_shift;      /* > 0 is a left shift */
} mcugen_softmax_s16_params;

/* Rows of at most this many int16 elements keep the int32 sum of Q0.15 exponentials exact. */
#define MCUGEN_SOFTMAX_S16_MAX_ROW 65536

/* exp_lut and one_over_one_plus_x_lut: TFLite's 513-entry int16 tables, built by mcugen. */
mcugen_status mcugen_softmax_s16(const mcugen_softmax_s16_params *params, const int16_t *exp_lut,
                                 const int16_t *one_over_one_plus_x_lut, int32_t num_rows,
                                 int32_t row_size, const int16_t *input, int16_t *output);

/* TFLite's LUTLookup for int16 value in [-32768, 32767]: 513-entry table, 512 segments of
 * 128 steps, linear interpolation rounded half up. */
int16_t mcugen_lut_lookup_s16(int32_t value, const int16_t *lut);

/* float32 softmax (reference_ops::Softmax<float>): expf((x - max) * beta), then / sum; exact
 * against TFLite only with the same C library's expf. */
mcugen_status mcugen_softmax_f32(float beta, int32_t num_rows, int32_t row_size,
                                 const float *input, float *output);

/* gemmlowp exp_on_negative_values: exp(a) for a <= 0 in Q5.26, result in Q0.31. */
int32_t mcugen_exp_on_negative_values_q5(int32_t a);

/* The same for a in Q(integer_bits).(31 - integer_bits), integer_bits in [1, 5]. */
int32_t mcugen_exp_on_negative_values(int32_t a, int32_t integer_bits);

/* gemmlowp one_minus_x_over_one_plus_x_for_x_in_0_1: (1 - a) / (1 + a), Q0.31 in and out. */
int32_t mcugen_one_minus_x_over_one_plus_x_for_x_in_0_1(int32_t a);

/* gemmlowp one_over_one_plus_x_for_x_in_0_1: 1 / (1 + a) for a in [0, 1), Q0.31 in and out. */
int32_t mcugen_one_over_one_plus_x_for_x_in_0_1(int32_t a);

#endif /* MCUGEN_SOFTMAX_H */
