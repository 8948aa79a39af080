/* mcugen runtime: types shared by every kernel (CMSIS-NN-style API).
 *
 * Kernel convention: status return; arguments in the order context, op params, quant params,
 * then (dims, data) pairs for input, filter, bias, and last the output. Build-time constants
 * (multipliers, shifts, padding, activation clamp) are computed by mcugen and passed in.
 */
#ifndef MCUGEN_NN_TYPES_H
#define MCUGEN_NN_TYPES_H

#include <stdint.h>

typedef enum {
    MCUGEN_OK = 0,
    MCUGEN_ARG_ERROR = -1,   /* an argument is outside what the kernel accepts */
    MCUGEN_NO_IMPL = -2      /* the kernel has no implementation for this configuration */
} mcugen_status;

/* Scratch memory planned in the arena by mcugen (size from the kernel's *_get_buffer_size). */
typedef struct {
    void *buf;
    int32_t size;
} mcugen_context;

/* NHWC tensor dimensions; unused trailing dimensions are 1. */
typedef struct {
    int32_t n;
    int32_t h;
    int32_t w;
    int32_t c;
} mcugen_dims;

typedef struct {
    int32_t w;
    int32_t h;
} mcugen_tile;

/* Fused activation as a clamp in the output's quantized domain. */
typedef struct {
    int32_t min;
    int32_t max;
} mcugen_activation;

typedef struct {
    const int32_t *multiplier; /* one per output channel */
    const int32_t *shift;      /* one per output channel, > 0 is a left shift */
} mcugen_per_channel_quant_params;

typedef struct {
    int32_t multiplier;
    int32_t shift;
} mcugen_per_tensor_quant_params;

#endif /* MCUGEN_NN_TYPES_H */
