/*
 * mcugen_npu_engine_pool.c - placeholder until the pool compute lands: refuses the operation.
 */
#include "mcugen_npu_engine_internal.h"

enum mcugen_npu_fault mcugen_npu_engine_pool(struct mcugen_npu_device *dev, uint32_t mode,
                                             const struct mcugen_npu_state *state)
{
    (void)dev;
    (void)mode;
    (void)state;
    return MCUGEN_NPU_FAULT_UNSUPPORTED;
}
