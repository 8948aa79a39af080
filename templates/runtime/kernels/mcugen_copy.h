/* mcugen runtime: byte copy between buffers (a materialised RESHAPE, SQUEEZE or EXPAND_DIMS,
 * a SHAPE written from its build-time constant, a constant graph output). */
#ifndef MCUGEN_COPY_H
#define MCUGEN_COPY_H

#include <stdbool.h> /* bool tensors are passed as bool pointers */
#include <stdint.h>

#include "mcugen_nn_types.h"

mcugen_status mcugen_copy(void *output, const void *input, int32_t bytes);

#endif /* MCUGEN_COPY_H */
