/* mcugen runtime: reductions, the kernels behind mcugen_reduce.h.
 * Ops: MEAN, SUM, REDUCE_MAX, ARG_MAX; int8, int16, float32 as each op allows.
 * Reference arithmetic: TFLite's reference reduce kernels (int32 sums, the quantized mean's
 * multiplier and shift, the float sums in the reference's order). Fast paths: none (a global
 * pool's int sums four outputs a pass, in portable C). */
#include "mcugen_reduce.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

#include "mcugen_fixedpoint.h"

/* An odometer over a loop nest: `offset` is the input offset of the current position. */
typedef struct {
    int32_t index[MCUGEN_REDUCE_MAX_LOOPS];
    size_t offset;
} nest_cursor;

static int nest_is_valid(const mcugen_loop_nest *nest)
{
    for (int32_t level = 0; level < MCUGEN_REDUCE_MAX_LOOPS; ++level) {
        if (nest->extent[level] < 1 || nest->stride[level] < 0) {
            return 0;
        }
    }
    return 1;
}

static int params_are_valid(const mcugen_reduce_params *params, const void *input,
                            const void *output)
{
    return params != NULL && input != NULL && output != NULL && nest_is_valid(&params->outer) &&
           nest_is_valid(&params->inner);
}

static int32_t nest_count(const mcugen_loop_nest *nest)
{
    int32_t count = 1;
    for (int32_t level = 0; level < MCUGEN_REDUCE_MAX_LOOPS; ++level) {
        count *= nest->extent[level];
    }
    return count;
}

static void cursor_reset(nest_cursor *cursor)
{
    for (int32_t level = 0; level < MCUGEN_REDUCE_MAX_LOOPS; ++level) {
        cursor->index[level] = 0;
    }
    cursor->offset = 0;
}

/* Advance to the next position at `level` or above (MCUGEN_REDUCE_MAX_LOOPS - 1: the next
 * element; one less: the next row of the innermost level), row-major order. */
static void cursor_step_from(nest_cursor *cursor, const mcugen_loop_nest *nest, int32_t level)
{
    for (; level >= 0; --level) {
        cursor->offset += (size_t)nest->stride[level];
        if (++cursor->index[level] < nest->extent[level]) {
            return;
        }
        cursor->offset -= (size_t)nest->extent[level] * (size_t)nest->stride[level];
        cursor->index[level] = 0;
    }
}

static void cursor_step(nest_cursor *cursor, const mcugen_loop_nest *nest)
{
    cursor_step_from(cursor, nest, MCUGEN_REDUCE_MAX_LOOPS - 1);
}

/* The quantized sum, requantized and clamped; the build bounds the count so |sum| < 2^31. */
static int32_t requantize_sum(int32_t sum, const mcugen_reduce_quant_params *q)
{
    const int32_t scaled = mcugen_requantize(sum + q->sum_offset, q->multiplier, q->shift);
    return mcugen_clamp(scaled + q->output_offset, q->output_min, q->output_max);
}

static int quant_is_valid(const mcugen_reduce_quant_params *quant)
{
    return quant != NULL && quant->shift >= -31 && quant->shift <= 30 &&
           quant->output_min <= quant->output_max;
}

/* Whether only the innermost level of `nest` has more than one step. */
static int one_level(const mcugen_loop_nest *nest)
{
    for (int32_t level = 0; level < MCUGEN_REDUCE_MAX_LOOPS - 1; ++level) {
        if (nest->extent[level] != 1) {
            return 0;
        }
    }
    return 1;
}

/* A global pool's shape: the outputs one contiguous run (channels), each the sum of `count`
 * elements `stride` apart (the pixels). Four outputs a pass share the walk over the pixels, the
 * sums in registers, where the odometer loop costs ~180 instructions an output. */
