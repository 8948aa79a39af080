/* mcugen runtime: elementwise binary ops with numpy-style broadcasting (TFLite ADD, SUB, MUL,
 * SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, PRELU), int8, int16 and float32.
 *
 * Broadcasting is resolved at build time into a loop nest of up to
 * MCUGEN_BROADCAST_MAX_LOOPS levels: the output is written in order, and each input advances by
 * its own element stride per level (0 where that input is broadcast along the level). Every
 * kernel shares that one loop; only the per-element arithmetic differs.
 *
 * The quantized arithmetic is TFLite's reference arithmetic:
 * - ADD/SUB (AddFunc): each input plus its offset is shifted left by left_shift and rescaled by
 *   its own multiplier; the sum (difference) is rescaled by the output multiplier, offset by the
 *   output zero point and clamped to the fused activation.
 * - ADD/SUB int16 power-of-two path (LiteRT only): each input is divided by 2^shift with
 *   rounding, then summed (subtracted) and clamped.
 * - SQUARED_DIFFERENCE: as SUB, then the int32 difference is squared before the output rescale.
 * - MUL: (q1 + offset1) * (q2 + offset2) rescaled once by the output multiplier.
 * - MAXIMUM/MINIMUM: the raw values compared, no rescale (as TFLite does).
 * - PRELU: x = q + input_offset; x >= 0 is rescaled by the identity multiplier, x < 0 times
 *   (alpha + alpha_offset) by the alpha multiplier; alpha is int8 for int8 and int16 inputs.
 * Multipliers and shifts are TFLite's: shift > 0 is a left shift.
 */
#ifndef MCUGEN_ELEMENTWISE_H
#define MCUGEN_ELEMENTWISE_H

#include <stdint.h>

#include "mcugen_nn_types.h"

#define MCUGEN_BROADCAST_MAX_LOOPS 6

typedef struct {
    int32_t extent[MCUGEN_BROADCAST_MAX_LOOPS];        /* outermost first; unused levels are 1 */
    int32_t input1_stride[MCUGEN_BROADCAST_MAX_LOOPS]; /* elements per step of each level */
    int32_t input2_stride[MCUGEN_BROADCAST_MAX_LOOPS];
} mcugen_broadcast;

typedef struct {
    mcugen_broadcast loop;
    mcugen_activation activation; /* quantized clamp (the dtype's range for no activation) */
} mcugen_elementwise_params;

typedef struct {
    mcugen_broadcast loop;
    float activation_min; /* -FLT_MAX for no activation, as TFLite clamps */
    float activation_max;
} mcugen_elementwise_f32_params;

/* ADD, SUB, SQUARED_DIFFERENCE. */
typedef struct {
    int32_t input1_offset; /* -input1 zero point */
    int32_t input1_multiplier;
    int32_t input1_shift;  /* <= 0 */
    int32_t input2_offset; /* -input2 zero point */
    int32_t input2_multiplier;
    int32_t input2_shift;  /* <= 0 */
    int32_t output_offset; /* output zero point */
    int32_t output_multiplier;
    int32_t output_shift;
    int32_t left_shift;    /* 20 (int8 ADD/SUB), 15 (int16 ADD/SUB), 7 or 0 (SQUARED_DIFFERENCE) */
} mcugen_rescale_quant_params;

/* int16 ADD/SUB on power-of-two scales: right shifts in [0, 15], at least one of them 0. */
typedef struct {
    int32_t input1_shift;
    int32_t input2_shift;
} mcugen_pot_quant_params;

typedef struct {
    int32_t input1_offset;
    int32_t input2_offset;
    int32_t output_offset;
    int32_t output_multiplier;
    int32_t output_shift;
} mcugen_mul_quant_params;

typedef struct {
    int32_t input_offset;
    int32_t alpha_offset;
    int32_t output_offset;
    int32_t identity_multiplier;
    int32_t identity_shift;
    int32_t alpha_multiplier;
    int32_t alpha_shift;
} mcugen_prelu_quant_params;

mcugen_status mcugen_add_s8(const mcugen_elementwise_params *params,
                            const mcugen_rescale_quant_params *quant,
                            const int8_t *input1, const int8_t *input2, int8_t *output);
