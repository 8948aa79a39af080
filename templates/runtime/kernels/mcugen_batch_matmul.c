/* mcugen runtime: the BATCH_MATMUL kernels behind mcugen_batch_matmul.h.
 * Ops: BATCH_MATMUL, int8 (mcugen_batch_matmul_s8), int16 (mcugen_batch_matmul_s16) and float32
 * (mcugen_batch_matmul_f32), with
 * adj_x/adj_y and batch broadcasting. Reference arithmetic: TFLite's reference BatchMatMul
 * (offset products summed in int32 or int64, then mcugen_rescale.h's per-tensor rescale, the
 * output offset and the clamp). Fast paths: none. */
#include "mcugen_batch_matmul.h"

#include <stddef.h>
#include <stdint.h>

#include "mcugen_fixedpoint.h"
#include "mcugen_nn_types.h"
#include "mcugen_rescale.h"

/* The matrix sizes (M, K, N) after adj_x / adj_y, or 0 when the dims are inconsistent. */
static int shapes_ok(const mcugen_bmm_params *params, const mcugen_matrix_dims *lhs,
                     const mcugen_matrix_dims *rhs, const mcugen_matrix_dims *out)
{
    if (params == NULL || lhs == NULL || rhs == NULL || out == NULL) {
        return 0;
    }
    for (int32_t i = 0; i < 3; ++i) {
        const int32_t a = lhs->batch[i], b = rhs->batch[i], o = out->batch[i];
        if (a < 1 || b < 1 || (a != o && a != 1) || (b != o && b != 1) || (a != b && a != 1 && b != 1)) {
            return 0;
        }
    }
    const int32_t m = params->adj_x ? lhs->cols : lhs->rows;
    const int32_t k = params->adj_x ? lhs->rows : lhs->cols;
    const int32_t k_rhs = params->adj_y ? rhs->cols : rhs->rows;
    const int32_t n = params->adj_y ? rhs->rows : rhs->cols;
    return m > 0 && k > 0 && n > 0 && k == k_rhs && out->rows == m && out->cols == n;
}

/* Offset of batch (b0, b1, b2) in a matrix stack whose batch dims may broadcast (1). */
static int32_t batch_offset(const mcugen_matrix_dims *d, int32_t b0, int32_t b1, int32_t b2)
{
    const int32_t i0 = d->batch[0] == 1 ? 0 : b0;
    const int32_t i1 = d->batch[1] == 1 ? 0 : b1;
    const int32_t i2 = d->batch[2] == 1 ? 0 : b2;
    return ((i0 * d->batch[1] + i1) * d->batch[2] + i2) * d->rows * d->cols;
}

