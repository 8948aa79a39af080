/*
 * mcugen_npu_cycles.h - the cycle model of mcugen's simulated Ethos-U55.
 *
 * Cycles depend only on what the command stream programmed (struct mcugen_npu_state) and on
 * the configuration: the MACs per cycle and the memory system behind the 8 regions.  An
 * operation's cycles are the larger of its compute pipeline (per OFM block: MAC cycles from the
 * kernel traversal, output cycles per element, the block's own fetch and write-back latency)
 * and each memory's transfer time (IFM/IFM2 reads with their refetch, OFM writes, weight and
 * scale reads, at the memory's bandwidth and burst efficiency), because the hardware overlaps
 * them.  A DMA costs its transfer time on the DMA engine, which runs beside the compute (the
 * device's timeline, mcugen_npu_device.c, overlaps them up to the stream's DMA/KERNEL_WAITs).
 * The facts (block traversal, ublock sizes, output rates, memory defaults) are Vela 5.2's
 * performance model: its C++ core Regor's ethos_u55_performance.cpp, which Vela 5.2 uses for the
 * U55, and the legacy ethosu/vela/npu_performance.py, architecture_features.py and vela.ini.
 * Fractions of a cycle are kept in Q8 fixed point (1/256 cycle) and rounded up at the end.
 * Portable C99, no malloc, no state.
 */
#ifndef MCUGEN_NPU_CYCLES_H
#define MCUGEN_NPU_CYCLES_H

#include <stdint.h>

#include "mcugen_npu_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mcugen_npu_state;

#define MCUGEN_NPU_MAX_MEMORIES 4u
/* The default memories (Vela's Ethos_U55_High_End_Embedded system config, Shared_Sram mode) */
#define MCUGEN_NPU_MEMORY_SRAM 0u  /* AXI0: 8 bytes/cycle, burst 32, latency 32 read / 32 write */
#define MCUGEN_NPU_MEMORY_FLASH 1u /* AXI1 off-chip flash: 1 byte/cycle, burst 128, latency 64 / 0 */
#define MCUGEN_NPU_MEMORY_SHRAM 2u /* internal SHRAM, a DMA destination (LUTs): 8 bytes/cycle */

/* One memory behind an AXI port. */
struct mcugen_npu_memory {
    uint32_t bytes_per_cycle_q8; /* bandwidth in 1/256 bytes per NPU cycle (0: memory unused) */
    uint32_t burst_bytes;        /* the burst the memory wants; shorter accesses waste bandwidth */
    uint32_t read_latency;       /* cycles */
    uint32_t write_latency;
};

struct mcugen_npu_cycle_config {
    uint32_t macs_per_cycle; /* 32, 64, 128 or 256 */
    struct mcugen_npu_memory memory[MCUGEN_NPU_MAX_MEMORIES];
    uint8_t region_memory[MCUGEN_NPU_NUM_REGIONS]; /* which memory holds region n */
    uint8_t shram_memory;                           /* the memory of an internal DMA side */
};

/* The cost of one operation. */
struct mcugen_npu_op_cost {
    uint64_t cycles;          /* what the operation takes: max(compute, every memory) */
    uint64_t compute_cycles;  /* the block pipeline: MAC and output units with block fetch latency */
    uint64_t mac_cycles;      /* cycles the MAC array works (PMU MAC_ACTIVE) */
    uint64_t memory_cycles[MCUGEN_NPU_MAX_MEMORIES]; /* transfer time per memory */
    uint64_t bytes[MCUGEN_NPU_MAX_MEMORIES];         /* bytes moved per memory (before burst waste) */
    uint32_t blocks;          /* OFM blocks */
};

/* Vela's default system for a U55 with `macs_per_cycle` MACs: region 0 (Vela's read-only
 * weights) in off-chip flash, the others in SRAM.  0, or -1 for an unknown configuration. */
int mcugen_npu_cycle_config_default(struct mcugen_npu_cycle_config *config, uint32_t macs_per_cycle);

/* The cost of NPU_OP_CONV, DEPTHWISE, POOL or ELEMENTWISE (`opcode`, its parameter `param`) with
 * the decoded `state`; any other opcode costs nothing.  0, or -1 for a bad configuration. */
int mcugen_npu_op_cycles(const struct mcugen_npu_cycle_config *config, uint32_t opcode, uint32_t param,
                         const struct mcugen_npu_state *state, struct mcugen_npu_op_cost *cost);

/* The transfer cycles of the DMA the state programs (DMA0 source, destination, length). */
uint64_t mcugen_npu_dma_cycles(const struct mcugen_npu_cycle_config *config, const struct mcugen_npu_state *state);

/* When things happen in a run.  The command processor issues commands in order; an operation
 * starts when it is issued and the previous one has finished (one kernel at a time); a DMA starts
 * when it is issued and the DMA engine is free, and runs beside the kernels; NPU_OP_DMA_WAIT n
 * holds the command processor until at most n DMAs are outstanding, KERNEL_WAIT 0 until the
 * running kernel ends, STOP until everything ends. */
#define MCUGEN_NPU_MAX_DMA_PENDING 8u /* more outstanding DMAs than this wait for the oldest */
struct mcugen_npu_timeline {
    uint64_t command;    /* when the command processor issues the next command */
    uint64_t kernel_end; /* when the last issued kernel ends */
    uint64_t dma_end;    /* when the DMA engine is free */
    uint64_t dma_done[MCUGEN_NPU_MAX_DMA_PENDING]; /* completion of the outstanding DMAs, oldest first */
    uint32_t dma_pending;
};

void mcugen_npu_timeline_reset(struct mcugen_npu_timeline *timeline);
/* Issue operation command `opcode` (parameter `param`) that takes `cycles` (an operation's cost,
 * a DMA's transfer, 0 for the others); returns the horizon: when all issued work has ended. */
uint64_t mcugen_npu_timeline_issue(struct mcugen_npu_timeline *timeline, uint32_t opcode, uint32_t param,
                                   uint64_t cycles);

#ifdef __cplusplus
}
#endif

#endif /* MCUGEN_NPU_CYCLES_H */
