#include "mcugen_add.h"

#include <stddef.h>

#include "mcugen_fixedpoint.h"

/* TFLite's AddFunc for one pair of int8 values. */
static int8_t add_one(int32_t x1, int32_t x2, const mcugen_add_quant_params *q,
                      const mcugen_activation *activation)
{
    /* |x + offset| <= 255, so the shift by 20 stays far inside int32. */
    const int32_t shifted1 = (x1 + q->input1_offset) * ((int32_t)1 << q->left_shift);
    const int32_t shifted2 = (x2 + q->input2_offset) * ((int32_t)1 << q->left_shift);
    const int32_t scaled1 =
        mcugen_requantize(shifted1, q->input1_multiplier, q->input1_shift);
    const int32_t scaled2 =
        mcugen_requantize(shifted2, q->input2_multiplier, q->input2_shift);
    const int32_t raw =
        mcugen_requantize(scaled1 + scaled2, q->output_multiplier, q->output_shift) +
        q->output_offset;
    return (int8_t)mcugen_clamp(raw, activation->min, activation->max);
}

static int loop_is_valid(const mcugen_broadcast *loop)
{
    for (int32_t level = 0; level < MCUGEN_ADD_MAX_LOOPS; ++level) {
        if (loop->extent[level] < 1 || loop->input1_stride[level] < 0 ||
            loop->input2_stride[level] < 0) {
            return 0;
        }
    }
    return 1;
}

mcugen_status mcugen_add_s8(const mcugen_add_params *params,
                            const mcugen_add_quant_params *quant,
                            const int8_t *input1, const int8_t *input2, int8_t *output)
{
    if (params == NULL || quant == NULL || input1 == NULL || input2 == NULL || output == NULL ||
        !loop_is_valid(&params->loop) || quant->left_shift < 0 || quant->left_shift > 30 ||
        params->activation.min > params->activation.max) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t *n = params->loop.extent;
    const int32_t *s1 = params->loop.input1_stride;
    const int32_t *s2 = params->loop.input2_stride;
    const mcugen_activation *act = &params->activation;
    /* Offsets into the inputs; every level adds index * stride, so pointers stay in bounds. */
    for (int32_t i0 = 0; i0 < n[0]; ++i0) {
        const size_t a0 = (size_t)i0 * (size_t)s1[0];
        const size_t b0 = (size_t)i0 * (size_t)s2[0];
        for (int32_t i1 = 0; i1 < n[1]; ++i1) {
            const size_t a1 = a0 + (size_t)i1 * (size_t)s1[1];
            const size_t b1 = b0 + (size_t)i1 * (size_t)s2[1];
            for (int32_t i2 = 0; i2 < n[2]; ++i2) {
                const size_t a2 = a1 + (size_t)i2 * (size_t)s1[2];
                const size_t b2 = b1 + (size_t)i2 * (size_t)s2[2];
                for (int32_t i3 = 0; i3 < n[3]; ++i3) {
                    const size_t a3 = a2 + (size_t)i3 * (size_t)s1[3];
                    const size_t b3 = b2 + (size_t)i3 * (size_t)s2[3];
                    for (int32_t i4 = 0; i4 < n[4]; ++i4) {
                        const size_t a4 = a3 + (size_t)i4 * (size_t)s1[4];
                        const size_t b4 = b3 + (size_t)i4 * (size_t)s2[4];
                        const size_t step1 = (size_t)s1[5];
                        const size_t step2 = (size_t)s2[5];
                        for (int32_t i5 = 0; i5 < n[5]; ++i5) {
                            *output++ = add_one(input1[a4 + (size_t)i5 * step1],
                                                input2[b4 + (size_t)i5 * step2], quant, act);
                        }
                    }
                }
            }
        }
    }
    return MCUGEN_OK;
}