#define MCUGEN_REDUCE_SUM_RUN(NAME, T)                                                        \
    static void NAME(const T *input, int32_t outputs, int32_t count, int32_t stride,          \
                     const mcugen_reduce_quant_params *quant, T *output)                      \
    {                                                                                         \
        int32_t o = 0;                                                                        \
        for (; o + 4 <= outputs; o += 4) {                                                    \
            int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                           \
            const T *p = input + o;                                                           \
            for (int32_t k = 0; k < count; ++k, p += stride) {                                \
                s0 += p[0];                                                                   \
                s1 += p[1];                                                                   \
                s2 += p[2];                                                                   \
                s3 += p[3];                                                                   \
            }                                                                                 \
            output[o] = (T)requantize_sum(s0, quant);                                         \
            output[o + 1] = (T)requantize_sum(s1, quant);                                     \
            output[o + 2] = (T)requantize_sum(s2, quant);                                     \
            output[o + 3] = (T)requantize_sum(s3, quant);                                     \
        }                                                                                     \
        for (; o < outputs; ++o) {                                                            \
            int32_t sum = 0;                                                                  \
            for (int32_t k = 0; k < count; ++k) {                                             \
                sum += input[o + (size_t)k * (size_t)stride];                                 \
            }                                                                                 \
            output[o] = (T)requantize_sum(sum, quant);                                        \
        }                                                                                     \
    }

MCUGEN_REDUCE_SUM_RUN(sum_run_s8, int8_t)
MCUGEN_REDUCE_SUM_RUN(sum_run_s16, int16_t)

/* int8 and int16 sums: the same loop nest, only the element type differs. */
#define MCUGEN_REDUCE_SUM_REQUANT(NAME, T, RUN)                                               \
    mcugen_status NAME(const mcugen_reduce_params *params,                                    \
                       const mcugen_reduce_quant_params *quant, const T *input, T *output)    \
    {                                                                                         \
        if (!params_are_valid(params, input, output) || !quant_is_valid(quant)) {             \
            return MCUGEN_ARG_ERROR;                                                          \
        }                                                                                     \
        const int32_t last = MCUGEN_REDUCE_MAX_LOOPS - 1;                                     \
        if (one_level(&params->outer) && params->outer.stride[last] == 1 &&                   \
            one_level(&params->inner)) {                                                      \
            RUN(input, params->outer.extent[last], params->inner.extent[last],                \
                params->inner.stride[last], quant, output);                                   \
            return MCUGEN_OK;                                                                 \
        }                                                                                     \
        const int32_t outputs = nest_count(&params->outer);                                   \
        const int32_t count = nest_count(&params->inner);                                     \
        const int32_t row_length = params->inner.extent[MCUGEN_REDUCE_MAX_LOOPS - 1];         \
        const int32_t row_stride = params->inner.stride[MCUGEN_REDUCE_MAX_LOOPS - 1];         \
        nest_cursor out, in;                                                                  \
        cursor_reset(&out);                                                                   \
        for (int32_t o = 0; o < outputs; ++o) {                                               \
            const T *base = input + out.offset;                                               \
            int32_t sum = 0;                                                                  \
            cursor_reset(&in);                                                                \
            /* the innermost level as a plain strided loop, the odometer only between rows    \
             * (an integer sum: the order does not matter) */                                 \
            for (int32_t r = 0; r < count / row_length; ++r) {                                \
                const T *row = base + in.offset;                                              \
                for (int32_t k = 0; k < row_length; ++k) {                                    \
                    sum += row[(size_t)k * (size_t)row_stride];                               \
                }                                                                             \
                cursor_step_from(&in, &params->inner, MCUGEN_REDUCE_MAX_LOOPS - 2);           \
            }                                                                                 \
            output[o] = (T)requantize_sum(sum, quant);                                        \
            cursor_step(&out, &params->outer);                                                \
        }                                                                                     \
        return MCUGEN_OK;                                                                     \
    }

MCUGEN_REDUCE_SUM_REQUANT(mcugen_reduce_sum_requant_s8, int8_t, sum_run_s8)
MCUGEN_REDUCE_SUM_REQUANT(mcugen_reduce_sum_requant_s16, int16_t, sum_run_s16)

