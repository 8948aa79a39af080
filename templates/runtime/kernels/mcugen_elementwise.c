/* mcugen runtime: elementwise binary ops with broadcasting, the kernels behind
 * mcugen_elementwise.h. Ops: ADD, SUB, MUL, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, PRELU; int8,
 * int16, float32. Reference arithmetic: TFLite's reference kernels (AddFunc, MulFunc, ...; see
 * the header). One broadcast loop, one row function per kernel.
 * Fast paths: int8 ADD/SUB rows with element steps 0 or 1 under MCUGEN_FAST_DSP (Cortex-M4/M7)
 * or MCUGEN_FAST_MVE (Cortex-M55), for TFLite's left_shift 20 and one input of exact scale;
 * the ISA code is in mcugen_elementwise_fast_dsp.c / _mve.c (see mcugen_elementwise_fast.h).
 * -DMCUGEN_PORTABLE turns the dispatch off. */
#include "mcugen_elementwise.h"

#include <stddef.h>
#include <string.h>

#include "mcugen_elementwise_fast.h" /* MCUGEN_FAST_DSP, MCUGEN_FAST_MVE and their int8 ADD/SUB */
#include "mcugen_fixedpoint.h"

typedef mcugen_elementwise_args op_args;

/* One row of the innermost loop level: `count` outputs, each input with its element step. */
typedef void (*row_fn)(int32_t count, const void *input1, int32_t step1, const void *input2,
                       int32_t step2, void *output, const op_args *args);

static int loop_is_valid(const mcugen_broadcast *loop)
{
    for (int32_t level = 0; level < MCUGEN_BROADCAST_MAX_LOOPS; ++level) {
        if (loop->extent[level] < 1 || loop->input1_stride[level] < 0 ||
            loop->input2_stride[level] < 0) {
            return 0;
        }
    }
    return 1;
}

/* The shared broadcast loop: the outer levels find each row's start, `row` does the rest. */
static void broadcast_rows(const mcugen_broadcast *loop, const void *input1, size_t size1,
                           const void *input2, size_t size2, void *output, size_t size_out,
                           row_fn row, const op_args *args)
{
    const int32_t *n = loop->extent;
    const int32_t *s1 = loop->input1_stride;
    const int32_t *s2 = loop->input2_stride;
    const char *in1 = (const char *)input1;
    const char *in2 = (const char *)input2;
    char *out = (char *)output;
    size_t written = 0;
    for (int32_t i0 = 0; i0 < n[0]; ++i0) {
        const size_t a0 = (size_t)i0 * (size_t)s1[0];
        const size_t b0 = (size_t)i0 * (size_t)s2[0];
        for (int32_t i1 = 0; i1 < n[1]; ++i1) {
            const size_t a1 = a0 + (size_t)i1 * (size_t)s1[1];
            const size_t b1 = b0 + (size_t)i1 * (size_t)s2[1];
            for (int32_t i2 = 0; i2 < n[2]; ++i2) {
                const size_t a2 = a1 + (size_t)i2 * (size_t)s1[2];
                const size_t b2 = b1 + (size_t)i2 * (size_t)s2[2];
                for (int32_t i3 = 0; i3 < n[3]; ++i3) {
                    const size_t a3 = a2 + (size_t)i3 * (size_t)s1[3];
                    const size_t b3 = b2 + (size_t)i3 * (size_t)s2[3];
                    for (int32_t i4 = 0; i4 < n[4]; ++i4) {
                        const size_t a4 = a3 + (size_t)i4 * (size_t)s1[4];
                        const size_t b4 = b3 + (size_t)i4 * (size_t)s2[4];
                        row(n[5], in1 + a4 * size1, s1[5], in2 + b4 * size2, s2[5],
                            out + written * size_out, args);
                        written += (size_t)n[5];
                    }
                }
            }
        }
    }
}

