/* mcugen runtime: the int8 AVERAGE_POOL_2D and MAX_POOL_2D fast paths for the DSP extension
 * (Cortex-M4/M7): one output pixel's channels in words, summed by SXTAB16 (windows of at most
 * 256 taps), maximised by SSUB8 + SEL. Bit-exact with mcugen_pool.c's portable loops (TFLite's
 * reference pooling); compiled only under MCUGEN_FAST_DSP. See mcugen_pool_fast.h. */
#include "mcugen_pool_fast.h"

#include "mcugen_fast_common.h" /* load32, sxtab16_ror8 */
#include "mcugen_fixedpoint.h"

#if defined(MCUGEN_FAST_DSP)

/* Average, eight channels at a time: SXTAB16 sums the even and the odd channels of a word in
 * halfwords, exact for windows of at most 256 taps (|sum| <= 256 * 128). Returns the
 * channels done (a multiple of 8; 0 for larger windows). */
int32_t mcugen_avgpool_fast_s8_channels(const int8_t *tap, const mcugen_pool_window *win,
                                        mcugen_activation act, int8_t *out)
{
    const int32_t count = win->rows * win->cols;
    int32_t c = 0;
    for (; count <= 256 && c + 8 <= win->channels; c += 8) {
        int32_t even0 = 0, odd0 = 0, even1 = 0, odd1 = 0;
        const int8_t *row = tap + c;
        for (int32_t fy = win->rows; fy > 0; --fy, row += win->pitch) {
            const int8_t *p = row;
            for (int32_t fx = win->cols; fx > 0; --fx, p += win->channels) {
                const int32_t w0 = load32(p), w1 = load32(p + 4);
                even0 = __sxtab16(even0, w0);
                odd0 = sxtab16_ror8(odd0, w0);
                even1 = __sxtab16(even1, w1);
                odd1 = sxtab16_ror8(odd1, w1);
            }
        }
        const int32_t sums[8] = {(int16_t)even0, (int16_t)odd0, even0 >> 16, odd0 >> 16,
                                 (int16_t)even1, (int16_t)odd1, even1 >> 16, odd1 >> 16};
        for (int32_t k = 0; k < 8; ++k) {
            out[c + k] = (int8_t)mcugen_clamp(mcugen_pool_rounded_average(sums[k], count),
                                              act.min, act.max);
        }
    }
    return c;
}

/* Maximum, four channels at a time: SSUB8 sets the GE flags of the bytes where the tap is
 * not below the running maximum, SEL takes them. */
int32_t mcugen_maxpool_fast_s8_channels(const int8_t *tap, const mcugen_pool_window *win,
                                        mcugen_activation act, int8_t *out)
{
    const uint32_t low = (uint8_t)act.min * 0x01010101u, high = (uint8_t)act.max * 0x01010101u;
    int32_t c = 0;
    for (; c + 4 <= win->channels; c += 4) {
        uint32_t max = low; /* the clamp's minimum: max(max over taps, min) */
        const int8_t *row = tap + c;
        for (int32_t fy = 0; fy < win->rows; ++fy, row += win->pitch) {
            const int8_t *p = row;
            for (int32_t fx = 0; fx < win->cols; ++fx, p += win->channels) {
                const uint32_t w = (uint32_t)load32(p);
                (void)__ssub8((int32_t)w, (int32_t)max);
                max = __sel(w, max);
            }
        }
        (void)__ssub8((int32_t)max, (int32_t)high);
        max = __sel(high, max);
        memcpy(out + c, &max, sizeof(max));
    }
    return c;
}

#else
typedef int mcugen_pool_fast_dsp_unused; /* ISO C: a translation unit is never empty */
#endif
