/*
 * mcugen_npu_cycles.c - the cycle model of the simulated Ethos-U55 (see mcugen_npu_cycles.h and
 * docs/npu.md, section "Cycle model").  All fractional quantities are Q8: 256 = one cycle.
 */
#include "mcugen_npu_cycles.h"

#include <string.h>

#include "mcugen_npu_device.h"

#define Q8 256u
#define SUB_KERNEL_MAX 8u /* the MAC array walks kernels in sub-kernels of at most 8x8 */

typedef uint64_t q8_t;

/* ---- Configuration tables ---------------------------------------------------------------------- */

/* What the output unit does per element; the rate depends on the kind (Vela's output table). */
enum output_kind {
    OUT_EW32_BINARY, OUT_EW32_UNARY, OUT_MUL32, OUT_MUL_OR_ACC40, OUT_ADD_SUB_SIMPLE, OUT_ADD_SUB,
    OUT_MAXPOOL, OUT_OTHER, OUT_KIND_COUNT
};
enum activation_kind { ACT_LUT, ACT_CLAMP, ACT_NONE, ACT_KIND_COUNT };

/* Q8 cycles per output element, per configuration (u55-32, -64, -128, -256) */
static const uint16_t output_rate[4][OUT_KIND_COUNT] = {
    { 512, 768, 768, 768, 1024, 1536, 256, 512 },
    { 256, 384, 384, 384, 512, 768, 128, 256 },
    { 192, 320, 192, 192, 256, 384, 64, 128 },
    { 160, 288, 128, 96, 128, 192, 32, 64 },
};
static const uint16_t activation_rate[4][ACT_KIND_COUNT] = {
    { 256, 256, 0 }, { 256, 256, 0 }, { 256, 128, 0 }, { 256, 64, 0 },
};

/* The MAC array's micro-block: the OFM elements it computes at once (height, width, depth). */
struct dims {
    uint32_t h, w, d;
};
static const struct dims ofm_ublock[4] = { { 1, 1, 4 }, { 1, 1, 8 }, { 1, 2, 8 }, { 2, 2, 8 } };

static int config_index(uint32_t macs)
{
    switch (macs) {
    case 32u: return 0;
    case 64u: return 1;
    case 128u: return 2;
    case 256u: return 3;
    default: return -1;
    }
}

int mcugen_npu_cycle_config_default(struct mcugen_npu_cycle_config *config, uint32_t macs_per_cycle)
{
    static const struct mcugen_npu_memory sram = { 8u * Q8, 32u, 32u, 32u };
    static const struct mcugen_npu_memory flash = { 1u * Q8, 128u, 64u, 0u };
    static const struct mcugen_npu_memory shram = { 8u * Q8, 1u, 0u, 0u };
    uint32_t r;
    if (config_index(macs_per_cycle) < 0) {
        return -1;
    }
    memset(config, 0, sizeof *config);
    config->macs_per_cycle = macs_per_cycle;
    config->memory[MCUGEN_NPU_MEMORY_SRAM] = sram;
    config->memory[MCUGEN_NPU_MEMORY_FLASH] = flash;
    config->memory[MCUGEN_NPU_MEMORY_SHRAM] = shram;
    for (r = 0; r < MCUGEN_NPU_NUM_REGIONS; ++r) {
        config->region_memory[r] = MCUGEN_NPU_MEMORY_SRAM;
    }
    config->region_memory[0] = MCUGEN_NPU_MEMORY_FLASH; /* Vela's read-only (weights) region */
    config->shram_memory = MCUGEN_NPU_MEMORY_SHRAM;
    return 0;
}

/* ---- Small arithmetic ------------------------------------------------------------------------- */

static uint32_t ceil_div(uint32_t a, uint32_t b)
{
    return (a + b - 1u) / b;
}