/* A row function applying ELEMENT (an expression of a, b and args) to each pair. */
#define MCUGEN_ROW(name, T1, T2, TO, ELEMENT)                                                   \
    static void name(int32_t count, const void *input1, int32_t step1, const void *input2,     \
                     int32_t step2, void *output, const op_args *args)                         \
    {                                                                                           \
        const T1 *x1 = (const T1 *)input1;                                                      \
        const T2 *x2 = (const T2 *)input2;                                                      \
        TO *y = (TO *)output;                                                                   \
        (void)args;                                                                             \
        for (int32_t i = 0; i < count; ++i) {                                                   \
            const T1 a = x1[(size_t)i * (size_t)step1];                                         \
            const T2 b = x2[(size_t)i * (size_t)step2];                                         \
            y[i] = (TO)(ELEMENT);                                                               \
        }                                                                                       \
    }

/* --- quantized per-element arithmetic -------------------------------------------------- */

/* AddFunc's input rescale: (x + offset) << left_shift, times the input's multiplier. */
static int32_t scale_input(int32_t x, int32_t offset, int32_t multiplier, int32_t shift,
                           int32_t left_shift)
{
    /* |x + offset| <= 65535 and left_shift <= 15 for int16 (<= 255, 20 for int8): no overflow. */
    return mcugen_requantize((x + offset) * ((int32_t)1 << left_shift), multiplier, shift);
}

/* ADD (sign 1) and SUB (sign -1), TFLite's AddFunc / SubFunc. */
static int32_t rescale_add(int32_t x1, int32_t x2, int32_t sign, const op_args *args)
{
    const mcugen_rescale_quant_params *q = args->rescale;
    const int32_t scaled1 =
        scale_input(x1, q->input1_offset, q->input1_multiplier, q->input1_shift, q->left_shift);
    const int32_t scaled2 =
        scale_input(x2, q->input2_offset, q->input2_multiplier, q->input2_shift, q->left_shift);
    const int32_t raw = mcugen_requantize(sign > 0 ? scaled1 + scaled2 : scaled1 - scaled2,
                                          q->output_multiplier, q->output_shift) +
                        q->output_offset;
    return mcugen_clamp(raw, args->min, args->max);
}

/* SquaredDifference: the rescaled difference squared, then the output rescale. */
static int32_t squared_difference(int32_t x1, int32_t x2, const op_args *args)
{
    const mcugen_rescale_quant_params *q = args->rescale;
    const int32_t diff =
        scale_input(x1, q->input1_offset, q->input1_multiplier, q->input1_shift, q->left_shift) -
        scale_input(x2, q->input2_offset, q->input2_multiplier, q->input2_shift, q->left_shift);
    /* |diff| <= 2^15 for both int8 (left shift 7) and int16 (0): the square fits int32. */
    const int32_t raw =
        mcugen_requantize(diff * diff, q->output_multiplier, q->output_shift) + q->output_offset;
    return mcugen_clamp(raw, args->min, args->max);
}

/* LiteRT's int16 power-of-two ADD (sign 1) and SUB (sign -1). */
static int32_t pot_add(int32_t x1, int32_t x2, int32_t sign, const op_args *args)
{
    const int32_t scaled1 = mcugen_rounding_divide_by_pot(x1, args->pot->input1_shift);
    const int32_t scaled2 = mcugen_rounding_divide_by_pot(x2, args->pot->input2_shift);
    return mcugen_clamp(sign > 0 ? scaled1 + scaled2 : scaled1 - scaled2, args->min, args->max);
}

static int32_t mul(int32_t x1, int32_t x2, const op_args *args)
{
    const mcugen_mul_quant_params *q = args->mul;
    /* |product| <= 2^30 (int16 has zero points 0; int8 offsets keep it below 2^16). */
    const int32_t product = (x1 + q->input1_offset) * (x2 + q->input2_offset);
    const int32_t raw =
        mcugen_requantize(product, q->output_multiplier, q->output_shift) + q->output_offset;
    return mcugen_clamp(raw, args->min, args->max);
}

static int32_t prelu(int32_t x, int32_t alpha, const op_args *args)
{
    const mcugen_prelu_quant_params *q = args->prelu;
    const int32_t input = x + q->input_offset;
    const int32_t raw =
        input >= 0
            ? mcugen_requantize(input, q->identity_multiplier, q->identity_shift)
            : mcugen_requantize(input * (alpha + q->alpha_offset), q->alpha_multiplier,
                                q->alpha_shift);
    return mcugen_clamp(raw + q->output_offset, args->min, args->max);
}

