/* mcugen runtime: the interface of a user's kernel for a CUSTOM op (docs/custom_ops.md).
 *
 * `mcugen build MODEL --custom-op NAME=kernel.c` copies kernel.c into the output directory and
 * calls, for every CUSTOM op of the model whose custom code is NAME,
 *
 *     mcugen_status NAME_kernel(const mcugen_custom_args *args);
 *
 * (NAME with every character other than a letter, digit or '_' replaced by '_'). The kernel
 * returns MCUGEN_OK or any other status, which stops <prefix>_invoke() and is its result.
 * Everything in args is valid during the call only; the kernel keeps no pointer to it.
 * Scratch: a line `// mcugen: scratch BYTES` in kernel.c asks for BYTES of scratch, planned
 * in the arena like every kernel's (16-byte aligned; its contents do not survive the call).
 */
#ifndef MCUGEN_CUSTOM_H
#define MCUGEN_CUSTOM_H

#include <stdint.h>

#include "mcugen_nn_types.h"

/* The most dimensions a tensor handed to a custom kernel has (TFLite's kernels take at most 6). */
#define MCUGEN_CUSTOM_MAX_RANK 6

typedef enum {
    MCUGEN_DTYPE_INT8 = 0,
    MCUGEN_DTYPE_UINT8 = 1,
    MCUGEN_DTYPE_INT16 = 2,
    MCUGEN_DTYPE_INT32 = 3,
    MCUGEN_DTYPE_INT64 = 4,
    MCUGEN_DTYPE_FLOAT32 = 5,
    MCUGEN_DTYPE_BOOL = 6
} mcugen_dtype;

/* What a tensor is: element type, shape (dims[0] outermost, row-major data, dims past `rank`
 * are 0) and affine quantization, real = scale * (q - zero_point). quant_count is 0 for a
 * tensor without quantization, 1 per tensor, and the extent of dims[quant_axis] per channel;
 * scale and zero_point then point at quant_count values each (NULL when quant_count is 0). */
typedef struct {
    mcugen_dtype dtype;
    int32_t rank;
    int32_t dims[MCUGEN_CUSTOM_MAX_RANK];
    int32_t quant_count;
    int32_t quant_axis;
    const float *scale;
    const int32_t *zero_point;
} mcugen_custom_tensor_info;

/* An input: `data` in the arena or in flash (a constant); NULL for an omitted optional input
 * (its info then has rank 0). */
typedef struct {
    const void *data;
    mcugen_custom_tensor_info info;
} mcugen_custom_input;

/* An output: `data` in the arena, exactly info's element count times the element size. */
typedef struct {
    void *data;
    mcugen_custom_tensor_info info;
} mcugen_custom_output;

typedef struct {
    const mcugen_custom_input *inputs;   /* in the model's order */
    int32_t input_count;
    const mcugen_custom_output *outputs; /* in the model's order */
    int32_t output_count;
    const uint8_t *options;              /* the op's custom options, as stored (a flexbuffer), in flash */
    int32_t options_size;                /* bytes; 0 (options NULL) when the op has none */
    void *scratch;                       /* the declared scratch bytes; NULL when none was declared */
    int32_t scratch_size;
    int32_t op_index;                    /* the op's index in the .tflite file, for messages */
} mcugen_custom_args;

/* The type of every custom kernel. */
typedef mcugen_status (*mcugen_custom_kernel)(const mcugen_custom_args *args);

#endif /* MCUGEN_CUSTOM_H */
