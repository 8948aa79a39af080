/*
 * mcugen_npu_engine_conv.c - NPU_OP_CONV and NPU_OP_DEPTHWISE.
 *
 * acc[oy][ox][o] = bias[o] + sum over taps and IFM channels of w * (ifm - ifm_zero_point), the
 * weights decoded from the op's compressed stream in the U55 order (mcugen_npu_weights.h), one
 * OFM depth block (OFM_BLK_DEPTH channels) at a time as the hardware reads them.  The
 * accumulators of a block do not all fit at once for a large OFM, so the block's weights are
 * walked once per group of OFM positions, the decoder restarted from a copy of its state at the
 * block's start.  Then the per-channel scale of the bias/scale stream and the output stage.
 */
#include "mcugen_npu_engine_internal.h"

#include <string.h>

#include "mcugen_npu_weights.h"

#define WEIGHT_CHUNK 64u

struct conv_op {
    struct mcugen_npu_kernel_geometry g;
    struct mcugen_npu_fm_view ifm, ofm;
    struct mcugen_npu_output_stage out;
    int32_t ifm_zero_point;
    int depthwise;
    uint16_t acc_format;
    const uint8_t *scales;
    uint32_t scale_bytes;
    mcugen_npu_weight_order order; /* of the whole stream; ofm_depth set per block */
};

/* OFM positions [first, first + count) of the OFM, row-major, and the block's channels. */
struct conv_pass {
    uint32_t first, count;
    uint32_t block_start, block_depth;
    int64_t acc[MCUGEN_NPU_ENGINE_ACCUMULATORS];
};

static enum mcugen_npu_fault conv_setup(struct conv_op *op, struct mcugen_npu_device *dev, uint32_t opcode,
                                        const struct mcugen_npu_state *s)
{
    enum mcugen_npu_fault fault = mcugen_npu_kernel_geometry_init(&op->g, s);
    uint32_t macs_log2 = MCUGEN_NPU_CONFIG_MACS_LOG2(dev->config);
    if (fault != MCUGEN_NPU_FAULT_NONE) {
        return fault;
    }
    op->depthwise = opcode == MCUGEN_NPU_OP_DEPTHWISE;
    if (s->weight1_length != 0u || s->scale1_length != 0u || MCUGEN_NPU_OFM_PREC_SCALE_GLOBAL(s->ofm.precision) ||
        s->acc_format > 1u) {
        return MCUGEN_NPU_FAULT_UNSUPPORTED; /* a second core, a global scale, fp16 accumulators */
    }
    fault = mcugen_npu_fm_view_init(&op->ifm, dev, &s->ifm, 0, op->g.ifm_h, op->g.ifm_w, op->g.ifm_c);
    if (fault == MCUGEN_NPU_FAULT_NONE) {
        fault = mcugen_npu_fm_view_init(&op->ofm, dev, &s->ofm, 1, op->g.ofm_h, op->g.ofm_w, op->g.ofm_c);
    }
    if (fault == MCUGEN_NPU_FAULT_NONE) {
        fault = mcugen_npu_output_stage_init(&op->out, dev, s);
    }
    if (fault != MCUGEN_NPU_FAULT_NONE) {
        return fault;
    }
    if (op->ifm.elem_bytes > 2u) {
        return MCUGEN_NPU_FAULT_UNSUPPORTED; /* the U55 convolves 8- and 16-bit IFMs */
    }
    op->ifm_zero_point = mcugen_npu_zero_point(s->ifm.zero_point, op->ifm.is_signed);
    op->acc_format = s->acc_format;
    op->scale_bytes = s->scale_length;
    op->scales = mcugen_npu_region_ptr(dev, s->scale_region, s->scale_base, s->scale_length);
    if (op->scales == NULL) {
        return MCUGEN_NPU_FAULT_REGION_RANGE;
    }
    op->order.ofm_depth = (int)op->g.ofm_c;
    op->order.kernel_h = (int)op->g.kernel_h;
    op->order.kernel_w = (int)op->g.kernel_w;
    op->order.ifm_depth = op->depthwise ? 1 : (int)op->g.ifm_c;
    op->order.ofm_block_depth = (int)s->ofm_blk_depth_m1 + 1;
    op->order.traversal = op->depthwise ? MCUGEN_NPU_TRAVERSAL_DEPTHWISE
                          : MCUGEN_NPU_KSTRIDE_PART_KERNEL_FIRST(s->kernel_stride) ? MCUGEN_NPU_TRAVERSAL_PART_KERNEL
                                                                                   : MCUGEN_NPU_TRAVERSAL_DEPTH_FIRST;
    op->order.ifm_bits = (int)op->ifm.elem_bytes * 8;
    op->order.dilation_x = (int)op->g.dilation_x;
    op->order.dilation_y = (int)op->g.dilation_y;
    op->order.ofm_ublock_depth = macs_log2 == 5u ? 4 : 8; /* U55-32: OFM micro-blocks of 4 */
    op->order.ifm_ublock_depth = 8;
    if (op->depthwise && op->g.ifm_c != op->g.ofm_c) {
        return MCUGEN_NPU_FAULT_UNSUPPORTED; /* OFM channel o reads IFM channel o */
    }
    return MCUGEN_NPU_FAULT_NONE;
}

