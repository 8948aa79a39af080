/*
 * mcugen_npu_engine_pool.c - NPU_OP_POOL: MAX, AVERAGE and REDUCE_SUM over the kernel window.
 *
 * Padding taps are skipped (a window that is all padding gives 0).  The IFM zero point is
 * subtracted from every element.  Scaling:
 *  - AVERAGE over a padded window (any IFM_PAD_* nonzero): divided by the number of real taps n
 *    with the scale the hardware derives from n (the scale of Vela's quantise_pooling_scale:
 *    (2^(31+k) + 2^k) / n, shift 31 + k, k the bit length of n - 1; with NATURAL rounding that
 *    is TFLite's round-half-away-from-zero average).  Vela 5.2 then programs a global OFM_SCALE
 *    of 1, shift 0; any other OFM_SCALE there is refused (how silicon combines the two is not
 *    modelled).
 *  - otherwise, with OFM_PRECISION's global-scale bit: OFM_SCALE (Vela computes it from the
 *    kernel size and the IFM/OFM scales); without it AVERAGE uses the count scale of the whole
 *    kernel, MAX and REDUCE_SUM are not scaled.
 */
#include "mcugen_npu_engine_internal.h"

struct pool_op {
    struct mcugen_npu_kernel_geometry g;
    struct mcugen_npu_fm_view ifm, ofm;
    struct mcugen_npu_output_stage out;
    int32_t ifm_zero_point;
    uint32_t mode;
    int global_scale;
    int padded;                /* any IFM_PAD_* nonzero */
    uint32_t scale, shift;
};

/* The scale of an average over n taps. */
static void count_scale(uint32_t n, uint32_t *scale, uint32_t *shift)
{
    uint32_t k = 0;
    uint64_t wide;
    while (k < 32u && ((uint64_t)1 << k) <= (uint64_t)(n - 1u)) {
        ++k;
    }
    wide = (((uint64_t)1 << (31u + k)) + ((uint64_t)1 << k)) / n;
    *scale = (uint32_t)wide;
    *shift = 31u + k;
}

/* Sum (or maximum) and number of real taps of channel c around OFM element (oy, ox); REDUCE_SUM
 * sums every IFM channel into its single OFM channel. */
static int64_t window(const struct pool_op *op, uint32_t oy, uint32_t ox, uint32_t c, uint32_t *taps)
{
    int64_t result = 0;
    uint32_t ky, kx, first = c, last = c;
    if (op->mode == MCUGEN_NPU_POOL_REDUCE_SUM) {
        first = 0;
        last = op->g.ifm_c - 1u;
    }
    *taps = 0;
    for (ky = 0; ky < op->g.kernel_h; ++ky) {
        for (kx = 0; kx < op->g.kernel_w; ++kx) {
            for (c = first; c <= last; ++c) {
                int32_t v;
                if (mcugen_npu_kernel_tap(&op->g, &op->ifm, op->ifm_zero_point, oy, ox, ky, kx, c, &v) !=
                    MCUGEN_NPU_TAP_DATA) {
                    continue;
                }
                v -= op->ifm_zero_point;
                if (op->mode != MCUGEN_NPU_POOL_MAX) {
                    result += v;
                } else if (*taps == 0u || v > result) {
                    result = v;
                }
                ++*taps;
            }
        }
    }
    return result;
}

static int64_t pooled(const struct pool_op *op, uint32_t oy, uint32_t ox, uint32_t c)
{
    uint32_t taps, scale, shift;
    int64_t value = window(op, oy, ox, c, &taps);
    if (op->global_scale && !(op->padded && op->mode == MCUGEN_NPU_POOL_AVERAGE)) {
        return mcugen_npu_scale(value, op->scale, op->shift, op->out.rounding);
    }
    if (op->mode == MCUGEN_NPU_POOL_AVERAGE && taps > 0u) {
        count_scale(taps, &scale, &shift);
        return mcugen_npu_scale(value, scale, shift, op->out.rounding);
    }
    return value;
}

enum mcugen_npu_fault mcugen_npu_engine_pool(struct mcugen_npu_device *dev, uint32_t mode,
                                             const struct mcugen_npu_state *state)
{
    struct pool_op op;
    uint32_t y, x, c;
    enum mcugen_npu_fault fault = mcugen_npu_kernel_geometry_init(&op.g, state);
    if (fault != MCUGEN_NPU_FAULT_NONE) {
        return fault;
    }
    if (mode > MCUGEN_NPU_POOL_REDUCE_SUM || state->ofm_scale_shift > 63u ||
        (mode == MCUGEN_NPU_POOL_REDUCE_SUM ? op.g.ofm_c != 1u : op.g.ifm_c != op.g.ofm_c)) {
        return MCUGEN_NPU_FAULT_UNSUPPORTED;
    }
    fault = mcugen_npu_fm_view_init(&op.ifm, dev, &state->ifm, 0, op.g.ifm_h, op.g.ifm_w, op.g.ifm_c);
    if (fault == MCUGEN_NPU_FAULT_NONE) {
        fault = mcugen_npu_fm_view_init(&op.ofm, dev, &state->ofm, 1, op.g.ofm_h, op.g.ofm_w, op.g.ofm_c);
    }
    if (fault == MCUGEN_NPU_FAULT_NONE) {
        fault = mcugen_npu_output_stage_init(&op.out, dev, state);
    }
    if (fault != MCUGEN_NPU_FAULT_NONE) {
        return fault;
    }
    op.mode = mode;
    op.ifm_zero_point = mcugen_npu_zero_point(state->ifm.zero_point, op.ifm.is_signed);
    op.global_scale = (int)MCUGEN_NPU_OFM_PREC_SCALE_GLOBAL(state->ofm.precision);
    op.scale = state->ofm_scale;
    op.shift = state->ofm_scale_shift;
    op.padded = (state->ifm_pad_top | state->ifm_pad_left | state->ifm_pad_right | state->ifm_pad_bottom) != 0u;
    if (op.padded && op.global_scale && mode == MCUGEN_NPU_POOL_AVERAGE && (op.scale != 1u || op.shift != 0u)) {
        return MCUGEN_NPU_FAULT_UNSUPPORTED;
    }
    for (y = 0; y < op.g.ofm_h; ++y) {
        for (x = 0; x < op.g.ofm_w; ++x) {
            for (c = 0; c < op.g.ofm_c; ++c) {
                mcugen_npu_fm_write(&op.ofm, y, x, c, mcugen_npu_output(&op.out, pooled(&op, y, x, c)));
            }
        }
    }
    return MCUGEN_NPU_FAULT_NONE;
}
