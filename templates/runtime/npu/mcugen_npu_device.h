/*
 * mcugen_npu_device.h - a register-level model of an Ethos-U55-compatible NPU.
 *
 * The device owns its register file and the state that the command stream programs.  The
 * driver talks to it only through mcugen_npu_write_reg()/mcugen_npu_read_reg().  Writing CMD
 * with the transition-to-running bit starts the device; it then runs as time passes, which in
 * a simulation means: when someone calls mcugen_npu_step() (the driver's wait does).  Every
 * parameter command updates struct mcugen_npu_state; every operation command (NPU_OP_*) is
 * range-checked and handed to the operation hook, which the compute engine sets.
 *
 * Addresses: BASEPn + offset is a bus address; the model shares the CPU's address space (as an
 * Ethos-U on the same AXI bus does), so a bus address is a host pointer.  Each region has a
 * size in the model-only register MODEL_REGION_SIZE(n); every access outside it is a bus fault.
 * No malloc, no globals besides the optional device registry used by the driver.
 */
#ifndef MCUGEN_NPU_DEVICE_H
#define MCUGEN_NPU_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "mcugen_npu_cycles.h"
#include "mcugen_npu_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MCUGEN_NPU_SHRAM_MAX_BYTES (48u * 1024u)

/* What went wrong, as the model records it in MODEL_FAULT (STATUS carries the hardware bits). */
enum mcugen_npu_fault {
    MCUGEN_NPU_FAULT_NONE = 0,
    MCUGEN_NPU_FAULT_UNDEFINED_OPCODE = 1, /* cmd_parse_error */
    MCUGEN_NPU_FAULT_RESERVED_BITS = 2,    /* cmd_parse_error: must-be-zero bits set */
    MCUGEN_NPU_FAULT_TRUNCATED_CMD1 = 3,   /* cmd_parse_error: payload word past QSIZE */
    MCUGEN_NPU_FAULT_NO_STOP = 4,          /* cmd_parse_error: end of queue without STOP */
    MCUGEN_NPU_FAULT_REGION_RANGE = 5,     /* bus_status: op operand outside its region */
    MCUGEN_NPU_FAULT_DMA_RANGE = 6,        /* bus_status: DMA source/destination outside */
    MCUGEN_NPU_FAULT_QUEUE_RANGE = 7,      /* bus_status: QBASE/QSIZE not readable */
    MCUGEN_NPU_FAULT_WATCHDOG = 8,         /* wd_fault */
    MCUGEN_NPU_FAULT_UNSUPPORTED = 9,      /* cmd_parse_error: valid but not modelled */
    MCUGEN_NPU_FAULT_ENGINE = 10           /* the operation hook refused the operation */
};

/* One feature map (IFM, IFM2 or OFM) as the stream programs it. */
struct mcugen_npu_fm {
    uint16_t region;
    uint16_t precision;            /* raw xFM_PRECISION parameter */
    uint16_t zero_point;           /* raw 16-bit parameter */
    uint16_t width0_m1, height0_m1, height1_m1;
    uint64_t base[4];              /* tile base offsets in the region */
    uint64_t stride_x, stride_y, stride_c;
};

/* Everything a cmd0/cmd1 parameter command sets. Raw values as programmed; see regs.h. */
struct mcugen_npu_state {
    struct mcugen_npu_fm ifm, ifm2, ofm;
    uint16_t ifm_pad_top, ifm_pad_left, ifm_pad_right, ifm_pad_bottom;
    uint16_t ifm_depth_m1, ifm_upscale, ifm_ib_end;
    uint16_t ofm_width_m1, ofm_height_m1, ofm_depth_m1;
    uint16_t ofm_blk_width_m1, ofm_blk_height_m1, ofm_blk_depth_m1;
    uint16_t kernel_width_m1, kernel_height_m1, kernel_stride;
    uint16_t parallel_mode, acc_format, activation, activation_min, activation_max;
    uint16_t ab_start, blockdep;
    uint16_t ifm2_broadcast, ifm2_scalar, ifm2_ib_start;
    uint16_t weight_region, scale_region;
    uint64_t weight_base, weight1_base, scale_base, scale1_base;
    uint32_t weight_length, weight1_length, scale_length, scale1_length;
    uint32_t ofm_scale; uint16_t ofm_scale_shift;
    uint32_t opa_scale; uint16_t opa_scale_shift;
    uint32_t opb_scale;
    uint16_t dma0_src_region, dma0_dst_region, dma0_size0, dma0_size1;
    uint64_t dma0_src, dma0_dst, dma0_len, dma0_skip0, dma0_skip1;
};

/* Operation counters, by kind (the model's own; the PMU has the hardware's view). */
enum mcugen_npu_op_kind {
    MCUGEN_NPU_KIND_STOP, MCUGEN_NPU_KIND_IRQ, MCUGEN_NPU_KIND_CONV, MCUGEN_NPU_KIND_DEPTHWISE,
    MCUGEN_NPU_KIND_POOL, MCUGEN_NPU_KIND_ELEMENTWISE, MCUGEN_NPU_KIND_DMA_START,
    MCUGEN_NPU_KIND_DMA_WAIT, MCUGEN_NPU_KIND_KERNEL_WAIT, MCUGEN_NPU_KIND_PMU_MASK,
    MCUGEN_NPU_KIND_COUNT
};

struct mcugen_npu_device;

/* The operation hook: called at every NPU_OP_* after its operands were range-checked (DMA_START
 * after the copy).  Return MCUGEN_NPU_FAULT_NONE, or a fault to stop the device. */
