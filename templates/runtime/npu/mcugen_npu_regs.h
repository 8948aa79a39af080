/*
 * mcugen_npu_regs.h - register map and command encoding of mcugen's Ethos-U55-compatible NPU.
 *
 * Offsets, field positions and opcode values are the public facts of the Ethos-U55
 * programmer's interface (as listed in Vela's ethos_u55_regs definitions, arch 1.0.6);
 * the names are mcugen's own.  The model-only window (MCUGEN_NPU_REG_MODEL_*) is not
 * hardware: it carries what a simulator needs and silicon does not have (region sizes,
 * watchdog limits, fault details, op counters).
 */
#ifndef MCUGEN_NPU_REGS_H
#define MCUGEN_NPU_REGS_H

/* ---- Control registers ------------------------------------------------------------------ */
#define MCUGEN_NPU_REG_ID          0x0000u
#define MCUGEN_NPU_REG_STATUS      0x0004u
#define MCUGEN_NPU_REG_CMD         0x0008u
#define MCUGEN_NPU_REG_RESET       0x000Cu
#define MCUGEN_NPU_REG_QBASE       0x0010u /* QBASE0: low word */
#define MCUGEN_NPU_REG_QBASE_HI    0x0014u /* QBASE1: high word */
#define MCUGEN_NPU_REG_QREAD       0x0018u
#define MCUGEN_NPU_REG_QCONFIG     0x001Cu
#define MCUGEN_NPU_REG_QSIZE       0x0020u
#define MCUGEN_NPU_REG_PROT        0x0024u
#define MCUGEN_NPU_REG_CONFIG      0x0028u
#define MCUGEN_NPU_REG_LOCK        0x002Cu
#define MCUGEN_NPU_REG_REGIONCFG   0x003Cu
#define MCUGEN_NPU_REG_AXI_LIMIT0  0x0040u
#define MCUGEN_NPU_REG_AXI_LIMIT1  0x0044u
#define MCUGEN_NPU_REG_AXI_LIMIT2  0x0048u
#define MCUGEN_NPU_REG_AXI_LIMIT3  0x004Cu
/* BASEPn: 8 region base pointers, each a 64-bit pair (low word, then high word). */
#define MCUGEN_NPU_NUM_REGIONS     8u
#define MCUGEN_NPU_REG_BASEP(n)    (0x0080u + 8u * (unsigned)(n))
#define MCUGEN_NPU_REG_BASEP_HI(n) (0x0084u + 8u * (unsigned)(n))

/* ---- PMU ---------------------------------------------------------------------------------- */
#define MCUGEN_NPU_REG_PMCR        0x0180u
#define MCUGEN_NPU_REG_PMCNTENSET  0x0184u
#define MCUGEN_NPU_REG_PMCNTENCLR  0x0188u
#define MCUGEN_NPU_REG_PMOVSSET    0x018Cu
#define MCUGEN_NPU_REG_PMOVSCLR    0x0190u
#define MCUGEN_NPU_REG_PMINTSET    0x0194u
#define MCUGEN_NPU_REG_PMINTCLR    0x0198u
#define MCUGEN_NPU_REG_PMCCNTR_LO  0x01A0u
#define MCUGEN_NPU_REG_PMCCNTR_HI  0x01A4u
#define MCUGEN_NPU_REG_PMCCNTR_CFG 0x01A8u
#define MCUGEN_NPU_REG_PMCAXI_CHAN 0x01ACu
#define MCUGEN_NPU_PMU_NUM_EVCNT   4u
#define MCUGEN_NPU_REG_PMEVCNTR(n)  (0x0300u + 4u * (unsigned)(n))
#define MCUGEN_NPU_REG_PMEVTYPER(n) (0x0380u + 4u * (unsigned)(n))

