/*
 * npu_scale_check.c - the engine's OFM scaling on the host (tests/test_npu_engine.py).
 *
 * Reads lines "ACC SCALE SHIFT ROUNDING" (decimal; ROUNDING 0 TFL, 1 TRUNCATE, 2 NATURAL) and
 * prints mcugen_npu_scale() of each, one per line, so that the test can hold it to exact
 * rational arithmetic and TFLite's integer definition.
 */
#include <inttypes.h>
#include <stdio.h>

#include "mcugen_npu_engine_internal.h"

int main(void)
{
    long long acc;
    unsigned long scale, shift, rounding;
    while (scanf("%lld %lu %lu %lu", &acc, &scale, &shift, &rounding) == 4) {
        if (shift > 63u || rounding > 2u || scale > 0xFFFFFFFFul) {
            fprintf(stderr, "bad line\n");
            return 2;
        }
        printf("%" PRId64 "\n", mcugen_npu_scale((int64_t)acc, (uint32_t)scale, (uint32_t)shift, (uint32_t)rounding));
    }
    return 0;
}