/* --- float per-element arithmetic (ActivationFunctionWithMinMax: min(max(x, lo), hi)) ---- */

static float clamp_f32(float x, const op_args *args)
{
    const float low = x < args->min_f32 ? args->min_f32 : x;
    return args->max_f32 < low ? args->max_f32 : low;
}

static float squared_difference_f32(float a, float b)
{
    const float diff = a - b;
    return diff * diff;
}

MCUGEN_ROW(add_s8_row_portable, int8_t, int8_t, int8_t, rescale_add(a, b, 1, args))
MCUGEN_ROW(add_s16_row, int16_t, int16_t, int16_t, rescale_add(a, b, 1, args))
MCUGEN_ROW(sub_s8_row_portable, int8_t, int8_t, int8_t, rescale_add(a, b, -1, args))
MCUGEN_ROW(sub_s16_row, int16_t, int16_t, int16_t, rescale_add(a, b, -1, args))
MCUGEN_ROW(add_pot_s16_row, int16_t, int16_t, int16_t, pot_add(a, b, 1, args))
MCUGEN_ROW(sub_pot_s16_row, int16_t, int16_t, int16_t, pot_add(a, b, -1, args))
MCUGEN_ROW(squared_difference_s8_row, int8_t, int8_t, int8_t, squared_difference(a, b, args))
MCUGEN_ROW(squared_difference_s16_row, int16_t, int16_t, int16_t, squared_difference(a, b, args))
MCUGEN_ROW(mul_s8_row, int8_t, int8_t, int8_t, mul(a, b, args))
MCUGEN_ROW(mul_s16_row, int16_t, int16_t, int16_t, mul(a, b, args))
MCUGEN_ROW(prelu_s8_row, int8_t, int8_t, int8_t, prelu(a, b, args))
MCUGEN_ROW(prelu_s16_row, int16_t, int8_t, int16_t, prelu(a, b, args))
MCUGEN_ROW(maximum_s8_row, int8_t, int8_t, int8_t, a > b ? a : b)
MCUGEN_ROW(maximum_s16_row, int16_t, int16_t, int16_t, a > b ? a : b)
MCUGEN_ROW(minimum_s8_row, int8_t, int8_t, int8_t, a < b ? a : b)
MCUGEN_ROW(minimum_s16_row, int16_t, int16_t, int16_t, a < b ? a : b)
MCUGEN_ROW(add_f32_row, float, float, float, clamp_f32(a + b, args))
MCUGEN_ROW(sub_f32_row, float, float, float, clamp_f32(a - b, args))
MCUGEN_ROW(mul_f32_row, float, float, float, clamp_f32(a * b, args))
MCUGEN_ROW(squared_difference_f32_row, float, float, float, squared_difference_f32(a, b))
MCUGEN_ROW(maximum_f32_row, float, float, float, a > b ? a : b)
MCUGEN_ROW(minimum_f32_row, float, float, float, a < b ? a : b)
MCUGEN_ROW(prelu_f32_row, float, float, float, a >= 0.0f ? a : a * b)

/* --- int8 ADD/SUB rows: Helium (Cortex-M55), DSP-extension cores (Cortex-M4/M7) ------------ */

#if defined(MCUGEN_FAST_DSP) || defined(MCUGEN_FAST_MVE)


