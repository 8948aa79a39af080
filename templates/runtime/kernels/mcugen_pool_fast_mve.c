/* mcugen runtime: the int8 AVERAGE_POOL_2D and MAX_POOL_2D fast paths for Helium (MVE,
 * Cortex-M55): one output pixel's channels in vectors, summed in int16 lanes (windows of at
 * most 256 taps), maximised sixteen at a time, tail-predicated. Bit-exact with mcugen_pool.c's
 * portable loops (TFLite's reference pooling); compiled only under MCUGEN_FAST_MVE. See
 * mcugen_pool_fast.h. */
#include "mcugen_pool_fast.h"

#include "mcugen_fixedpoint.h"

#if defined(MCUGEN_FAST_MVE)
#include <arm_mve.h>
/* Average, sixteen channels at a time, then eight with tail predication, summed in int16
 * lanes: exact for windows of at most 256 taps (|sum| <= 256 * 128). Returns the channels
 * done. */
int32_t mcugen_avgpool_fast_s8_channels(const int8_t *tap, const mcugen_pool_window *win,
                                        mcugen_activation act, int8_t *out)
{
    const int32_t count = win->rows * win->cols;
    if (count > 256) {
        return 0;
    }
    for (int32_t c = 0; c < win->channels;) {
        const int32_t left = win->channels - c, lanes = left >= 16 ? 16 : 8;
        const mve_pred16_t tail = vctp16q((uint32_t)left);
        int16x8_t sum0 = vdupq_n_s16(0), sum1 = vdupq_n_s16(0);
        const int8_t *row = tap + c;
        for (int32_t fy = win->rows; fy > 0; --fy, row += win->pitch) {
            const int8_t *p = row;
            if (lanes == 16) {
                for (int32_t fx = win->cols; fx > 0; --fx, p += win->channels) {
                    sum0 = vaddq_s16(sum0, vldrbq_s16(p));
                    sum1 = vaddq_s16(sum1, vldrbq_s16(p + 8));
                }
            } else {
                for (int32_t fx = win->cols; fx > 0; --fx, p += win->channels) {
                    sum0 = vaddq_s16(sum0, vldrbq_z_s16(p, tail));
                }
            }
        }
        int16_t sums[16];
        vst1q_s16(sums, sum0);
        vst1q_s16(sums + 8, sum1);
        for (int32_t k = 0; k < (left < lanes ? left : lanes); ++k) {
            out[c + k] = (int8_t)mcugen_clamp(mcugen_pool_rounded_average(sums[k], count),
                                              act.min, act.max);
        }
        c += lanes;
    }
    return win->channels;
}

/* Maximum, sixteen channels at a time (fewer with tail predication); the running maximum
 * starts at the clamp's minimum. */
int32_t mcugen_maxpool_fast_s8_channels(const int8_t *tap, const mcugen_pool_window *win,
                                        mcugen_activation act, int8_t *out)
{
    for (int32_t c = 0; c < win->channels; c += 16) {
        const mve_pred16_t p = vctp8q((uint32_t)(win->channels - c));
        int8x16_t max = vdupq_n_s8((int8_t)act.min);
        const int8_t *row = tap + c;
        for (int32_t fy = 0; fy < win->rows; ++fy, row += win->pitch) {
            const int8_t *q = row;
            for (int32_t fx = 0; fx < win->cols; ++fx, q += win->channels) {
                max = vmaxq_s8(max, vldrbq_z_s8(q, p)); /* (inactive lanes: 0, not stored) */
            }
        }
        vstrbq_p_s8(out + c, vminq_s8(max, vdupq_n_s8((int8_t)act.max)), p);
    }
    return win->channels;
}

#else
typedef int mcugen_pool_fast_mve_unused; /* ISO C: a translation unit is never empty */
#endif