mcugen_status mcugen_reduce_sum_f32(const mcugen_reduce_params *params, int32_t mean,
                                    const float *input, float *output)
{
    if (!params_are_valid(params, input, output)) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t outputs = nest_count(&params->outer);
    const int32_t count = nest_count(&params->inner);
    nest_cursor out, in;
    cursor_reset(&out);
    for (int32_t o = 0; o < outputs; ++o) {
        const float *base = input + out.offset;
        float sum = 0.0f;
        int32_t i = 0;
        cursor_reset(&in);
        if (params->seed_with_first) {
            sum = base[0];
            cursor_step(&in, &params->inner);
            i = 1;
        }
        for (; i < count; ++i) {
            sum = sum + base[in.offset];
            cursor_step(&in, &params->inner);
        }
        output[o] = mean ? sum / (float)count : sum;
        cursor_step(&out, &params->outer);
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_reduce_max_s8(const mcugen_reduce_params *params, const int8_t *input,
                                   int8_t *output)
{
    if (!params_are_valid(params, input, output)) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t outputs = nest_count(&params->outer);
    const int32_t count = nest_count(&params->inner);
    nest_cursor out, in;
    cursor_reset(&out);
    for (int32_t o = 0; o < outputs; ++o) {
        const int8_t *base = input + out.offset;
        int8_t max = INT8_MIN; /* the first element when seeding gives the same maximum */
        cursor_reset(&in);
        for (int32_t i = 0; i < count; ++i) {
            const int8_t value = base[in.offset];
            max = value > max ? value : max;
            cursor_step(&in, &params->inner);
        }
        output[o] = max;
        cursor_step(&out, &params->outer);
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_reduce_max_f32(const mcugen_reduce_params *params, const float *input,
                                    float *output)
{
    if (!params_are_valid(params, input, output)) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t outputs = nest_count(&params->outer);
    const int32_t count = nest_count(&params->inner);
    nest_cursor out, in;
    cursor_reset(&out);
    for (int32_t o = 0; o < outputs; ++o) {
        const float *base = input + out.offset;
        float max = -FLT_MAX; /* numeric_limits<float>::lowest() */
        int32_t i = 0;
        cursor_reset(&in);
        if (params->seed_with_first) {
            max = base[0];
            cursor_step(&in, &params->inner);
            i = 1;
        }
        for (; i < count; ++i) {
            const float value = base[in.offset];
            max = value > max ? value : max;
            cursor_step(&in, &params->inner);
        }
        output[o] = max;
        cursor_step(&out, &params->outer);
    }
    return MCUGEN_OK;
}

static int arg_max_params_are_valid(const mcugen_arg_max_params *params, const void *input,
                                    const void *output)
{
    return params != NULL && input != NULL && output != NULL && params->outer >= 0 &&
           params->axis_size >= 1 && params->inner >= 0;
}

mcugen_status mcugen_arg_max_s8(const mcugen_arg_max_params *params, const int8_t *input,
                                int32_t *output)
{
    if (!arg_max_params_are_valid(params, input, output)) {
        return MCUGEN_ARG_ERROR;
    }
    const size_t inner = (size_t)params->inner;
    for (int32_t o = 0; o < params->outer; ++o) {
        const int8_t *row = input + (size_t)o * (size_t)params->axis_size * inner;
        for (size_t k = 0; k < inner; ++k) {
            int8_t best = row[k];
            int32_t best_index = 0;
            for (int32_t i = 1; i < params->axis_size; ++i) {
                const int8_t value = row[(size_t)i * inner + k];
                if (value > best) { /* strictly greater: ties keep the first index */
                    best = value;
                    best_index = i;
                }
            }
            *output++ = best_index;
        }
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_arg_max_f32(const mcugen_arg_max_params *params, const float *input,
                                 int32_t *output)
{
    if (!arg_max_params_are_valid(params, input, output)) {
        return MCUGEN_ARG_ERROR;
    }
    const size_t inner = (size_t)params->inner;
    for (int32_t o = 0; o < params->outer; ++o) {
        const float *row = input + (size_t)o * (size_t)params->axis_size * inner;
        for (size_t k = 0; k < inner; ++k) {
            float best = row[k];
            int32_t best_index = 0;
            for (int32_t i = 1; i < params->axis_size; ++i) {
                const float value = row[(size_t)i * inner + k];
                const int better = params->nan_aware
                                       ? !isnan(value) && (isnan(best) || value > best)
                                       : value > best;
                if (better) {
                    best = value;
                    best_index = i;
                }
            }
            *output++ = best_index;
        }
    }
    return MCUGEN_OK;
}