static void add_prepare(mcugen_add_fast_s8_args *a, const mcugen_elementwise_params *params,
                        const mcugen_rescale_quant_params *q, int32_t sign)
{
    a->fast = 0;
    if (params == NULL || q == NULL || q->left_shift != 20 || params->activation.min < -128 ||
        params->activation.max > 127 || params->activation.min > params->activation.max) {
        return;
    }
    const int32_t exact1 = q->input1_multiplier == ((int32_t)1 << 30) && q->input1_shift == 0;
    const int32_t exact2 = q->input2_multiplier == ((int32_t)1 << 30) && q->input2_shift == 0;
    int32_t g_multiplier = exact1 ? q->input2_multiplier : q->input1_multiplier;
    int32_t g_shift = exact1 ? q->input2_shift : q->input1_shift;
    const int32_t e_offset = exact1 ? q->input1_offset : q->input2_offset;
    const int32_t g_offset = exact1 ? q->input2_offset : q->input1_offset;
    if (g_shift == 0 && g_multiplier == ((int32_t)1 << 30)) {
        g_multiplier = INT32_MAX, g_shift = -1;
    }
    if ((!exact1 && !exact2) || g_multiplier < 0 || g_shift > -1 || g_shift < -31 ||
        q->output_multiplier < 0 || q->output_shift > -1 || q->output_shift < -31 ||
        e_offset < -128 || e_offset > 128 || g_offset < -128 || g_offset > 128 ||
        q->output_offset < -128 || q->output_offset > 127) {
        return;
    }
    const int32_t r = -g_shift, ro = -q->output_shift;
    a->exact1 = exact1;
    a->g_multiplier = g_multiplier;
    a->g_shift = r;
    a->o_multiplier = q->output_multiplier;
    a->o_shift = ro;
    a->o_offset = q->output_offset;
    a->fast = mcugen_add_fast_s8_prepare(a, params, sign, e_offset, g_offset);
}


/* Steps 0 or 1: whole blocks of four by `blocks` (a broadcast scalar replicated in chunks of
 * 64), the last count % 4 elements by the portable row. */
static void add_s8_fast(int32_t count, const int8_t *x1, int32_t step1, const int8_t *x2,
                        int32_t step2, int8_t *y, const mcugen_add_fast_s8_args *a,
                        mcugen_add_fast_s8_blocks_fn blocks, row_fn portable)
{
    const int8_t *xe = a->exact1 ? x1 : x2, *xg = a->exact1 ? x2 : x1;
    const int32_t se = a->exact1 ? step1 : step2, sg = a->exact1 ? step2 : step1;
    const int32_t whole = count & ~3;
    if (se == 1 && sg == 1) {
        blocks(whole / 4, xe, xg, y, a);
    } else {
        int8_t rep_e[64], rep_g[64];
        memset(rep_e, xe[0], sizeof(rep_e));
        memset(rep_g, xg[0], sizeof(rep_g));
        for (int32_t done = 0; done < whole; done += 64) {
            const int32_t n = whole - done < 64 ? whole - done : 64;
            blocks(n / 4, se != 0 ? xe + done : rep_e, sg != 0 ? xg + done : rep_g, y + done,
                   a);
        }
    }
    if (whole < count) {
        portable(count - whole, x1 + whole * step1, step1, x2 + whole * step2, step2, y + whole,
                 &a->base);
    }
}

static int add_fast_steps(const mcugen_add_fast_s8_args *a, int32_t step1, int32_t step2)
{
    return a->fast && (step1 == 0 || step1 == 1) && (step2 == 0 || step2 == 1);
}

static void add_s8_row(int32_t count, const void *input1, int32_t step1, const void *input2,
                       int32_t step2, void *output, const op_args *args)
{
    const mcugen_add_fast_s8_args *a = (const mcugen_add_fast_s8_args *)args;
    if (add_fast_steps(a, step1, step2)) {
        add_s8_fast(count, (const int8_t *)input1, step1, (const int8_t *)input2, step2,
                    (int8_t *)output, a, mcugen_add_fast_s8_blocks, add_s8_row_portable);
    } else {
        add_s8_row_portable(count, input1, step1, input2, step2, output, args);
    }
}

static void sub_s8_row(int32_t count, const void *input1, int32_t step1, const void *input2,
                       int32_t step2, void *output, const op_args *args)
{
    const mcugen_add_fast_s8_args *a = (const mcugen_add_fast_s8_args *)args;
    if (add_fast_steps(a, step1, step2)) {
        add_s8_fast(count, (const int8_t *)input1, step1, (const int8_t *)input2, step2,
                    (int8_t *)output, a,
                    a->exact1 ? mcugen_sub_fast_s8_blocks_e1 : mcugen_sub_fast_s8_blocks_e2,
                    sub_s8_row_portable);
    } else {
        sub_s8_row_portable(count, input1, step1, input2, step2, output, args);
    }
}

#define MCUGEN_ADD_S8_FAST 1
#else
#define add_s8_row add_s8_row_portable
#define sub_s8_row sub_s8_row_portable
#endif