/* ---- Model-only window (not in silicon) ----------------------------------------------------- */
#define MCUGEN_NPU_REG_MODEL_FAULT       0x0E00u /* enum mcugen_npu_fault of the last fault */
#define MCUGEN_NPU_REG_MODEL_FAULT_QREAD 0x0E04u /* byte offset of the faulting command */
#define MCUGEN_NPU_REG_MODEL_FAULT_INFO  0x0E08u /* the faulting command word, or its region */
#define MCUGEN_NPU_REG_MODEL_WD_COMMANDS 0x0E10u /* watchdog: max commands per run, 0 = off */
#define MCUGEN_NPU_REG_MODEL_WD_CYCLES   0x0E14u /* watchdog: max cycles per run, 0 = off */
#define MCUGEN_NPU_REG_MODEL_CYCLES_LO   0x0E18u /* cycles of the current/last run */
#define MCUGEN_NPU_REG_MODEL_CYCLES_HI   0x0E1Cu
#define MCUGEN_NPU_REG_MODEL_REGION_SIZE(n) (0x0E20u + 4u * (unsigned)(n)) /* bytes */
#define MCUGEN_NPU_REG_MODEL_COMMANDS    0x0E40u /* commands executed in the current/last run */
#define MCUGEN_NPU_REG_MODEL_OPS         0x0E44u /* NPU_OP_* commands in the current/last run */
#define MCUGEN_NPU_REGION_SIZE_UNCHECKED 0xFFFFFFFFu

/* ---- ID (arch 4 bits @28, arch minor 8 @20, arch patch 4 @16, product 4 @12, version) ---- */
#define MCUGEN_NPU_ID_ARCH_MAJOR(w)  (((w) >> 28) & 0xFu)
#define MCUGEN_NPU_ID_ARCH_MINOR(w)  (((w) >> 20) & 0xFFu)
#define MCUGEN_NPU_ID_ARCH_PATCH(w)  (((w) >> 16) & 0xFu)
#define MCUGEN_NPU_ID_PRODUCT(w)     (((w) >> 12) & 0xFu)
#define MCUGEN_NPU_ID_MAKE(major, minor, patch) \
    ((((uint32_t)(major) & 0xFu) << 28) | (((uint32_t)(minor) & 0xFFu) << 20) | (((uint32_t)(patch) & 0xFu) << 16))

/* ---- CONFIG (log2 MACs/cc 4 @0, cmd stream version 4 @4, SHRAM KiB 8 @8, product 4 @28) --- */
#define MCUGEN_NPU_CONFIG_MACS_LOG2(w)   ((w) & 0xFu)
#define MCUGEN_NPU_CONFIG_CMD_VERSION(w) (((w) >> 4) & 0xFu)
#define MCUGEN_NPU_CONFIG_SHRAM_KB(w)    (((w) >> 8) & 0xFFu)
#define MCUGEN_NPU_CONFIG_PRODUCT(w)     (((w) >> 28) & 0xFu)
#define MCUGEN_NPU_CONFIG_MAKE(macs_log2, shram_kb, product) \
    (((uint32_t)(macs_log2) & 0xFu) | (((uint32_t)(shram_kb) & 0xFFu) << 8) | (((uint32_t)(product) & 0xFu) << 28))
#define MCUGEN_NPU_PRODUCT_U55 0u

/* ---- STATUS ------------------------------------------------------------------------------ */
#define MCUGEN_NPU_STATUS_STATE_RUNNING  (1u << 0)
#define MCUGEN_NPU_STATUS_IRQ_RAISED     (1u << 1)
#define MCUGEN_NPU_STATUS_BUS_STATUS     (1u << 2)
#define MCUGEN_NPU_STATUS_RESET_STATUS   (1u << 3)
#define MCUGEN_NPU_STATUS_CMD_PARSE_ERR  (1u << 4)
#define MCUGEN_NPU_STATUS_CMD_END        (1u << 5)
#define MCUGEN_NPU_STATUS_PMU_IRQ        (1u << 6)
#define MCUGEN_NPU_STATUS_WD_FAULT       (1u << 7)
#define MCUGEN_NPU_STATUS_ECC_FAULT      (1u << 8)
#define MCUGEN_NPU_STATUS_FAULT_IFACE    (1u << 11)
#define MCUGEN_NPU_STATUS_FAULT_CHAN_SHIFT 12
#define MCUGEN_NPU_STATUS_FAULT_CHAN_MASK  (0xFu << 12)
#define MCUGEN_NPU_STATUS_IRQ_HISTORY_SHIFT 16
#define MCUGEN_NPU_STATUS_ERRORS \
    (MCUGEN_NPU_STATUS_BUS_STATUS | MCUGEN_NPU_STATUS_CMD_PARSE_ERR | MCUGEN_NPU_STATUS_WD_FAULT | \
     MCUGEN_NPU_STATUS_ECC_FAULT)

