/* A custom op for mcugen: int8 RELU with equal input and output scales, through a table built in
 * scratch (256 bytes), so that the example shows every part of the interface (docs/custom_ops.md). */
#include <stdint.h>

#include "mcugen_custom.h"

// mcugen: scratch 256

mcugen_status my_relu_kernel(const mcugen_custom_args *args);

mcugen_status my_relu_kernel(const mcugen_custom_args *args)
{
    if (args->input_count != 1 || args->output_count != 1 || args->scratch_size < 256) {
        return MCUGEN_ARG_ERROR;
    }
    const mcugen_custom_input *in = &args->inputs[0];
    const mcugen_custom_output *out = &args->outputs[0];
    if (in->info.dtype != MCUGEN_DTYPE_INT8 || out->info.dtype != MCUGEN_DTYPE_INT8 ||
        in->info.quant_count != 1 || out->info.quant_count != 1 ||
        in->info.scale[0] != out->info.scale[0]) {
        return MCUGEN_NO_IMPL;
    }
    int32_t count = 1;
    for (int32_t d = 0; d < in->info.rank; ++d) {
        count *= in->info.dims[d];
    }
    /* table[q + 128]: the output for input q: shifted by the zero points, clamped below at the
     * output's zero (RELU) and to int8 */
    int8_t *table = (int8_t *)args->scratch;
    const int32_t in_zero = in->info.zero_point[0], out_zero = out->info.zero_point[0];
    for (int32_t q = -128; q <= 127; ++q) {
        int32_t value = q - in_zero + out_zero;
        value = value < out_zero ? out_zero : value;
        value = value > 127 ? 127 : value;
        table[q + 128] = (int8_t)(value < -128 ? -128 : value);
    }
    const int8_t *x = (const int8_t *)in->data;
    int8_t *y = (int8_t *)out->data;
    for (int32_t i = 0; i < count; ++i) {
        y[i] = table[x[i] + 128];
    }
    return MCUGEN_OK;
}