typedef enum mcugen_npu_fault (*mcugen_npu_op_hook)(struct mcugen_npu_device *dev, uint32_t opcode,
                                                    uint32_t param, const struct mcugen_npu_state *state,
                                                    void *ctx);
/* Trace: called for every decoded command (cmd1: data is its payload word). */
typedef void (*mcugen_npu_trace_hook)(struct mcugen_npu_device *dev, uint32_t offset, uint32_t word,
                                      uint32_t data, void *ctx);
typedef void (*mcugen_npu_irq_line)(struct mcugen_npu_device *dev, void *ctx);

/* The configuration the device reports in ID and CONFIG. */
struct mcugen_npu_config {
    uint32_t macs_per_cycle;   /* 32, 64, 128 or 256 */
    uint32_t shram_kb;         /* 16, 16, 24, 48 for the four U55 sizes (0: that default) */
    uint32_t arch_major, arch_minor, arch_patch; /* ID: 1.0.6 as Vela 5.2 writes */
    const struct mcugen_npu_cycle_config *cycles; /* memory system etc.; NULL: Vela's default */
};

struct mcugen_npu_device {
    /* register file */
    uint32_t id, status, cmd, qbase, qbase_hi, qread, qconfig, qsize, prot, config, lock;
    uint32_t regioncfg, axi_limit[4];
    uint32_t basep[MCUGEN_NPU_NUM_REGIONS][2];
    uint32_t pmcr, pmcnten, pmovs, pmint, pmccntr_cfg, pmcaxi_chan;
    uint64_t pmccntr;
    uint32_t pmevcntr[MCUGEN_NPU_PMU_NUM_EVCNT], pmevtyper[MCUGEN_NPU_PMU_NUM_EVCNT];
    /* model-only registers */
    uint32_t fault, fault_qread, fault_info, wd_commands, wd_cycles;
    uint32_t region_size[MCUGEN_NPU_NUM_REGIONS];
    uint64_t cycles;           /* cycles of the current run */
    uint32_t commands;         /* commands executed in the current run */
    uint32_t ops;              /* NPU_OP_* in the current run */
    uint32_t op_count[MCUGEN_NPU_KIND_COUNT];
    uint32_t pmu_mask;         /* last NPU_OP_PMU_MASK parameter (counting gate with MASK_EN) */
    /* the cycle model (mcugen_npu_cycles.h): its configuration, the run's timeline, and the
     * cycles of the last operation command (an operation's cost or a DMA's transfer) */
    struct mcugen_npu_cycle_config cycle_config;
    struct mcugen_npu_timeline timeline;
    uint64_t last_op_cycles;
    /* decoded command-stream state */
    struct mcugen_npu_state state;
    /* SHRAM: LUTs are DMAed here (internal region) */
    uint8_t shram[MCUGEN_NPU_SHRAM_MAX_BYTES];
    uint32_t shram_bytes;
    /* hooks */
    mcugen_npu_op_hook op_hook; void *op_ctx;
    mcugen_npu_trace_hook trace; void *trace_ctx;
    mcugen_npu_irq_line irq; void *irq_ctx;
    struct mcugen_npu_device *next; /* device registry (driver lookup by register base) */
};

/* Set up a device for `config` (NULL: u55-128) and register it; 0, or -1 for a bad config. */
int mcugen_npu_device_init(struct mcugen_npu_device *dev, const struct mcugen_npu_config *config);
/* Remove from the registry. */
void mcugen_npu_device_deinit(struct mcugen_npu_device *dev);
/* The registered device whose register base is `base` (the device itself), or NULL. */
struct mcugen_npu_device *mcugen_npu_device_find(const void *base);

void mcugen_npu_write_reg(struct mcugen_npu_device *dev, uint32_t offset, uint32_t value);
uint32_t mcugen_npu_read_reg(struct mcugen_npu_device *dev, uint32_t offset);

/* Let the device run up to `max_commands` commands; returns 1 while still running. */
int mcugen_npu_step(struct mcugen_npu_device *dev, uint32_t max_commands);

void mcugen_npu_set_op_hook(struct mcugen_npu_device *dev, mcugen_npu_op_hook hook, void *ctx);
void mcugen_npu_set_trace(struct mcugen_npu_device *dev, mcugen_npu_trace_hook hook, void *ctx);
void mcugen_npu_set_irq(struct mcugen_npu_device *dev, mcugen_npu_irq_line irq, void *ctx);

/* For the engine: add `count` to the run's cycles (and the PMU cycle counter), or to every
 * enabled PMU event counter programmed with `event`. */
void mcugen_npu_add_cycles(struct mcugen_npu_device *dev, uint64_t cycles);
void mcugen_npu_pmu_event(struct mcugen_npu_device *dev, uint32_t event, uint32_t count);

/* For the engine: a host pointer to [offset, offset+len) of `region`, or NULL (out of range). */
uint8_t *mcugen_npu_region_ptr(struct mcugen_npu_device *dev, uint32_t region, uint64_t offset, uint64_t len);

/* Helpers on the decoded state. */
uint32_t mcugen_npu_ifm_elem_bytes(uint16_t precision);
uint32_t mcugen_npu_ofm_elem_bytes(uint16_t precision);
/* The hardware mnemonic of a command word (e.g. "NPU_SET_IFM_BASE0"), or NULL if undefined. */
const char *mcugen_npu_cmd_name(uint32_t word);
/* The (param, data) that the current state holds for the command `word` names: reading the
 * decoded state back in the command's encoding (a parameter command's round trip). */
int mcugen_npu_state_readback(const struct mcugen_npu_state *state, uint32_t word, uint32_t *param,
                              uint32_t *data);

#ifdef __cplusplus
}
#endif

#endif /* MCUGEN_NPU_DEVICE_H */
