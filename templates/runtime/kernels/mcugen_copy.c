/* mcugen runtime: byte copy between buffers (a materialised RESHAPE, SQUEEZE, EXPAND_DIMS or a
 * constant output). No arithmetic; any dtype. Fast paths: none (memcpy). See mcugen_copy.h. */
#include "mcugen_copy.h"

#include <string.h>

mcugen_status mcugen_copy(void *output, const void *input, int32_t bytes)
{
    if (bytes < 0 || (bytes > 0 && (output == NULL || input == NULL))) {
        return MCUGEN_ARG_ERROR;
    }
    if (bytes > 0) {
        memmove(output, input, (size_t)bytes);
    }
    return MCUGEN_OK;
}
