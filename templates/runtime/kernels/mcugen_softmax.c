/* mcugen runtime: softmax over the last axis, the kernels behind mcugen_softmax.h.
 * Ops: SOFTMAX, int8 to int8 or int16, int16, float32; also the gemmlowp exp helpers that
 * mcugen_activation.c uses. Reference arithmetic: TFLite's reference (gemmlowp fixed-point exp
 * and reciprocal for int8, the exp and reciprocal tables for int16). Fast paths: none. */
#include "mcugen_softmax.h"

#include <math.h>
#include <stddef.h>

#include "mcugen_fixedpoint.h"

#define SCALED_DIFF_INTEGER_BITS 5   /* exp input: Q5.26 */
#define ACCUMULATION_INTEGER_BITS 12 /* sum of exps: Q12.19 */

/* Two's complement addition; gemmlowp adds raw int32 values that stay in range here, the
 * wrap only keeps out-of-contract inputs free of undefined behaviour. */
static int32_t add_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int32_t sub_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

/* gemmlowp SaturatingRoundingMultiplyByPOT<exponent> for exponent > 0. */
static int32_t saturating_shift_left(int32_t x, int32_t exponent)
{
    const int32_t threshold = (int32_t)(((int64_t)1 << (31 - exponent)) - 1);
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return (int32_t)((int64_t)x * ((int64_t)1 << exponent));
}

/* gemmlowp RoundingHalfSum for int32: (a + b) / 2 rounded half away from zero. */
static int32_t rounding_half_sum(int32_t a, int32_t b)
{
    const int64_t sum = (int64_t)a + (int64_t)b;
    const int64_t sign = sum >= 0 ? 1 : -1;
    return (int32_t)((sum + sign) / 2);
}

/* exp(a) for a in [-1/4, 0), Q0.31: gemmlowp's Taylor expansion around -1/8. */
static int32_t exp_on_interval_between_negative_one_quarter_and_0_excl(int32_t a)
{
    const int32_t exp_minus_one_eighth = 1895147668;
    const int32_t one_third = 715827883;
    const int32_t x = add_wrap(a, (int32_t)1 << 28); /* a + 1/8 */
    const int32_t x2 = mcugen_srdhm(x, x);
    const int32_t x3 = mcugen_srdhm(x2, x);
    const int32_t x4 = mcugen_srdhm(x2, x2);
    const int32_t x4_over_4 = mcugen_rounding_divide_by_pot(x4, 2);
    const int32_t poly = mcugen_rounding_divide_by_pot(
        add_wrap(mcugen_srdhm(add_wrap(x4_over_4, x3), one_third), x2), 1);
    return add_wrap(exp_minus_one_eighth, mcugen_srdhm(exp_minus_one_eighth, add_wrap(x, poly)));
}

int32_t mcugen_exp_on_negative_values(int32_t a, int32_t integer_bits)
{
    /* exp(-2^k) in Q0.31 for k = -2 .. 4, applied per set bit of the multiple of 1/4. */
    static const int32_t exp_of_minus_power_of_two[7] = {
        1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
    const int32_t fractional_bits = 31 - integer_bits;
    const int32_t one_quarter = (int32_t)1 << (fractional_bits - 2);
    const int32_t mod_quarter = (int32_t)((uint32_t)a & (uint32_t)(one_quarter - 1));
    const int32_t mod_quarter_minus_quarter = mod_quarter - one_quarter; /* in [-1/4, 0) */
    int32_t result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        saturating_shift_left(mod_quarter_minus_quarter, integer_bits));
    const uint32_t remainder = (uint32_t)mod_quarter_minus_quarter - (uint32_t)a;
    for (int32_t k = 0; k < 7 && k - 2 < integer_bits; ++k) {
        /* Bit fractional_bits + (k - 2) of the remainder stands for 2^(k - 2). */
        if (remainder & ((uint32_t)1 << (fractional_bits + k - 2))) {
            result = mcugen_srdhm(result, exp_of_minus_power_of_two[k]);
        }
    }
    return a == 0 ? INT32_MAX : result;
}

