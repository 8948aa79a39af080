/*
 * mcugen_npu_device.c - the register file, command walker, DMA and PMU of mcugen's
 * Ethos-U55-compatible NPU model.  See mcugen_npu_device.h and docs/npu.md for the semantics.
 */
#include "mcugen_npu_device.h"

#include <string.h>

/* ---- The command table: one row per defined command ------------------------------------------ */

enum cmd_kind {
    K_OP,    /* NPU_OP_*: an operation */
    K_P16,   /* cmd0: a uint16_t field takes the parameter */
    K_ADDR,  /* cmd1: a uint64_t field takes data | param << 32 (40-bit address/stride/length) */
    K_D32,   /* cmd1: a uint32_t field takes the data word (the parameter is zero) */
    K_SCALE  /* cmd1: a uint32_t field takes the data, the uint16_t after it the parameter (shift) */
};

struct cmd_row {
    uint16_t code; /* opcode | MCUGEN_NPU_CMD1_FLAG for cmd1 */
    uint8_t kind;
    uint16_t field;
    uint16_t field2;
    const char *name;
};

#define ST(member) ((uint16_t)offsetof(struct mcugen_npu_state, member))
#define OP(code, name) { (code), K_OP, 0, 0, name }
#define P16(code, member, name) { (code), K_P16, ST(member), 0, name }
#define C1(code, kind, member, name) { (uint16_t)((code) | MCUGEN_NPU_CMD1_FLAG), kind, ST(member), 0, name }
#define SC(code, member, shift, name) { (uint16_t)((code) | MCUGEN_NPU_CMD1_FLAG), K_SCALE, ST(member), ST(shift), name }

