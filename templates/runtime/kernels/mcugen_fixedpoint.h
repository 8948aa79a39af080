/* mcugen runtime: TFLite's fixed-point requantization primitives.
 *
 * Every function works on values whose ranges TFLite's kernels guarantee; products are formed
 * in 64 bits so no signed overflow (undefined behaviour) can occur.
 */
#ifndef MCUGEN_FIXEDPOINT_H
#define MCUGEN_FIXEDPOINT_H

#include <stdint.h>

#include "mcugen_nn_types.h"

#ifndef MCUGEN_INLINE
#define MCUGEN_INLINE static inline
#endif

/* gemmlowp SaturatingRoundingDoublingHighMul: round(a * b / 2^31); ties go toward +infinity
 * (a positive tie rounds away from zero, a negative one toward zero), as in gemmlowp. */
MCUGEN_INLINE int32_t mcugen_srdhm(int32_t a, int32_t b)
{
    if (a == INT32_MIN && b == INT32_MIN) {
        return INT32_MAX;
    }
    const int64_t product = (int64_t)a * (int64_t)b;
    const int64_t nudge = product >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
    /* C division truncates toward zero, as gemmlowp relies on. */
    return (int32_t)((product + nudge) / ((int64_t)1 << 31));
}

/* gemmlowp RoundingDivideByPOT: x / 2^exponent, ties away from zero. */
MCUGEN_INLINE int32_t mcugen_rounding_divide_by_pot(int32_t x, int32_t exponent)
{
    const int32_t mask = (int32_t)(((int64_t)1 << exponent) - 1);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* TFLite MultiplyByQuantizedMultiplier: double rounding (a rounding doubling high multiply, then
 * a rounding right shift), as TFLM and LiteRT's reference kernels both do. */
MCUGEN_INLINE int32_t mcugen_requantize(int32_t x, int32_t multiplier, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    /* TFLite multiplies in int32; wrap like two's complement hardware instead of overflowing. */
    const int32_t shifted = (int32_t)(uint32_t)((uint64_t)(int64_t)x << left);
    return mcugen_rounding_divide_by_pot(mcugen_srdhm(shifted, multiplier), right);
}

MCUGEN_INLINE int32_t mcugen_clamp(int32_t x, int32_t low, int32_t high)
{
    return x < low ? low : (x > high ? high : x);
}

#endif /* MCUGEN_FIXEDPOINT_H */
