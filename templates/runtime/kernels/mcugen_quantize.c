/* mcugen runtime: QUANTIZE from float32 and DEQUANTIZE to float32, the kernels behind
 * mcugen_quantize.h. Reference arithmetic: TFLite's reference (round half away from zero of
 * x / scale, plus the zero point, saturated; (q - zero point) * scale in float).
 * Fast paths: none. */
#include "mcugen_quantize.h"

#include <math.h>
#include <stddef.h>

static int32_t quantize_one(const mcugen_affine_params *p, float x, int32_t low, int32_t high)
{
    const float rounded = roundf(x / p->scale);
    if (!(rounded == rounded)) { /* NaN */
        return p->zero_point < low ? low : (p->zero_point > high ? high : p->zero_point);
    }
    if (rounded >= 2147483647.0f) {
        return high;
    }
    if (rounded <= -2147483648.0f) {
        return low;
    }
    const int64_t value = (int64_t)rounded + p->zero_point;
    return value < low ? low : (value > high ? high : (int32_t)value);
}

/* One kernel per integer type: the same loop, only the type and its range differ. */
#define MCUGEN_QUANTIZE_F32(NAME, OUT_T, LOW, HIGH)                                           \
    mcugen_status NAME(const mcugen_affine_params *params, int32_t size, const float *input,  \
                       OUT_T *output)                                                         \
    {                                                                                         \
        if (params == NULL || input == NULL || output == NULL || size < 0) {                  \
            return MCUGEN_ARG_ERROR;                                                          \
        }                                                                                     \
        for (int32_t i = 0; i < size; ++i) {                                                  \
            output[i] = (OUT_T)quantize_one(params, input[i], LOW, HIGH);                     \
        }                                                                                     \
        return MCUGEN_OK;                                                                     \
    }

/* TFLite's Dequantize: the scale widened to double, the product rounded once to float. */
#define MCUGEN_DEQUANTIZE_F32(NAME, IN_T)                                                     \
    mcugen_status NAME(const mcugen_affine_params *params, int32_t size, const IN_T *input,   \
                       float *output)                                                         \
    {                                                                                         \
        if (params == NULL || input == NULL || output == NULL || size < 0) {                  \
            return MCUGEN_ARG_ERROR;                                                          \
        }                                                                                     \
        const double scale = (double)params->scale;                                           \
        for (int32_t i = 0; i < size; ++i) {                                                  \
            output[i] = (float)(scale * (double)((int32_t)input[i] - params->zero_point));    \
        }                                                                                     \
        return MCUGEN_OK;                                                                     \
    }

MCUGEN_QUANTIZE_F32(mcugen_quantize_f32_s8, int8_t, INT8_MIN, INT8_MAX)
MCUGEN_QUANTIZE_F32(mcugen_quantize_f32_s16, int16_t, INT16_MIN, INT16_MAX)
MCUGEN_DEQUANTIZE_F32(mcugen_dequantize_s8_f32, int8_t)
MCUGEN_DEQUANTIZE_F32(mcugen_dequantize_s16_f32, int16_t)
MCUGEN_DEQUANTIZE_F32(mcugen_dequantize_u8_f32, uint8_t)