static const struct cmd_row cmd_table[] = {
    OP(MCUGEN_NPU_OP_STOP, "NPU_OP_STOP"),
    OP(MCUGEN_NPU_OP_IRQ, "NPU_OP_IRQ"),
    OP(MCUGEN_NPU_OP_CONV, "NPU_OP_CONV"),
    OP(MCUGEN_NPU_OP_DEPTHWISE, "NPU_OP_DEPTHWISE"),
    OP(MCUGEN_NPU_OP_POOL, "NPU_OP_POOL"),
    OP(MCUGEN_NPU_OP_ELEMENTWISE, "NPU_OP_ELEMENTWISE"),
    OP(MCUGEN_NPU_OP_DMA_START, "NPU_OP_DMA_START"),
    OP(MCUGEN_NPU_OP_DMA_WAIT, "NPU_OP_DMA_WAIT"),
    OP(MCUGEN_NPU_OP_KERNEL_WAIT, "NPU_OP_KERNEL_WAIT"),
    OP(MCUGEN_NPU_OP_PMU_MASK, "NPU_OP_PMU_MASK"),
    P16(MCUGEN_NPU_SET_IFM_PAD_TOP, ifm_pad_top, "NPU_SET_IFM_PAD_TOP"),
    P16(MCUGEN_NPU_SET_IFM_PAD_LEFT, ifm_pad_left, "NPU_SET_IFM_PAD_LEFT"),
    P16(MCUGEN_NPU_SET_IFM_PAD_RIGHT, ifm_pad_right, "NPU_SET_IFM_PAD_RIGHT"),
    P16(MCUGEN_NPU_SET_IFM_PAD_BOTTOM, ifm_pad_bottom, "NPU_SET_IFM_PAD_BOTTOM"),
    P16(MCUGEN_NPU_SET_IFM_DEPTH_M1, ifm_depth_m1, "NPU_SET_IFM_DEPTH_M1"),
    P16(MCUGEN_NPU_SET_IFM_PRECISION, ifm.precision, "NPU_SET_IFM_PRECISION"),
    P16(MCUGEN_NPU_SET_IFM_UPSCALE, ifm_upscale, "NPU_SET_IFM_UPSCALE"),
    P16(MCUGEN_NPU_SET_IFM_ZERO_POINT, ifm.zero_point, "NPU_SET_IFM_ZERO_POINT"),
    P16(MCUGEN_NPU_SET_IFM_WIDTH0_M1, ifm.width0_m1, "NPU_SET_IFM_WIDTH0_M1"),
    P16(MCUGEN_NPU_SET_IFM_HEIGHT0_M1, ifm.height0_m1, "NPU_SET_IFM_HEIGHT0_M1"),
    P16(MCUGEN_NPU_SET_IFM_HEIGHT1_M1, ifm.height1_m1, "NPU_SET_IFM_HEIGHT1_M1"),
    P16(MCUGEN_NPU_SET_IFM_IB_END, ifm_ib_end, "NPU_SET_IFM_IB_END"),
    P16(MCUGEN_NPU_SET_IFM_REGION, ifm.region, "NPU_SET_IFM_REGION"),
    P16(MCUGEN_NPU_SET_OFM_WIDTH_M1, ofm_width_m1, "NPU_SET_OFM_WIDTH_M1"),
    P16(MCUGEN_NPU_SET_OFM_HEIGHT_M1, ofm_height_m1, "NPU_SET_OFM_HEIGHT_M1"),
    P16(MCUGEN_NPU_SET_OFM_DEPTH_M1, ofm_depth_m1, "NPU_SET_OFM_DEPTH_M1"),
    P16(MCUGEN_NPU_SET_OFM_PRECISION, ofm.precision, "NPU_SET_OFM_PRECISION"),
    P16(MCUGEN_NPU_SET_OFM_BLK_WIDTH_M1, ofm_blk_width_m1, "NPU_SET_OFM_BLK_WIDTH_M1"),
    P16(MCUGEN_NPU_SET_OFM_BLK_HEIGHT_M1, ofm_blk_height_m1, "NPU_SET_OFM_BLK_HEIGHT_M1"),
    P16(MCUGEN_NPU_SET_OFM_BLK_DEPTH_M1, ofm_blk_depth_m1, "NPU_SET_OFM_BLK_DEPTH_M1"),
    P16(MCUGEN_NPU_SET_OFM_ZERO_POINT, ofm.zero_point, "NPU_SET_OFM_ZERO_POINT"),
    P16(MCUGEN_NPU_SET_OFM_WIDTH0_M1, ofm.width0_m1, "NPU_SET_OFM_WIDTH0_M1"),
    P16(MCUGEN_NPU_SET_OFM_HEIGHT0_M1, ofm.height0_m1, "NPU_SET_OFM_HEIGHT0_M1"),
    P16(MCUGEN_NPU_SET_OFM_HEIGHT1_M1, ofm.height1_m1, "NPU_SET_OFM_HEIGHT1_M1"),
    P16(MCUGEN_NPU_SET_OFM_REGION, ofm.region, "NPU_SET_OFM_REGION"),
    P16(MCUGEN_NPU_SET_KERNEL_WIDTH_M1, kernel_width_m1, "NPU_SET_KERNEL_WIDTH_M1"),
    P16(MCUGEN_NPU_SET_KERNEL_HEIGHT_M1, kernel_height_m1, "NPU_SET_KERNEL_HEIGHT_M1"),
    P16(MCUGEN_NPU_SET_KERNEL_STRIDE, kernel_stride, "NPU_SET_KERNEL_STRIDE"),
    P16(MCUGEN_NPU_SET_PARALLEL_MODE, parallel_mode, "NPU_SET_PARALLEL_MODE"),
    P16(MCUGEN_NPU_SET_ACC_FORMAT, acc_format, "NPU_SET_ACC_FORMAT"),
    P16(MCUGEN_NPU_SET_ACTIVATION, activation, "NPU_SET_ACTIVATION"),
    P16(MCUGEN_NPU_SET_ACTIVATION_MIN, activation_min, "NPU_SET_ACTIVATION_MIN"),
    P16(MCUGEN_NPU_SET_ACTIVATION_MAX, activation_max, "NPU_SET_ACTIVATION_MAX"),
    P16(MCUGEN_NPU_SET_WEIGHT_REGION, weight_region, "NPU_SET_WEIGHT_REGION"),
    P16(MCUGEN_NPU_SET_SCALE_REGION, scale_region, "NPU_SET_SCALE_REGION"),
    P16(MCUGEN_NPU_SET_AB_START, ab_start, "NPU_SET_AB_START"),
    P16(MCUGEN_NPU_SET_BLOCKDEP, blockdep, "NPU_SET_BLOCKDEP"),
    P16(MCUGEN_NPU_SET_DMA0_SRC_REGION, dma0_src_region, "NPU_SET_DMA0_SRC_REGION"),
    P16(MCUGEN_NPU_SET_DMA0_DST_REGION, dma0_dst_region, "NPU_SET_DMA0_DST_REGION"),
    P16(MCUGEN_NPU_SET_DMA0_SIZE0, dma0_size0, "NPU_SET_DMA0_SIZE0"),
    P16(MCUGEN_NPU_SET_DMA0_SIZE1, dma0_size1, "NPU_SET_DMA0_SIZE1"),
    P16(MCUGEN_NPU_SET_IFM2_BROADCAST, ifm2_broadcast, "NPU_SET_IFM2_BROADCAST"),
    P16(MCUGEN_NPU_SET_IFM2_SCALAR, ifm2_scalar, "NPU_SET_IFM2_SCALAR"),
    P16(MCUGEN_NPU_SET_IFM2_PRECISION, ifm2.precision, "NPU_SET_IFM2_PRECISION"),
    P16(MCUGEN_NPU_SET_IFM2_ZERO_POINT, ifm2.zero_point, "NPU_SET_IFM2_ZERO_POINT"),
    P16(MCUGEN_NPU_SET_IFM2_WIDTH0_M1, ifm2.width0_m1, "NPU_SET_IFM2_WIDTH0_M1"),
    P16(MCUGEN_NPU_SET_IFM2_HEIGHT0_M1, ifm2.height0_m1, "NPU_SET_IFM2_HEIGHT0_M1"),
    P16(MCUGEN_NPU_SET_IFM2_HEIGHT1_M1, ifm2.height1_m1, "NPU_SET_IFM2_HEIGHT1_M1"),
    P16(MCUGEN_NPU_SET_IFM2_IB_START, ifm2_ib_start, "NPU_SET_IFM2_IB_START"),
    P16(MCUGEN_NPU_SET_IFM2_REGION, ifm2.region, "NPU_SET_IFM2_REGION"),
    C1(MCUGEN_NPU_SET_IFM_BASE0, K_ADDR, ifm.base[0], "NPU_SET_IFM_BASE0"),
    C1(MCUGEN_NPU_SET_IFM_BASE1, K_ADDR, ifm.base[1], "NPU_SET_IFM_BASE1"),
    C1(MCUGEN_NPU_SET_IFM_BASE2, K_ADDR, ifm.base[2], "NPU_SET_IFM_BASE2"),
    C1(MCUGEN_NPU_SET_IFM_BASE3, K_ADDR, ifm.base[3], "NPU_SET_IFM_BASE3"),
    C1(MCUGEN_NPU_SET_IFM_STRIDE_X, K_ADDR, ifm.stride_x, "NPU_SET_IFM_STRIDE_X"),
    C1(MCUGEN_NPU_SET_IFM_STRIDE_Y, K_ADDR, ifm.stride_y, "NPU_SET_IFM_STRIDE_Y"),
    C1(MCUGEN_NPU_SET_IFM_STRIDE_C, K_ADDR, ifm.stride_c, "NPU_SET_IFM_STRIDE_C"),
    C1(MCUGEN_NPU_SET_OFM_BASE0, K_ADDR, ofm.base[0], "NPU_SET_OFM_BASE0"),
    C1(MCUGEN_NPU_SET_OFM_BASE1, K_ADDR, ofm.base[1], "NPU_SET_OFM_BASE1"),
    C1(MCUGEN_NPU_SET_OFM_BASE2, K_ADDR, ofm.base[2], "NPU_SET_OFM_BASE2"),
    C1(MCUGEN_NPU_SET_OFM_BASE3, K_ADDR, ofm.base[3], "NPU_SET_OFM_BASE3"),
    C1(MCUGEN_NPU_SET_OFM_STRIDE_X, K_ADDR, ofm.stride_x, "NPU_SET_OFM_STRIDE_X"),
    C1(MCUGEN_NPU_SET_OFM_STRIDE_Y, K_ADDR, ofm.stride_y, "NPU_SET_OFM_STRIDE_Y"),
    C1(MCUGEN_NPU_SET_OFM_STRIDE_C, K_ADDR, ofm.stride_c, "NPU_SET_OFM_STRIDE_C"),
    C1(MCUGEN_NPU_SET_WEIGHT_BASE, K_ADDR, weight_base, "NPU_SET_WEIGHT_BASE"),
    C1(MCUGEN_NPU_SET_WEIGHT_LENGTH, K_D32, weight_length, "NPU_SET_WEIGHT_LENGTH"),
    C1(MCUGEN_NPU_SET_SCALE_BASE, K_ADDR, scale_base, "NPU_SET_SCALE_BASE"),
    C1(MCUGEN_NPU_SET_SCALE_LENGTH, K_D32, scale_length, "NPU_SET_SCALE_LENGTH"),
    SC(MCUGEN_NPU_SET_OFM_SCALE, ofm_scale, ofm_scale_shift, "NPU_SET_OFM_SCALE"),
    SC(MCUGEN_NPU_SET_OPA_SCALE, opa_scale, opa_scale_shift, "NPU_SET_OPA_SCALE"),
    C1(MCUGEN_NPU_SET_OPB_SCALE, K_D32, opb_scale, "NPU_SET_OPB_SCALE"),
    C1(MCUGEN_NPU_SET_DMA0_SRC, K_ADDR, dma0_src, "NPU_SET_DMA0_SRC"),
    C1(MCUGEN_NPU_SET_DMA0_DST, K_ADDR, dma0_dst, "NPU_SET_DMA0_DST"),
    C1(MCUGEN_NPU_SET_DMA0_LEN, K_ADDR, dma0_len, "NPU_SET_DMA0_LEN"),
    C1(MCUGEN_NPU_SET_DMA0_SKIP0, K_ADDR, dma0_skip0, "NPU_SET_DMA0_SKIP0"),
    C1(MCUGEN_NPU_SET_DMA0_SKIP1, K_ADDR, dma0_skip1, "NPU_SET_DMA0_SKIP1"),
    C1(MCUGEN_NPU_SET_IFM2_BASE0, K_ADDR, ifm2.base[0], "NPU_SET_IFM2_BASE0"),
    C1(MCUGEN_NPU_SET_IFM2_BASE1, K_ADDR, ifm2.base[1], "NPU_SET_IFM2_BASE1"),
    C1(MCUGEN_NPU_SET_IFM2_BASE2, K_ADDR, ifm2.base[2], "NPU_SET_IFM2_BASE2"),
    C1(MCUGEN_NPU_SET_IFM2_BASE3, K_ADDR, ifm2.base[3], "NPU_SET_IFM2_BASE3"),
    C1(MCUGEN_NPU_SET_IFM2_STRIDE_X, K_ADDR, ifm2.stride_x, "NPU_SET_IFM2_STRIDE_X"),
    C1(MCUGEN_NPU_SET_IFM2_STRIDE_Y, K_ADDR, ifm2.stride_y, "NPU_SET_IFM2_STRIDE_Y"),
    C1(MCUGEN_NPU_SET_IFM2_STRIDE_C, K_ADDR, ifm2.stride_c, "NPU_SET_IFM2_STRIDE_C"),
    C1(MCUGEN_NPU_SET_WEIGHT1_BASE, K_ADDR, weight1_base, "NPU_SET_WEIGHT1_BASE"),
    C1(MCUGEN_NPU_SET_WEIGHT1_LENGTH, K_D32, weight1_length, "NPU_SET_WEIGHT1_LENGTH"),
    C1(MCUGEN_NPU_SET_SCALE1_BASE, K_ADDR, scale1_base, "NPU_SET_SCALE1_BASE"),
    C1(MCUGEN_NPU_SET_SCALE1_LENGTH, K_D32, scale1_length, "NPU_SET_SCALE1_LENGTH"),
};

