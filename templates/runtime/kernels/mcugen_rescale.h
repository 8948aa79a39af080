/* mcugen runtime: how an accumulator of a weighted op (conv, depthwise, transpose conv, fully
 * connected, batch matmul) becomes an output value, in the three ways TFLite does it.
 *
 *   MCUGEN_RESCALE_Q31       MultiplyByQuantizedMultiplier(int32_t x, m, shift), double rounding
 *                            (int8 ops, and int16 ops with an int32 bias). multiplier = m,
 *                            shift = TFLite's shift (> 0 is a left shift), in [-31, 30].
 *   MCUGEN_RESCALE_Q15_WIDE  MultiplyByQuantizedMultiplier(int64_t x, m, shift) (int16 ops with
 *                            an int64 or no bias): multiplier = the 16-bit reduced multiplier
 *                            (m + 2^15) >> 16 (0x7FFF for m >= 0x7FFF0000), shift = the total
 *                            right shift 15 - shift, in [8, 46]; one rounding, half up, and the
 *                            result truncated to int32.
 *   MCUGEN_RESCALE_DOUBLE    LiteRT's reference FULLY_CONNECTED: round(double(acc) * scale),
 *                            ties away from zero; a result outside int32 gives INT32_MIN, as the
 *                            x86-64 LiteRT build does. Needs IEEE double arithmetic.
 *
 * The kernels accumulate exactly in 64 bits; accumulator_bits == 32 first wraps the sum to
 * int32 (two's complement), which is what TFLite's int32 accumulator holds. Every multiplier,
 * shift and scale is computed by mcugen at build time. per_channel == 0: element 0 of the
 * arrays serves every channel.
 */
#ifndef MCUGEN_RESCALE_H
#define MCUGEN_RESCALE_H

#include <stdint.h>

typedef enum {
    MCUGEN_RESCALE_Q31 = 0,
    MCUGEN_RESCALE_Q15_WIDE = 1,
    MCUGEN_RESCALE_DOUBLE = 2
} mcugen_rescale_kind;

typedef struct {
    int32_t kind;             /* an mcugen_rescale_kind */
    int32_t accumulator_bits; /* 32 or 64 */
    int32_t per_channel;      /* 1: one entry per output channel; 0: one entry for all */
    const int32_t *multiplier; /* Q31, Q15_WIDE */
    const int32_t *shift;      /* Q31, Q15_WIDE */
    const double *scale;       /* DOUBLE */
} mcugen_rescale_params;

/* 1 when the parameters are usable for `channels` output channels, else 0. */
int mcugen_rescale_ok(const mcugen_rescale_params *rescale, int32_t channels);

/* LiteRT's static_cast<int32_t>(round(double(acc) * scale)), as MCUGEN_RESCALE_DOUBLE. */
int32_t mcugen_requantize_double(int64_t acc, double scale);

/* The rescaled accumulator (before the output zero point and the activation clamp). */
int32_t mcugen_rescale(const mcugen_rescale_params *rescale, int64_t acc, int32_t channel);

#endif /* MCUGEN_RESCALE_H */
