/* mcugen runtime: element-wise activations and unary ops, the kernels behind mcugen_activation.h.
 * Ops: LOGISTIC, TANH, HARD_SWISH, RELU, RELU6, LEAKY_RELU, ABS, RSQRT, NEG and the pointwise
 * rescales (QUANTIZE between integer types), int8, int16, float32 as each op allows.
 * Reference arithmetic: TFLite's reference kernels (gemmlowp fixed point, the int16 LUTs, the
 * hard-swish and leaky-relu rescales); see the header for where TFLM and LiteRT differ.
 * Fast paths: none (portable C on every core). */
#include "mcugen_activation.h"

#include <math.h>
#include <stddef.h>

#include "mcugen_fixedpoint.h"
#include "mcugen_softmax.h"

#define CHECK_ARGS(cond)            \
    do {                            \
        if (!(cond)) {              \
            return MCUGEN_ARG_ERROR; \
        }                           \
    } while (0)

mcugen_status mcugen_lut_s8_s8(const int8_t *table, int32_t size, const int8_t *input,
                               int8_t *output)
{
    CHECK_ARGS(table != NULL && input != NULL && output != NULL && size >= 0);
    for (int32_t i = 0; i < size; ++i) {
        output[i] = table[(int32_t)input[i] + 128];
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_lut_s8_s16(const int16_t *table, int32_t size, const int8_t *input,
                                int16_t *output)
{
    CHECK_ARGS(table != NULL && input != NULL && output != NULL && size >= 0);
    for (int32_t i = 0; i < size; ++i) {
        output[i] = table[(int32_t)input[i] + 128];
    }
    return MCUGEN_OK;
}

static int32_t rescale_one(const mcugen_pointwise_rescale_params *p, int32_t x)
{
    int32_t v = x - p->input_offset;
    int32_t scaled;
    if (p->absolute && v < 0) {
        v = -v;
    }
    if (p->identity) {
        scaled = v;
    } else if (v >= 0) {
        scaled = mcugen_requantize(v, p->positive_multiplier, p->positive_shift);
    } else {
        scaled = mcugen_requantize(v, p->negative_multiplier, p->negative_shift);
        if (p->negate_negative) {
            scaled = -scaled;
        }
    }
    return mcugen_clamp(scaled + p->output_offset, p->activation.min, p->activation.max);
}

/* One rescale kernel per (input, output) type pair: the same loop, only the types differ. */
#define MCUGEN_POINTWISE_RESCALE(NAME, IN_T, OUT_T)                                           \
    mcugen_status NAME(const mcugen_pointwise_rescale_params *params, int32_t size,           \
                       const IN_T *input, OUT_T *output)                                      \
    {                                                                                         \
        CHECK_ARGS(params != NULL && input != NULL && output != NULL && size >= 0);           \
        for (int32_t i = 0; i < size; ++i) {                                                  \
            output[i] = (OUT_T)rescale_one(params, input[i]);                                 \
        }                                                                                     \
        return MCUGEN_OK;                                                                     \
    }

MCUGEN_POINTWISE_RESCALE(mcugen_pointwise_rescale_s8_s8, int8_t, int8_t)
MCUGEN_POINTWISE_RESCALE(mcugen_pointwise_rescale_s8_s16, int8_t, int16_t)
MCUGEN_POINTWISE_RESCALE(mcugen_pointwise_rescale_s8_u8, int8_t, uint8_t)
MCUGEN_POINTWISE_RESCALE(mcugen_pointwise_rescale_u8_s8, uint8_t, int8_t)
MCUGEN_POINTWISE_RESCALE(mcugen_pointwise_rescale_s16_s16, int16_t, int16_t)
MCUGEN_POINTWISE_RESCALE(mcugen_pointwise_rescale_s16_s8, int16_t, int8_t)

/* The input in table steps: (x * multiplier + round) >> shift, as reference_integer_ops. */
static int32_t sigmoid_input(const mcugen_sigmoid_s16_params *p, int16_t x)
{
    const int32_t shift = p->input_right_shift;
    const int32_t round = shift > 0 ? ((int32_t)1 << (shift - 1)) : 0;
    return ((int32_t)x * p->input_multiplier + round) >> shift;
}

static int sigmoid_args_valid(const mcugen_sigmoid_s16_params *params, const uint16_t *table,
                              int32_t size, const int16_t *input, const int16_t *output)
{
    return params != NULL && table != NULL && input != NULL && output != NULL && size >= 0 &&
           params->input_right_shift >= 0 && params->input_right_shift <= 31 &&
           params->input_multiplier >= 0 && params->input_multiplier <= 32767;
}

mcugen_status mcugen_logistic_s16(const mcugen_sigmoid_s16_params *params, const uint16_t *table,
                                  int32_t size, const int16_t *input, int16_t *output)
{
    CHECK_ARGS(sigmoid_args_valid(params, table, size, input, output));
    for (int32_t i = 0; i < size; ++i) {
        const int32_t value = sigmoid_input(params, input[i]);
        const uint32_t magnitude = (uint32_t)(value < 0 ? -value : value);
        const uint32_t index = magnitude >> 9;
        uint32_t result;
        if (index >= 255u) {
            result = (uint32_t)0x7FFF << 10;
        } else {
            const uint32_t low = table[index];
            const uint32_t high = table[index + 1u];
            result = (low << 9) + (magnitude & 0x1FFu) * (high - low);
        }
        result = value >= 0 ? result + (1u << 9) : (1u << 25) - result + (1u << 9) - 1u;
        output[i] = (int16_t)(result >> 10);
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_tanh_s16(const mcugen_sigmoid_s16_params *params, const uint16_t *table,
                              int32_t size, const int16_t *input, int16_t *output)
{
    CHECK_ARGS(sigmoid_args_valid(params, table, size, input, output));
    for (int32_t i = 0; i < size; ++i) {
        const int32_t value = sigmoid_input(params, input[i]);
        const uint32_t magnitude = (uint32_t)(value < 0 ? -value : value);
        const uint32_t index = magnitude >> 8;
        int32_t result;
        if (index >= 255u) {
            result = (int32_t)0xFFFF << 8;
        } else {
            const int32_t low = table[index];
            const int32_t high = table[index + 1u];
            result = low * 256 + (int32_t)(magnitude & 0xFFu) * (high - low);
        }
        result = value >= 0 ? result - (1 << 23) + (1 << 7) : -result + (1 << 23) + (1 << 7) - 1;
        /* An arithmetic right shift of a possibly negative value, written as a floor division. */
        output[i] = (int16_t)(result >= 0 ? result / 256 : -((-result + 255) / 256));
    }
    return MCUGEN_OK;
}

#define FLOAT_KERNEL(name, expression)                                             \
    mcugen_status name(int32_t size, const float *input, float *output)            \
    {                                                                              \
        CHECK_ARGS(input != NULL && output != NULL && size >= 0);                  \
        for (int32_t i = 0; i < size; ++i) {                                       \
            const float x = input[i];                                              \
            output[i] = (expression);                                              \
        }                                                                          \
        return MCUGEN_OK;                                                          \
    }

FLOAT_KERNEL(mcugen_relu_f32, x < 0.0f ? 0.0f : x)
FLOAT_KERNEL(mcugen_relu6_f32, x > 6.0f ? 6.0f : (x < 0.0f ? 0.0f : x))
FLOAT_KERNEL(mcugen_neg_f32, -x)
FLOAT_KERNEL(mcugen_abs_f32, fabsf(x))
FLOAT_KERNEL(mcugen_rsqrt_f32, 1.0f / sqrtf(x))
FLOAT_KERNEL(mcugen_tanh_f32, tanhf(x))

/* reference_ops::Logistic<float>: saturate above 16.619047, exp(x) below -9. */
FLOAT_KERNEL(mcugen_logistic_f32,
             x > 16.619047164916992188f ? 1.0f : (x < -9.0f ? expf(x) : 1.0f / (1.0f + expf(-x))))

static float min_f32(float a, float b)
{
    return b < a ? b : a; /* std::min(a, b) */
}

static float max_f32(float a, float b)
{
    return a < b ? b : a; /* std::max(a, b) */
}

/* reference_ops::HardSwish<float>: x * min(6, max(0, x + 3)) / 6. */
FLOAT_KERNEL(mcugen_hard_swish_f32, x * min_f32(6.0f, max_f32(0.0f, x + 3.0f)) / 6.0f)

mcugen_status mcugen_leaky_relu_f32(float alpha, int32_t size, const float *input, float *output)
{
    CHECK_ARGS(input != NULL && output != NULL && size >= 0);
    for (int32_t i = 0; i < size; ++i) {
        const float x = input[i];
        output[i] = x > 0.0f ? x : x * alpha;
    }
    return MCUGEN_OK;
}

/* --- int8 LOGISTIC and TANH: gemmlowp fixed point on Q4.27 ------------------------------ */

static int32_t logistic_q4(int32_t a)
{
    if (a == 0) {
        return (int32_t)1 << 30; /* one half */
    }
    const int32_t magnitude = a > 0 ? a : -a;
    const int32_t if_positive =
        mcugen_one_over_one_plus_x_for_x_in_0_1(mcugen_exp_on_negative_values(-magnitude, 4));
    return a > 0 ? if_positive : INT32_MAX - if_positive;
}

static int32_t tanh_q4(int32_t a)
{
    if (a == 0) {
        return 0;
    }
    /* exp(2a) for a <= 0: the Q4.27 raw value read as Q5.26 (gemmlowp ExactMulByPot<1>). */
    const int32_t negative_part = a < 0 ? a : -a;
    const int32_t t = mcugen_one_minus_x_over_one_plus_x_for_x_in_0_1(
        mcugen_exp_on_negative_values(negative_part, 5));
    return a < 0 ? -t : t;
}

static int sigmoid_s8_args_valid(const mcugen_sigmoid_s8_params *params, int32_t size,
                                 const int8_t *input, const int8_t *output)
{
    return params != NULL && input != NULL && output != NULL && size >= 0 &&
           params->input_left_shift >= 0 && params->input_left_shift <= 31 &&
           params->input_range_radius >= 0;
}

/* The centred input in Q4.27, or 0 / 1 flags for saturation below / above the radius. */
static int32_t sigmoid_s8_input(const mcugen_sigmoid_s8_params *p, int8_t x, int32_t *saturated)
{
    const int32_t centred = (int32_t)x - p->input_zero_point;
    *saturated = centred <= -p->input_range_radius ? -1 : (centred >= p->input_range_radius ? 1 : 0);
    if (*saturated != 0) {
        return 0;
    }
    return mcugen_requantize(centred, p->input_multiplier, p->input_left_shift);
}

mcugen_status mcugen_logistic_s8(const mcugen_sigmoid_s8_params *params, int32_t size,
                                 const int8_t *input, int8_t *output)
{
    CHECK_ARGS(sigmoid_s8_args_valid(params, size, input, output));
    for (int32_t i = 0; i < size; ++i) {
        int32_t saturated;
        const int32_t q4 = sigmoid_s8_input(params, input[i], &saturated);
        if (saturated != 0) {
            output[i] = saturated < 0 ? INT8_MIN : INT8_MAX;
            continue;
        }
        const int32_t q23 = mcugen_rounding_divide_by_pot(logistic_q4(q4), 23);
        output[i] = (int8_t)mcugen_clamp(q23 - 128, INT8_MIN, INT8_MAX);
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_tanh_s8(const mcugen_sigmoid_s8_params *params, int32_t size,
                             const int8_t *input, int8_t *output)
{
    CHECK_ARGS(sigmoid_s8_args_valid(params, size, input, output));
    for (int32_t i = 0; i < size; ++i) {
        int32_t saturated;
        const int32_t q4 = sigmoid_s8_input(params, input[i], &saturated);
        if (saturated != 0) {
            output[i] = saturated < 0 ? INT8_MIN : INT8_MAX;
            continue;
        }
        const int32_t q24 = mcugen_rounding_divide_by_pot(tanh_q4(q4), 24);
        output[i] = (int8_t)mcugen_clamp(q24, INT8_MIN, INT8_MAX);
    }
    return MCUGEN_OK;
}

/* --- int8 HARD_SWISH: int16 fixed point, as reference_ops::HardSwish ------------------ */

static int16_t wrap16(int32_t x)
{
    return (int16_t)(uint16_t)(uint32_t)x;
}

/* gemmlowp SaturatingRoundingDoublingHighMul for int16. */
static int16_t srdhm16(int16_t a, int16_t b)
{
    if (a == INT16_MIN && b == INT16_MIN) {
        return INT16_MAX;
    }
    const int32_t product = (int32_t)a * (int32_t)b;
    const int32_t nudge = product >= 0 ? (1 << 14) : (1 - (1 << 14));
    return (int16_t)((product + nudge) / (1 << 15));
}

static int16_t saturating_left_shift16(int16_t x, int32_t amount)
{
    const int32_t shifted = (int32_t)x * ((int32_t)1 << amount);
    return (int16_t)mcugen_clamp(shifted, INT16_MIN, INT16_MAX);
}

/* gemmlowp RoundingDivideByPOT on int16: the mask 2^exponent - 1 is an int16 as well, so from
 * exponent 16 on it is -1 and the result is 1 for x >= 0, -1 for x < 0, as in TFLite. */
static int16_t rounding_divide_by_pot16(int16_t x, int32_t exponent)
{
    const int32_t mask = wrap16((int32_t)(((int64_t)1 << exponent) - 1));
    const int32_t remainder = wrap16(x & mask);
    const int32_t threshold = (mask < 0 ? -1 : (mask >> 1)) + (x < 0 ? 1 : 0);
    return wrap16((x >> exponent) + (remainder > threshold ? 1 : 0));
}

mcugen_status mcugen_hard_swish_s8(const mcugen_hard_swish_params *params, int32_t size,
                                   const int8_t *input, int8_t *output)
{
    CHECK_ARGS(params != NULL && input != NULL && output != NULL && size >= 0 &&
               params->output_exponent <= 0 && params->output_exponent >= -31 &&
               params->reluish_exponent >= -31 && params->reluish_exponent <= 15);
    const int16_t output_multiplier = (int16_t)params->output_multiplier;
    const int16_t reluish_multiplier = (int16_t)params->reluish_multiplier;
    for (int32_t i = 0; i < size; ++i) {
        const int16_t hires = wrap16(((int32_t)input[i] - params->input_zero_point) * 128);
        const int16_t preshift_output = srdhm16(hires, output_multiplier);
        int16_t reluish = hires;
        if (params->reluish_exponent > 0) {
            reluish = saturating_left_shift16(reluish, params->reluish_exponent - 1);
        }
        reluish = srdhm16(reluish, reluish_multiplier);
        if (params->reluish_exponent > 0) {
            reluish = saturating_left_shift16(reluish, 1);
        }
        if (params->reluish_exponent < 0) {
            reluish = rounding_divide_by_pot16(reluish, -params->reluish_exponent);
        }
        reluish = (int16_t)(((int32_t)reluish + (1 << 15)) >> 1); /* [-1, 1] -> [0, 1] */
        /* SaturatingDoublingHighMul without rounding: C division truncates toward zero. */
        const int16_t product =
            wrap16(((int32_t)reluish * (int32_t)preshift_output) / (1 << 15));
        const int16_t value = rounding_divide_by_pot16(product, -params->output_exponent);
        output[i] = (int8_t)mcugen_clamp(wrap16((int32_t)value + params->output_zero_point),
                                         INT8_MIN, INT8_MAX);
    }
    return MCUGEN_OK;
}

/* --- int8 RSQRT ---------------------------------------------------------------------------- */

static int32_t saturating_shift_left32(int32_t x, int32_t exponent)
{
    const int64_t shifted = (int64_t)x * ((int64_t)1 << exponent);
    return shifted > INT32_MAX ? INT32_MAX : (shifted < INT32_MIN ? INT32_MIN : (int32_t)shifted);
}

/* TFLite's GetInvSqrtQuantizedMultiplierExp with reverse_shift -1, for 1 < value < 2^16:
 * 1 / sqrt(value) ~= multiplier * 2^(shift - 31). */
static void inv_sqrt_multiplier(int32_t value, int32_t *multiplier, int32_t *shift)
{
    if (value <= 1) {
        *multiplier = INT32_MAX;
        *shift = 0;
        return;
    }
    int32_t right_shift = 11;
    int32_t leading_zeros = 0;
    while (((uint32_t)value << leading_zeros & 0x80000000u) == 0) {
        ++leading_zeros;
    }
    const int32_t pairs = (leading_zeros - 1) / 2 - 1;
    right_shift -= pairs;
    value = (int32_t)((uint32_t)value << (2 * pairs));
    const int32_t half_input = mcugen_rounding_divide_by_pot(value >> 1, 1); /* Q3.28 */
    const int32_t half_three = ((int32_t)1 << 28) + ((int32_t)1 << 27);
    int32_t x = (int32_t)1 << 28;
    for (int32_t i = 0; i < 5; ++i) {
        const int32_t x3 = saturating_shift_left32(mcugen_srdhm(mcugen_srdhm(x, x), x), 6);
        const int32_t difference =
            (int32_t)((uint32_t)mcugen_srdhm(half_three, x) - (uint32_t)mcugen_srdhm(half_input, x3));
        x = saturating_shift_left32(difference, 3);
    }
    x = mcugen_srdhm(x, 1518500250); /* sqrt(2) / 2 */
    if (right_shift < 0) {
        x = (int32_t)((uint32_t)x << -right_shift);
        right_shift = 0;
    }
    *multiplier = x;
    *shift = -right_shift;
}

/* RsqrtEvalQuantized for one input: 1 / sqrt(x - zero point) rescaled to the output. */
static int32_t rsqrt_one(const mcugen_rsqrt_params *p, int32_t x, int32_t high)
{
    const int32_t kShift = 20; /* keeps 1 / sqrt(value) an integer */
    const int32_t value = x - p->input_zero_point;
    if (value <= 0) { /* 0 is TFLite's maximum; negative values fail in TFLite */
        return high;
    }
    int32_t multiplier;
    int32_t shift;
    inv_sqrt_multiplier(value, &multiplier, &shift);
    const int32_t data = mcugen_requantize(1, multiplier, shift + kShift);
    return mcugen_requantize(data, p->multiplier, p->shift - kShift) + p->output_zero_point;
}

static int rsqrt_args_valid(const mcugen_rsqrt_params *params, int32_t size, const void *input,
                            const void *output)
{
    return params != NULL && input != NULL && output != NULL && size >= 0 &&
           params->shift - 20 >= -31 && params->shift - 20 <= 30;
}

mcugen_status mcugen_rsqrt_s8(const mcugen_rsqrt_params *params, int32_t size,
                              const int8_t *input, int8_t *output)
{
    CHECK_ARGS(rsqrt_args_valid(params, size, input, output));
    for (int32_t i = 0; i < size; ++i) {
        output[i] = (int8_t)mcugen_clamp(rsqrt_one(params, input[i], INT8_MAX), INT8_MIN, INT8_MAX);
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_rsqrt_s16(const mcugen_rsqrt_params *params, int32_t size,
                               const int16_t *input, int16_t *output)
{
    CHECK_ARGS(rsqrt_args_valid(params, size, input, output));
    for (int32_t i = 0; i < size; ++i) {
        output[i] =
            (int16_t)mcugen_clamp(rsqrt_one(params, input[i], INT16_MAX), INT16_MIN, INT16_MAX);
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_lut_s16_s16(const int16_t *table, int32_t size, const int16_t *input,
                                 int16_t *output)
{
    CHECK_ARGS(table != NULL && input != NULL && output != NULL && size >= 0);
    for (int32_t i = 0; i < size; ++i) {
        output[i] = mcugen_lut_lookup_s16(input[i], table);
    }
    return MCUGEN_OK;
}