#define CMD_TABLE_SIZE (sizeof(cmd_table) / sizeof(cmd_table[0]))

/* The row of a command word (opcode plus the cmd1 flag), or NULL if the command is undefined. */
static const struct cmd_row *find_cmd(uint32_t word)
{
    uint32_t code = (word & 0x3FFu) | (MCUGEN_NPU_CMD_PAYLOAD_SIZE(word) == 1u ? MCUGEN_NPU_CMD1_FLAG : 0u);
    size_t i;
    for (i = 0; i < CMD_TABLE_SIZE; ++i) {
        if (cmd_table[i].code == code) {
            return &cmd_table[i];
        }
    }
    return NULL;
}

const char *mcugen_npu_cmd_name(uint32_t word)
{
    const struct cmd_row *row = find_cmd(word);
    return row != NULL ? row->name : NULL;
}

static void *field_ptr(struct mcugen_npu_state *state, uint16_t offset)
{
    return (unsigned char *)state + offset;
}

static const void *cfield_ptr(const struct mcugen_npu_state *state, uint16_t offset)
{
    return (const unsigned char *)state + offset;
}

static void apply_param(struct mcugen_npu_state *state, const struct cmd_row *row, uint32_t param, uint32_t data)
{
    switch (row->kind) {
    case K_P16: {
        uint16_t v = (uint16_t)param;
        memcpy(field_ptr(state, row->field), &v, sizeof v);
        break;
    }
    case K_ADDR: {
        uint64_t v = (uint64_t)data | ((uint64_t)(param & 0xFFFFu) << 32);
        memcpy(field_ptr(state, row->field), &v, sizeof v);
        break;
    }
    case K_D32:
        memcpy(field_ptr(state, row->field), &data, sizeof data);
        break;
    case K_SCALE: {
        uint16_t shift = (uint16_t)param;
        memcpy(field_ptr(state, row->field), &data, sizeof data);
        memcpy(field_ptr(state, row->field2), &shift, sizeof shift);
        break;
    }
    default:
        break;
    }
}

int mcugen_npu_state_readback(const struct mcugen_npu_state *state, uint32_t word, uint32_t *param, uint32_t *data)
{
    const struct cmd_row *row = find_cmd(word);
    uint16_t v16 = 0;
    uint32_t v32 = 0;
    uint64_t v64 = 0;
    if (row == NULL || row->kind == K_OP) {
        return -1;
    }
    *param = 0;
    *data = 0;
    switch (row->kind) {
    case K_P16:
        memcpy(&v16, cfield_ptr(state, row->field), sizeof v16);
        *param = v16;
        break;
    case K_ADDR:
        memcpy(&v64, cfield_ptr(state, row->field), sizeof v64);
        *data = (uint32_t)(v64 & 0xFFFFFFFFu);
        *param = (uint32_t)(v64 >> 32);
        break;
    case K_D32:
        memcpy(&v32, cfield_ptr(state, row->field), sizeof v32);
        *data = v32;
        break;
    default: /* K_SCALE */
        memcpy(&v32, cfield_ptr(state, row->field), sizeof v32);
        memcpy(&v16, cfield_ptr(state, row->field2), sizeof v16);
        *data = v32;
        *param = v16;
        break;
    }
    return 0;
}

/* ---- Registry -------------------------------------------------------------------------------- */

static struct mcugen_npu_device *registry;

struct mcugen_npu_device *mcugen_npu_device_find(const void *base)
{
    struct mcugen_npu_device *dev;
    for (dev = registry; dev != NULL; dev = dev->next) {
        if ((const void *)dev == base) {
            return dev;
        }
    }
    return NULL;
}

void mcugen_npu_device_deinit(struct mcugen_npu_device *dev)
{
    struct mcugen_npu_device **link = &registry;
    while (*link != NULL) {
        if (*link == dev) {
            *link = dev->next;
            break;
        }
        link = &(*link)->next;
    }
    dev->next = NULL;
}

/* ---- Reset, IRQ, faults, PMU ---------------------------------------------------------------- */

static void soft_reset(struct mcugen_npu_device *dev, uint32_t pending)
{
    uint32_t i;
    dev->status = 0;
    dev->cmd = 0;
    dev->qbase = dev->qbase_hi = dev->qread = dev->qsize = dev->qconfig = 0;
    dev->lock = dev->regioncfg = 0;
    for (i = 0; i < 4; ++i) {
        dev->axi_limit[i] = 0;
    }
    for (i = 0; i < MCUGEN_NPU_NUM_REGIONS; ++i) {
        dev->basep[i][0] = dev->basep[i][1] = 0;
        dev->region_size[i] = 0;
    }
    dev->prot = pending & (MCUGEN_NPU_PROT_ACTIVE_CPL | MCUGEN_NPU_PROT_ACTIVE_CSL);
    dev->pmcr = dev->pmcnten = dev->pmovs = dev->pmint = dev->pmccntr_cfg = dev->pmcaxi_chan = 0;
    dev->pmccntr = 0;
    for (i = 0; i < MCUGEN_NPU_PMU_NUM_EVCNT; ++i) {
        dev->pmevcntr[i] = dev->pmevtyper[i] = 0;
    }
    dev->pmu_mask = 1;
    memset(&dev->state, 0, sizeof dev->state);
    /* The watchdog limits (the model's configuration) and the last run's statistics (fault,
     * cycles, commands, op counts: what a debugger reads after the driver reset) survive a
     * reset; starting a run clears the statistics. */
}

static void raise_irq(struct mcugen_npu_device *dev, uint32_t history)
{
    dev->status |= MCUGEN_NPU_STATUS_IRQ_RAISED | ((history & 0xFFFFu) << MCUGEN_NPU_STATUS_IRQ_HISTORY_SHIFT);
    if (dev->irq != NULL) {
        dev->irq(dev, dev->irq_ctx);
    }
}

