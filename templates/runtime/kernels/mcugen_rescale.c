/* mcugen runtime: accumulator rescaling for the weighted ops (conv, depthwise, transpose conv,
 * fully connected, batch matmul), the functions behind mcugen_rescale.h. Reference arithmetic:
 * TFLite's MultiplyByQuantizedMultiplier for 32- and 64-bit accumulators (Q31, Q15_WIDE) and
 * LiteRT's double-precision FULLY_CONNECTED rescale. Fast paths: none. */
#include "mcugen_rescale.h"

#include <stddef.h>
#include <stdint.h>

#include "mcugen_fixedpoint.h"

/* Two's complement truncation to int32 without implementation-defined conversion of an
 * out-of-range value. */
static int32_t to_int32_wrapping(int64_t x)
{
    const uint32_t bits = (uint32_t)((uint64_t)x & 0xFFFFFFFFu);
    return bits <= (uint32_t)INT32_MAX ? (int32_t)bits
                                       : (int32_t)(int64_t)((int64_t)bits - ((int64_t)1 << 32));
}

/* TFLite's int64 MultiplyByQuantizedMultiplier with the multiplier already reduced: wrapping
 * int64 arithmetic (TFLite's assumed ranges make it exact), arithmetic shift right. */
static int32_t requantize_wide(int64_t x, int32_t reduced, int32_t total_shift)
{
    const uint64_t sum = (uint64_t)x * (uint64_t)(int64_t)reduced + ((uint64_t)1 << (total_shift - 1));
    const int64_t value = sum <= (uint64_t)INT64_MAX ? (int64_t)sum
                                                     : -(int64_t)(~sum) - 1; /* two's complement */
    /* Right shift of a negative value, done without implementation-defined behaviour. */
    const int64_t shifted = value >= 0 ? value >> total_shift : -((-(value + 1)) >> total_shift) - 1;
    return to_int32_wrapping(shifted);
}

/* LiteRT's reference rescale: static_cast<int32_t>(round(double(acc) * scale)). round() is
 * done by hand (no libm): the fraction x - trunc(x) of a double is exact. */
int32_t mcugen_requantize_double(int64_t acc, double scale)
{
    const double product = (double)acc * scale;
    if (!(product > -2147483649.0 && product < 2147483648.0)) {
        return INT32_MIN; /* out of int32 whatever the rounding (x86-64 cvttsd2si answer) */
    }
    int64_t whole = (int64_t)product; /* in range: truncation toward zero is defined */
    const double fraction = product - (double)whole;
    if (fraction >= 0.5) {
        whole += 1;
    } else if (fraction <= -0.5) {
        whole -= 1;
    }
    return (whole > INT32_MAX || whole < INT32_MIN) ? INT32_MIN : (int32_t)whole;
}

int mcugen_rescale_ok(const mcugen_rescale_params *rescale, int32_t channels)
{
    if (rescale == NULL || (rescale->accumulator_bits != 32 && rescale->accumulator_bits != 64)) {
        return 0;
    }
    const int32_t count = rescale->per_channel ? channels : 1;
    if (rescale->kind == MCUGEN_RESCALE_DOUBLE) {
        return rescale->scale != NULL;
    }
    if (rescale->multiplier == NULL || rescale->shift == NULL) {
        return 0;
    }
    for (int32_t c = 0; c < count; ++c) {
        const int32_t shift = rescale->shift[c];
        if (rescale->kind == MCUGEN_RESCALE_Q31) {
            if (rescale->accumulator_bits != 32 || shift < -31 || shift > 30 ||
                rescale->multiplier[c] < 0) {
                return 0;
            }
        } else if (rescale->kind == MCUGEN_RESCALE_Q15_WIDE) {
            if (shift < 8 || shift > 46 || rescale->multiplier[c] < 0 ||
                rescale->multiplier[c] > 0x7FFF) {
                return 0;
            }
        } else {
            return 0;
        }
    }
    return 1;
}

int32_t mcugen_rescale(const mcugen_rescale_params *rescale, int64_t acc, int32_t channel)
{
    const int32_t i = rescale->per_channel ? channel : 0;
    if (rescale->accumulator_bits == 32) {
        acc = to_int32_wrapping(acc);
    }
    switch (rescale->kind) {
    case MCUGEN_RESCALE_Q31:
        return mcugen_requantize((int32_t)acc, rescale->multiplier[i], rescale->shift[i]);
    case MCUGEN_RESCALE_Q15_WIDE:
        return requantize_wide(acc, rescale->multiplier[i], rescale->shift[i]);
    default:
        return mcugen_requantize_double(acc, rescale->scale[i]);
    }
}
