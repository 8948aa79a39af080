/* mcugen runtime: support code of the tiled chains, behind mcugen_stripe.h. No arithmetic.
 * Fast paths: the kept rows' move on Helium (mcugen_stripe_fast.h, Cortex-M55); otherwise
 * memmove. */
#include "mcugen_stripe.h"

#include <string.h>

#include "mcugen_stripe_fast.h"

void mcugen_move_rows(void *output, const void *input, int32_t bytes)
{
#if defined(MCUGEN_FAST_MVE)
    mcugen_move_rows_fast_mve(output, input, bytes);
#else
    memmove(output, input, (size_t)bytes);
#endif
}
