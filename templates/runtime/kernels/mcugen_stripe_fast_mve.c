/* mcugen runtime: the Helium byte copy behind mcugen_move_rows (mcugen_stripe_fast.h).
 * Cortex-M55 (MCUGEN_FAST_MVE) only; an empty translation unit elsewhere. */
#include "mcugen_stripe_fast.h"

#if defined(MCUGEN_FAST_MVE)

/* Sixteen bytes a step, each step loaded before it is stored: a forward copy, exact when the
 * output starts at or before the input even if the ranges overlap (step k stores below
 * input + 16 (k + 1), which step k + 1 loads from). The last step tail-predicated: three
 * instructions a step, where newlib's memmove takes eleven per sixteen bytes. */
void mcugen_move_rows_fast_mve(void *output, const void *input, int32_t bytes)
{
    uint8_t *out = (uint8_t *)output;
    const uint8_t *in = (const uint8_t *)input;
    __asm__ __volatile__("dlstp.8  lr, %[n]\n"
                         "1:\n\t"
                         "vldrb.8  q0, [%[in]], #16\n\t"
                         "vstrb.8  q0, [%[out]], #16\n\t"
                         "letp     lr, 1b"
                         : [in] "+r"(in), [out] "+r"(out)
                         : [n] "r"(bytes)
                         : "q0", "lr", "memory");
}

#else
typedef int mcugen_stripe_fast_mve_unused; /* ISO C: no empty translation unit */
#endif