static uint32_t region_interface(const struct mcugen_npu_device *dev, uint32_t region)
{
    /* REGIONCFG selects an AXI limit set per region: 0-1 on AXI0 (SRAM), 2-3 on AXI1 */
    return region < MCUGEN_NPU_NUM_REGIONS && ((dev->regioncfg >> (2u * region)) & 2u) ? 1u : 0u;
}

static void raise_fault(struct mcugen_npu_device *dev, enum mcugen_npu_fault fault, uint32_t info,
                        uint32_t channel, uint32_t region)
{
    uint32_t bits = 0;
    switch (fault) {
    case MCUGEN_NPU_FAULT_REGION_RANGE:
    case MCUGEN_NPU_FAULT_DMA_RANGE:
    case MCUGEN_NPU_FAULT_QUEUE_RANGE:
        bits = MCUGEN_NPU_STATUS_BUS_STATUS | ((channel & 0xFu) << MCUGEN_NPU_STATUS_FAULT_CHAN_SHIFT);
        if (region_interface(dev, region)) {
            bits |= MCUGEN_NPU_STATUS_FAULT_IFACE;
        }
        break;
    case MCUGEN_NPU_FAULT_WATCHDOG:
        bits = MCUGEN_NPU_STATUS_WD_FAULT;
        break;
    default:
        bits = MCUGEN_NPU_STATUS_CMD_PARSE_ERR;
        break;
    }
    dev->status &= ~MCUGEN_NPU_STATUS_STATE_RUNNING;
    dev->status |= bits;
    dev->fault = (uint32_t)fault;
    dev->fault_qread = dev->qread;
    dev->fault_info = info;
    raise_irq(dev, 0);
}

static int pmu_counting(const struct mcugen_npu_device *dev)
{
    if ((dev->pmcr & MCUGEN_NPU_PMCR_CNT_EN) == 0u) {
        return 0;
    }
    return (dev->pmcr & MCUGEN_NPU_PMCR_MASK_EN) == 0u || (dev->pmu_mask & 1u) != 0u;
}

void mcugen_npu_pmu_event(struct mcugen_npu_device *dev, uint32_t event, uint32_t count)
{
    uint32_t i;
    if (!pmu_counting(dev) || count == 0u) {
        return;
    }
    for (i = 0; i < MCUGEN_NPU_PMU_NUM_EVCNT; ++i) {
        if ((dev->pmcnten & (1u << i)) && dev->pmevtyper[i] == event) {
            uint32_t before = dev->pmevcntr[i];
            dev->pmevcntr[i] = before + count;
            if (dev->pmevcntr[i] < before) {
                dev->pmovs |= 1u << i;
                if (dev->pmint & (1u << i)) {
                    dev->status |= MCUGEN_NPU_STATUS_PMU_IRQ;
                    raise_irq(dev, 0);
                }
            }
        }
    }
}

void mcugen_npu_add_cycles(struct mcugen_npu_device *dev, uint64_t cycles)
{
    dev->cycles += cycles;
    if (pmu_counting(dev) && (dev->pmcnten & MCUGEN_NPU_PMCNT_CYCLE)) {
        uint64_t next = (dev->pmccntr + cycles) & 0xFFFFFFFFFFFFull; /* 48 bits */
        if (next < dev->pmccntr) {
            dev->pmovs |= MCUGEN_NPU_PMCNT_CYCLE;
        }
        dev->pmccntr = next;
    }
    while (cycles > 0u) {
        uint32_t chunk = cycles > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)cycles;
        mcugen_npu_pmu_event(dev, MCUGEN_NPU_PMU_EVENT_CYCLE, chunk);
        mcugen_npu_pmu_event(dev, MCUGEN_NPU_PMU_EVENT_NPU_ACTIVE, chunk);
        cycles -= chunk;
    }
}

/* ---- Memory ------------------------------------------------------------------------------------ */

uint8_t *mcugen_npu_region_ptr(struct mcugen_npu_device *dev, uint32_t region, uint64_t offset, uint64_t len)
{
    uint64_t base, size;
    if (region >= MCUGEN_NPU_NUM_REGIONS) {
        return NULL;
    }
    size = dev->region_size[region];
    base = (uint64_t)dev->basep[region][0] | ((uint64_t)dev->basep[region][1] << 32);
    if (base == 0u) {
        return NULL;
    }
    if (size != MCUGEN_NPU_REGION_SIZE_UNCHECKED && (offset > size || len > size - offset)) {
        return NULL;
    }
    if ((uint64_t)(uintptr_t)(base + offset) != base + offset) {
        return NULL; /* not addressable on this host */
    }
    return (uint8_t *)(uintptr_t)(base + offset);
}

uint32_t mcugen_npu_ifm_elem_bytes(uint16_t precision)
{
    return 1u << MCUGEN_NPU_IFM_PREC_BITS(precision);
}

uint32_t mcugen_npu_ofm_elem_bytes(uint16_t precision)
{
    return 1u << MCUGEN_NPU_OFM_PREC_BITS(precision);
}

/* Bytes from a tile's base to one past the last element of a rows x cols x depth area. */
static uint64_t tile_extent(const struct mcugen_npu_fm *fm, uint32_t elem, uint32_t rows, uint32_t cols,
                            uint32_t depth)
{
    uint64_t sx = MCUGEN_NPU_IFM_PREC_FORMAT(fm->precision) == MCUGEN_NPU_FORMAT_NHCWB16 ? 16u * elem : fm->stride_x;
    uint64_t sc = MCUGEN_NPU_IFM_PREC_FORMAT(fm->precision) == MCUGEN_NPU_FORMAT_NHCWB16 ? fm->stride_c : 16u * elem;
    uint64_t c_last = (uint64_t)(depth - 1u);
    uint64_t c_term = (c_last / 16u) * sc + (c_last % 16u) * elem;
    if (depth > 16u) {
        uint64_t brick_end = (c_last / 16u - 1u) * sc + 15u * elem;
        if (brick_end > c_term) {
            c_term = brick_end;
        }
    }
    return (uint64_t)(rows - 1u) * fm->stride_y + (uint64_t)(cols - 1u) * sx + c_term + elem;
}

/* Check every tile of a feature map of h x w x c; 0, or -1 after raising the fault. */
static int check_fm(struct mcugen_npu_device *dev, const struct mcugen_npu_fm *fm, uint32_t elem, uint32_t h,
                    uint32_t w, uint32_t c, uint32_t channel)
{
    uint32_t h0 = fm->height0_m1 + 1u, h1 = fm->height1_m1 + 1u, w0 = fm->width0_m1 + 1u;
    uint32_t rows[4], cols[4];
    int used[4];
    int t;
    rows[0] = h < h0 ? h : h0;
    cols[0] = w < w0 ? w : w0;
    used[0] = 1;
    used[1] = w > w0;
    rows[1] = h < h1 ? h : h1;
    cols[1] = w - w0;
    used[2] = h > h0;
    rows[2] = h - h0;
    cols[2] = cols[0];
    used[3] = w > w0 && h > h1;
    rows[3] = h - h1;
    cols[3] = w - w0;
    for (t = 0; t < 4; ++t) {
        if (used[t] && mcugen_npu_region_ptr(dev, fm->region, fm->base[t],
                                              tile_extent(fm, elem, rows[t], cols[t], c)) == NULL) {
            raise_fault(dev, MCUGEN_NPU_FAULT_REGION_RANGE, fm->region, channel, fm->region);
            return -1;
        }
    }
    return 0;
}

