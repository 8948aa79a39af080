/*
 * mcugen_npu_engine.c - the engine's operation hook: dispatch by opcode.
 */
#include "mcugen_npu_engine.h"

#include "mcugen_npu_engine_internal.h"

enum mcugen_npu_fault mcugen_npu_engine_hook(struct mcugen_npu_device *dev, uint32_t opcode, uint32_t param,
                                             const struct mcugen_npu_state *state, void *ctx)
{
    (void)ctx;
    switch (opcode) {
    case MCUGEN_NPU_OP_CONV:
    case MCUGEN_NPU_OP_DEPTHWISE:
        return mcugen_npu_engine_conv(dev, opcode, state);
    case MCUGEN_NPU_OP_POOL:
        return mcugen_npu_engine_pool(dev, param, state);
    case MCUGEN_NPU_OP_ELEMENTWISE:
        return mcugen_npu_engine_elementwise(dev, param, state);
    default:
        return MCUGEN_NPU_FAULT_NONE; /* STOP, IRQ, DMA, waits, PMU: the device does them */
    }
}

void mcugen_npu_engine_attach(struct mcugen_npu_device *dev)
{
    mcugen_npu_set_op_hook(dev, mcugen_npu_engine_hook, NULL);
}
