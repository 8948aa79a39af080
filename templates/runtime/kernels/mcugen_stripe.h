/* mcugen runtime: support code of the tiled chains (mcugen/codegen/stripes.py), no TFLite op.
 *
 * mcugen_move_rows moves the rows a rolling chain keeps from one stripe to the next to the start
 * of their slot. Fast path: Helium (mcugen_stripe_fast.h); otherwise memmove.
 */
#ifndef MCUGEN_STRIPE_H
#define MCUGEN_STRIPE_H

#include <stdint.h>

/* output[0..bytes) = input[0..bytes) for output at or before input, the ranges possibly
 * overlapping; bytes > 0 (the build's row counts). */
void mcugen_move_rows(void *output, const void *input, int32_t bytes);

#endif /* MCUGEN_STRIPE_H */