/* Add weight w at `pos` (block-local OFM channel) to every accumulator of the pass. */
static void accumulate(const struct conv_op *op, struct conv_pass *pass, const mcugen_npu_weight_pos *pos, int32_t w)
{
    uint32_t ifm_c = op->depthwise ? pass->block_start + (uint32_t)pos->ofm : (uint32_t)pos->ifm;
    uint32_t p;
    for (p = 0; p < pass->count; ++p) {
        uint32_t oy = (pass->first + p) / op->g.ofm_w, ox = (pass->first + p) % op->g.ofm_w;
        int32_t v;
        if (mcugen_npu_kernel_tap(&op->g, &op->ifm, op->ifm_zero_point, oy, ox, (uint32_t)pos->ky, (uint32_t)pos->kx,
                                  ifm_c, &v) == MCUGEN_NPU_TAP_DATA) {
            pass->acc[p * pass->block_depth + (uint32_t)pos->ofm] += (int64_t)w * (v - op->ifm_zero_point);
        }
    }
}

/* Walk the block's `count` weights (block order `order`) from `dec`, accumulating. */
static enum mcugen_npu_fault walk_weights(const struct conv_op *op, struct conv_pass *pass, mcugen_npu_wdec *dec,
                                          const mcugen_npu_weight_order *order, size_t count)
{
    int16_t weights[WEIGHT_CHUNK];
    size_t index = 0;
    while (index < count) {
        size_t want = count - index < WEIGHT_CHUNK ? count - index : WEIGHT_CHUNK, got = 0, j;
        if (mcugen_npu_wdec_read(dec, weights, want, &got) != MCUGEN_NPU_W_OK || got != want) {
            return MCUGEN_NPU_FAULT_ENGINE; /* the stream is shorter than its op or corrupt */
        }
        for (j = 0; j < got; ++j) {
            mcugen_npu_weight_pos pos;
            if (weights[j] == 0) {
                continue; /* padding is zero; a zero weight adds nothing */
            }
            if (mcugen_npu_weight_order_position(order, index + j, &pos) != 1) {
                return MCUGEN_NPU_FAULT_ENGINE; /* a nonzero padding weight: not a Vela stream */
            }
            accumulate(op, pass, &pos, weights[j]);
        }
        index += got;
    }
    return MCUGEN_NPU_FAULT_NONE;
}