static int check_range(struct mcugen_npu_device *dev, uint32_t region, uint64_t base, uint64_t len, uint32_t channel)
{
    if (len == 0u) {
        return 0;
    }
    if (mcugen_npu_region_ptr(dev, region, base, len) == NULL) {
        raise_fault(dev, MCUGEN_NPU_FAULT_REGION_RANGE, region, channel, region);
        return -1;
    }
    return 0;
}

/* The IFM area a kernel operation reads: rows and columns from the OFM, kernel, stride, padding. */
static uint32_t ifm_span(uint32_t ofm, uint32_t stride, uint32_t kernel, uint32_t pad_a, uint32_t pad_b,
                         uint32_t upscale)
{
    int64_t n = (int64_t)(ofm - 1u) * stride + kernel - pad_a - pad_b;
    if (n < 1) {
        n = 1;
    }
    if (upscale != MCUGEN_NPU_UPSCALE_NONE) {
        n = (n + 1) / 2;
    }
    return (uint32_t)n;
}

static int check_block_op(struct mcugen_npu_device *dev, uint32_t opcode, uint32_t param)
{
    const struct mcugen_npu_state *s = &dev->state;
    uint32_t oh = s->ofm_height_m1 + 1u, ow = s->ofm_width_m1 + 1u, oc = s->ofm_depth_m1 + 1u;
    uint32_t ic = s->ifm_depth_m1 + 1u;
    uint32_t ih = oh, iw = ow;
    if (opcode != MCUGEN_NPU_OP_ELEMENTWISE) {
        ih = ifm_span(oh, MCUGEN_NPU_KSTRIDE_Y(s->kernel_stride), s->kernel_height_m1 + 1u, s->ifm_pad_top,
                      s->ifm_pad_bottom, s->ifm_upscale);
        iw = ifm_span(ow, MCUGEN_NPU_KSTRIDE_X(s->kernel_stride), s->kernel_width_m1 + 1u, s->ifm_pad_left,
                      s->ifm_pad_right, s->ifm_upscale);
    }
    if (check_fm(dev, &s->ifm, mcugen_npu_ifm_elem_bytes(s->ifm.precision), ih, iw, ic, MCUGEN_NPU_CHAN_IFM)) {
        return -1;
    }
    if (opcode == MCUGEN_NPU_OP_ELEMENTWISE && (param == MCUGEN_NPU_ELEM_MUL || param == MCUGEN_NPU_ELEM_ADD ||
                                                param == MCUGEN_NPU_ELEM_SUB || param == MCUGEN_NPU_ELEM_MIN ||
                                                param == MCUGEN_NPU_ELEM_MAX || param == MCUGEN_NPU_ELEM_SHR ||
                                                param == MCUGEN_NPU_ELEM_SHL) &&
        (s->ifm2_broadcast & MCUGEN_NPU_BCAST_SCALAR) == 0u) {
        uint32_t h2 = (s->ifm2_broadcast & MCUGEN_NPU_BCAST_H) ? 1u : oh;
        uint32_t w2 = (s->ifm2_broadcast & MCUGEN_NPU_BCAST_W) ? 1u : ow;
        uint32_t c2 = (s->ifm2_broadcast & MCUGEN_NPU_BCAST_C) ? 1u : ic;
        if (check_fm(dev, &s->ifm2, mcugen_npu_ifm_elem_bytes(s->ifm2.precision), h2, w2, c2,
                     MCUGEN_NPU_CHAN_IFM2)) {
            return -1;
        }
    }
    if (check_fm(dev, &s->ofm, mcugen_npu_ofm_elem_bytes(s->ofm.precision), oh, ow, oc, MCUGEN_NPU_CHAN_OFM)) {
        return -1;
    }
    if (opcode == MCUGEN_NPU_OP_CONV || opcode == MCUGEN_NPU_OP_DEPTHWISE) {
        if (check_range(dev, s->weight_region, s->weight_base, s->weight_length, MCUGEN_NPU_CHAN_WEIGHTS) ||
            check_range(dev, s->weight_region, s->weight1_base, s->weight1_length, MCUGEN_NPU_CHAN_WEIGHTS) ||
            check_range(dev, s->scale_region, s->scale_base, s->scale_length, MCUGEN_NPU_CHAN_SCALE) ||
            check_range(dev, s->scale_region, s->scale1_base, s->scale1_length, MCUGEN_NPU_CHAN_SCALE)) {
            return -1;
        }
    }
    return 0;
}

/* One side of a DMA: SHRAM when the internal bit is set, else a region. */
static uint8_t *dma_ptr(struct mcugen_npu_device *dev, uint16_t region_param, uint64_t addr, uint64_t len)
{
    if (MCUGEN_NPU_DMA_INTERNAL(region_param)) {
        if (addr > dev->shram_bytes || len > dev->shram_bytes - addr) {
            return NULL;
        }
        return dev->shram + addr;
    }
    return mcugen_npu_region_ptr(dev, MCUGEN_NPU_DMA_REGION(region_param), addr, len);
}

static int do_dma(struct mcugen_npu_device *dev)
{
    const struct mcugen_npu_state *s = &dev->state;
    uint8_t *src, *dst;
    if (MCUGEN_NPU_DMA_STRIDE_MODE(s->dma0_src_region) != 0u || MCUGEN_NPU_DMA_STRIDE_MODE(s->dma0_dst_region) != 0u) {
        raise_fault(dev, MCUGEN_NPU_FAULT_UNSUPPORTED, MCUGEN_NPU_OP_DMA_START, MCUGEN_NPU_CHAN_CMD, 0);
        return -1;
    }
    if (s->dma0_len == 0u) {
        return 0;
    }
    src = dma_ptr(dev, s->dma0_src_region, s->dma0_src, s->dma0_len);
    if (src == NULL) {
        raise_fault(dev, MCUGEN_NPU_FAULT_DMA_RANGE, s->dma0_src_region, MCUGEN_NPU_CHAN_DMA_SRC,
                    MCUGEN_NPU_DMA_REGION(s->dma0_src_region));
        return -1;
    }
    dst = dma_ptr(dev, s->dma0_dst_region, s->dma0_dst, s->dma0_len);
    if (dst == NULL) {
        raise_fault(dev, MCUGEN_NPU_FAULT_DMA_RANGE, s->dma0_dst_region, MCUGEN_NPU_CHAN_DMA_DST,
                    MCUGEN_NPU_DMA_REGION(s->dma0_dst_region));
        return -1;
    }
    memmove(dst, src, (size_t)s->dma0_len);
    return 0;
}

/* ---- The walker ------------------------------------------------------------------------------------ */