/* --- argument checks --------------------------------------------------------------------- */

static int shift_is_valid(int32_t shift)
{
    return shift >= -31 && shift <= 31;
}

static int rescale_is_valid(const mcugen_rescale_quant_params *q)
{
    return q != NULL && q->left_shift >= 0 && q->left_shift <= 20 && q->input1_shift <= 0 &&
           q->input2_shift <= 0 && shift_is_valid(q->input1_shift) &&
           shift_is_valid(q->input2_shift) && shift_is_valid(q->output_shift);
}

static int pot_is_valid(const mcugen_pot_quant_params *q)
{
    return q != NULL && q->input1_shift >= 0 && q->input1_shift <= 15 && q->input2_shift >= 0 &&
           q->input2_shift <= 15;
}

static int mul_is_valid(const mcugen_mul_quant_params *q)
{
    return q != NULL && shift_is_valid(q->output_shift);
}

static int prelu_is_valid(const mcugen_prelu_quant_params *q)
{
    return q != NULL && shift_is_valid(q->identity_shift) && shift_is_valid(q->alpha_shift);
}

static int params_are_valid(const mcugen_elementwise_params *params)
{
    return params != NULL && loop_is_valid(&params->loop) &&
           params->activation.min <= params->activation.max;
}

/* Quantized kernels: check, fill the op_args, walk the loop. */
static mcugen_status run_quantized(const mcugen_elementwise_params *params, int quant_ok,
                                   op_args *args, const void *input1, size_t size1,
                                   const void *input2, size_t size2, void *output,
                                   size_t size_out, row_fn row)
{
    if (!params_are_valid(params) || !quant_ok || input1 == NULL || input2 == NULL ||
        output == NULL) {
        return MCUGEN_ARG_ERROR;
    }
    args->min = params->activation.min;
    args->max = params->activation.max;
    broadcast_rows(&params->loop, input1, size1, input2, size2, output, size_out, row, args);
    return MCUGEN_OK;
}

static mcugen_status run_plain(const mcugen_broadcast *loop, const op_args *args,
                               const void *input1, const void *input2, void *output,
                               size_t size, size_t size2, row_fn row)
{
    if (loop == NULL || !loop_is_valid(loop) || input1 == NULL || input2 == NULL ||
        output == NULL) {
        return MCUGEN_ARG_ERROR;
    }
    broadcast_rows(loop, input1, size, input2, size2, output, size, row, args);
    return MCUGEN_OK;
}

static mcugen_status run_f32(const mcugen_elementwise_f32_params *params, const float *input1,
                             const float *input2, float *output, row_fn row)
{
    if (params == NULL || !(params->activation_min <= params->activation_max)) {
        return MCUGEN_ARG_ERROR;
    }
    op_args args = { NULL, NULL, NULL, NULL, 0, 0, params->activation_min,
                     params->activation_max };
    return run_plain(&params->loop, &args, input1, input2, output, sizeof(float),
                     sizeof(float), row);
}

/* --- public kernels ------------------------------------------------------------------------ */

/* int8 ADD (sign 1) and SUB (-1): the fast rows' constants are decoded once per call. */
static mcugen_status run_add_s8(const mcugen_elementwise_params *params,
                                const mcugen_rescale_quant_params *quant, const int8_t *input1,
                                const int8_t *input2, int8_t *output, int32_t sign, row_fn row)
{
#if defined(MCUGEN_ADD_S8_FAST)
    /* zeroed: the fields are only read when add_prepare sets `fast`, which gcc -O3 cannot see */
    static const mcugen_add_fast_s8_args zero;
    mcugen_add_fast_s8_args args = zero;
    const op_args base = { quant, NULL, NULL, NULL, 0, 0, 0.0f, 0.0f };
    args.base = base;
    add_prepare(&args, params, quant, sign);
    return run_quantized(params, rescale_is_valid(quant), &args.base, input1, 1, input2, 1,
                         output, 1, row);
#else
    op_args args = { quant, NULL, NULL, NULL, 0, 0, 0.0f, 0.0f };
    (void)sign;
    return run_quantized(params, rescale_is_valid(quant), &args, input1, 1, input2, 1, output, 1,
                         row);
#endif
}

