/* mcugen runtime: helpers shared by the fast int8 paths (mcugen_conv_fast_dsp.c,
 * mcugen_conv_fast_mve.c, mcugen_elementwise_fast_dsp.c, _mve.c, mcugen_pool_fast_dsp.c; see
 * README.md). Header only, all
 * static inline. Which path a file compiles is chosen in mcugen_platform.h; see
 * mcugen_conv_fast.h for the arithmetic. */
/* mcugen: kernel-internal (the generated model does not include this header) */
#ifndef MCUGEN_FAST_COMMON_H
#define MCUGEN_FAST_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mcugen_fixedpoint.h"
#include "mcugen_nn_types.h"
#include "mcugen_platform.h" /* MCUGEN_FAST_MVE, MCUGEN_FAST_DSP */


static inline int32_t round_up4(int32_t n)
{
    return (n + 3) & ~3;
}

#if defined(MCUGEN_FAST_DSP) || defined(MCUGEN_FAST_MVE)

static inline int scratch_ok(const mcugen_context *ctx, int32_t bytes)
{
    return ctx != NULL && ctx->buf != NULL && ctx->size >= bytes &&
           ((uintptr_t)ctx->buf & 3u) == 0;
}

static inline int32_t wrap_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* mcugen_requantize in fewer instructions, for multiplier != INT32_MIN (the fast paths check):
 * then the doubling high multiply never saturates and equals floor((x * m + 2^30) / 2^31)
 * (gemmlowp's nudge of 1 - 2^30 for negative products, truncated toward zero, gives the same
 * value), whose result is never INT32_MIN; RoundingDivideByPOT (ties away from zero) is then a
 * round-half-up shift of x - 1 for negative x: floor((x - 1 + 2^(e-1)) / 2^e), computed as
 * (x >> e) + bit e-1 of x so that nothing overflows. The shifts come decoded: left = max(shift,
 * 0), right = max(-shift, 0). */
static inline int32_t requantize_decoded(int32_t x, int32_t multiplier, int32_t left,
                                         int32_t right)
{
    const int32_t shifted = (int32_t)((uint32_t)x << left);
    const int64_t product = (int64_t)shifted * multiplier + ((int64_t)1 << 30);
    int32_t y = (int32_t)(product >> 31); /* arithmetic shift on gcc, clang, armclang */
    if (right > 0) {
        y += y >> 31;
        y = (y >> right) + ((y >> (right - 1)) & 1);
    }
    return y;
}

/* requantize_decoded with TFLite's signed shift (left when positive, right when negative). */
static inline int32_t requantize_fast(int32_t x, int32_t multiplier, int32_t shift)
{
    return requantize_decoded(x, multiplier, shift > 0 ? shift : 0, shift > 0 ? 0 : -shift);
}

/* Accumulator (bias included) -> int8, as the portable kernels finish. */
static inline int8_t finish_s8(int32_t acc, int32_t multiplier, int32_t shift,
                               int32_t output_offset, mcugen_activation activation)
{
    const int32_t y = wrap_add(requantize_fast(acc, multiplier, shift), output_offset);
    return (int8_t)mcugen_clamp(y, activation.min, activation.max);
}

/* requantize_fast's precondition: no multiplier is INT32_MIN. */
static inline int multipliers_ok(const int32_t *multiplier, int32_t count)
{
    for (int32_t i = 0; i < count; ++i) {
        if (multiplier[i] == INT32_MIN) {
            return 0;
        }
    }
    return 1;
}

/* The window of one output pixel: top-left input coordinate of tap (0, 0). */
typedef struct {
    const int8_t *image; /* this batch element's input */
    int32_t y0;
    int32_t x0;
} window;

static inline window pixel_window(const mcugen_dims *in, const mcugen_dims *out,
                                  const mcugen_tile *stride, const mcugen_tile *padding,
                                  const int8_t *input, int32_t pixel)
{
    const int32_t per_image = out->h * out->w;
    const int32_t b = pixel / per_image;
    const int32_t rest = pixel - b * per_image;
    const int32_t oy = rest / out->w;
    const int32_t ox = rest - oy * out->w;
    window win;
    win.image = input + b * in->h * in->w * in->c;
    win.y0 = oy * stride->h - padding->h;
    win.x0 = ox * stride->w - padding->w;
    return win;
}

#endif

#if defined(MCUGEN_FAST_DSP)
#include <arm_acle.h>

static inline int32_t load32(const void *p)
{
    int32_t v;
    memcpy(&v, p, sizeof(v)); /* an LDR: unaligned access is fine on Armv7E-M */
    return v;
}

/* __sxtb16(x rotated right by 8): bytes 1 and 3 sign-extended, in one SXTB16 (gcc 12 does
 * not fold a separate rotation into it). */
static inline int32_t sxtb16_ror8(int32_t x)
{
#if defined(__GNUC__)
    int32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
#else
    const uint32_t u = (uint32_t)x;
    return __sxtb16((int32_t)((u >> 8) | (u << 24)));
#endif
}

/* SXTAB16 of x rotated right by 8: bytes 1 and 3 sign-extended and added to acc's halfwords
 * (gcc 12 folds no separate rotation into it). */
static inline int32_t sxtab16_ror8(int32_t acc, int32_t x)
{
#if defined(__GNUC__)
    int32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(x));
    return r;
#else
    const uint32_t u = (uint32_t)x;
    return __sxtab16(acc, (int32_t)((u >> 8) | (u << 24)));
#endif
}

static inline void store32(void *p, int32_t v)
{
    memcpy(p, &v, sizeof(v));
}

#elif defined(MCUGEN_FAST_MVE)
#include <arm_mve.h>

/* TFLite's MultiplyByQuantizedMultiplier on four lanes (see mcugen_conv_fast.h). */
static inline int32x4_t requantize_x4(int32x4_t acc, int32x4_t multiplier, int32x4_t shift)
{
    const int32x4_t zero = vdupq_n_s32(0);
    const int32x4_t left = vmaxq_s32(shift, zero);
    const int32x4_t right = vminq_s32(shift, zero);
    acc = vqrdmulhq_s32(vshlq_s32(acc, left), multiplier);
    /* -1 for negative values when right < 0: VRSHL then rounds ties away from zero */
    const int32x4_t fix = vshrq_n_s32(vandq_s32(acc, right), 31);
    return vrshlq_s32(vqaddq_s32(acc, fix), right);
}

#endif

#endif /* MCUGEN_FAST_COMMON_H */