int32_t mcugen_exp_on_negative_values_q5(int32_t a)
{
    return mcugen_exp_on_negative_values(a, SCALED_DIFF_INTEGER_BITS);
}

int32_t mcugen_one_over_one_plus_x_for_x_in_0_1(int32_t a)
{
    const int32_t constant_48_over_17 = 1515870810;      /* Q2.29 */
    const int32_t constant_neg_32_over_17 = -1010580540; /* Q2.29 */
    const int32_t one_q2_29 = (int32_t)1 << 29;
    const int32_t half_denominator = rounding_half_sum(a, INT32_MAX);
    int32_t x = add_wrap(constant_48_over_17, mcugen_srdhm(half_denominator, constant_neg_32_over_17));
    for (int32_t i = 0; i < 3; ++i) { /* Newton-Raphson in Q2.29 */
        const int32_t one_minus_half_denominator_times_x =
            sub_wrap(one_q2_29, mcugen_srdhm(half_denominator, x));
        x = add_wrap(x, saturating_shift_left(mcugen_srdhm(x, one_minus_half_denominator_times_x), 2));
    }
    return saturating_shift_left(x, 1);
}

int32_t mcugen_one_minus_x_over_one_plus_x_for_x_in_0_1(int32_t a)
{
    const int32_t constant_48_over_17 = 1515870810;      /* Q2.29 */
    const int32_t constant_neg_32_over_17 = -1010580540; /* Q2.29 */
    const int32_t one_q2_29 = (int32_t)1 << 29;
    const int32_t half_denominator = rounding_half_sum(a, INT32_MAX);
    int32_t x = add_wrap(constant_48_over_17, mcugen_srdhm(half_denominator, constant_neg_32_over_17));
    for (int32_t i = 0; i < 3; ++i) { /* Newton-Raphson in Q2.29 */
        const int32_t one_minus_half_denominator_times_x =
            sub_wrap(one_q2_29, mcugen_srdhm(half_denominator, x));
        x = add_wrap(x, saturating_shift_left(mcugen_srdhm(x, one_minus_half_denominator_times_x), 2));
    }
    return saturating_shift_left(sub_wrap(x, one_q2_29), 2);
}

static int32_t count_leading_zeros(uint32_t x)
{
    int32_t count = 0;
    if (x == 0) {
        return 32;
    }
    while ((x & 0x80000000u) == 0) {
        x <<= 1;
        ++count;
    }
    return count;
}

/* What one row needs for its outputs: the reciprocal of the sum and the final shift. */
typedef struct {
    int32_t max;
    int32_t reciprocal; /* Q0.31 */
    int32_t exponent;   /* right shift of reciprocal * exp, >= 0 */
} row_scale;

static int32_t scaled_exp(int32_t diff, const mcugen_softmax_params *params)
{
    const int32_t rescaled =
        mcugen_requantize(diff, params->input_multiplier, params->input_left_shift);
    return mcugen_exp_on_negative_values_q5(rescaled);
}

static mcugen_status prepare_row(const mcugen_softmax_params *params, const int8_t *row,
                                 int32_t row_size, int32_t output_bits, row_scale *scale)
{
    int32_t max = INT8_MIN;
    for (int32_t c = 0; c < row_size; ++c) {
        max = row[c] > max ? row[c] : max;
    }
    int32_t sum = 0; /* Q12.19; row_size <= MCUGEN_SOFTMAX_MAX_ROW keeps it below 2^31 */
    for (int32_t c = 0; c < row_size; ++c) {
        const int32_t diff = row[c] - max;
        if (diff >= params->diff_min) {
            sum += mcugen_rounding_divide_by_pot(scaled_exp(diff, params),
                                                 ACCUMULATION_INTEGER_BITS);
        }
    }
    /* TFLite's GetReciprocal: normalise the sum to [1, 2) and invert it. */
    const int32_t headroom_plus_one = count_leading_zeros((uint32_t)sum);
    const int32_t num_bits_over_unit = ACCUMULATION_INTEGER_BITS - headroom_plus_one;
    const int32_t shifted_sum_minus_one =
        (int32_t)(((uint32_t)sum << headroom_plus_one) - 0x80000000u);
    scale->max = max;
    scale->reciprocal = mcugen_one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one);
    scale->exponent = num_bits_over_unit + 31 - output_bits;
    return scale->exponent >= 0 ? MCUGEN_OK : MCUGEN_ARG_ERROR;
}

