#include "mcugen_reduce.h"

#include <stddef.h>

#include "mcugen_fixedpoint.h"

static int nest_is_valid(const mcugen_loop_nest *nest)
{
    for (int32_t level = 0; level < MCUGEN_REDUCE_MAX_LOOPS; ++level) {
        if (nest->extent[level] < 1 || nest->stride[level] < 0) {
            return 0;
        }
    }
    return 1;
}

/* The int32 sum of the reduced elements that start at `base`. The build bounds the count so
 * that |sum| < 2^31. */
static int32_t sum_reduced(const int8_t *base, const mcugen_loop_nest *inner)
{
    const int32_t *n = inner->extent;
    const int32_t *s = inner->stride;
    int32_t sum = 0;
    for (int32_t i0 = 0; i0 < n[0]; ++i0) {
        const size_t o0 = (size_t)i0 * (size_t)s[0];
        for (int32_t i1 = 0; i1 < n[1]; ++i1) {
            const size_t o1 = o0 + (size_t)i1 * (size_t)s[1];
            for (int32_t i2 = 0; i2 < n[2]; ++i2) {
                const size_t o2 = o1 + (size_t)i2 * (size_t)s[2];
                for (int32_t i3 = 0; i3 < n[3]; ++i3) {
                    sum += base[o2 + (size_t)i3 * (size_t)s[3]];
                }
            }
        }
    }
    return sum;
}

static int8_t requantize_mean(int32_t sum, const mcugen_mean_quant_params *q)
{
    const int32_t centred = sum + q->sum_offset;
    const int32_t scaled = mcugen_requantize(centred, q->multiplier, q->shift);
    return (int8_t)mcugen_clamp(scaled + q->output_offset, INT8_MIN, INT8_MAX);
}

mcugen_status mcugen_mean_s8(const mcugen_mean_params *params,
                             const mcugen_mean_quant_params *quant,
                             const int8_t *input, int8_t *output)
{
    if (params == NULL || quant == NULL || input == NULL || output == NULL ||
        !nest_is_valid(&params->outer) || !nest_is_valid(&params->inner) ||
        quant->shift < -31 || quant->shift > 30) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t *n = params->outer.extent;
    const int32_t *s = params->outer.stride;
    for (int32_t i0 = 0; i0 < n[0]; ++i0) {
        const size_t o0 = (size_t)i0 * (size_t)s[0];
        for (int32_t i1 = 0; i1 < n[1]; ++i1) {
            const size_t o1 = o0 + (size_t)i1 * (size_t)s[1];
            for (int32_t i2 = 0; i2 < n[2]; ++i2) {
                const size_t o2 = o1 + (size_t)i2 * (size_t)s[2];
                for (int32_t i3 = 0; i3 < n[3]; ++i3) {
                    const int8_t *base = input + o2 + (size_t)i3 * (size_t)s[3];
                    *output++ = requantize_mean(sum_reduced(base, &params->inner), quant);
                }
            }
        }
    }
    return MCUGEN_OK;
}
