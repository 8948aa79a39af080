/*
 * mcugen_npu_engine.h - the compute engine of the simulated Ethos-U55.
 *
 * The device (mcugen_npu_device.h) walks the command stream and range-checks every operation;
 * the engine, installed as the device's operation hook, computes NPU_OP_CONV, NPU_OP_DEPTHWISE
 * and NPU_OP_POOL from the decoded state (NPU_OP_ELEMENTWISE: mcugen_npu_engine_elementwise.c).
 * An operation state the engine does not model stops the device with a fault instead of
 * computing something else.  Portable C99, no malloc, no mutable globals.
 */
#ifndef MCUGEN_NPU_ENGINE_H
#define MCUGEN_NPU_ENGINE_H

#include <stdint.h>

#include "mcugen_npu_device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Make `dev` compute: sets the engine as its operation hook (call after mcugen_npu_device_init). */
void mcugen_npu_engine_attach(struct mcugen_npu_device *dev);

/* The operation hook itself (ctx unused), for a caller that chains its own hook in front. */
enum mcugen_npu_fault mcugen_npu_engine_hook(struct mcugen_npu_device *dev, uint32_t opcode, uint32_t param,
                                             const struct mcugen_npu_state *state, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* MCUGEN_NPU_ENGINE_H */
