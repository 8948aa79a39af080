/* mcugen runtime: NHWC image resizing (TFLite RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR).
 *
 * mcugen computes, at build time, each output row's and column's source indices (and, for
 * bilinear, its position between them) exactly as TFLite's reference kernels do per pixel;
 * the kernels only gather and blend.
 *
 * Nearest neighbour copies depth * element_bytes bytes per output pixel, so one kernel serves
 * every element type. Integer bilinear is TFLite's ResizeBilinearInteger: positions in 1/1024
 * units, four taps weighted by 10-bit fractions (a 20-bit sum in 64 bits), divided by 2^20
 * rounding half away from zero. Float bilinear repeats ResizeBilinear's float operations in
 * TFLite's order: v00*wy0*wx0 + v10*wy1*wx0 + v01*wy0*wx1 + v11*wy1*wx1 + 0.0f.
 */
#ifndef MCUGEN_RESIZE_H
#define MCUGEN_RESIZE_H

#include <stdint.h>

#include "mcugen_nn_types.h"

typedef struct {
    const int32_t *rows;   /* source row per output row, output_dims->h entries */
    const int32_t *cols;   /* source column per output column, output_dims->w entries */
    int32_t element_bytes; /* bytes per element: 1 (int8), 2 (int16), 4 (float) */
} mcugen_resize_nearest_params;

typedef struct {
    const int32_t *row_lower;    /* per output row: y0, y1 and the position in 1/1024 units */
    const int32_t *row_upper;
    const int32_t *row_position;
    const int32_t *col_lower;    /* per output column: x0, x1 and the position */
    const int32_t *col_upper;
    const int32_t *col_position;
} mcugen_resize_bilinear_int_params;

typedef struct {
    const int32_t *row_lower;     /* per output row: y0, y1, 1 - (y - y0) and y - y0 */
    const int32_t *row_upper;
    const float *row_low_weight;
    const float *row_high_weight;
    const int32_t *col_lower;     /* per output column: x0, x1, 1 - (x - x0) and x - x0 */
    const int32_t *col_upper;
    const float *col_low_weight;
    const float *col_high_weight;
} mcugen_resize_bilinear_f32_params;

mcugen_status mcugen_resize_nearest(const mcugen_resize_nearest_params *params,
                                    const mcugen_dims *input_dims, const void *input,
                                    const mcugen_dims *output_dims, void *output);

mcugen_status mcugen_resize_bilinear_s8(const mcugen_resize_bilinear_int_params *params,
                                        const mcugen_dims *input_dims, const int8_t *input,
                                        const mcugen_dims *output_dims, int8_t *output);

mcugen_status mcugen_resize_bilinear_f32(const mcugen_resize_bilinear_f32_params *params,
                                         const mcugen_dims *input_dims, const float *input,
                                         const mcugen_dims *output_dims, float *output);

#endif /* MCUGEN_RESIZE_H */
