/* mcugen runtime: int8, int16 and float32 BATCH_MATMUL (CMSIS-NN-style API).
 *
 * For every output batch index (b0, b1, b2) and every m < M, n < N:
 *   acc = sum_k (L[m][k] + lhs_offset) * (R[k][n] + rhs_offset)
 *   out[b0][b1][b2][m][n] = clamp(rescale(acc) + output_offset)
 * where L is the lhs matrix of that batch (stored [K][M] when adj_x, else [M][K]) and R the rhs
 * matrix (stored [N][K] when adj_y, else [K][N]). Batch dimensions are the inputs' leading
 * dimensions right-aligned into three (missing ones are 1); an input whose batch dimension is 1
 * is broadcast. The rescale (mcugen_rescale.h) is per tensor: Q31 with 32-bit accumulators for
 * s8, Q15_WIDE with 64-bit ones for s16 (zero points 0, so the offsets must be 0).
 * No scratch is needed: transposition is done by indexing.
 */
#ifndef MCUGEN_BATCH_MATMUL_H
#define MCUGEN_BATCH_MATMUL_H

#include <stdint.h>

#include "mcugen_nn_types.h"
#include "mcugen_rescale.h"

typedef struct {
    int32_t batch[3]; /* leading dimensions, right-aligned, 1 where absent */
    int32_t rows;     /* as stored */
    int32_t cols;     /* as stored */
} mcugen_matrix_dims;

typedef struct {
    int32_t lhs_offset;           /* -lhs zero point */
    int32_t rhs_offset;           /* -rhs zero point */
    int32_t output_offset;        /* output zero point */
    int32_t adj_x;                /* 1: lhs is stored transposed, [K][M] */
    int32_t adj_y;                /* 1: rhs is stored transposed, [N][K] */
    mcugen_activation activation; /* the output type's range */
} mcugen_bmm_params;

mcugen_status mcugen_batch_matmul_s8(const mcugen_context *ctx, const mcugen_bmm_params *params,
                                     const mcugen_rescale_params *rescale,
                                     const mcugen_matrix_dims *lhs_dims, const int8_t *lhs,
                                     const mcugen_matrix_dims *rhs_dims, const int8_t *rhs,
                                     const mcugen_matrix_dims *output_dims, int8_t *output);

mcugen_status mcugen_batch_matmul_s16(const mcugen_context *ctx, const mcugen_bmm_params *params,
                                      const mcugen_rescale_params *rescale,
                                      const mcugen_matrix_dims *lhs_dims, const int16_t *lhs,
                                      const mcugen_matrix_dims *rhs_dims, const int16_t *rhs,
                                      const mcugen_matrix_dims *output_dims, int16_t *output);

/* float32 (TFLite's reference float BatchMatMul order, see the .c); params: adj_x and adj_y only. */
mcugen_status mcugen_batch_matmul_f32(const mcugen_bmm_params *params,
                                      const mcugen_matrix_dims *lhs_dims, const float *lhs,
                                      const mcugen_matrix_dims *rhs_dims, const float *rhs,
                                      const mcugen_matrix_dims *output_dims, float *output);

#endif /* MCUGEN_BATCH_MATMUL_H */