mcugen_status mcugen_add_s8(const mcugen_elementwise_params *params,
                            const mcugen_rescale_quant_params *quant,
                            const int8_t *input1, const int8_t *input2, int8_t *output)
{
    return run_add_s8(params, quant, input1, input2, output, 1, add_s8_row);
}

mcugen_status mcugen_add_s16(const mcugen_elementwise_params *params,
                             const mcugen_rescale_quant_params *quant,
                             const int16_t *input1, const int16_t *input2, int16_t *output)
{
    op_args args = { quant, NULL, NULL, NULL, 0, 0, 0.0f, 0.0f };
    return run_quantized(params, rescale_is_valid(quant), &args, input1, 2, input2, 2, output, 2,
                         add_s16_row);
}

mcugen_status mcugen_sub_s8(const mcugen_elementwise_params *params,
                            const mcugen_rescale_quant_params *quant,
                            const int8_t *input1, const int8_t *input2, int8_t *output)
{
    return run_add_s8(params, quant, input1, input2, output, -1, sub_s8_row);
}

mcugen_status mcugen_sub_s16(const mcugen_elementwise_params *params,
                             const mcugen_rescale_quant_params *quant,
                             const int16_t *input1, const int16_t *input2, int16_t *output)
{
    op_args args = { quant, NULL, NULL, NULL, 0, 0, 0.0f, 0.0f };
    return run_quantized(params, rescale_is_valid(quant), &args, input1, 2, input2, 2, output, 2,
                         sub_s16_row);
}

mcugen_status mcugen_add_pot_s16(const mcugen_elementwise_params *params,
                                 const mcugen_pot_quant_params *quant,
                                 const int16_t *input1, const int16_t *input2, int16_t *output)
{
    op_args args = { NULL, quant, NULL, NULL, 0, 0, 0.0f, 0.0f };
    return run_quantized(params, pot_is_valid(quant), &args, input1, 2, input2, 2, output, 2,
                         add_pot_s16_row);
}

mcugen_status mcugen_sub_pot_s16(const mcugen_elementwise_params *params,
                                 const mcugen_pot_quant_params *quant,
                                 const int16_t *input1, const int16_t *input2, int16_t *output)
{
    op_args args = { NULL, quant, NULL, NULL, 0, 0, 0.0f, 0.0f };
    return run_quantized(params, pot_is_valid(quant), &args, input1, 2, input2, 2, output, 2,
                         sub_pot_s16_row);
}

mcugen_status mcugen_squared_difference_s8(const mcugen_elementwise_params *params,
                                           const mcugen_rescale_quant_params *quant,
                                           const int8_t *input1, const int8_t *input2,
                                           int8_t *output)
{
    op_args args = { quant, NULL, NULL, NULL, 0, 0, 0.0f, 0.0f };
    return run_quantized(params, rescale_is_valid(quant), &args, input1, 1, input2, 1, output, 1,
                         squared_difference_s8_row);
}

mcugen_status mcugen_squared_difference_s16(const mcugen_elementwise_params *params,
                                            const mcugen_rescale_quant_params *quant,
                                            const int16_t *input1, const int16_t *input2,
                                            int16_t *output)
{
    op_args args = { quant, NULL, NULL, NULL, 0, 0, 0.0f, 0.0f };
    return run_quantized(params, rescale_is_valid(quant), &args, input1, 2, input2, 2, output, 2,
                         squared_difference_s16_row);
}

mcugen_status mcugen_mul_s8(const mcugen_elementwise_params *params,
                            const mcugen_mul_quant_params *quant,
                            const int8_t *input1, const int8_t *input2, int8_t *output)
{
    op_args args = { NULL, NULL, quant, NULL, 0, 0, 0.0f, 0.0f };
    return run_quantized(params, mul_is_valid(quant), &args, input1, 1, input2, 1, output, 1,
                         mul_s8_row);
}

