/*
 * mcugen_npu_engine_conv.c - placeholder until the conv compute lands: refuses the operation.
 */
#include "mcugen_npu_engine_internal.h"

enum mcugen_npu_fault mcugen_npu_engine_conv(struct mcugen_npu_device *dev, uint32_t opcode,
                                             const struct mcugen_npu_state *state)
{
    (void)dev;
    (void)opcode;
    (void)state;
    return MCUGEN_NPU_FAULT_UNSUPPORTED;
}