/* faulting_channel as our model reports it */
#define MCUGEN_NPU_CHAN_CMD     0u
#define MCUGEN_NPU_CHAN_IFM     1u
#define MCUGEN_NPU_CHAN_WEIGHTS 2u
#define MCUGEN_NPU_CHAN_SCALE   3u
#define MCUGEN_NPU_CHAN_DMA_SRC 4u
#define MCUGEN_NPU_CHAN_IFM2    5u
#define MCUGEN_NPU_CHAN_OFM     8u
#define MCUGEN_NPU_CHAN_DMA_DST 9u

/* ---- CMD, RESET, PROT, PMCR ----------------------------------------------------------------- */
#define MCUGEN_NPU_CMD_TRANSITION_TO_RUN (1u << 0)
#define MCUGEN_NPU_CMD_CLEAR_IRQ         (1u << 1)
#define MCUGEN_NPU_CMD_CLOCK_Q_ENABLE    (1u << 2)
#define MCUGEN_NPU_CMD_POWER_Q_ENABLE    (1u << 3)
#define MCUGEN_NPU_CMD_STOP_REQUEST      (1u << 4)
#define MCUGEN_NPU_CMD_CLEAR_IRQ_HISTORY_SHIFT 16
#define MCUGEN_NPU_RESET_PENDING_CPL     (1u << 0)
#define MCUGEN_NPU_RESET_PENDING_CSL     (1u << 1)
#define MCUGEN_NPU_PROT_ACTIVE_CPL       (1u << 0)
#define MCUGEN_NPU_PROT_ACTIVE_CSL       (1u << 1)
#define MCUGEN_NPU_PMCR_CNT_EN           (1u << 0)
#define MCUGEN_NPU_PMCR_EVENT_CNT_RST    (1u << 1)
#define MCUGEN_NPU_PMCR_CYCLE_CNT_RST    (1u << 2)
#define MCUGEN_NPU_PMCR_MASK_EN          (1u << 3)
#define MCUGEN_NPU_PMCR_NUM_EVENT_CNT_SHIFT 11
#define MCUGEN_NPU_PMCNT_CYCLE           (1u << 31)

/* PMU event types the model counts (others read as zero until the engine adds them) */
#define MCUGEN_NPU_PMU_EVENT_NO_EVENT   0x00u
#define MCUGEN_NPU_PMU_EVENT_CYCLE      0x11u
#define MCUGEN_NPU_PMU_EVENT_NPU_IDLE   0x20u
#define MCUGEN_NPU_PMU_EVENT_NPU_ACTIVE 0x23u
#define MCUGEN_NPU_PMU_EVENT_MAC_ACTIVE 0x30u
#define MCUGEN_NPU_PMU_EVENT_AO_ACTIVE  0x40u
#define MCUGEN_NPU_PMU_EVENT_WD_ACTIVE  0x50u

/* ---- Command words ------------------------------------------------------------------------- */
#define MCUGEN_NPU_CMD_OPCODE(w)       ((w) & 0x3FFu)
#define MCUGEN_NPU_CMD_ZERO_BITS(w)    (((w) >> 10) & 0xFu)  /* must be zero */
#define MCUGEN_NPU_CMD_PAYLOAD_SIZE(w) (((w) >> 14) & 0x3u)  /* 0: cmd0, 1: cmd1 */
#define MCUGEN_NPU_CMD_PARAM(w)        ((w) >> 16)
#define MCUGEN_NPU_CMD1_FLAG           0x4000u