/* One output in [out_min, out_max]; the zero point is out_min, as TFLite requires. */
static int32_t output_value(int32_t x, const row_scale *scale,
                            const mcugen_softmax_params *params, int32_t out_min, int32_t out_max)
{
    const int32_t diff = x - scale->max;
    if (diff < params->diff_min) {
        return out_min;
    }
    /* TFLite checks exponent <= 31 and aborts past it (an int8 output whose row's exponentials
     * sum to 512 or more). There the product, non-negative and below 2^31, divided by
     * 2^exponent rounds to 0: each probability is at most 1/512, below half an output step. */
    const int32_t unsaturated = scale->exponent > 31 ? 0 : mcugen_rounding_divide_by_pot(
        mcugen_srdhm(scale->reciprocal, scaled_exp(diff, params)), scale->exponent);
    return mcugen_clamp(unsaturated + out_min, out_min, out_max);
}

static int args_are_valid(const mcugen_softmax_params *params, int32_t num_rows,
                          int32_t row_size, const int8_t *input, const void *output)
{
    return params != NULL && input != NULL && output != NULL && num_rows >= 0 && row_size >= 1 &&
           row_size <= MCUGEN_SOFTMAX_MAX_ROW && params->input_left_shift >= 0 &&
           params->input_left_shift <= 31 && params->diff_min <= 0;
}

