/* mcugen runtime: int8 and int16 average and max pooling (TFLite AVERAGE_POOL_2D, MAX_POOL_2D).
 *
 * NHWC tensors. Only taps inside the input take part: the average divides by the number of
 * in-bounds taps and rounds half away from zero, as TFLite's reference kernels do; the
 * maximum starts at the type's minimum (-128, -32768). The output has the input's
 * quantization (TFLite requires it), so no requantization happens and both rounding modes give
 * the same result. The int8 kernels take a pixel's channels in vectors on Cortex-M4/M7 (DSP
 * extension) and Cortex-M55 (Helium), with the same results (the window sums in int16 lanes,
 * for windows of at most 256 taps).
 */
#ifndef MCUGEN_POOL_H
#define MCUGEN_POOL_H

#include <stdint.h>

#include "mcugen_nn_types.h"

typedef struct {
    mcugen_tile stride;            /* >= 1 */
    mcugen_tile padding;           /* elements before the first input column (w) / row (h) */
    mcugen_tile filter;            /* window size, >= 1 */
    mcugen_activation activation;  /* fused activation clamp, within the element type's range */
} mcugen_pool_params;

/* Returns MCUGEN_ARG_ERROR on bad arguments or when a window lies wholly in the padding
 * (TFLite's AveragePool fails there too); the output is then incomplete. */
mcugen_status mcugen_avgpool_s8(const mcugen_pool_params *params,
                                const mcugen_dims *input_dims, const int8_t *input,
                                const mcugen_dims *output_dims, int8_t *output);

mcugen_status mcugen_maxpool_s8(const mcugen_pool_params *params,
                                const mcugen_dims *input_dims, const int8_t *input,
                                const mcugen_dims *output_dims, int8_t *output);

mcugen_status mcugen_avgpool_s16(const mcugen_pool_params *params,
                                 const mcugen_dims *input_dims, const int16_t *input,
                                 const mcugen_dims *output_dims, int16_t *output);

mcugen_status mcugen_maxpool_s16(const mcugen_pool_params *params,
                                 const mcugen_dims *input_dims, const int16_t *input,
                                 const mcugen_dims *output_dims, int16_t *output);

#endif /* MCUGEN_POOL_H */
