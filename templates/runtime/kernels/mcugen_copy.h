/* mcugen runtime: byte copy between buffers (a materialised reshape). */
#ifndef MCUGEN_COPY_H
#define MCUGEN_COPY_H

#include <stdint.h>

#include "mcugen_nn_types.h"

mcugen_status mcugen_copy(void *output, const void *input, int32_t bytes);

#endif /* MCUGEN_COPY_H */
