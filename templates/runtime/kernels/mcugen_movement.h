/* mcugen runtime: data movement on bytes (CONCATENATION, PACK, UNPACK, SPLIT, SPLIT_V, SLICE,
 * STRIDED_SLICE, PAD, PADV2, TRANSPOSE, GATHER).
 *
 * None of these ops changes a value: TFLite copies elements bit for bit. The kernels therefore
 * work on bytes, with the element size folded into the parameters by mcugen at build time, so
 * one kernel serves int8, int16, int32, int64, float32 and bool alike.
 *
 * mcugen_move copies one loop nest: at every point (i_0, ..., i_{L-1}) of the extents it copies
 * run_bytes contiguous bytes from input + input_offset + sum(i_l * input_stride[l]) to
 * output + output_offset + sum(i_l * output_stride[l]). Strides are signed (a negative stride
 * walks an axis backwards, as STRIDED_SLICE with a negative step does).
 */
#ifndef MCUGEN_MOVEMENT_H
#define MCUGEN_MOVEMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "mcugen_nn_types.h"

#define MCUGEN_MOVE_MAX_LOOPS 6

typedef struct {
    int32_t extent[MCUGEN_MOVE_MAX_LOOPS];        /* outermost first; unused levels are 1 */
    int32_t input_stride[MCUGEN_MOVE_MAX_LOOPS];  /* bytes per step of each level */
    int32_t output_stride[MCUGEN_MOVE_MAX_LOOPS];
    int32_t input_offset;                         /* bytes to the first input run */
    int32_t output_offset;                        /* bytes to the first output run */
    int32_t run_bytes;                            /* contiguous bytes copied per point */
} mcugen_move_params;

/* GATHER: for each batch b, outer o and coordinate c, copies row_bytes bytes from row
 * indices[b * coords + c] of input block (b, o) (axis_size rows) to output block (b, o),
 * row c. Indices are int32 or int64 (index_bytes 4 or 8); one out of range [0, axis_size)
 * returns MCUGEN_ARG_ERROR. */
typedef struct {
    int32_t batch;
    int32_t outer;
    int32_t coords;
    int32_t axis_size;
    int32_t row_bytes;
    int32_t index_bytes;
} mcugen_gather_params;

mcugen_status mcugen_move(const mcugen_move_params *params, const void *input, void *output);

/* Writes `count` copies of the element_bytes-byte value at `value` to output. */
mcugen_status mcugen_fill(const void *value, int32_t element_bytes, int32_t count, void *output);

mcugen_status mcugen_gather(const mcugen_gather_params *params, const void *input,
                            const void *indices, void *output);

#endif /* MCUGEN_MOVEMENT_H */