enum mcugen_npu_cmd0 {
    MCUGEN_NPU_OP_STOP = 0x000,
    MCUGEN_NPU_OP_IRQ = 0x001,
    MCUGEN_NPU_OP_CONV = 0x002,
    MCUGEN_NPU_OP_DEPTHWISE = 0x003,
    MCUGEN_NPU_OP_POOL = 0x005,
    MCUGEN_NPU_OP_ELEMENTWISE = 0x006,
    MCUGEN_NPU_OP_DMA_START = 0x010,
    MCUGEN_NPU_OP_DMA_WAIT = 0x011,
    MCUGEN_NPU_OP_KERNEL_WAIT = 0x012,
    MCUGEN_NPU_OP_PMU_MASK = 0x013,
    MCUGEN_NPU_SET_IFM_PAD_TOP = 0x100,
    MCUGEN_NPU_SET_IFM_PAD_LEFT = 0x101,
    MCUGEN_NPU_SET_IFM_PAD_RIGHT = 0x102,
    MCUGEN_NPU_SET_IFM_PAD_BOTTOM = 0x103,
    MCUGEN_NPU_SET_IFM_DEPTH_M1 = 0x104,
    MCUGEN_NPU_SET_IFM_PRECISION = 0x105,
    MCUGEN_NPU_SET_IFM_UPSCALE = 0x107,
    MCUGEN_NPU_SET_IFM_ZERO_POINT = 0x109,
    MCUGEN_NPU_SET_IFM_WIDTH0_M1 = 0x10A,
    MCUGEN_NPU_SET_IFM_HEIGHT0_M1 = 0x10B,
    MCUGEN_NPU_SET_IFM_HEIGHT1_M1 = 0x10C,
    MCUGEN_NPU_SET_IFM_IB_END = 0x10D,
    MCUGEN_NPU_SET_IFM_REGION = 0x10F,
    MCUGEN_NPU_SET_OFM_WIDTH_M1 = 0x111,
    MCUGEN_NPU_SET_OFM_HEIGHT_M1 = 0x112,
    MCUGEN_NPU_SET_OFM_DEPTH_M1 = 0x113,
    MCUGEN_NPU_SET_OFM_PRECISION = 0x114,
    MCUGEN_NPU_SET_OFM_BLK_WIDTH_M1 = 0x115,
    MCUGEN_NPU_SET_OFM_BLK_HEIGHT_M1 = 0x116,
    MCUGEN_NPU_SET_OFM_BLK_DEPTH_M1 = 0x117,
    MCUGEN_NPU_SET_OFM_ZERO_POINT = 0x118,
    MCUGEN_NPU_SET_OFM_WIDTH0_M1 = 0x11A,
    MCUGEN_NPU_SET_OFM_HEIGHT0_M1 = 0x11B,
    MCUGEN_NPU_SET_OFM_HEIGHT1_M1 = 0x11C,
    MCUGEN_NPU_SET_OFM_REGION = 0x11F,
    MCUGEN_NPU_SET_KERNEL_WIDTH_M1 = 0x120,
    MCUGEN_NPU_SET_KERNEL_HEIGHT_M1 = 0x121,
    MCUGEN_NPU_SET_KERNEL_STRIDE = 0x122,
    MCUGEN_NPU_SET_PARALLEL_MODE = 0x123,
    MCUGEN_NPU_SET_ACC_FORMAT = 0x124,
    MCUGEN_NPU_SET_ACTIVATION = 0x125,
    MCUGEN_NPU_SET_ACTIVATION_MIN = 0x126,
    MCUGEN_NPU_SET_ACTIVATION_MAX = 0x127,
    MCUGEN_NPU_SET_WEIGHT_REGION = 0x128,
    MCUGEN_NPU_SET_SCALE_REGION = 0x129,
    MCUGEN_NPU_SET_AB_START = 0x12D,
    MCUGEN_NPU_SET_BLOCKDEP = 0x12F,
    MCUGEN_NPU_SET_DMA0_SRC_REGION = 0x130,
    MCUGEN_NPU_SET_DMA0_DST_REGION = 0x131,
    MCUGEN_NPU_SET_DMA0_SIZE0 = 0x132,
    MCUGEN_NPU_SET_DMA0_SIZE1 = 0x133,
    MCUGEN_NPU_SET_IFM2_BROADCAST = 0x180,
    MCUGEN_NPU_SET_IFM2_SCALAR = 0x181,
    MCUGEN_NPU_SET_IFM2_PRECISION = 0x185,
    MCUGEN_NPU_SET_IFM2_ZERO_POINT = 0x189,
    MCUGEN_NPU_SET_IFM2_WIDTH0_M1 = 0x18A,
    MCUGEN_NPU_SET_IFM2_HEIGHT0_M1 = 0x18B,
    MCUGEN_NPU_SET_IFM2_HEIGHT1_M1 = 0x18C,
    MCUGEN_NPU_SET_IFM2_IB_START = 0x18D,
    MCUGEN_NPU_SET_IFM2_REGION = 0x18F
};