mcugen_status mcugen_softmax_s8(const mcugen_softmax_params *params, int32_t num_rows,
                                int32_t row_size, const int8_t *input, int8_t *output)
{
    if (!args_are_valid(params, num_rows, row_size, input, output)) {
        return MCUGEN_ARG_ERROR;
    }
    for (int32_t r = 0; r < num_rows; ++r) {
        const int8_t *row = input + (size_t)r * (size_t)row_size;
        int8_t *out = output + (size_t)r * (size_t)row_size;
        row_scale scale;
        if (prepare_row(params, row, row_size, 8, &scale) != MCUGEN_OK) {
            return MCUGEN_ARG_ERROR;
        }
        for (int32_t c = 0; c < row_size; ++c) {
            out[c] = (int8_t)output_value(row[c], &scale, params, INT8_MIN, INT8_MAX);
        }
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_softmax_s8_s16(const mcugen_softmax_params *params, int32_t num_rows,
                                    int32_t row_size, const int8_t *input, int16_t *output)
{
    if (!args_are_valid(params, num_rows, row_size, input, output)) {
        return MCUGEN_ARG_ERROR;
    }
    for (int32_t r = 0; r < num_rows; ++r) {
        const int8_t *row = input + (size_t)r * (size_t)row_size;
        int16_t *out = output + (size_t)r * (size_t)row_size;
        row_scale scale;
        if (prepare_row(params, row, row_size, 16, &scale) != MCUGEN_OK) {
            return MCUGEN_ARG_ERROR;
        }
        for (int32_t c = 0; c < row_size; ++c) {
            out[c] = (int16_t)output_value(row[c], &scale, params, INT16_MIN, INT16_MAX);
        }
    }
    return MCUGEN_OK;
}

/* --- int16 softmax ------------------------------------------------------------------------ */

/* floor(x / 2^shift) without relying on the right shift of negative values. */
static int32_t floor_shift(int32_t x, int32_t shift)
{
    if (x >= 0) {
        return x >> shift;
    }
    return -(int32_t)(((uint32_t)0 - (uint32_t)x + (((uint32_t)1 << shift) - 1u)) >> shift);
}

/* TFLite's LUTLookup for int16: 512 segments of 128 steps, linear interpolation. */
int16_t mcugen_lut_lookup_s16(int32_t value, const int16_t *lut)
{
    const int32_t biased = value + 32768; /* in [0, 65535] */
    const int32_t index = biased >> 7;
    const int32_t offset = biased & 0x7F;
    const int32_t base = lut[index];
    const int32_t slope = lut[index + 1] - base;
    return (int16_t)(uint16_t)(uint32_t)(base + floor_shift(slope * offset + 64, 7));
}

static int16_t softmax_s16_exp(const mcugen_softmax_s16_params *params, const int16_t *exp_lut,
                               int32_t diff)
{
    const int32_t scaled = mcugen_requantize(diff, params->input_multiplier, params->input_shift);
    const int32_t symmetric = scaled > INT32_MAX - 32767 ? INT32_MAX : scaled + 32767;
    return mcugen_lut_lookup_s16(mcugen_clamp(symmetric, INT16_MIN, INT16_MAX), exp_lut);
}

mcugen_status mcugen_softmax_s16(const mcugen_softmax_s16_params *params, const int16_t *exp_lut,
                                 const int16_t *one_over_one_plus_x_lut, int32_t num_rows,
                                 int32_t row_size, const int16_t *input, int16_t *output)
{
    if (params == NULL || exp_lut == NULL || one_over_one_plus_x_lut == NULL || input == NULL ||
        output == NULL || num_rows < 0 || row_size < 1 || row_size > MCUGEN_SOFTMAX_S16_MAX_ROW ||
        params->input_shift < -31 || params->input_shift > 30) {
        return MCUGEN_ARG_ERROR;
    }
    for (int32_t r = 0; r < num_rows; ++r) {
        const int16_t *row = input + (size_t)r * (size_t)row_size;
        int16_t *out = output + (size_t)r * (size_t)row_size;
        int32_t max = INT16_MIN;
        for (int32_t c = 0; c < row_size; ++c) {
            max = row[c] > max ? row[c] : max;
        }
        int32_t sum = 0; /* Q16.15 */
        for (int32_t c = 0; c < row_size; ++c) {
            sum += softmax_s16_exp(params, exp_lut, row[c] - max);
        }
        if (sum <= 0) {
            return MCUGEN_ARG_ERROR; /* cannot happen: the maximum's exp is near 1 */
        }
        const int32_t headroom_plus_one = count_leading_zeros((uint32_t)sum);
        const int32_t shifted_sum =
            (int32_t)((((int64_t)sum << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
        const int32_t symmetric_sum =
            mcugen_clamp(shifted_sum - ((1 << 15) + (1 << 16)), INT16_MIN, INT16_MAX);
        const int64_t reciprocal = mcugen_lut_lookup_s16(symmetric_sum, one_over_one_plus_x_lut);
        const int32_t right_shift = 31 - headroom_plus_one;
        const int64_t round = (int64_t)1 << (right_shift - 1);
        for (int32_t c = 0; c < row_size; ++c) {
            const int64_t e = softmax_s16_exp(params, exp_lut, row[c] - max);
            const int64_t result = (e * reciprocal + round) >> right_shift;
            out[c] = (int16_t)(result < 0 ? 0 : (result > INT16_MAX ? INT16_MAX : result));
        }
    }
    return MCUGEN_OK;
}

/* --- float32 softmax ------------------------------------------------------------------------ */

mcugen_status mcugen_softmax_f32(float beta, int32_t num_rows, int32_t row_size,
                                 const float *input, float *output)
{
    if (input == NULL || output == NULL || num_rows < 0 || row_size < 1) {
        return MCUGEN_ARG_ERROR;
    }
    for (int32_t r = 0; r < num_rows; ++r) {
        const float *row = input + (size_t)r * (size_t)row_size;
        float *out = output + (size_t)r * (size_t)row_size;
        float max = -3.402823466e+38f; /* std::numeric_limits<float>::lowest() */
        for (int32_t c = 0; c < row_size; ++c) {
            max = max < row[c] ? row[c] : max; /* std::max(max, x) */
        }
        float sum = 0.0f;
        for (int32_t c = 0; c < row_size; ++c) {
            const float e = expf((row[c] - max) * beta);
            out[c] = e;
            sum += e;
        }
        for (int32_t c = 0; c < row_size; ++c) {
            out[c] = out[c] / sum;
        }
    }
    return MCUGEN_OK;
}
