/* mcugen runtime: element-wise activations and unary ops (TFLite LOGISTIC, TANH, HARD_SWISH
 * via tables, RELU, RELU6, LEAKY_RELU, ABS, QUANTIZE between integer types, and float32
 * versions of RELU, RELU6, LEAKY_RELU, NEG, ABS, RSQRT, LOGISTIC, TANH, HARD_SWISH).
 *
 * Integer kernels compute per element as TFLite's reference kernels do: rescale-and-clamp
 * (mcugen_rescale_*), gemmlowp fixed-point logistic/tanh for int8 (TFLM), int16 hard-swish
 * arithmetic, Newton-Raphson inverse square root, and interpolation in TFLite's sigmoid table
 * for int16 LOGISTIC/TANH. LiteRT builds a float lookup table for int8 LOGISTIC/TANH at
 * Prepare time; mcugen builds the same table at build time and mcugen_lut_* looks it up
 * (entry input + 128). Float kernels perform the reference
 * kernels' float operations in the same order; LOGISTIC and TANH call expf/tanhf, so their
 * results match TFLite only with the same C library.
 */
#ifndef MCUGEN_ACTIVATION_H
#define MCUGEN_ACTIVATION_H

#include <stdint.h>

#include "mcugen_nn_types.h"

/* out = clamp(output_offset + rescale(x - input_offset), activation): values >= 0 use the
 * positive multiplier, values < 0 the negative one (result negated if negate_negative);
 * absolute takes |x - input_offset| first; identity skips the multiplier. */
typedef struct {
    int32_t input_offset;
    int32_t output_offset;
    int32_t positive_multiplier;
    int32_t positive_shift;
    int32_t negative_multiplier;
    int32_t negative_shift;
    int32_t negate_negative;
    int32_t absolute;
    int32_t identity;
    mcugen_activation activation;
} mcugen_pointwise_rescale_params;

/* int16 LOGISTIC / TANH: input rescale (multiplier, rounding right shift) into table steps. */
typedef struct {
    int32_t input_multiplier;
    int32_t input_right_shift;
} mcugen_sigmoid_s16_params;

/* int8 LOGISTIC / TANH in gemmlowp fixed point (TFLM's reference_integer_ops). */
typedef struct {
    int32_t input_zero_point;
    int32_t input_multiplier;
    int32_t input_left_shift; /* >= 0 */
    int32_t input_range_radius;
} mcugen_sigmoid_s8_params;

typedef struct {
    int32_t input_zero_point;
    int32_t output_zero_point;
    int32_t reluish_multiplier; /* Q15 */
    int32_t reluish_exponent;
    int32_t output_multiplier; /* Q15 */
    int32_t output_exponent;   /* <= 0 */
} mcugen_hard_swish_params;

typedef struct {
    int32_t input_zero_point;
    int32_t output_zero_point;
    int32_t multiplier;
    int32_t shift;
} mcugen_rsqrt_params;

mcugen_status mcugen_logistic_s8(const mcugen_sigmoid_s8_params *params, int32_t size,
                                 const int8_t *input, int8_t *output);
/* Output in Q0.7 (scale 1/128, zero point 0). */
mcugen_status mcugen_tanh_s8(const mcugen_sigmoid_s8_params *params, int32_t size,
                             const int8_t *input, int8_t *output);
mcugen_status mcugen_hard_swish_s8(const mcugen_hard_swish_params *params, int32_t size,
                                   const int8_t *input, int8_t *output);
/* Inputs below the zero point (negative reals, where TFLite fails the op) give 127. */
mcugen_status mcugen_rsqrt_s8(const mcugen_rsqrt_params *params, int32_t size,
                              const int8_t *input, int8_t *output);

/* int16 RSQRT as TFLM computes it (per element, like int8). */
mcugen_status mcugen_rsqrt_s16(const mcugen_rsqrt_params *params, int32_t size,
                               const int16_t *input, int16_t *output);
/* int16 -> int16 through a 513-entry interpolated table (LiteRT's int16 RSQRT). */
mcugen_status mcugen_lut_s16_s16(const int16_t *table, int32_t size, const int16_t *input,
                                 int16_t *output);

mcugen_status mcugen_pointwise_rescale_s8_s8(const mcugen_pointwise_rescale_params *params, int32_t size,
                                             const int8_t *input, int8_t *output);
mcugen_status mcugen_pointwise_rescale_s8_s16(const mcugen_pointwise_rescale_params *params, int32_t size,
                                              const int8_t *input, int16_t *output);

mcugen_status mcugen_lut_s8_s8(const int8_t *table, int32_t size, const int8_t *input,
                               int8_t *output);
mcugen_status mcugen_lut_s8_s16(const int16_t *table, int32_t size, const int8_t *input,
                                int16_t *output);

/* QUANTIZE between int8 and uint8 (TFLite's Requantize). */
mcugen_status mcugen_pointwise_rescale_s8_u8(const mcugen_pointwise_rescale_params *params, int32_t size,
                                             const int8_t *input, uint8_t *output);
mcugen_status mcugen_pointwise_rescale_u8_s8(const mcugen_pointwise_rescale_params *params, int32_t size,
                                             const uint8_t *input, int8_t *output);
mcugen_status mcugen_pointwise_rescale_s16_s16(const mcugen_pointwise_rescale_params *params, int32_t size,
                                               const int16_t *input, int16_t *output);
mcugen_status mcugen_pointwise_rescale_s16_s8(const mcugen_pointwise_rescale_params *params, int32_t size,
                                              const int16_t *input, int8_t *output);

/* table: TFLite's sigmoid_table_uint16 (256 entries). */
mcugen_status mcugen_logistic_s16(const mcugen_sigmoid_s16_params *params, const uint16_t *table,
                                  int32_t size, const int16_t *input, int16_t *output);
mcugen_status mcugen_tanh_s16(const mcugen_sigmoid_s16_params *params, const uint16_t *table,
                              int32_t size, const int16_t *input, int16_t *output);

mcugen_status mcugen_relu_f32(int32_t size, const float *input, float *output);
mcugen_status mcugen_relu6_f32(int32_t size, const float *input, float *output);
mcugen_status mcugen_leaky_relu_f32(float alpha, int32_t size, const float *input, float *output);
mcugen_status mcugen_neg_f32(int32_t size, const float *input, float *output);
mcugen_status mcugen_abs_f32(int32_t size, const float *input, float *output);
mcugen_status mcugen_rsqrt_f32(int32_t size, const float *input, float *output);
mcugen_status mcugen_logistic_f32(int32_t size, const float *input, float *output);
mcugen_status mcugen_tanh_f32(int32_t size, const float *input, float *output);
mcugen_status mcugen_hard_swish_f32(int32_t size, const float *input, float *output);

#endif /* MCUGEN_ACTIVATION_H */