enum mcugen_npu_cmd1 {
    MCUGEN_NPU_SET_IFM_BASE0 = 0x000,
    MCUGEN_NPU_SET_IFM_BASE1 = 0x001,
    MCUGEN_NPU_SET_IFM_BASE2 = 0x002,
    MCUGEN_NPU_SET_IFM_BASE3 = 0x003,
    MCUGEN_NPU_SET_IFM_STRIDE_X = 0x004,
    MCUGEN_NPU_SET_IFM_STRIDE_Y = 0x005,
    MCUGEN_NPU_SET_IFM_STRIDE_C = 0x006,
    MCUGEN_NPU_SET_OFM_BASE0 = 0x010,
    MCUGEN_NPU_SET_OFM_BASE1 = 0x011,
    MCUGEN_NPU_SET_OFM_BASE2 = 0x012,
    MCUGEN_NPU_SET_OFM_BASE3 = 0x013,
    MCUGEN_NPU_SET_OFM_STRIDE_X = 0x014,
    MCUGEN_NPU_SET_OFM_STRIDE_Y = 0x015,
    MCUGEN_NPU_SET_OFM_STRIDE_C = 0x016,
    MCUGEN_NPU_SET_WEIGHT_BASE = 0x020,
    MCUGEN_NPU_SET_WEIGHT_LENGTH = 0x021,
    MCUGEN_NPU_SET_SCALE_BASE = 0x022,
    MCUGEN_NPU_SET_SCALE_LENGTH = 0x023,
    MCUGEN_NPU_SET_OFM_SCALE = 0x024,
    MCUGEN_NPU_SET_OPA_SCALE = 0x025,
    MCUGEN_NPU_SET_OPB_SCALE = 0x026,
    MCUGEN_NPU_SET_DMA0_SRC = 0x030,
    MCUGEN_NPU_SET_DMA0_DST = 0x031,
    MCUGEN_NPU_SET_DMA0_LEN = 0x032,
    MCUGEN_NPU_SET_DMA0_SKIP0 = 0x033,
    MCUGEN_NPU_SET_DMA0_SKIP1 = 0x034,
    MCUGEN_NPU_SET_IFM2_BASE0 = 0x080,
    MCUGEN_NPU_SET_IFM2_BASE1 = 0x081,
    MCUGEN_NPU_SET_IFM2_BASE2 = 0x082,
    MCUGEN_NPU_SET_IFM2_BASE3 = 0x083,
    MCUGEN_NPU_SET_IFM2_STRIDE_X = 0x084,
    MCUGEN_NPU_SET_IFM2_STRIDE_Y = 0x085,
    MCUGEN_NPU_SET_IFM2_STRIDE_C = 0x086,
    MCUGEN_NPU_SET_WEIGHT1_BASE = 0x090,
    MCUGEN_NPU_SET_WEIGHT1_LENGTH = 0x091,
    MCUGEN_NPU_SET_SCALE1_BASE = 0x092,
    MCUGEN_NPU_SET_SCALE1_LENGTH = 0x093
};

/* ---- Command parameter fields ---------------------------------------------------------------- */
/* IFM/IFM2_PRECISION: signed bit 0, precision 3:2 (0 8-bit, 1 16-bit, 2 32-bit), format 7:6
 * (0 NHWC, 1 NHCWB16), IFM scale_mode 9:8, IFM round_mode 15:14 */
