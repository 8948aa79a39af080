/* mcugen runtime: the tiled chains' support code's fast path, internal to mcugen_stripe.c.
 *
 * No TFLite op: the rows a tiled chain keeps from one stripe to the next, moved to the start of
 * their slot (mcugen_move_rows, mcugen/codegen/stripes.py). A byte copy: bit-exact by nature.
 *   MCUGEN_FAST_MVE  mcugen_stripe_fast_mve.c: sixteen bytes a step, tail-predicated (DLSTP/LETP).
 * No scratch.
 */
/* mcugen: kernel-internal (the generated model does not include this header) */
#ifndef MCUGEN_STRIPE_FAST_H
#define MCUGEN_STRIPE_FAST_H

#include <stdint.h>

#include "mcugen_platform.h"

/* output[0..bytes) = input[0..bytes) for output <= input, the ranges possibly overlapping;
 * bytes > 0. */
void mcugen_move_rows_fast_mve(void *output, const void *input, int32_t bytes);

#endif /* MCUGEN_STRIPE_FAST_H */