/* One loop for both types: strides express adj_x / adj_y. */
#define MCUGEN_BMM_LOOP(OUT_TYPE)                                                                  \
    const int32_t m_size = output_dims->rows, n_size = output_dims->cols;                         \
    const int32_t k_size = params->adj_x ? lhs_dims->rows : lhs_dims->cols;                       \
    /* element (m, k) of L is at m * lhs_m + k * lhs_k; (k, n) of R at k * rhs_k + n * rhs_n */   \
    const int32_t lhs_m = params->adj_x ? 1 : k_size, lhs_k = params->adj_x ? m_size : 1;         \
    const int32_t rhs_k = params->adj_y ? 1 : n_size, rhs_n = params->adj_y ? k_size : 1;         \
    OUT_TYPE *out = output;                                                                       \
    for (int32_t b0 = 0; b0 < output_dims->batch[0]; ++b0) {                                      \
        for (int32_t b1 = 0; b1 < output_dims->batch[1]; ++b1) {                                  \
            for (int32_t b2 = 0; b2 < output_dims->batch[2]; ++b2) {                              \
                const OUT_TYPE *l = lhs + batch_offset(lhs_dims, b0, b1, b2);                     \
                const OUT_TYPE *r = rhs + batch_offset(rhs_dims, b0, b1, b2);                     \
                for (int32_t m = 0; m < m_size; ++m) {                                            \
                    for (int32_t n = 0; n < n_size; ++n) {                                        \
                        uint64_t acc = 0; /* exact; wrapped to 32 bits by the s8 rescale */       \
                        for (int32_t k = 0; k < k_size; ++k) {                                    \
                            const int32_t a = (int32_t)l[m * lhs_m + k * lhs_k] + params->lhs_offset; \
                            const int32_t b = (int32_t)r[k * rhs_k + n * rhs_n] + params->rhs_offset; \
                            acc += (uint64_t)((int64_t)a * (int64_t)b);                           \
                        }                                                                         \
                        const int64_t sum = acc <= (uint64_t)INT64_MAX ? (int64_t)acc              \
                                                                       : -(int64_t)(~acc) - 1;    \
                        const int32_t scaled = mcugen_rescale(rescale, sum, 0);                   \
                        const int32_t y = (int32_t)((uint32_t)scaled + (uint32_t)params->output_offset); \
                        *out++ = (OUT_TYPE)mcugen_clamp(y, params->activation.min,                \
                                                        params->activation.max);                  \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }

mcugen_status mcugen_batch_matmul_s8(const mcugen_context *ctx, const mcugen_bmm_params *params,
                                     const mcugen_rescale_params *rescale,
                                     const mcugen_matrix_dims *lhs_dims, const int8_t *lhs,
                                     const mcugen_matrix_dims *rhs_dims, const int8_t *rhs,
                                     const mcugen_matrix_dims *output_dims, int8_t *output)
{
    (void)ctx; /* no scratch needed */
    if (lhs == NULL || rhs == NULL || output == NULL ||
        !shapes_ok(params, lhs_dims, rhs_dims, output_dims) ||
        !mcugen_rescale_ok(rescale, 1) || rescale->accumulator_bits != 32 ||
        params->lhs_offset < -127 || params->lhs_offset > 128 || params->rhs_offset < -127 ||
        params->rhs_offset > 128 || params->activation.min < INT8_MIN ||
        params->activation.max > INT8_MAX || params->activation.min > params->activation.max) {
        return MCUGEN_ARG_ERROR;
    }
    MCUGEN_BMM_LOOP(int8_t)
    return MCUGEN_OK;
}

mcugen_status mcugen_batch_matmul_s16(const mcugen_context *ctx, const mcugen_bmm_params *params,
                                      const mcugen_rescale_params *rescale,
                                      const mcugen_matrix_dims *lhs_dims, const int16_t *lhs,
                                      const mcugen_matrix_dims *rhs_dims, const int16_t *rhs,
                                      const mcugen_matrix_dims *output_dims, int16_t *output)
{
    (void)ctx; /* no scratch needed */
    if (lhs == NULL || rhs == NULL || output == NULL ||
        !shapes_ok(params, lhs_dims, rhs_dims, output_dims) ||
        !mcugen_rescale_ok(rescale, 1) || params->lhs_offset != 0 || params->rhs_offset != 0 ||
        params->output_offset != 0 || params->activation.min < INT16_MIN ||
        params->activation.max > INT16_MAX || params->activation.min > params->activation.max) {
        return MCUGEN_ARG_ERROR;
    }
    MCUGEN_BMM_LOOP(int16_t)
    return MCUGEN_OK;
}

/* float32: TFLite's reference BatchMatMul in float, each output a sum from +0.0f of the
 * rounded products in k order (no rescale, no clamp; compile with -ffp-contract=off). The
 * offsets and the activation of params are unused. */
mcugen_status mcugen_batch_matmul_f32(const mcugen_bmm_params *params,
                                      const mcugen_matrix_dims *lhs_dims, const float *lhs,
                                      const mcugen_matrix_dims *rhs_dims, const float *rhs,
                                      const mcugen_matrix_dims *output_dims, float *output)
{
    if (lhs == NULL || rhs == NULL || output == NULL || !shapes_ok(params, lhs_dims, rhs_dims, output_dims)) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t m_size = output_dims->rows, n_size = output_dims->cols;
    const int32_t k_size = params->adj_x ? lhs_dims->rows : lhs_dims->cols;
    const int32_t lhs_m = params->adj_x ? 1 : k_size, lhs_k = params->adj_x ? m_size : 1;
    const int32_t rhs_k = params->adj_y ? 1 : n_size, rhs_n = params->adj_y ? k_size : 1;
    float *out = output;
    for (int32_t b0 = 0; b0 < output_dims->batch[0]; ++b0) {
        for (int32_t b1 = 0; b1 < output_dims->batch[1]; ++b1) {
            for (int32_t b2 = 0; b2 < output_dims->batch[2]; ++b2) {
                const float *l = lhs + batch_offset(lhs_dims, b0, b1, b2);
                const float *r = rhs + batch_offset(rhs_dims, b0, b1, b2);
                for (int32_t m = 0; m < m_size; ++m) {
                    for (int32_t n = 0; n < n_size; ++n) {
                        float total = 0.0f;
                        for (int32_t k = 0; k < k_size; ++k) {
                            const float product = l[m * lhs_m + k * lhs_k] * r[k * rhs_k + n * rhs_n];
                            total += product;
                        }
                        *out++ = total;
                    }
                }
            }
        }
    }
    return MCUGEN_OK;
}
