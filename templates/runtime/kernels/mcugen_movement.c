/* mcugen runtime: data movement on bytes, the kernels behind mcugen_movement.h.
 * Ops: CONCATENATION, PACK, UNPACK, SPLIT, SPLIT_V, SLICE, STRIDED_SLICE, PAD, PADV2, TRANSPOSE,
 * GATHER; any dtype (an element is `element_bytes` bytes). No arithmetic: the bytes TFLite's
 * reference kernels move. Fast paths: none. */
#include "mcugen_movement.h"

#include <stddef.h>
#include <string.h>

mcugen_status mcugen_move(const mcugen_move_params *params, const void *input, void *output)
{
    const uint8_t *in = (const uint8_t *)input;
    uint8_t *out = (uint8_t *)output;
    int32_t index[MCUGEN_MOVE_MAX_LOOPS];
    int32_t in_offset;
    int32_t out_offset;
    int level;

    if (params == NULL || params->run_bytes < 0) {
        return MCUGEN_ARG_ERROR;
    }
    for (level = 0; level < MCUGEN_MOVE_MAX_LOOPS; ++level) {
        if (params->extent[level] < 0) {
            return MCUGEN_ARG_ERROR;
        }
        if (params->extent[level] == 0) {
            return MCUGEN_OK; /* an empty tensor: nothing to copy */
        }
        index[level] = 0;
    }
    if (params->run_bytes == 0) {
        return MCUGEN_OK;
    }
    if (in == NULL || out == NULL) {
        return MCUGEN_ARG_ERROR;
    }
    in_offset = params->input_offset;
    out_offset = params->output_offset;
    for (;;) {
        memcpy(out + out_offset, in + in_offset, (size_t)params->run_bytes);
        /* Odometer step: advance the innermost level, carrying into outer ones. */
        level = MCUGEN_MOVE_MAX_LOOPS - 1;
        while (level >= 0) {
            if (++index[level] < params->extent[level]) {
                in_offset += params->input_stride[level];
                out_offset += params->output_stride[level];
                break;
            }
            index[level] = 0;
            in_offset -= params->input_stride[level] * (params->extent[level] - 1);
            out_offset -= params->output_stride[level] * (params->extent[level] - 1);
            --level;
        }
        if (level < 0) {
            return MCUGEN_OK;
        }
    }
}

mcugen_status mcugen_fill(const void *value, int32_t element_bytes, int32_t count, void *output)
{
    uint8_t *out = (uint8_t *)output;
    int32_t i;

    if (element_bytes <= 0 || count < 0) {
        return MCUGEN_ARG_ERROR;
    }
    if (count == 0) {
        return MCUGEN_OK;
    }
    if (value == NULL || out == NULL) {
        return MCUGEN_ARG_ERROR;
    }
    for (i = 0; i < count; ++i) {
        memcpy(out + (size_t)i * (size_t)element_bytes, value, (size_t)element_bytes);
    }
    return MCUGEN_OK;
}

static int64_t mcugen_index_at(const void *indices, int32_t index_bytes, int32_t position)
{
    if (index_bytes == 8) {
        return ((const int64_t *)indices)[position];
    }
    return ((const int32_t *)indices)[position];
}

mcugen_status mcugen_gather(const mcugen_gather_params *params, const void *input,
                            const void *indices, void *output)
{
    const uint8_t *in = (const uint8_t *)input;
    uint8_t *out = (uint8_t *)output;
    int32_t b;
    int32_t o;
    int32_t c;

    if (params == NULL || (params->index_bytes != 4 && params->index_bytes != 8) ||
        params->batch < 0 || params->outer < 0 || params->coords < 0 ||
        params->axis_size < 0 || params->row_bytes < 0) {
        return MCUGEN_ARG_ERROR;
    }
    if (params->batch == 0 || params->outer == 0 || params->coords == 0) {
        return MCUGEN_OK;
    }
    if (in == NULL || out == NULL || indices == NULL) {
        return MCUGEN_ARG_ERROR;
    }
    for (b = 0; b < params->batch; ++b) {
        for (c = 0; c < params->coords; ++c) {
            const int64_t row = mcugen_index_at(indices, params->index_bytes, b * params->coords + c);
            if (row < 0 || row >= params->axis_size) {
                return MCUGEN_ARG_ERROR;
            }
        }
    }
    for (b = 0; b < params->batch; ++b) {
        for (o = 0; o < params->outer; ++o) {
            const size_t block = (size_t)b * (size_t)params->outer + (size_t)o;
            const uint8_t *source = in + block * (size_t)params->axis_size * (size_t)params->row_bytes;
            uint8_t *target = out + block * (size_t)params->coords * (size_t)params->row_bytes;
            for (c = 0; c < params->coords; ++c) {
                const int64_t row = mcugen_index_at(indices, params->index_bytes, b * params->coords + c);
                memcpy(target + (size_t)c * (size_t)params->row_bytes,
                       source + (size_t)row * (size_t)params->row_bytes, (size_t)params->row_bytes);
            }
        }
    }
    return MCUGEN_OK;
}
