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

mcugen_status mcugen_quantize_f32_s8(const mcugen_affine_params *params, int32_t size,
                                     const float *input, int8_t *output)
{
    if (params == NULL || input == NULL || output == NULL || size < 0) {
        return MCUGEN_ARG_ERROR;
    }
    for (int32_t i = 0; i < size; ++i) {
        output[i] = (int8_t)quantize_one(params, input[i], INT8_MIN, INT8_MAX);
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_quantize_f32_s16(const mcugen_affine_params *params, int32_t size,
                                      const float *input, int16_t *output)
{
    if (params == NULL || input == NULL || output == NULL || size < 0) {
        return MCUGEN_ARG_ERROR;
    }
    for (int32_t i = 0; i < size; ++i) {
        output[i] = (int16_t)quantize_one(params, input[i], INT16_MIN, INT16_MAX);
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_dequantize_s8_f32(const mcugen_affine_params *params, int32_t size,
                                       const int8_t *input, float *output)
{
    if (params == NULL || input == NULL || output == NULL || size < 0) {
        return MCUGEN_ARG_ERROR;
    }
    const double scale = (double)params->scale;
    for (int32_t i = 0; i < size; ++i) {
        output[i] = (float)(scale * (double)((int32_t)input[i] - params->zero_point));
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_dequantize_s16_f32(const mcugen_affine_params *params, int32_t size,
                                        const int16_t *input, float *output)
{
    if (params == NULL || input == NULL || output == NULL || size < 0) {
        return MCUGEN_ARG_ERROR;
    }
    const double scale = (double)params->scale;
    for (int32_t i = 0; i < size; ++i) {
        output[i] = (float)(scale * (double)((int32_t)input[i] - params->zero_point));
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_dequantize_u8_f32(const mcugen_affine_params *params, int32_t size,
                                       const uint8_t *input, float *output)
{
    if (params == NULL || input == NULL || output == NULL || size < 0) {
        return MCUGEN_ARG_ERROR;
    }
    const double scale = (double)params->scale;
    for (int32_t i = 0; i < size; ++i) {
        output[i] = (float)(scale * (double)((int32_t)input[i] - params->zero_point));
    }
    return MCUGEN_OK;
}