mcugen_status mcugen_add_s16(const mcugen_elementwise_params *params,
                             const mcugen_rescale_quant_params *quant,
                             const int16_t *input1, const int16_t *input2, int16_t *output);
mcugen_status mcugen_sub_s8(const mcugen_elementwise_params *params,
                            const mcugen_rescale_quant_params *quant,
                            const int8_t *input1, const int8_t *input2, int8_t *output);
mcugen_status mcugen_sub_s16(const mcugen_elementwise_params *params,
                             const mcugen_rescale_quant_params *quant,
                             const int16_t *input1, const int16_t *input2, int16_t *output);
mcugen_status mcugen_add_pot_s16(const mcugen_elementwise_params *params,
                                 const mcugen_pot_quant_params *quant,
                                 const int16_t *input1, const int16_t *input2, int16_t *output);
mcugen_status mcugen_sub_pot_s16(const mcugen_elementwise_params *params,
                                 const mcugen_pot_quant_params *quant,
                                 const int16_t *input1, const int16_t *input2, int16_t *output);
mcugen_status mcugen_squared_difference_s8(const mcugen_elementwise_params *params,
                                           const mcugen_rescale_quant_params *quant,
                                           const int8_t *input1, const int8_t *input2,
                                           int8_t *output);
mcugen_status mcugen_squared_difference_s16(const mcugen_elementwise_params *params,
                                            const mcugen_rescale_quant_params *quant,
                                            const int16_t *input1, const int16_t *input2,
                                            int16_t *output);
mcugen_status mcugen_mul_s8(const mcugen_elementwise_params *params,
                            const mcugen_mul_quant_params *quant,
                            const int8_t *input1, const int8_t *input2, int8_t *output);
mcugen_status mcugen_mul_s16(const mcugen_elementwise_params *params,
                             const mcugen_mul_quant_params *quant,
                             const int16_t *input1, const int16_t *input2, int16_t *output);
mcugen_status mcugen_prelu_s8(const mcugen_elementwise_params *params,
                              const mcugen_prelu_quant_params *quant,
                              const int8_t *input, const int8_t *alpha, int8_t *output);
mcugen_status mcugen_prelu_s16(const mcugen_elementwise_params *params,
                               const mcugen_prelu_quant_params *quant,
                               const int16_t *input, const int8_t *alpha, int16_t *output);
mcugen_status mcugen_maximum_s8(const mcugen_broadcast *loop,
                                const int8_t *input1, const int8_t *input2, int8_t *output);
mcugen_status mcugen_maximum_s16(const mcugen_broadcast *loop,
                                 const int16_t *input1, const int16_t *input2, int16_t *output);
mcugen_status mcugen_minimum_s8(const mcugen_broadcast *loop,
                                const int8_t *input1, const int8_t *input2, int8_t *output);
mcugen_status mcugen_minimum_s16(const mcugen_broadcast *loop,
                                 const int16_t *input1, const int16_t *input2, int16_t *output);

/* float32 (float islands): the same float operations, in the same order, as TFLite's reference. */
mcugen_status mcugen_add_f32(const mcugen_elementwise_f32_params *params,
                             const float *input1, const float *input2, float *output);
mcugen_status mcugen_sub_f32(const mcugen_elementwise_f32_params *params,
                             const float *input1, const float *input2, float *output);
mcugen_status mcugen_mul_f32(const mcugen_elementwise_f32_params *params,
                             const float *input1, const float *input2, float *output);
mcugen_status mcugen_squared_difference_f32(const mcugen_broadcast *loop,
                                            const float *input1, const float *input2,
                                            float *output);
mcugen_status mcugen_maximum_f32(const mcugen_broadcast *loop,
                                 const float *input1, const float *input2, float *output);
mcugen_status mcugen_minimum_f32(const mcugen_broadcast *loop,
                                 const float *input1, const float *input2, float *output);
mcugen_status mcugen_prelu_f32(const mcugen_broadcast *loop,
                               const float *input, const float *alpha, float *output);

#endif /* MCUGEN_ELEMENTWISE_H */