static uint32_t read_word(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static enum mcugen_npu_op_kind op_kind(uint32_t opcode)
{
    switch (opcode) {
    case MCUGEN_NPU_OP_STOP: return MCUGEN_NPU_KIND_STOP;
    case MCUGEN_NPU_OP_IRQ: return MCUGEN_NPU_KIND_IRQ;
    case MCUGEN_NPU_OP_CONV: return MCUGEN_NPU_KIND_CONV;
    case MCUGEN_NPU_OP_DEPTHWISE: return MCUGEN_NPU_KIND_DEPTHWISE;
    case MCUGEN_NPU_OP_POOL: return MCUGEN_NPU_KIND_POOL;
    case MCUGEN_NPU_OP_ELEMENTWISE: return MCUGEN_NPU_KIND_ELEMENTWISE;
    case MCUGEN_NPU_OP_DMA_START: return MCUGEN_NPU_KIND_DMA_START;
    case MCUGEN_NPU_OP_DMA_WAIT: return MCUGEN_NPU_KIND_DMA_WAIT;
    case MCUGEN_NPU_OP_KERNEL_WAIT: return MCUGEN_NPU_KIND_KERNEL_WAIT;
    default: return MCUGEN_NPU_KIND_PMU_MASK;
    }
}

static void count_event(struct mcugen_npu_device *dev, uint32_t event, uint64_t count)
{
    while (count > 0u) {
        uint32_t chunk = count > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)count;
        mcugen_npu_pmu_event(dev, event, chunk);
        count -= chunk;
    }
}

/* The cycle model: an operation's cost on the run's timeline; the run's cycles (and the PMU's
 * CYCLE and NPU_ACTIVE) advance to the timeline's horizon, MAC_ACTIVE by the MAC array's cycles. */
static void account_cycles(struct mcugen_npu_device *dev, uint32_t opcode, uint32_t param)
{
    struct mcugen_npu_op_cost cost;
    uint64_t horizon;
    memset(&cost, 0, sizeof cost);
    if (opcode == MCUGEN_NPU_OP_DMA_START) {
        cost.cycles = mcugen_npu_dma_cycles(&dev->cycle_config, &dev->state);
    } else {
        (void)mcugen_npu_op_cycles(&dev->cycle_config, opcode, param, &dev->state, &cost);
    }
    dev->last_op_cycles = cost.cycles;
    horizon = mcugen_npu_timeline_issue(&dev->timeline, opcode, param, cost.cycles);
    if (horizon > dev->cycles) {
        mcugen_npu_add_cycles(dev, horizon - dev->cycles);
    }
    count_event(dev, MCUGEN_NPU_PMU_EVENT_MAC_ACTIVE, cost.mac_cycles);
}

/* Execute one operation command; 0 to continue, -1 when the device stopped. */
static int do_op(struct mcugen_npu_device *dev, uint32_t opcode, uint32_t param)
{
    enum mcugen_npu_fault fault = MCUGEN_NPU_FAULT_NONE;
    switch (opcode) {
    case MCUGEN_NPU_OP_CONV:
    case MCUGEN_NPU_OP_DEPTHWISE:
    case MCUGEN_NPU_OP_POOL:
    case MCUGEN_NPU_OP_ELEMENTWISE:
        if (check_block_op(dev, opcode, param)) {
            return -1;
        }
        break;
    case MCUGEN_NPU_OP_DMA_START:
        if (do_dma(dev)) {
            return -1;
        }
        break;
    case MCUGEN_NPU_OP_PMU_MASK:
        dev->pmu_mask = param;
        break;
    default:
        break;
    }
    dev->op_count[op_kind(opcode)]++;
    account_cycles(dev, opcode, param);
    if (opcode != MCUGEN_NPU_OP_STOP) {
        dev->ops++;
    }
    if (dev->op_hook != NULL) {
        fault = dev->op_hook(dev, opcode, param, &dev->state, dev->op_ctx);
        if (fault != MCUGEN_NPU_FAULT_NONE) {
            raise_fault(dev, fault, opcode, MCUGEN_NPU_CHAN_CMD, 0);
            return -1;
        }
    }
    if (opcode == MCUGEN_NPU_OP_STOP) {
        dev->status &= ~MCUGEN_NPU_STATUS_STATE_RUNNING;
        dev->status |= MCUGEN_NPU_STATUS_CMD_END;
        raise_irq(dev, param);
        return -1;
    }
    if (opcode == MCUGEN_NPU_OP_IRQ) {
        raise_irq(dev, param);
    }
    return 0;
}

int mcugen_npu_step(struct mcugen_npu_device *dev, uint32_t max_commands)
{
    const uint8_t *queue;
    uint64_t qbase = (uint64_t)dev->qbase | ((uint64_t)dev->qbase_hi << 32);
    if ((dev->status & MCUGEN_NPU_STATUS_STATE_RUNNING) == 0u) {
        return 0;
    }
    if (qbase == 0u || (uint64_t)(uintptr_t)qbase != qbase) {
        raise_fault(dev, MCUGEN_NPU_FAULT_QUEUE_RANGE, 0, MCUGEN_NPU_CHAN_CMD, 0);
        return 0;
    }
    queue = (const uint8_t *)(uintptr_t)qbase;
    while (max_commands-- > 0u) {
        uint32_t word, data = 0, opcode, param;
        const struct cmd_row *row;
        if ((dev->wd_commands != 0u && dev->commands >= dev->wd_commands) ||
            (dev->wd_cycles != 0u && dev->cycles >= dev->wd_cycles)) {
            raise_fault(dev, MCUGEN_NPU_FAULT_WATCHDOG, dev->commands, MCUGEN_NPU_CHAN_CMD, 0);
            return 0;
        }
        if (dev->qsize < 4u || dev->qread > dev->qsize - 4u) {
            raise_fault(dev, MCUGEN_NPU_FAULT_NO_STOP, dev->qread, MCUGEN_NPU_CHAN_CMD, 0);
            return 0;
        }
        word = read_word(queue + dev->qread);
        opcode = MCUGEN_NPU_CMD_OPCODE(word);
        param = MCUGEN_NPU_CMD_PARAM(word);
        if (MCUGEN_NPU_CMD_ZERO_BITS(word) != 0u || MCUGEN_NPU_CMD_PAYLOAD_SIZE(word) > 1u) {
            raise_fault(dev, MCUGEN_NPU_FAULT_RESERVED_BITS, word, MCUGEN_NPU_CHAN_CMD, 0);
            return 0;
        }
        row = find_cmd(word);
        if (row == NULL) {
            raise_fault(dev, MCUGEN_NPU_FAULT_UNDEFINED_OPCODE, word, MCUGEN_NPU_CHAN_CMD, 0);
            return 0;
        }
        if (MCUGEN_NPU_CMD_PAYLOAD_SIZE(word) == 1u) {
            if (dev->qread > dev->qsize - 8u || dev->qsize < 8u) {
                raise_fault(dev, MCUGEN_NPU_FAULT_TRUNCATED_CMD1, word, MCUGEN_NPU_CHAN_CMD, 0);
                return 0;
            }
            data = read_word(queue + dev->qread + 4u);
        }
        dev->commands++; /* a parameter command costs no cycle: decoded while the kernel runs */
        if (row->kind == K_OP) {
            uint32_t at = dev->qread;
            if (dev->trace != NULL) {
                dev->trace(dev, at, word, data, dev->trace_ctx);
            }
            dev->qread += 4u;
            if (do_op(dev, opcode, param)) {
                if (dev->fault != MCUGEN_NPU_FAULT_NONE) {
                    dev->fault_qread = at;
                }
                return 0;
            }
        } else {
            apply_param(&dev->state, row, param, data);
            if (dev->trace != NULL) {
                dev->trace(dev, dev->qread, word, data, dev->trace_ctx); /* after: state readable */
            }
            dev->qread += row->code & MCUGEN_NPU_CMD1_FLAG ? 8u : 4u;
        }
    }
    return (dev->status & MCUGEN_NPU_STATUS_STATE_RUNNING) != 0u;
}

