/* mcugen runtime: QUANTIZE from float32 and DEQUANTIZE to float32 (TFLite's reference
 * AffineQuantize and Dequantize). Integer-to-integer QUANTIZE uses mcugen_activation's
 * table and rescale kernels. Needs the C math library (roundf).
 */
#ifndef MCUGEN_QUANTIZE_H
#define MCUGEN_QUANTIZE_H

#include <stdint.h>

#include "mcugen_nn_types.h"

typedef struct {
    float scale; /* the tensor's float32 scale */
    int32_t zero_point;
} mcugen_affine_params;

/* round(x / scale) with halves away from zero, plus the zero point, clamped to the type.
 * Values beyond the int32 range (and NaN) clamp; TFLite's cast is undefined there. */
mcugen_status mcugen_quantize_f32_s8(const mcugen_affine_params *params, int32_t size,
                                     const float *input, int8_t *output);
mcugen_status mcugen_quantize_f32_s16(const mcugen_affine_params *params, int32_t size,
                                      const float *input, int16_t *output);

/* (float)((double)scale * (q - zero_point)) */
mcugen_status mcugen_dequantize_s8_f32(const mcugen_affine_params *params, int32_t size,
                                       const int8_t *input, float *output);
mcugen_status mcugen_dequantize_u8_f32(const mcugen_affine_params *params, int32_t size,
                                       const uint8_t *input, float *output);
mcugen_status mcugen_dequantize_s16_f32(const mcugen_affine_params *params, int32_t size,
                                        const int16_t *input, float *output);

#endif /* MCUGEN_QUANTIZE_H */