#define MCUGEN_NPU_IFM_PREC_SIGNED(p)   ((p) & 1u)
#define MCUGEN_NPU_IFM_PREC_BITS(p)     (((p) >> 2) & 3u)
#define MCUGEN_NPU_IFM_PREC_FORMAT(p)   (((p) >> 6) & 3u)
#define MCUGEN_NPU_IFM_PREC_SCALE_MODE(p) (((p) >> 8) & 3u)
#define MCUGEN_NPU_IFM_PREC_ROUND(p)    (((p) >> 14) & 3u)
/* OFM_PRECISION: signed bit 0, precision 2:1, format 7:6, global scale bit 8, rounding 15:14 */
#define MCUGEN_NPU_OFM_PREC_SIGNED(p)   ((p) & 1u)
#define MCUGEN_NPU_OFM_PREC_BITS(p)     (((p) >> 1) & 3u)
#define MCUGEN_NPU_OFM_PREC_FORMAT(p)   (((p) >> 6) & 3u)
#define MCUGEN_NPU_OFM_PREC_SCALE_GLOBAL(p) (((p) >> 8) & 1u)
#define MCUGEN_NPU_OFM_PREC_ROUND(p)    (((p) >> 14) & 3u)
#define MCUGEN_NPU_FORMAT_NHWC    0u
#define MCUGEN_NPU_FORMAT_NHCWB16 1u
#define MCUGEN_NPU_ROUND_TFL      0u
#define MCUGEN_NPU_ROUND_TRUNCATE 1u
#define MCUGEN_NPU_ROUND_NATURAL  2u
/* KERNEL_STRIDE: stride x lsb 0, stride y lsb 1, part-kernel-first 2, dilation x 3, dilation y 4,
 * decomposition 5, stride x msbs 8:6, stride y msbs 11:9 (strides and dilations are minus one) */
#define MCUGEN_NPU_KSTRIDE_X(p) ((((p) & 1u) | ((((p) >> 6) & 7u) << 1)) + 1u)
#define MCUGEN_NPU_KSTRIDE_Y(p) (((((p) >> 1) & 1u) | ((((p) >> 9) & 7u) << 1)) + 1u)
#define MCUGEN_NPU_KSTRIDE_PART_KERNEL_FIRST(p) (((p) >> 2) & 1u)
#define MCUGEN_NPU_KSTRIDE_DILATION_X(p) ((((p) >> 3) & 1u) + 1u)
#define MCUGEN_NPU_KSTRIDE_DILATION_Y(p) ((((p) >> 4) & 1u) + 1u)
/* ACTIVATION: function 11:0 (0 none/clip, 3 tanh, 4 sigmoid, 16..23 LUT slot), clip range 15:12 */
#define MCUGEN_NPU_ACT_FUNCTION(p)   ((p) & 0xFFFu)
#define MCUGEN_NPU_ACT_CLIP_RANGE(p) (((p) >> 12) & 0xFu)
/* IFM2_BROADCAST: h 0, w 1, c 2, reversed operands 6, scalar 7 */
#define MCUGEN_NPU_BCAST_H        (1u << 0)
#define MCUGEN_NPU_BCAST_W        (1u << 1)
#define MCUGEN_NPU_BCAST_C        (1u << 2)
#define MCUGEN_NPU_BCAST_REVERSED (1u << 6)
#define MCUGEN_NPU_BCAST_SCALAR   (1u << 7)
/* DMA0_SRC/DST_REGION: region 7:0, internal (SHRAM) bit 8, stride mode 10:9 (0: 1D) */
#define MCUGEN_NPU_DMA_REGION(p)   ((p) & 0xFFu)
#define MCUGEN_NPU_DMA_INTERNAL(p) (((p) >> 8) & 1u)
#define MCUGEN_NPU_DMA_STRIDE_MODE(p) (((p) >> 9) & 3u)
/* NPU_OP_POOL mode, NPU_OP_ELEMENTWISE mode, IFM_UPSCALE mode */
#define MCUGEN_NPU_POOL_MAX 0u
#define MCUGEN_NPU_POOL_AVERAGE 1u
#define MCUGEN_NPU_POOL_REDUCE_SUM 2u
#define MCUGEN_NPU_ELEM_MUL 0u
#define MCUGEN_NPU_ELEM_ADD 1u
#define MCUGEN_NPU_ELEM_SUB 2u
#define MCUGEN_NPU_ELEM_MIN 3u
#define MCUGEN_NPU_ELEM_MAX 4u
#define MCUGEN_NPU_ELEM_LRELU 5u
#define MCUGEN_NPU_ELEM_ABS 6u
#define MCUGEN_NPU_ELEM_CLZ 7u
#define MCUGEN_NPU_ELEM_SHR 8u
#define MCUGEN_NPU_ELEM_SHL 9u
#define MCUGEN_NPU_UPSCALE_NONE 0u
#define MCUGEN_NPU_UPSCALE_NEAREST 1u
#define MCUGEN_NPU_UPSCALE_TRANSPOSE 2u

#endif /* MCUGEN_NPU_REGS_H */