/* ---- Registers ------------------------------------------------------------------------------------- */

static void start(struct mcugen_npu_device *dev)
{
    if (dev->status & (MCUGEN_NPU_STATUS_ERRORS | MCUGEN_NPU_STATUS_STATE_RUNNING)) {
        return; /* a faulted device needs a reset first; a running one is already running */
    }
    dev->qread = 0;
    dev->status &= ~MCUGEN_NPU_STATUS_CMD_END;
    dev->status |= MCUGEN_NPU_STATUS_STATE_RUNNING;
    dev->cycles = 0;
    mcugen_npu_timeline_reset(&dev->timeline);
    dev->commands = dev->ops = 0;
    dev->fault = dev->fault_qread = dev->fault_info = 0;
    memset(dev->op_count, 0, sizeof dev->op_count);
}

void mcugen_npu_write_reg(struct mcugen_npu_device *dev, uint32_t offset, uint32_t value)
{
    int running = (dev->status & MCUGEN_NPU_STATUS_STATE_RUNNING) != 0u;
    if (offset >= MCUGEN_NPU_REG_BASEP(0) && offset < MCUGEN_NPU_REG_BASEP(MCUGEN_NPU_NUM_REGIONS)) {
        if (!running) {
            dev->basep[(offset - MCUGEN_NPU_REG_BASEP(0)) / 8u][(offset / 4u) & 1u] = value;
        }
        return;
    }
    if (offset >= MCUGEN_NPU_REG_MODEL_REGION_SIZE(0) &&
        offset < MCUGEN_NPU_REG_MODEL_REGION_SIZE(MCUGEN_NPU_NUM_REGIONS)) {
        if (!running) {
            dev->region_size[(offset - MCUGEN_NPU_REG_MODEL_REGION_SIZE(0)) / 4u] = value;
        }
        return;
    }
    if (offset >= MCUGEN_NPU_REG_PMEVCNTR(0) && offset < MCUGEN_NPU_REG_PMEVCNTR(MCUGEN_NPU_PMU_NUM_EVCNT)) {
        dev->pmevcntr[(offset - MCUGEN_NPU_REG_PMEVCNTR(0)) / 4u] = value;
        return;
    }
    if (offset >= MCUGEN_NPU_REG_PMEVTYPER(0) && offset < MCUGEN_NPU_REG_PMEVTYPER(MCUGEN_NPU_PMU_NUM_EVCNT)) {
        dev->pmevtyper[(offset - MCUGEN_NPU_REG_PMEVTYPER(0)) / 4u] = value & 0x3FFu;
        return;
    }
    switch (offset) {
    case MCUGEN_NPU_REG_CMD:
        dev->cmd = value & (MCUGEN_NPU_CMD_CLOCK_Q_ENABLE | MCUGEN_NPU_CMD_POWER_Q_ENABLE);
        if (value & MCUGEN_NPU_CMD_CLEAR_IRQ) {
            dev->status &= ~(MCUGEN_NPU_STATUS_IRQ_RAISED | MCUGEN_NPU_STATUS_PMU_IRQ);
        }
        dev->status &= ~((value >> MCUGEN_NPU_CMD_CLEAR_IRQ_HISTORY_SHIFT) << MCUGEN_NPU_STATUS_IRQ_HISTORY_SHIFT);
        if ((value & MCUGEN_NPU_CMD_STOP_REQUEST) && running) {
            dev->status &= ~MCUGEN_NPU_STATUS_STATE_RUNNING;
        }
        if (value & MCUGEN_NPU_CMD_TRANSITION_TO_RUN) {
            start(dev);
        }
        break;
    case MCUGEN_NPU_REG_RESET:
        soft_reset(dev, value);
        break;
    case MCUGEN_NPU_REG_QBASE: if (!running) { dev->qbase = value; } break;
    case MCUGEN_NPU_REG_QBASE_HI: if (!running) { dev->qbase_hi = value; } break;
    case MCUGEN_NPU_REG_QSIZE: if (!running) { dev->qsize = value; } break;
    case MCUGEN_NPU_REG_QCONFIG: dev->qconfig = value; break;
    case MCUGEN_NPU_REG_LOCK: dev->lock = value; break;
    case MCUGEN_NPU_REG_REGIONCFG: dev->regioncfg = value & 0xFFFFu; break;
    case MCUGEN_NPU_REG_AXI_LIMIT0: dev->axi_limit[0] = value; break;
    case MCUGEN_NPU_REG_AXI_LIMIT1: dev->axi_limit[1] = value; break;
    case MCUGEN_NPU_REG_AXI_LIMIT2: dev->axi_limit[2] = value; break;
    case MCUGEN_NPU_REG_AXI_LIMIT3: dev->axi_limit[3] = value; break;
    case MCUGEN_NPU_REG_PMCR:
        dev->pmcr = value & (MCUGEN_NPU_PMCR_CNT_EN | MCUGEN_NPU_PMCR_MASK_EN);
        if (value & MCUGEN_NPU_PMCR_EVENT_CNT_RST) {
            memset(dev->pmevcntr, 0, sizeof dev->pmevcntr);
        }
        if (value & MCUGEN_NPU_PMCR_CYCLE_CNT_RST) {
            dev->pmccntr = 0;
        }
        break;
    case MCUGEN_NPU_REG_PMCNTENSET: dev->pmcnten |= value & 0x8000000Fu; break;
    case MCUGEN_NPU_REG_PMCNTENCLR: dev->pmcnten &= ~value; break;
    case MCUGEN_NPU_REG_PMOVSSET: dev->pmovs |= value & 0x8000000Fu; break;
    case MCUGEN_NPU_REG_PMOVSCLR: dev->pmovs &= ~value; break;
    case MCUGEN_NPU_REG_PMINTSET: dev->pmint |= value & 0x8000000Fu; break;
    case MCUGEN_NPU_REG_PMINTCLR: dev->pmint &= ~value; break;
    case MCUGEN_NPU_REG_PMCCNTR_LO: dev->pmccntr = (dev->pmccntr & 0xFFFF00000000ull) | value; break;
    case MCUGEN_NPU_REG_PMCCNTR_HI:
        dev->pmccntr = (dev->pmccntr & 0xFFFFFFFFull) | ((uint64_t)(value & 0xFFFFu) << 32);
        break;
    case MCUGEN_NPU_REG_PMCCNTR_CFG: dev->pmccntr_cfg = value & 0x03FF03FFu; break;
    case MCUGEN_NPU_REG_PMCAXI_CHAN: dev->pmcaxi_chan = value; break;
    case MCUGEN_NPU_REG_MODEL_WD_COMMANDS: dev->wd_commands = value; break;
    case MCUGEN_NPU_REG_MODEL_WD_CYCLES: dev->wd_cycles = value; break;
    default:
        break; /* read-only or unmapped: ignored */
    }
}

