/*
 * mcugen_npu_engine_elementwise.c - NPU_OP_ELEMENTWISE (and the 16-bit LUT): not modelled yet,
 * so the device stops with MCUGEN_NPU_FAULT_UNSUPPORTED rather than leaving the OFM unwritten.
 */
#include "mcugen_npu_engine_internal.h"

enum mcugen_npu_fault mcugen_npu_engine_elementwise(struct mcugen_npu_device *dev, uint32_t param,
                                                    const struct mcugen_npu_state *state)
{
    (void)dev;
    (void)param;
    (void)state;
    return MCUGEN_NPU_FAULT_UNSUPPORTED;
}
