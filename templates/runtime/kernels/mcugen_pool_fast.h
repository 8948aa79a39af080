/* mcugen runtime: the int8 pooling fast paths' interface, internal to mcugen_pool.c.
 *
 * Ops: AVERAGE_POOL_2D and MAX_POOL_2D, int8. Reference arithmetic: TFLite's reference pooling
 * (see mcugen_pool.h): the sum of the in-bounds taps divided by their count, rounded half away
 * from zero; the maximum over the in-bounds taps; then the activation clamp.
 *
 * mcugen_pool.c calls these only when a path is compiled in (MCUGEN_FAST_DSP or MCUGEN_FAST_MVE,
 * mcugen_platform.h) and the activation lies inside int8; each computes a leading run of one
 * output pixel's channels and returns how many, and the portable loop does the rest.
 *   MCUGEN_FAST_DSP  mcugen_pool_fast_dsp.c: average eight channels a step in int16 halfwords
 *                    (SXTAB16) for windows of at most 256 taps; maximum four channels a step
 *                    (SSUB8 + SEL).
 *   MCUGEN_FAST_MVE  mcugen_pool_fast_mve.c: average sixteen (then eight, tail-predicated)
 *                    channels in int16 lanes for windows of at most 256 taps; maximum sixteen
 *                    channels a step, tail-predicated.
 * No scratch. Bit-exact with the portable C: |window sum| <= 256 * 128 fits an int16 lane.
 */
/* mcugen: kernel-internal (the generated model does not include this header) */
#ifndef MCUGEN_POOL_FAST_H
#define MCUGEN_POOL_FAST_H

#include <stdint.h>

#include "mcugen_nn_types.h"
#include "mcugen_platform.h" /* which path: MCUGEN_FAST_MVE, MCUGEN_FAST_DSP or neither */

/* One output pixel's window: its first in-bounds tap (channel 0), rows x cols taps, `pitch`
 * elements from one row of the image to the next, `channels` from one tap to the next. */
typedef struct {
    int32_t rows;
    int32_t cols;
    int32_t pitch;
    int32_t channels;
} mcugen_pool_window;

/* Round-half-away-from-zero division of a window sum by its tap count, as TFLite does. TFLite
 * adds the half in int32 and wraps past 2^31 (int16 windows of more than 65,536 taps); the
 * add is done in uint32 here so that C has no signed overflow, with the same two's
 * complement result. */
static inline int32_t mcugen_pool_rounded_average(int32_t sum, int32_t count)
{
    const uint32_t half = (uint32_t)(count / 2);
    const uint32_t biased = sum > 0 ? (uint32_t)sum + half : (uint32_t)sum - half;
    return (int32_t)biased / count;
}

/* The average of the leading channels of the pixel whose first tap is `tap`, clamped to `act`
 * (inside int8), into out[0 ..): returns the channels done (0 when the window has more than
 * 256 taps). */
int32_t mcugen_avgpool_fast_s8_channels(const int8_t *tap, const mcugen_pool_window *win,
                                        mcugen_activation act, int8_t *out);

/* The maximum, likewise; it starts at act.min instead of INT8_MIN (the same after the clamp,
 * empty windows included). */
int32_t mcugen_maxpool_fast_s8_channels(const int8_t *tap, const mcugen_pool_window *win,
                                        mcugen_activation act, int8_t *out);

#endif /* MCUGEN_POOL_FAST_H */