static uint32_t round_up(uint32_t a, uint32_t q)
{
    return ceil_div(a, q) * q;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

static q8_t max_q8(q8_t a, q8_t b)
{
    return a > b ? a : b;
}

static q8_t q8_ceil(q8_t v)
{
    return (v + Q8 - 1u) / Q8 * Q8;
}

/* ---- The operation, as the cycle model sees it ------------------------------------------------ */

struct op_view {
    uint32_t opcode, param;
    int cfg;                         /* configuration index 0..3 */
    struct dims ofm, ifm;            /* OFM, and the IFM area the operation reads */
    struct dims block;               /* OFM block as programmed (OFM_BLK_*) */
    struct dims ifm_block;           /* the IFM block that feeds one OFM block */
    struct dims ublock;              /* MAC micro-block (the Conv1D variant on u55-256) */
    uint32_t kernel_w, kernel_h;     /* undilated kernel */
    uint32_t ifm_bits, ofm_bits;
    uint32_t ifm_elem, ifm2_elem, ofm_elem;
    int ifm_b16, ifm2_b16, ofm_b16;  /* NHCWB16 layouts */
    int part_kernel, acc40, reduce_sum, has_ifm2;
};

static int is_kernel_op(uint32_t opcode)
{
    return opcode == MCUGEN_NPU_OP_CONV || opcode == MCUGEN_NPU_OP_DEPTHWISE || opcode == MCUGEN_NPU_OP_POOL;
}

/* Operations whose IFM depth equals the OFM depth (one IFM channel per OFM channel). */
static int is_equal_depth(const struct op_view *op)
{
    return op->opcode == MCUGEN_NPU_OP_DEPTHWISE || (op->opcode == MCUGEN_NPU_OP_POOL && !op->reduce_sum) ||
           op->opcode == MCUGEN_NPU_OP_ELEMENTWISE;
}

/* Operations that sum over the whole IFM depth per OFM channel, one IFM block depth at a time. */
static int sums_ifm_depth(const struct op_view *op)
{
    return op->opcode == MCUGEN_NPU_OP_CONV || op->reduce_sum;
}

static uint32_t ifm_span(uint32_t ofm, uint32_t stride, uint32_t kernel, uint32_t pads, int upscale)
{
    int64_t n = (int64_t)(ofm - 1u) * stride + kernel - pads;
    if (n < 1) {
        n = 1;
    }
    return (uint32_t)(upscale ? (n + 1) / 2 : n);
}

static int binary_elementwise(uint32_t param)
{
    return param != MCUGEN_NPU_ELEM_LRELU && param != MCUGEN_NPU_ELEM_ABS && param != MCUGEN_NPU_ELEM_CLZ;
}

/* The IFM block depth the MAC array consumes per pass (conv-like: 32 channels of 8-bit depth
 * first, 16 part-kernel first or 16-bit; in IFM micro-blocks of 8). */
static uint32_t ifm_block_depth(const struct op_view *op)
{
    if (is_equal_depth(op)) {
        return op->block.d;
    }
    if (op->ifm_bits == 16u) {
        return round_up(min_u32(op->ifm.d, 16u), 4u);
    }
    return round_up(min_u32(op->ifm.d, op->part_kernel ? 16u : 32u), 8u);
}

static void describe(const struct mcugen_npu_state *s, uint32_t opcode, uint32_t param, int cfg, struct op_view *op)
{
    uint32_t sx = MCUGEN_NPU_KSTRIDE_X(s->kernel_stride), sy = MCUGEN_NPU_KSTRIDE_Y(s->kernel_stride);
    uint32_t kw_dilated = 1u, kh_dilated = 1u;
    int upscale = s->ifm_upscale != MCUGEN_NPU_UPSCALE_NONE;
    int nearest = s->ifm_upscale == MCUGEN_NPU_UPSCALE_NEAREST;
    memset(op, 0, sizeof *op);
    op->opcode = opcode;
    op->param = param;
    op->cfg = cfg;
    op->ofm.h = s->ofm_height_m1 + 1u;
    op->ofm.w = s->ofm_width_m1 + 1u;
    op->ofm.d = s->ofm_depth_m1 + 1u;
    op->block.h = s->ofm_blk_height_m1 + 1u;
    op->block.w = s->ofm_blk_width_m1 + 1u;
    op->block.d = s->ofm_blk_depth_m1 + 1u;
    op->ifm_bits = 8u << MCUGEN_NPU_IFM_PREC_BITS(s->ifm.precision);
    op->ofm_bits = 8u << MCUGEN_NPU_OFM_PREC_BITS(s->ofm.precision);
    op->ifm_elem = mcugen_npu_ifm_elem_bytes(s->ifm.precision);
    op->ifm2_elem = mcugen_npu_ifm_elem_bytes(s->ifm2.precision);
    op->ofm_elem = mcugen_npu_ofm_elem_bytes(s->ofm.precision);
    op->ifm_b16 = MCUGEN_NPU_IFM_PREC_FORMAT(s->ifm.precision) == MCUGEN_NPU_FORMAT_NHCWB16;
    op->ifm2_b16 = MCUGEN_NPU_IFM_PREC_FORMAT(s->ifm2.precision) == MCUGEN_NPU_FORMAT_NHCWB16;
    op->ofm_b16 = MCUGEN_NPU_OFM_PREC_FORMAT(s->ofm.precision) == MCUGEN_NPU_FORMAT_NHCWB16;
    op->acc40 = s->acc_format == 1u;
    op->reduce_sum = opcode == MCUGEN_NPU_OP_POOL && param == MCUGEN_NPU_POOL_REDUCE_SUM;
    op->has_ifm2 = opcode == MCUGEN_NPU_OP_ELEMENTWISE && binary_elementwise(param) &&
                   (s->ifm2_broadcast & MCUGEN_NPU_BCAST_SCALAR) == 0u;
    op->ifm = op->ofm;
    op->ifm.d = s->ifm_depth_m1 + 1u;
    op->kernel_w = op->kernel_h = 1u;
    if (is_kernel_op(opcode)) {
        kw_dilated = s->kernel_width_m1 + 1u;
        kh_dilated = s->kernel_height_m1 + 1u;
        op->kernel_w = s->kernel_width_m1 / MCUGEN_NPU_KSTRIDE_DILATION_X(s->kernel_stride) + 1u;
        op->kernel_h = s->kernel_height_m1 / MCUGEN_NPU_KSTRIDE_DILATION_Y(s->kernel_stride) + 1u;
        op->part_kernel = opcode == MCUGEN_NPU_OP_CONV && MCUGEN_NPU_KSTRIDE_PART_KERNEL_FIRST(s->kernel_stride);
        op->ifm.h = ifm_span(op->ofm.h, sy, kh_dilated, s->ifm_pad_top + s->ifm_pad_bottom, upscale);
        op->ifm.w = ifm_span(op->ofm.w, sx, kw_dilated, s->ifm_pad_left + s->ifm_pad_right, upscale);
    } else {
        sx = sy = 1u;
    }
    op->ublock = ofm_ublock[cfg];
    /* u55-256's 1D convolution: a 1-high OFM of even width is computed 4 wide, 1 high */
    if (op->ublock.h == 2u && opcode != MCUGEN_NPU_OP_POOL && opcode != MCUGEN_NPU_OP_ELEMENTWISE &&
        op->ofm.h == 1u && op->ofm.w % 2u == 0u && op->kernel_h == 1u) {
        op->ublock.h = 1u;
        op->ublock.w = 4u;
        op->block.h = 1u;
    }
    /* the IFM block: what one OFM block needs of the first (at most 8x8) sub-kernel */
    op->ifm_block.h = round_up(ceil_div((op->block.h - 1u) * sy + min_u32(kh_dilated, SUB_KERNEL_MAX) + (uint32_t)nearest,
                                        upscale ? 2u : 1u), ofm_ublock[cfg].h);
    op->ifm_block.w = round_up(ceil_div((op->block.w - 1u) * sx + min_u32(kw_dilated, SUB_KERNEL_MAX) + (uint32_t)nearest,
                                        upscale ? 2u : 1u), ofm_ublock[cfg].w);
    op->ifm_block.d = ifm_block_depth(op);
}

static struct dims clip(struct dims a, struct dims limit)
{
    struct dims r;
    r.h = min_u32(a.h, limit.h);
    r.w = min_u32(a.w, limit.w);
    r.d = min_u32(a.d, limit.d);
    return r;
}

static uint64_t volume(struct dims a)
{
    return (uint64_t)a.h * a.w * a.d;
}

/* ---- Memory ----------------------------------------------------------------------------------- */

/* The burst one access of a block makes in a feature map: when the block spans the whole depth
 * (`depth_stride`, the bytes from one pixel to the next in NHWC or from one 16-channel brick to
 * the next in NHCWB16, equals the block's depth) a block row is contiguous; otherwise NHCWB16
 * moves 16-channel bricks a block row wide, and NHWC one pixel's block depth (writes at most 16
 * elements, 64 bytes). */
static uint32_t burst_bytes(int read, int nhcwb16, uint32_t elem, struct dims block, uint64_t depth_stride)
{
    int whole_depth = depth_stride == (uint64_t)block.d * elem;
    uint32_t b;
    if (whole_depth && (nhcwb16 || read || block.d <= 16u)) {
        b = elem * block.d * block.w;
    } else if (nhcwb16) {
        b = 16u * elem * block.w;
    } else if (read) {
        b = elem * block.d;
    } else {
        b = min_u32(64u, min_u32(16u * elem, block.d * elem));
    }
    return b == 0u ? 1u : b;
}

/* The stride between depth slices of a feature map's layout (see burst_bytes) */
static uint64_t depth_stride(const struct mcugen_npu_fm *fm, int nhcwb16)
{
    return nhcwb16 ? fm->stride_c : fm->stride_x;
}

/* Q8 bytes of bandwidth that `bytes` in bursts of `burst` use: a burst shorter than the memory's
 * costs a whole memory burst. */
static q8_t bandwidth_used_q8(const struct mcugen_npu_memory *mem, uint64_t bytes, uint32_t burst)
{
    uint32_t want = mem->burst_bytes == 0u ? 1u : mem->burst_bytes;
    return (q8_t)bytes * Q8 * want / min_u32(want, burst);
}

/* Q8 cycles for `used_q8` bytes of bandwidth on memory `mem` */
static q8_t transfer_q8(const struct mcugen_npu_memory *mem, q8_t used_q8)
{
    if (mem->bytes_per_cycle_q8 == 0u) {
        return 0u;
    }
    return used_q8 * Q8 / mem->bytes_per_cycle_q8;
}

/* The memory that holds `region` (memory 0 for anything out of range) */
static uint32_t memory_index(const struct mcugen_npu_cycle_config *config, uint32_t region)
{
    uint32_t m = region < MCUGEN_NPU_NUM_REGIONS ? config->region_memory[region] : 0u;
    return m < MCUGEN_NPU_MAX_MEMORIES ? m : 0u;
}

static const struct mcugen_npu_memory *region_memory(const struct mcugen_npu_cycle_config *config, uint32_t region)
{
    return &config->memory[memory_index(config, region)];
}

/* The latency plus transfer of one IFM block and one OFM block: the pipeline's per-block memory
 * floor (Q8 cycles). */
static q8_t block_memory_q8(const struct mcugen_npu_cycle_config *config, const struct mcugen_npu_state *s,
                            const struct op_view *op)
{
    const struct mcugen_npu_memory *in = region_memory(config, s->ifm.region);
    const struct mcugen_npu_memory *out = region_memory(config, s->ofm.region);
    uint64_t in_bytes = volume(clip(op->ifm, op->ifm_block)) * op->ifm_elem;
    uint64_t out_bytes = volume(clip(op->ofm, op->block)) * op->ofm_elem;
    q8_t cycles = (q8_t)in->read_latency * Q8 +
                  transfer_q8(in, bandwidth_used_q8(in, in_bytes, burst_bytes(1, op->ifm_b16, op->ifm_elem, op->ifm_block, depth_stride(&s->ifm, op->ifm_b16))));
    cycles += (q8_t)out->write_latency * Q8 +
              transfer_q8(out, bandwidth_used_q8(out, out_bytes, burst_bytes(0, op->ofm_b16, op->ofm_elem, op->block, depth_stride(&s->ofm, op->ofm_b16))));
    return cycles;
}

/* ---- Compute ---------------------------------------------------------------------------------- */

static enum output_kind output_kind_of(const struct op_view *op)
{
    int ew = op->opcode == MCUGEN_NPU_OP_ELEMENTWISE;
    if (ew && op->ifm_bits == 32u) {
        return binary_elementwise(op->param) ? OUT_EW32_BINARY : OUT_EW32_UNARY;
    }
    if (ew && op->param == MCUGEN_NPU_ELEM_MUL) {
        return op->ofm_bits == 32u ? OUT_MUL32 : OUT_MUL_OR_ACC40;
    }
    if (!ew && op->acc40) {
        return OUT_MUL_OR_ACC40;
    }
    if (ew && (op->param == MCUGEN_NPU_ELEM_ADD || op->param == MCUGEN_NPU_ELEM_SUB)) {
        return OUT_ADD_SUB;
    }
    if (op->opcode == MCUGEN_NPU_OP_POOL && op->param == MCUGEN_NPU_POOL_MAX) {
        return OUT_MAXPOOL;
    }
    return OUT_OTHER;
}

static enum activation_kind activation_kind_of(const struct mcugen_npu_state *s, const struct op_view *op)
{
    uint32_t function = MCUGEN_NPU_ACT_FUNCTION(s->activation);
    int32_t type_min, type_max, lo, hi;
    if (function == 3u || function == 4u || (function >= 16u && function < 24u)) {
        return ACT_LUT; /* tanh, sigmoid, table lookup */
    }
    if (op->ofm_bits > 16u) {
        return ACT_NONE;
    }
    if (MCUGEN_NPU_OFM_PREC_SIGNED(s->ofm.precision)) {
        type_min = -(int32_t)(1u << (op->ofm_bits - 1u));
        type_max = (int32_t)(1u << (op->ofm_bits - 1u)) - 1;
        lo = (int16_t)s->activation_min;
        hi = (int16_t)s->activation_max;
    } else {
        type_min = 0;
        type_max = (int32_t)(1u << op->ofm_bits) - 1;
        lo = s->activation_min;
        hi = s->activation_max;
    }
    return lo > type_min || hi < type_max ? ACT_CLAMP : ACT_NONE;
}

/* Q8 cycles per output element: the slower of the output unit and the activation unit */
static q8_t output_rate_q8(const struct mcugen_npu_state *s, const struct op_view *op)
{
    q8_t out = output_rate[op->cfg][output_kind_of(op)];
    q8_t act = activation_rate[op->cfg][activation_kind_of(s, op)];
    return max_q8(out, act);
}

/* MAC cycles of one sub-kernel of `elements` kernel positions, for one OFM block (Q8 not needed:
 * whole cycles).  `steps` returns the kernel steps, which the pipeline delay depends on. */
static uint64_t sub_kernel_cycles(const struct op_view *op, uint32_t elements, uint32_t ublk_xy, uint32_t ublk_z,
                                  uint32_t *steps)
{
    uint64_t writeback = 4u * op->ublock.d; /* the accumulators' write-back per micro-block */
    uint64_t per_step = 4u * (uint64_t)ublk_xy;
    if (op->opcode == MCUGEN_NPU_OP_POOL && !op->reduce_sum) {
        /* at least 4 cycles per micro-block; above u55-32 the pooling datapath takes bits/2 per
         * element (Vela 5.2's Regor model) */
        uint64_t c = (uint64_t)(elements > 4u ? elements : 4u) * ublk_xy * ublk_z;
        *steps = 1u;
        return op->cfg != 0 ? c * (op->ifm_bits / 2u) : c;
    }
    if (op->opcode == MCUGEN_NPU_OP_DEPTHWISE) {
        *steps = ceil_div(elements, 4u);
        per_step *= op->ifm_bits == 16u ? 2u : 1u;
        return (per_step > writeback ? per_step : writeback) * *steps * ublk_z;
    }
    if (!op->part_kernel) { /* depth first: one kernel position per step, all IFM channels */
        *steps = elements;
        return (per_step > writeback ? per_step : writeback) * *steps * ublk_z;
    }
    /* part-kernel first: 4 (8-bit) or 2 (16-bit) kernel positions per step, per 8 IFM channels */
    *steps = ceil_div(elements, op->ifm_bits == 16u ? 2u : 4u);
    return (per_step > writeback ? per_step : writeback) * *steps * ceil_div(op->ifm_block.d, 8u) * ublk_z;
}

/* The pipeline bubble when a block is a single micro-block in x and y (accumulators reused at once) */
static uint64_t pipeline_delay(const struct op_view *op, uint32_t steps, uint32_t ublk_x, uint32_t ublk_y,
                               uint32_t ublk_z)
{
    uint64_t delay, cycles = 0;
    if (op->cfg == 0) {
        delay = op->acc40 ? 7u : 3u;
    } else {
        delay = op->acc40 && (op->cfg == 1 || op->cfg == 2) ? 3u : 2u;
    }
    if (ublk_x == 1u && ublk_y == 1u) {
        if (ublk_z == 1u) {
            cycles = delay * steps;
        } else if (steps > 1u) {
            cycles = delay * (steps - 1u) * ublk_z;
        }
    }
    if (op->cfg == 0 && (ublk_x == 1u || ublk_y == 1u) && ublk_z > 1u && op->acc40) {
        cycles += delay * ublk_z;
    }
    if (op->part_kernel) {
        cycles *= ceil_div(op->ifm_block.d, 8u);
    }
    return cycles;
}

/* MAC cycles of one OFM block of `blk`: every sub-kernel, every IFM depth block */
static uint64_t block_mac_cycles(const struct op_view *op, struct dims blk)
{
    uint32_t ublk_x = ceil_div(blk.w, op->ublock.w), ublk_y = ceil_div(blk.h, op->ublock.h);
    uint32_t ublk_z = ceil_div(blk.d, op->ublock.d);
    uint32_t sy, sx;
    uint64_t cycles = 0;
    for (sy = 0; sy < op->kernel_h; sy += SUB_KERNEL_MAX) {
        for (sx = 0; sx < op->kernel_w; sx += SUB_KERNEL_MAX) {
            uint32_t elements = min_u32(op->kernel_h - sy, SUB_KERNEL_MAX) * min_u32(op->kernel_w - sx, SUB_KERNEL_MAX);
            uint32_t steps = 0;
            cycles += sub_kernel_cycles(op, elements, ublk_x * ublk_y, ublk_z, &steps);
            cycles += pipeline_delay(op, steps, ublk_x, ublk_y, ublk_z);
        }
    }
    if (sums_ifm_depth(op)) {
        cycles *= ceil_div(op->ifm.d, min_u32(op->ifm.d, op->ifm_block.d));
    }
    return cycles;
}

static uint32_t block_count(const struct op_view *op)
{
    return ceil_div(op->ofm.h, op->block.h) * ceil_div(op->ofm.w, op->block.w) * ceil_div(op->ofm.d, op->block.d);
}

/* One OFM block of `blk` elements: its MAC stage and its output stage (Q8 cycles), each at least
 * a quarter of the block's whole work with its fetch and write-back (block set-up per DPU). */
static void block_stages(const struct mcugen_npu_cycle_config *config, const struct mcugen_npu_state *s,
                         const struct op_view *op, struct dims blk, q8_t block_memory, q8_t *mac, q8_t *out)
{
    q8_t command;
    *mac = (q8_t)block_mac_cycles(op, blk) * Q8;
    *out = q8_ceil(output_rate_q8(s, op) * volume(blk));
    if (op->opcode != MCUGEN_NPU_OP_POOL) { /* bias and scale entries: 10 bytes per channel */
        q8_t bias = (q8_t)10u * blk.d * region_memory(config, s->scale_region)->read_latency;
        *out = max_q8(*out, bias);
    }
    command = (block_memory + *out + *mac) / 4u;
    *mac = max_q8(*mac, command);
    *out = max_q8(*out, command);
}

/* The sizes of the blocks along one axis: `full` blocks of `block`, then one of `rest` (maybe 0). */
static void axis_blocks(uint32_t size, uint32_t block, uint32_t sizes[2], uint32_t counts[2])
{
    sizes[0] = min_u32(size, block);
    counts[0] = size / sizes[0];
    sizes[1] = size - counts[0] * sizes[0];
    counts[1] = sizes[1] != 0u ? 1u : 0u;
}

/* A CONV/DEPTHWISE/POOL: block by block (the edge blocks are smaller) the MAC array and the output
 * unit work as a pipeline; per block the slower stage sets the pace, and the faster stage of the
 * first block adds once (fill/drain). */
static q8_t kernel_op_compute_q8(const struct mcugen_npu_cycle_config *config, const struct mcugen_npu_state *s,
                                 const struct op_view *op, uint64_t *mac_cycles)
{
    uint32_t hs[2], hn[2], ws[2], wn[2], ds[2], dn[2];
    q8_t block_memory = block_memory_q8(config, s, op), total = 0, first_mac = 0, first_out = 0;
    int y, x, z;
    axis_blocks(op->ofm.h, op->block.h, hs, hn);
    axis_blocks(op->ofm.w, op->block.w, ws, wn);
    axis_blocks(op->ofm.d, op->block.d, ds, dn);
    *mac_cycles = 0;
    for (y = 0; y < 2; ++y) {
        for (x = 0; x < 2; ++x) {
            for (z = 0; z < 2; ++z) {
                uint64_t count = (uint64_t)hn[y] * wn[x] * dn[z];
                struct dims blk;
                q8_t mac, out;
                if (count == 0u) {
                    continue;
                }
                blk.h = hs[y];
                blk.w = ws[x];
                blk.d = ds[z];
                block_stages(config, s, op, blk, block_memory, &mac, &out);
                if (y == 0 && x == 0 && z == 0) {
                    first_mac = mac;
                    first_out = out;
                }
                *mac_cycles += (uint64_t)block_mac_cycles(op, blk) * count;
                total += max_q8(mac, out) * count;
            }
        }
    }
    return total + (first_mac < first_out ? first_mac : first_out);
}

/* ELEMENTWISE: the output unit's rate per element, or the per-block memory floor if slower */
static q8_t elementwise_compute_q8(const struct mcugen_npu_cycle_config *config, const struct mcugen_npu_state *s,
                                   const struct op_view *op)
{
    q8_t rate = output_rate_q8(s, op);
    uint64_t block_elements = volume(op->block);
    uint64_t elements = (uint64_t)op->ofm.h * op->ofm.w * (op->ofm_b16 ? round_up(op->ofm.d, 16u) : op->ofm.d);
    q8_t command = (block_memory_q8(config, s, op) + rate * block_elements) / 4u;
    rate = max_q8(rate, command / block_elements);
    return q8_ceil(rate * elements);
}

/* ---- Memory traffic of an operation ------------------------------------------------------------- */

static void add_traffic(const struct mcugen_npu_cycle_config *config, uint32_t region, uint64_t bytes, uint32_t burst,
                        q8_t *used, struct mcugen_npu_op_cost *cost)
{
    uint32_t m = memory_index(config, region);
    used[m] += bandwidth_used_q8(&config->memory[m], bytes, burst);
    cost->bytes[m] += bytes;
}

static void traffic(const struct mcugen_npu_cycle_config *config, const struct mcugen_npu_state *s,
                    const struct op_view *op, q8_t *used, struct mcugen_npu_op_cost *cost)
{
    uint64_t ofm_elements = (uint64_t)op->ofm.h * op->ofm.w * (op->ofm_b16 ? round_up(op->ofm.d, 16u) : op->ofm.d);
    if (op->opcode == MCUGEN_NPU_OP_ELEMENTWISE) {
        uint64_t in_elements = (uint64_t)op->ofm.h * op->ofm.w * (op->ifm_b16 ? round_up(op->ofm.d, 16u) : op->ofm.d);
        add_traffic(config, s->ifm.region, in_elements * op->ifm_elem,
                    burst_bytes(1, op->ifm_b16, op->ifm_elem, op->ifm_block, depth_stride(&s->ifm, op->ifm_b16)), used, cost);
        if (op->has_ifm2) {
            add_traffic(config, s->ifm2.region, in_elements * op->ifm2_elem,
                        burst_bytes(1, op->ifm2_b16, op->ifm2_elem, op->ifm_block, depth_stride(&s->ifm2, op->ifm2_b16)), used, cost);
        }
    } else {
        /* every OFM block refetches its IFM block for every sub-kernel; weights stream again for
         * every block position (the U55 keeps no weight cache across blocks) */
        struct dims in_blk = clip(op->ifm, op->ifm_block);
        uint32_t sub_kernels = ceil_div(op->kernel_w, SUB_KERNEL_MAX) * ceil_div(op->kernel_h, SUB_KERNEL_MAX);
        uint32_t xy_blocks = ceil_div(op->ofm.h, op->block.h) * ceil_div(op->ofm.w, op->block.w);
        uint32_t fetches = sums_ifm_depth(op) ? block_count(op) : xy_blocks;
        uint64_t in_bytes = (uint64_t)in_blk.h * in_blk.w * (op->ifm_b16 ? round_up(op->ifm.d, 16u) : op->ifm.d) *
                            op->ifm_elem * sub_kernels * fetches;
        add_traffic(config, s->ifm.region, in_bytes, burst_bytes(1, op->ifm_b16, op->ifm_elem, op->ifm_block, depth_stride(&s->ifm, op->ifm_b16)), used,
                    cost);
        if (op->opcode == MCUGEN_NPU_OP_CONV || op->opcode == MCUGEN_NPU_OP_DEPTHWISE) {
            uint32_t wm = memory_index(config, s->weight_region);
            uint32_t sm = memory_index(config, s->scale_region);
            add_traffic(config, s->weight_region, ((uint64_t)s->weight_length + s->weight1_length) * xy_blocks,
                        config->memory[wm].burst_bytes, used, cost);
            add_traffic(config, s->scale_region, (uint64_t)s->scale_length + s->scale1_length,
                        config->memory[sm].burst_bytes, used, cost);
        }
    }
    add_traffic(config, s->ofm.region, ofm_elements * op->ofm_elem, burst_bytes(0, op->ofm_b16, op->ofm_elem, op->block, depth_stride(&s->ofm, op->ofm_b16)),
                used, cost);
}

/* ---- Entry points ----------------------------------------------------------------------------- */

int mcugen_npu_op_cycles(const struct mcugen_npu_cycle_config *config, uint32_t opcode, uint32_t param,
                         const struct mcugen_npu_state *state, struct mcugen_npu_op_cost *cost)
{
    struct op_view op;
    q8_t used[MCUGEN_NPU_MAX_MEMORIES] = { 0 };
    q8_t compute;
    uint32_t m;
    int cfg = config_index(config->macs_per_cycle);
    memset(cost, 0, sizeof *cost);
    if (cfg < 0) {
        return -1;
    }
    if (!is_kernel_op(opcode) && opcode != MCUGEN_NPU_OP_ELEMENTWISE) {
        return 0;
    }
    describe(state, opcode, param, cfg, &op);
    if (opcode == MCUGEN_NPU_OP_ELEMENTWISE) {
        compute = elementwise_compute_q8(config, state, &op);
    } else {
        compute = kernel_op_compute_q8(config, state, &op, &cost->mac_cycles);
    }
    cost->compute_cycles = (uint64_t)(q8_ceil(compute) / Q8);
    cost->cycles = cost->compute_cycles;
    cost->blocks = block_count(&op);
    traffic(config, state, &op, used, cost);
    for (m = 0; m < MCUGEN_NPU_MAX_MEMORIES; ++m) {
        cost->memory_cycles[m] = (uint64_t)(q8_ceil(transfer_q8(&config->memory[m], used[m])) / Q8);
        if (cost->memory_cycles[m] > cost->cycles) {
            cost->cycles = cost->memory_cycles[m];
        }
    }
    return 0;
}

static const struct mcugen_npu_memory *dma_memory(const struct mcugen_npu_cycle_config *config, uint16_t region_param)
{
    if (MCUGEN_NPU_DMA_INTERNAL(region_param)) {
        return &config->memory[config->shram_memory < MCUGEN_NPU_MAX_MEMORIES ? config->shram_memory : 0u];
    }
    return region_memory(config, MCUGEN_NPU_DMA_REGION(region_param));
}

uint64_t mcugen_npu_dma_cycles(const struct mcugen_npu_cycle_config *config, const struct mcugen_npu_state *state)
{
    const struct mcugen_npu_memory *src = dma_memory(config, state->dma0_src_region);
    const struct mcugen_npu_memory *dst = dma_memory(config, state->dma0_dst_region);
    uint64_t len = state->dma0_len, read = 0, write = 0;
    if (len == 0u) {
        return 0u;
    }
    if (src->bytes_per_cycle_q8 != 0u) {
        read = len * Q8 / src->bytes_per_cycle_q8 + src->read_latency;
    }
    if (dst->bytes_per_cycle_q8 != 0u) {
        write = len * Q8 / dst->bytes_per_cycle_q8;
    }
    return read > write ? read : write;
}

/* ---- Timeline --------------------------------------------------------------------------------- */

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

void mcugen_npu_timeline_reset(struct mcugen_npu_timeline *timeline)
{
    memset(timeline, 0, sizeof *timeline);
}

/* Hold the command processor until the oldest outstanding DMA has ended. */
static void wait_oldest_dma(struct mcugen_npu_timeline *t)
{
    uint32_t i;
    t->command = max_u64(t->command, t->dma_done[0]);
    for (i = 1; i < t->dma_pending; ++i) {
        t->dma_done[i - 1u] = t->dma_done[i];
    }
    t->dma_pending--;
}

uint64_t mcugen_npu_timeline_issue(struct mcugen_npu_timeline *t, uint32_t opcode, uint32_t param, uint64_t cycles)
{
    switch (opcode) {
    case MCUGEN_NPU_OP_CONV:
    case MCUGEN_NPU_OP_DEPTHWISE:
    case MCUGEN_NPU_OP_POOL:
    case MCUGEN_NPU_OP_ELEMENTWISE:
        t->command = max_u64(t->command, t->kernel_end);
        t->kernel_end = t->command + cycles;
        break;
    case MCUGEN_NPU_OP_DMA_START:
        if (t->dma_pending == MCUGEN_NPU_MAX_DMA_PENDING) {
            wait_oldest_dma(t);
        }
        t->dma_end = max_u64(t->command, t->dma_end) + cycles;
        t->dma_done[t->dma_pending++] = t->dma_end;
        break;
    case MCUGEN_NPU_OP_DMA_WAIT:
        while (t->dma_pending > param) {
            wait_oldest_dma(t);
        }
        break;
    case MCUGEN_NPU_OP_KERNEL_WAIT:
        if (param == 0u) {
            t->command = max_u64(t->command, t->kernel_end);
        }
        break;
    case MCUGEN_NPU_OP_STOP:
        t->command = max_u64(t->command, max_u64(t->kernel_end, t->dma_end));
        t->dma_pending = 0;
        break;
    default:
        break;
    }
    return max_u64(t->command, max_u64(t->kernel_end, t->dma_end));
}