mcugen_status mcugen_mul_s16(const mcugen_elementwise_params *params,
                             const mcugen_mul_quant_params *quant,
                             const int16_t *input1, const int16_t *input2, int16_t *output)
{
    op_args args = { NULL, NULL, quant, NULL, 0, 0, 0.0f, 0.0f };
    return run_quantized(params, mul_is_valid(quant), &args, input1, 2, input2, 2, output, 2,
                         mul_s16_row);
}

mcugen_status mcugen_prelu_s8(const mcugen_elementwise_params *params,
                              const mcugen_prelu_quant_params *quant,
                              const int8_t *input, const int8_t *alpha, int8_t *output)
{
    op_args args = { NULL, NULL, NULL, quant, 0, 0, 0.0f, 0.0f };
    return run_quantized(params, prelu_is_valid(quant), &args, input, 1, alpha, 1, output, 1,
                         prelu_s8_row);
}

mcugen_status mcugen_prelu_s16(const mcugen_elementwise_params *params,
                               const mcugen_prelu_quant_params *quant,
                               const int16_t *input, const int8_t *alpha, int16_t *output)
{
    op_args args = { NULL, NULL, NULL, quant, 0, 0, 0.0f, 0.0f };
    return run_quantized(params, prelu_is_valid(quant), &args, input, 2, alpha, 1, output, 2,
                         prelu_s16_row);
}

static const op_args NO_ARGS = { NULL, NULL, NULL, NULL, 0, 0, 0.0f, 0.0f };

mcugen_status mcugen_maximum_s8(const mcugen_broadcast *loop,
                                const int8_t *input1, const int8_t *input2, int8_t *output)
{
    return run_plain(loop, &NO_ARGS, input1, input2, output, 1, 1, maximum_s8_row);
}

mcugen_status mcugen_maximum_s16(const mcugen_broadcast *loop,
                                 const int16_t *input1, const int16_t *input2, int16_t *output)
{
    return run_plain(loop, &NO_ARGS, input1, input2, output, 2, 2, maximum_s16_row);
}

mcugen_status mcugen_minimum_s8(const mcugen_broadcast *loop,
                                const int8_t *input1, const int8_t *input2, int8_t *output)
{
    return run_plain(loop, &NO_ARGS, input1, input2, output, 1, 1, minimum_s8_row);
}

mcugen_status mcugen_minimum_s16(const mcugen_broadcast *loop,
                                 const int16_t *input1, const int16_t *input2, int16_t *output)
{
    return run_plain(loop, &NO_ARGS, input1, input2, output, 2, 2, minimum_s16_row);
}

mcugen_status mcugen_add_f32(const mcugen_elementwise_f32_params *params,
                             const float *input1, const float *input2, float *output)
{
    return run_f32(params, input1, input2, output, add_f32_row);
}

mcugen_status mcugen_sub_f32(const mcugen_elementwise_f32_params *params,
                             const float *input1, const float *input2, float *output)
{
    return run_f32(params, input1, input2, output, sub_f32_row);
}

mcugen_status mcugen_mul_f32(const mcugen_elementwise_f32_params *params,
                             const float *input1, const float *input2, float *output)
{
    return run_f32(params, input1, input2, output, mul_f32_row);
}

mcugen_status mcugen_squared_difference_f32(const mcugen_broadcast *loop,
                                            const float *input1, const float *input2,
                                            float *output)
{
    return run_plain(loop, &NO_ARGS, input1, input2, output, sizeof(float), sizeof(float),
                     squared_difference_f32_row);
}

mcugen_status mcugen_maximum_f32(const mcugen_broadcast *loop,
                                 const float *input1, const float *input2, float *output)
{
    return run_plain(loop, &NO_ARGS, input1, input2, output, sizeof(float), sizeof(float),
                     maximum_f32_row);
}

mcugen_status mcugen_minimum_f32(const mcugen_broadcast *loop,
                                 const float *input1, const float *input2, float *output)
{
    return run_plain(loop, &NO_ARGS, input1, input2, output, sizeof(float), sizeof(float),
                     minimum_f32_row);
}

mcugen_status mcugen_prelu_f32(const mcugen_broadcast *loop,
                               const float *input, const float *alpha, float *output)
{
    return run_plain(loop, &NO_ARGS, input, alpha, output, sizeof(float), sizeof(float),
                     prelu_f32_row);
}