uint32_t mcugen_npu_read_reg(struct mcugen_npu_device *dev, uint32_t offset)
{
    if (offset >= MCUGEN_NPU_REG_BASEP(0) && offset < MCUGEN_NPU_REG_BASEP(MCUGEN_NPU_NUM_REGIONS)) {
        return dev->basep[(offset - MCUGEN_NPU_REG_BASEP(0)) / 8u][(offset / 4u) & 1u];
    }
    if (offset >= MCUGEN_NPU_REG_MODEL_REGION_SIZE(0) &&
        offset < MCUGEN_NPU_REG_MODEL_REGION_SIZE(MCUGEN_NPU_NUM_REGIONS)) {
        return dev->region_size[(offset - MCUGEN_NPU_REG_MODEL_REGION_SIZE(0)) / 4u];
    }
    if (offset >= MCUGEN_NPU_REG_PMEVCNTR(0) && offset < MCUGEN_NPU_REG_PMEVCNTR(MCUGEN_NPU_PMU_NUM_EVCNT)) {
        return dev->pmevcntr[(offset - MCUGEN_NPU_REG_PMEVCNTR(0)) / 4u];
    }
    if (offset >= MCUGEN_NPU_REG_PMEVTYPER(0) && offset < MCUGEN_NPU_REG_PMEVTYPER(MCUGEN_NPU_PMU_NUM_EVCNT)) {
        return dev->pmevtyper[(offset - MCUGEN_NPU_REG_PMEVTYPER(0)) / 4u];
    }
    switch (offset) {
    case MCUGEN_NPU_REG_ID: return dev->id;
    case MCUGEN_NPU_REG_STATUS: return dev->status;
    case MCUGEN_NPU_REG_CMD: return dev->cmd;
    case MCUGEN_NPU_REG_RESET: return 0;
    case MCUGEN_NPU_REG_QBASE: return dev->qbase;
    case MCUGEN_NPU_REG_QBASE_HI: return dev->qbase_hi;
    case MCUGEN_NPU_REG_QREAD: return dev->qread;
    case MCUGEN_NPU_REG_QCONFIG: return dev->qconfig;
    case MCUGEN_NPU_REG_QSIZE: return dev->qsize;
    case MCUGEN_NPU_REG_PROT: return dev->prot;
    case MCUGEN_NPU_REG_CONFIG: return dev->config;
    case MCUGEN_NPU_REG_LOCK: return dev->lock;
    case MCUGEN_NPU_REG_REGIONCFG: return dev->regioncfg;
    case MCUGEN_NPU_REG_AXI_LIMIT0: return dev->axi_limit[0];
    case MCUGEN_NPU_REG_AXI_LIMIT1: return dev->axi_limit[1];
    case MCUGEN_NPU_REG_AXI_LIMIT2: return dev->axi_limit[2];
    case MCUGEN_NPU_REG_AXI_LIMIT3: return dev->axi_limit[3];
    case MCUGEN_NPU_REG_PMCR:
        return dev->pmcr | (MCUGEN_NPU_PMU_NUM_EVCNT << MCUGEN_NPU_PMCR_NUM_EVENT_CNT_SHIFT);
    case MCUGEN_NPU_REG_PMCNTENSET:
    case MCUGEN_NPU_REG_PMCNTENCLR: return dev->pmcnten;
    case MCUGEN_NPU_REG_PMOVSSET:
    case MCUGEN_NPU_REG_PMOVSCLR: return dev->pmovs;
    case MCUGEN_NPU_REG_PMINTSET:
    case MCUGEN_NPU_REG_PMINTCLR: return dev->pmint;
    case MCUGEN_NPU_REG_PMCCNTR_LO: return (uint32_t)(dev->pmccntr & 0xFFFFFFFFu);
    case MCUGEN_NPU_REG_PMCCNTR_HI: return (uint32_t)(dev->pmccntr >> 32);
    case MCUGEN_NPU_REG_PMCCNTR_CFG: return dev->pmccntr_cfg;
    case MCUGEN_NPU_REG_PMCAXI_CHAN: return dev->pmcaxi_chan;
    case MCUGEN_NPU_REG_MODEL_FAULT: return dev->fault;
    case MCUGEN_NPU_REG_MODEL_FAULT_QREAD: return dev->fault_qread;
    case MCUGEN_NPU_REG_MODEL_FAULT_INFO: return dev->fault_info;
    case MCUGEN_NPU_REG_MODEL_WD_COMMANDS: return dev->wd_commands;
    case MCUGEN_NPU_REG_MODEL_WD_CYCLES: return dev->wd_cycles;
    case MCUGEN_NPU_REG_MODEL_CYCLES_LO: return (uint32_t)(dev->cycles & 0xFFFFFFFFu);
    case MCUGEN_NPU_REG_MODEL_CYCLES_HI: return (uint32_t)(dev->cycles >> 32);
    case MCUGEN_NPU_REG_MODEL_COMMANDS: return dev->commands;
    case MCUGEN_NPU_REG_MODEL_OPS: return dev->ops;
    default: return 0;
    }
}

/* ---- Setup -------------------------------------------------------------------------------------------- */

int mcugen_npu_device_init(struct mcugen_npu_device *dev, const struct mcugen_npu_config *config)
{
    struct mcugen_npu_config cfg = { 128u, 0u, 1u, 0u, 6u, NULL };
    uint32_t log2 = 0;
    if (config != NULL) {
        cfg = *config;
    }
    switch (cfg.macs_per_cycle) {
    case 32u: log2 = 5u; break;
    case 64u: log2 = 6u; break;
    case 128u: log2 = 7u; break;
    case 256u: log2 = 8u; break;
    default: return -1;
    }
    if (cfg.shram_kb == 0u) {
        cfg.shram_kb = cfg.macs_per_cycle == 256u ? 48u : cfg.macs_per_cycle == 128u ? 24u : 16u;
    }
    if (cfg.shram_kb * 1024u > MCUGEN_NPU_SHRAM_MAX_BYTES) {
        return -1;
    }
    mcugen_npu_device_deinit(dev);
    memset(dev, 0, sizeof *dev);
    dev->id = MCUGEN_NPU_ID_MAKE(cfg.arch_major, cfg.arch_minor, cfg.arch_patch);
    dev->config = MCUGEN_NPU_CONFIG_MAKE(log2, cfg.shram_kb, MCUGEN_NPU_PRODUCT_U55);
    dev->shram_bytes = cfg.shram_kb * 1024u;
    if (cfg.cycles != NULL) {
        dev->cycle_config = *cfg.cycles;
    } else {
        (void)mcugen_npu_cycle_config_default(&dev->cycle_config, cfg.macs_per_cycle);
    }
    soft_reset(dev, 0);
    dev->next = registry;
    registry = dev;
    return 0;
}

void mcugen_npu_set_op_hook(struct mcugen_npu_device *dev, mcugen_npu_op_hook hook, void *ctx)
{
    dev->op_hook = hook;
    dev->op_ctx = ctx;
}

void mcugen_npu_set_trace(struct mcugen_npu_device *dev, mcugen_npu_trace_hook hook, void *ctx)
{
    dev->trace = hook;
    dev->trace_ctx = ctx;
}

void mcugen_npu_set_irq(struct mcugen_npu_device *dev, mcugen_npu_irq_line irq, void *ctx)
{
    dev->irq = irq;
    dev->irq_ctx = ctx;
}