/* Bias, scale, output stage and store of the pass's accumulators. */
static enum mcugen_npu_fault write_pass(const struct conv_op *op, const struct conv_pass *pass)
{
    uint32_t o, p;
    for (o = 0; o < pass->block_depth; ++o) {
        mcugen_npu_bias_scale bs;
        uint32_t channel = pass->block_start + o;
        if (mcugen_npu_bias_scale_decode(op->scales, op->scale_bytes, channel, &bs) != MCUGEN_NPU_W_OK) {
            return MCUGEN_NPU_FAULT_ENGINE;
        }
        for (p = 0; p < pass->count; ++p) {
            uint32_t oy = (pass->first + p) / op->g.ofm_w, ox = (pass->first + p) % op->g.ofm_w;
            int64_t acc = mcugen_npu_acc_wrap(pass->acc[p * pass->block_depth + o] + bs.bias, op->acc_format);
            int64_t scaled = mcugen_npu_scale(acc, bs.scale, bs.shift, op->out.rounding);
            mcugen_npu_fm_write(&op->ofm, oy, ox, channel, mcugen_npu_output(&op->out, scaled));
        }
    }
    return MCUGEN_NPU_FAULT_NONE;
}

static enum mcugen_npu_fault conv_block(const struct conv_op *op, struct conv_pass *pass, mcugen_npu_wdec *dec)
{
    mcugen_npu_weight_order order = op->order;
    mcugen_npu_wdec start = *dec;
    uint32_t positions = op->g.ofm_h * op->g.ofm_w;
    uint32_t per_pass = MCUGEN_NPU_ENGINE_ACCUMULATORS / pass->block_depth;
    size_t count;
    order.ofm_depth = (int)pass->block_depth;
    count = mcugen_npu_weight_order_length(&order);
    if (count == 0u || per_pass == 0u) {
        return MCUGEN_NPU_ENGINE_ACCUMULATORS / pass->block_depth == 0u ? MCUGEN_NPU_FAULT_UNSUPPORTED
                                                                          : MCUGEN_NPU_FAULT_ENGINE;
    }
    for (pass->first = 0; pass->first < positions; pass->first += pass->count) {
        enum mcugen_npu_fault fault;
        pass->count = positions - pass->first < per_pass ? positions - pass->first : per_pass;
        memset(pass->acc, 0, sizeof(pass->acc[0]) * pass->count * pass->block_depth);
        *dec = start;
        fault = walk_weights(op, pass, dec, &order, count);
        if (fault == MCUGEN_NPU_FAULT_NONE) {
            fault = write_pass(op, pass);
        }
        if (fault != MCUGEN_NPU_FAULT_NONE) {
            return fault;
        }
    }
    return MCUGEN_NPU_FAULT_NONE;
}

enum mcugen_npu_fault mcugen_npu_engine_conv(struct mcugen_npu_device *dev, uint32_t opcode,
                                             const struct mcugen_npu_state *state)
{
    struct conv_op op;
    struct conv_pass pass;
    mcugen_npu_wdec dec;
    const uint8_t *weights;
    uint32_t block = (uint32_t)state->ofm_blk_depth_m1 + 1u;
    enum mcugen_npu_fault fault = conv_setup(&op, dev, opcode, state);
    if (fault != MCUGEN_NPU_FAULT_NONE) {
        return fault;
    }
    weights = mcugen_npu_region_ptr(dev, state->weight_region, state->weight_base, state->weight_length);
    if (weights == NULL) {
        return MCUGEN_NPU_FAULT_REGION_RANGE;
    }
    mcugen_npu_wdec_init(&dec, weights, state->weight_length);
    for (pass.block_start = 0; pass.block_start < op.g.ofm_c; pass.block_start += block) {
        pass.block_depth = op.g.ofm_c - pass.block_start < block ? op.g.ofm_c - pass.block_start : block;
        fault = conv_block(&op, &pass, &dec);
        if (fault != MCUGEN_NPU_FAULT_NONE) {
            return fault;
        }
    }
    return MCUGEN_NPU_FAULT_NONE;
}
