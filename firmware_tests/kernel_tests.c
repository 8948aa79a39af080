/*
 * Kernel unit tests for the fast int8 paths (mcugen_conv_fast_dsp.c on Cortex-M4, mcugen_conv_fast_mve.c on
 * Cortex-M55) against the portable C, inside one QEMU image.
 *
 * The image links mcugen_conv_fast*.c built for the core (fast paths on) with mcugen_conv.c and
 * mcugen_fully_connected.c built with -DMCUGEN_PORTABLE (their dispatch to the fast paths off),
 * so each case runs both on the same seeded random shapes, parameters and data and compares
 * the output bytes (and a guard byte past the end). Prints one line per kernel and
 *     KERNELS PASS <cases> cases (<fast> on the fast path)
 * (ADD/SUB: mcugen_elementwise.c, whose fast rows exist on Helium only, built twice and renamed
 * with objcopy) or a FAIL line naming the kernel, case and first differing byte; exits 0 on
 * PASS, 1 on FAIL
 * (semihosting exit status). -DTEST_CASES=N sets the cases per kernel, -DTEST_SEED=S the seed.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <math.h>

#include "mcugen_conv.h"
#include "mcugen_conv_fast.h"
#include "mcugen_stripe.h"
#include "mcugen_elementwise.h"
#include "mcugen_fully_connected.h"
#include "mcugen_pool.h"
#include "semihosting.h"

/* mcugen_elementwise.c built for the core, its ADD/SUB renamed (objcopy, see the Makefile);
 * mcugen_add_s8/mcugen_sub_s8 themselves come from the -DMCUGEN_PORTABLE build. */
mcugen_status fast_mcugen_add_s8(const mcugen_elementwise_params *params,
                                 const mcugen_rescale_quant_params *quant, const int8_t *input1,
                                 const int8_t *input2, int8_t *output);
mcugen_status fast_mcugen_sub_s8(const mcugen_elementwise_params *params,
                                 const mcugen_rescale_quant_params *quant, const int8_t *input1,
                                 const int8_t *input2, int8_t *output);

/* mcugen_conv.c built for the core, the entry points of a tiled chain's later stripes (no
 * argument checks, straight to the fast path) renamed likewise. */
mcugen_status fast_mcugen_convolve_stripe_s8(
        const mcugen_context *ctx, const mcugen_conv_params *params,
        const mcugen_per_channel_quant_params *quant, const mcugen_dims *input_dims,
        const int8_t *input, const mcugen_dims *filter_dims, const int8_t *filter,
        const mcugen_dims *bias_dims, const int32_t *bias, const mcugen_dims *output_dims,
        int8_t *output);
mcugen_status fast_mcugen_depthwise_conv_stripe_s8(
        const mcugen_context *ctx, const mcugen_dw_conv_params *params,
        const mcugen_per_channel_quant_params *quant, const mcugen_dims *input_dims,
        const int8_t *input, const mcugen_dims *filter_dims, const int8_t *filter,
        const mcugen_dims *bias_dims, const int32_t *bias, const mcugen_dims *output_dims,
        int8_t *output);

/* mcugen_pool.c built for the core, its int8 pools renamed likewise. */
mcugen_status fast_mcugen_avgpool_s8(const mcugen_pool_params *params,
                                     const mcugen_dims *input_dims, const int8_t *input,
                                     const mcugen_dims *output_dims, int8_t *output);
mcugen_status fast_mcugen_maxpool_s8(const mcugen_pool_params *params,
                                     const mcugen_dims *input_dims, const int8_t *input,
                                     const mcugen_dims *output_dims, int8_t *output);

#ifndef TEST_CASES
#define TEST_CASES 150
#endif
#ifndef TEST_SEED
#define TEST_SEED 0x9E3779B9u
#endif

#define MAX_INPUT 16384
#define MAX_FILTER 32768
#define MAX_OUTPUT 16384
#define MAX_CHANNELS 96
#define GUARD 0x5A

static int8_t input[MAX_INPUT];
/* word-aligned, as mcugen's weight arrays are (16 bytes): the DSP conv's LDRD weight pairs run
 * on the rows that start on a word */
static int32_t filter_words[MAX_FILTER / 4];
static int8_t *const filter = (int8_t *)filter_words;
static int32_t bias[MAX_CHANNELS];
static int32_t multiplier[MAX_CHANNELS];
static int32_t shift[MAX_CHANNELS];
static int8_t out_fast[MAX_OUTPUT + 1];
static int8_t out_ref[MAX_OUTPUT + 1];
static uint32_t scratch[(11 * 8 * 8 * MAX_CHANNELS + 16 * MAX_CHANNELS) / 4 + 8]; /* DSP conv */

static uint32_t rng_state = TEST_SEED;

static uint32_t rng(void) /* xorshift32 */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static int32_t uniform(int32_t low, int32_t high) /* inclusive */
{
    /* In 64 bits: high - low + 1 reaches 2^32 for the full int32 range. */
    const uint64_t span = (uint64_t)((int64_t)high - (int64_t)low + 1);
    return (int32_t)((int64_t)low + (int64_t)(rng() % span));
}

/* ---- output -------------------------------------------------------------------------- */

static char line[160];
static size_t line_len;

static void put_text(const char *text)
{
    while (*text != '\0' && line_len + 1 < sizeof(line)) {
        line[line_len++] = *text++;
    }
    line[line_len] = '\0';
}

static void put_int(int32_t value)
{
    char digits[12];
    int n = 0;
    uint32_t magnitude = value < 0 ? 0u - (uint32_t)value : (uint32_t)value;
    if (value < 0) {
        put_text("-");
    }
    do {
        digits[n++] = (char)('0' + magnitude % 10u);
        magnitude /= 10u;
    } while (magnitude != 0u);
    while (n > 0) {
        char one[2] = {digits[--n], '\0'};
        put_text(one);
    }
}

static void end_line(void)
{
    put_text("\n");
    semihost_write0(line);
    line_len = 0;
    line[0] = '\0';
}

/* ---- random parameters ------------------------------------------------------------------ */

static void fill_s8(int8_t *data, int32_t n)
{
    for (int32_t i = 0; i < n; ++i) {
        data[i] = (int8_t)uniform(-128, 127);
    }
}

/* Per-channel requantization like TFLite's QuantizeMultiplier output, scaled so that sums of
 * `taps` products mostly land inside int8 (so the comparison is not of clamped values), and
 * sometimes extreme (any shift, any multiplier, any bias). */
static void fill_quant(int32_t channels, int32_t taps)
{
    const int extreme = uniform(0, 7) == 0;
    int32_t half_log2 = 0;
    while ((1 << (2 * half_log2)) < taps) {
        ++half_log2;
    }
    for (int32_t c = 0; c < channels; ++c) {
        multiplier[c] = extreme ? (int32_t)(rng() & 0x7FFFFFFFu) : uniform(1 << 30, INT32_MAX);
        if (extreme && uniform(0, 7) == 0) {
            multiplier[c] = INT32_MIN; /* the doubling high multiply's one saturating case */
        }
        shift[c] = extreme ? uniform(-31, 30) : -(6 + half_log2) + uniform(-2, 1);
        bias[c] = uniform(0, 15) == 0 ? (int32_t)rng() : uniform(-20000, 20000);
    }
}

/* Every channel within the DSP path's fast requantization (|bias| < 2^16, shift in [-22, -1],
 * multiplier >= 0), from the values drawn, so that a case takes the quick loops (with an
 * int8 clamp) without drawing more from the shared generator. */
static void tame_quant(int32_t channels)
{
    for (int32_t c = 0; c < channels; ++c) {
        bias[c] %= 65536;
        shift[c] = -1 - (int32_t)((uint32_t)shift[c] % 22u);
        multiplier[c] = multiplier[c] == INT32_MIN ? INT32_MAX : multiplier[c];
    }
}

static mcugen_activation random_activation(void)
{
    mcugen_activation act = {-128, 127};
    if (uniform(0, 2) == 0) {
        act.min = uniform(-128, 127);
        act.max = uniform(act.min, 127);
    }
    return act;
}

/* out = (in + 2 * pad - dilation * (k - 1) - 1) / stride + 1, with pad < the window */
static int32_t out_size(int32_t in, int32_t k, int32_t stride, int32_t dilation, int32_t pad)
{
    const int32_t span = dilation * (k - 1) + 1;
    return in + 2 * pad < span ? 0 : (in + 2 * pad - span) / stride + 1;
}

static int failures;
static int32_t fast_cases;
static int32_t unclamped_bytes, compared_bytes; /* spread: outputs strictly inside the clamp */

static void count_spread(int32_t bytes, mcugen_activation act)
{
    for (int32_t i = 0; i < bytes; ++i) {
        unclamped_bytes += out_ref[i] > act.min && out_ref[i] < act.max;
    }
    compared_bytes += bytes;
}

static int compare(const char *kernel, int32_t index, int32_t bytes)
{
    for (int32_t i = 0; i <= bytes; ++i) {
        if (out_fast[i] != out_ref[i]) {
            put_text("FAIL ");
            put_text(kernel);
            put_text(" case ");
            put_int(index);
            put_text(": byte ");
            put_int(i);
            put_text(i == bytes ? " (guard)" : "");
            put_text(" got ");
            put_int(out_fast[i]);
            put_text(" want ");
            put_int(out_ref[i]);
            end_line();
            ++failures;
            return 0;
        }
    }
    return 1;
}

/* The fast paths' views of the params structs (as mcugen_conv.c and
 * mcugen_fully_connected.c make them). */
static mcugen_conv_fast_params fast_conv(const mcugen_conv_params *p)
{
    const mcugen_conv_fast_params f = {p->input_offset, p->output_offset, p->stride, p->padding,
                                       p->dilation,     p->activation,    1, p->kernel_sums,
                                       NULL,            NULL};
    return f;
}

/* What mcugen computes at build time for mcugen_conv_params.kernel_sums: per output channel,
 * bias + input_offset * sum(w), modulo 2^32. */
static const int32_t *make_kernel_sums(const int32_t *b, int32_t channels, int32_t size,
                                       int32_t input_offset)
{
    static int32_t sums[MAX_CHANNELS];
    for (int32_t c = 0; c < channels; ++c) {
        int32_t sum = 0;
        for (int32_t k = 0; k < size; ++k) {
            sum += filter[c * size + k];
        }
        sums[c] = (int32_t)((b != NULL ? (uint32_t)b[c] : 0u) +
                            (uint32_t)input_offset * (uint32_t)sum);
    }
    return sums;
}

/* What mcugen builds for a tiled depthwise's stripes on Cortex-M4/M7 (mcugen/ops/conv/
 * dsp_table.py, written again here from its description): per channel the requantization row
 * (bias, multiplier, right shift or 0 for the exact form, add), then per channel
 * bias + input_offset * sum(w), then per quad of channels and per tap the weights widened,
 * (w0, w2) and (w1, w3) as int16 lanes, and last whether every channel is fast (1 or 0).
 * filter: [taps][channels]. */
/* The requantization rows of make_dw_table and make_conv_table, for sums of `products`
 * products; returns whether every row is fast. */
static int32_t make_rq_rows(int32_t *table, const int32_t *b, int32_t channels,
                            int32_t products, int32_t input_offset, int32_t zero_point)
{
    const int32_t lo = input_offset - 128 < 0 ? 128 - input_offset : input_offset - 128;
    const int32_t hi = input_offset + 127 < 0 ? -(input_offset + 127) : input_offset + 127;
    const int64_t max_sum = (int64_t)products * 128 * (lo > hi ? lo : hi);
    const int fits = max_sum < ((int64_t)1 << 30) && zero_point >= -128 && zero_point <= 128;
    const int64_t limit = fits ? ((int64_t)1 << 30) - max_sum : 0;
    int32_t all_fast = 1;
    for (int32_t c = 0; c < channels; ++c) {
        const int32_t bc = b != NULL ? b[c] : 0, right = -shift[c];
        const int fast = (bc < 0 ? -(int64_t)bc : bc) < limit && right >= 1 && right <= 22 &&
                         multiplier[c] >= 0;
        table[4 * c] = bc;
        table[4 * c + 1] = multiplier[c];
        table[4 * c + 2] = fast ? right : 0;
        all_fast &= fast;
        table[4 * c + 3] =
            fast ? (int32_t)((2u * (uint32_t)zero_point + 1u) << (right - 1)) : -right;
    }
    return all_fast;
}

/* What mcugen builds for a tiled conv's stripes on Cortex-M4/M7 (dsp_table.py's
 * dsp_conv_table): the requantization rows, then whether every channel is fast. */
static const int32_t *make_conv_table(const int32_t *b, int32_t channels, int32_t size,
                                      int32_t input_offset, int32_t zero_point)
{
    static int32_t table[4 * MAX_CHANNELS + 1];
    table[4 * channels] = make_rq_rows(table, b, channels, size, input_offset, zero_point);
    return table;
}

static const int32_t *make_dw_table(const int32_t *b, int32_t channels, int32_t taps,
                                    int32_t input_offset, int32_t zero_point)
{
    static int32_t table[5 * MAX_CHANNELS + 2 * 25 * MAX_CHANNELS / 4 + 1];
    int32_t *init = table + 4 * channels, *wide = table + 5 * channels;
    const int32_t all_fast = make_rq_rows(table, b, channels, taps, input_offset, zero_point);
    for (int32_t c = 0; c < channels; ++c) {
        const int32_t bc = b != NULL ? b[c] : 0;
        uint32_t sum = 0;
        for (int32_t t = 0; t < taps; ++t) {
            sum += (uint32_t)(int32_t)filter[t * channels + c];
        }
        init[c] = (int32_t)((uint32_t)bc + (uint32_t)input_offset * sum);
    }
    for (int32_t q = 0; q < channels / 4; ++q) {
        for (int32_t t = 0; t < taps; ++t, wide += 2) {
            const int8_t *w = filter + t * channels + 4 * q;
            wide[0] = (int32_t)(((uint32_t)w[0] & 0xFFFFu) | ((uint32_t)w[2] << 16));
            wide[1] = (int32_t)(((uint32_t)w[1] & 0xFFFFu) | ((uint32_t)w[3] << 16));
        }
    }
    *wide = all_fast;
    return table;
}

/* What mcugen builds for a tiled depthwise's stripes on Cortex-M55 (mcugen/ops/conv/
 * mve_table.py, written again here from its description): per block of eight channels (the
 * last overlapping the one before), bias, multiplier and shift of the even channels then of
 * the odd ones; then 0 if every shift is negative, 1 if none is positive, else 2. */
static const int32_t *make_mve_table(const int32_t *b, int32_t channels)
{
    static int32_t table[24 * ((MAX_CHANNELS + 7) / 8) + 1];
    const int32_t *values[3] = {b, multiplier, shift};
    int32_t *t = table, most = INT32_MIN;
    for (int32_t c0 = 0; c0 < channels; c0 += 8) {
        const int32_t c = c0 + 8 <= channels ? c0 : channels - 8;
        for (int32_t v = 0; v < 3; ++v) {
            for (int32_t i = 0; i < 8; ++i) {
                *t++ = values[v] != NULL ? values[v][c + (i % 4) * 2 + i / 4] : 0;
            }
        }
    }
    for (int32_t c = 0; c < channels; ++c) {
        most = shift[c] > most ? shift[c] : most;
    }
    *t = most > 0 ? 2 : most == 0 ? 1 : 0;
    return table;
}

static mcugen_conv_fast_params fast_dw(const mcugen_dw_conv_params *p)
{
    const mcugen_conv_fast_params f = {p->input_offset, p->output_offset, p->stride, p->padding,
                                       p->dilation,     p->activation,    p->ch_mult, NULL,
                                       NULL,            p->mve_table};
    return f;
}

static mcugen_fully_connected_fast_params fast_fc(const mcugen_fc_params *p)
{
    const mcugen_fully_connected_fast_params f = {p->input_offset, p->output_offset,
                                                  p->activation, p->per_channel,
                                                  p->kernel_sums, p->filter_layout,
                                                  p->rq_checked};
    return f;
}

/* What mcugen decides at build time for mcugen_fc_params.rq_checked (mcugen/ops/matmul/
 * emit.py, rq_checked, written again here from its description). */
static int32_t fc_rq_checked(const mcugen_fc_params *p, const int32_t *b, int32_t units,
                             int32_t depth)
{
    const int32_t off = p->input_offset;
    const int32_t lo = off - 128 < 0 ? 128 - off : off - 128;
    const int32_t hi = off + 127 < 0 ? -(off + 127) : off + 127;
    const int64_t limit = ((int64_t)1 << 30) - (int64_t)depth * 128 * (lo > hi ? lo : hi);
    if (p->activation.min != -128 || p->activation.max != 127 || p->output_offset < -128 ||
        p->output_offset > 128 || limit <= 0) {
        return 0;
    }
    for (int32_t u = 0; u < (p->per_channel ? units : 1); ++u) {
        if (shift[u] < -22 || shift[u] > -1 || multiplier[u] < 0) {
            return 0;
        }
    }
    for (int32_t u = 0; b != NULL && u < units; ++u) {
        if ((b[u] < 0 ? -(int64_t)b[u] : b[u]) >= limit) {
            return 0;
        }
    }
    return 1;
}

/* What mcugen builds for FULLY_CONNECTED on Cortex-M4/M7 (mcugen/ops/matmul/emit.py,
 * pairs4_weights, written again here from its description): filter [units][depth], depth % 4
 * == 0, re-ordered into blocks of four units, each group of four depth values 16 bytes: words
 * 0, 1 the pair of units 0 (A) and 1 (B), words 2, 3 the pair of units 2 and 3; word j of a
 * pair the depths d = 4g + j and d + 2 as [B(d) ^ 0x80, A(d), B(d+2) ^ 0x80, A(d+2)]; the
 * units % 4 last units as plain rows. Word-aligned. */
static const int8_t *make_fc_pairs4(int32_t units, int32_t depth)
{
    static int32_t words[MAX_FILTER / 4];
    int8_t *packed = (int8_t *)words;
    int32_t i = 0;
    for (int32_t u0 = 0; u0 + 4 <= units; u0 += 4) {
        for (int32_t g = 0; g < depth; g += 4) {
            for (int32_t pair = u0; pair < u0 + 4; pair += 2) {
                for (int32_t j = 0; j < 2; ++j) {
                    for (int32_t d = g + j; d < g + 4; d += 2) {
                        packed[i++] = (int8_t)((uint8_t)filter[(pair + 1) * depth + d] ^ 0x80u);
                        packed[i++] = filter[pair * depth + d];
                    }
                }
            }
        }
    }
    memcpy(packed + i, filter + i, (size_t)(units * depth - i));
    return packed;
}

/* Every fourth FULLY_CONNECTED case (by index, no random draws): the input at its largest
 * |x + offset| and the even units' weights at -128 or 127, so that over a deep row 256 times
 * the first unit's sum of a pair wraps int32 in the paired layout's raw SMLAD sum, from which
 * the second unit's sum must still come back exact. */
static void fc_extreme_values(int32_t index, const mcugen_fc_params *p, int32_t units,
                              int32_t depth, int32_t batch)
{
    if (index % 4 != 1) {
        return;
    }
    memset(input, p->input_offset > 0 ? 127 : -128, (size_t)(batch * depth));
    for (int32_t u = 0; u < units; u += 2) {
        memset(filter + u * depth, (u & 2) ? 127 : -128, (size_t)depth);
    }
}

static void prepare_outputs(int32_t bytes)
{
    memset(out_fast, GUARD, (size_t)bytes + 1);
    memset(out_ref, GUARD, (size_t)bytes + 1);
}

/* ---- the kernels ------------------------------------------------------------------------ */

static void check_conv(int32_t index, const mcugen_dims *in_dims, const mcugen_dims *fd_dims,
                       const mcugen_dims *od_dims, mcugen_conv_params params, int built_sums);

static void test_conv(int32_t index)
{
    mcugen_dims in, fd, od;
    mcugen_conv_params params;
    int32_t pointwise = uniform(0, 2) == 0;
    do {
        in.n = uniform(1, 2);
        in.h = uniform(1, 10);
        in.w = uniform(1, 10);
        in.c = uniform(1, 48);
        if (pointwise && uniform(0, 1)) {
            in.c = uniform(1, MAX_CHANNELS); /* deeper: the MVE 3-row pass */
        } else if (uniform(0, 3) == 0) {
            in.c = 16 * uniform(1, 3); /* whole blocks per window row: MVE reads them in place */
        }
        fd.n = uniform(1, 40);
        fd.h = pointwise ? 1 : uniform(1, 5);
        fd.w = pointwise ? 1 : uniform(1, 5);
        fd.c = in.c;
        params.stride.h = pointwise ? 1 : uniform(1, 3);
        params.stride.w = pointwise ? 1 : uniform(1, 3);
        params.dilation.h = uniform(0, 4) == 0 ? 2 : 1;
        params.dilation.w = uniform(0, 4) == 0 ? 2 : 1;
        params.padding.h = pointwise ? 0 : uniform(0, fd.h - 1);
        params.padding.w = pointwise ? 0 : uniform(0, fd.w - 1);
        od.n = in.n;
        od.h = out_size(in.h, fd.h, params.stride.h, params.dilation.h, params.padding.h);
        od.w = out_size(in.w, fd.w, params.stride.w, params.dilation.w, params.padding.w);
        od.c = fd.n;
    } while (od.h < 1 || od.w < 1 || in.n * in.h * in.w * in.c > MAX_INPUT ||
             fd.n * fd.h * fd.w * fd.c > MAX_FILTER || od.n * od.h * od.w * od.c > MAX_OUTPUT ||
             fd.h * fd.w * fd.c > 8 * 8 * MAX_CHANNELS);
    check_conv(index, &in, &fd, &od, params, -1);
}

/* One conv case on the shapes given: random offsets, activation, data and quantization from
 * the shared generator, the build's kernel sums when built_sums is 1, none when 0, either
 * (drawn) when -1; the fast path against the portable C. */
static void check_conv(int32_t index, const mcugen_dims *in_dims, const mcugen_dims *fd_dims,
                       const mcugen_dims *od_dims, mcugen_conv_params params, int built_sums)
{
    const mcugen_dims in = *in_dims, fd = *fd_dims, od = *od_dims;
    mcugen_dims bd;
    bd.n = 1, bd.h = 1, bd.w = 1, bd.c = od.c;
    params.input_offset = uniform(-127, 128);
    params.output_offset = uniform(-128, 127);
    params.activation = random_activation();
    fill_s8(input, in.n * in.h * in.w * in.c);
    fill_s8(filter, fd.n * fd.h * fd.w * fd.c);
    fill_quant(od.c, fd.h * fd.w * fd.c);
    const int32_t *b = uniform(0, 5) == 0 ? NULL : bias;
    if (index % 4 == 3) { /* by index: the quick loops */
        tame_quant(od.c);
        params.activation.min = INT8_MIN;
        params.activation.max = INT8_MAX;
    }
    /* half the cases with the sums the build makes, half with the kernel computing them */
    const int with_sums = built_sums >= 0 ? built_sums : uniform(0, 1);
    params.kernel_sums =
        with_sums ? make_kernel_sums(b, od.c, fd.h * fd.w * fd.c, params.input_offset) : NULL;
    const mcugen_per_channel_quant_params quant = {multiplier, shift};
    const mcugen_context ctx = {scratch, mcugen_convolve_fast_s8_buffer_size(&fd)};
    const int32_t bytes = od.n * od.h * od.w * od.c;
    prepare_outputs(bytes);
    if (mcugen_convolve_s8(&ctx, &params, &quant, &in, input, &fd, filter, &bd, b, &od,
                           out_ref) != MCUGEN_OK) {
        put_text("FAIL conv: portable kernel rejected case ");
        put_int(index);
        end_line();
        ++failures;
        return;
    }
    mcugen_conv_fast_params fp = fast_conv(&params);
    if (index % 4 >= 2) { /* the build's table (DSP path only reads it), by index */
        fp.rq_table = make_conv_table(b, od.c, fd.h * fd.w * fd.c, params.input_offset,
                                      params.output_offset);
    }
    if (mcugen_convolve_fast_s8(&ctx, &fp, &quant, &in, input, &fd, filter, b, &od, out_fast)) {
        ++fast_cases;
    } else {
        memcpy(out_fast, out_ref, (size_t)bytes);
    }
    count_spread(bytes, params.activation);
    compare("conv", index, bytes);
    /* the same call as a tiled chain's later stripe makes it (no checks; the same data; no
     * build table, as fast_conv) */
    params.rq_table = NULL;
    memset(out_fast, GUARD, (size_t)bytes + 1);
    if (fast_mcugen_convolve_stripe_s8(&ctx, &params, &quant, &in, input, &fd, filter, &bd, b,
                                       &od, out_fast) != MCUGEN_OK) {
        memset(out_fast, GUARD, (size_t)bytes);
    }
    compare("conv_stripe", index, bytes);
}

/* Fixed conv shapes, one per case index (in order, repeated): the Helium passes a random shape
 * seldom hits. Odd pixel counts of whole-block 1x1 convs with the build's sums (the three-pixel
 * pass; a tiled pointwise's stripe of five), output channel counts of every remainder modulo 3
 * (the two-row pass), strided 1x1 windows read in place, 3x3 windows in place and padded, odd
 * depths, and a tiled 3x3 stripe (halo rows, no vertical padding). The data come from a
 * generator seeded by the index, so the shared one draws nothing here. */
static void test_conv_shapes(int32_t index)
{
    /* in h, w, c; out_c; kh, kw; stride h, w; padding h, w; batch; built sums (1, 0, -1) */
    static const int16_t shapes[][12] = {
        {1, 5, 64, 64, 1, 1, 1, 1, 0, 0, 1, 1},   {3, 3, 48, 10, 1, 1, 1, 1, 0, 0, 1, 1},
        {1, 7, 32, 6, 1, 1, 1, 1, 0, 0, 1, 1},    {1, 5, 80, 2, 1, 1, 1, 1, 0, 0, 1, 1},
        {1, 5, 64, 64, 1, 1, 1, 1, 0, 0, 1, 0},   {7, 9, 16, 32, 1, 1, 2, 2, 0, 0, 1, -1},
        {8, 8, 32, 64, 1, 1, 2, 2, 0, 0, 1, -1},  {7, 8, 67, 13, 1, 1, 2, 3, 0, 0, 1, 1},
        {8, 8, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1},   {6, 6, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1},
        {9, 9, 16, 32, 3, 3, 2, 2, 1, 1, 1, 1},   {5, 7, 48, 7, 3, 3, 1, 1, 0, 0, 1, -1},
        {6, 7, 5, 11, 3, 3, 1, 1, 1, 1, 1, -1},   {1, 5, 64, 1, 1, 1, 1, 1, 0, 0, 1, 1},
        {1, 5, 16, 64, 1, 1, 1, 1, 0, 0, 1, 1},   {4, 5, 64, 20, 3, 3, 1, 1, 0, 1, 1, 1},
        {3, 3, 33, 5, 1, 1, 1, 1, 0, 0, 2, 1},    {1, 9, 96, 8, 1, 1, 1, 1, 0, 0, 1, 1},
        /* small depths (rows_xs: the last block read at size - 16, its leading lanes zeroed)
         * and 3x3 windows of short rows copied into a column: a 3x3x3 first layer (27),
         * strided with odd channel and pixel counts, one channel (9), two (18), a 4x4x2
         * window (32, gathered), a 1x1 of 24, a 10x4x1 window (40) */
        {12, 12, 3, 16, 3, 3, 1, 1, 1, 1, 1, 1},  {11, 13, 3, 7, 3, 3, 2, 2, 0, 1, 1, -1},
        {9, 10, 1, 9, 3, 3, 1, 1, 1, 0, 2, 0},    {7, 9, 2, 5, 3, 3, 1, 2, 0, 0, 1, 1},
        {8, 8, 2, 6, 4, 4, 2, 2, 1, 1, 1, 1},     {1, 7, 24, 10, 1, 1, 1, 1, 0, 0, 1, 1},
        {13, 10, 1, 12, 10, 4, 2, 2, 4, 1, 1, 0},
        /* windows read in place over other row counts than 1 and 3 (five rows of 80 bytes, two
         * of 64), the rows left over by whole triples in an overlapping triple */
        {9, 9, 16, 7, 5, 5, 1, 1, 2, 2, 1, 1},    {6, 6, 32, 4, 2, 2, 1, 1, 0, 0, 1, -1},
        /* 3x3 windows of 16 channels, stride 1 (the row passes below): rows of 12 and of 7
         * pixels, batch 2 */
        {7, 12, 16, 10, 3, 3, 1, 1, 1, 1, 1, 0},  {6, 9, 16, 6, 3, 3, 1, 1, 0, 0, 2, -1},
        /* 1x1 over 64 channels, four output channels by two pixels (pw64_4x2, pw64_4x1): one
         * pixel alone, six in pairs with the sums made per call, a batch of two of nine
         * (pairs, then one), and output counts that are not a multiple of 4 (declined) */
        {1, 1, 64, 8, 1, 1, 1, 1, 0, 0, 1, 1},    {2, 3, 64, 12, 1, 1, 1, 1, 0, 0, 1, 0},
        {3, 3, 64, 36, 1, 1, 1, 1, 0, 0, 2, -1},  {1, 3, 64, 6, 1, 1, 1, 1, 0, 0, 1, 1},
        /* 3x3 windows over 16, 32 or 64 channels, whole rows by groups of four pixels
         * (stride 1) or three (stride 2), padding columns included: stride 2 over 64 and 32
         * channels (odd channel count, padded on one side), a row of exactly four pixels in
         * a batch of two, five window rows (the passes above), 64 channels with an
         * overlapping last group, padding two wide, a vertical stride of 2 alone, and more
         * output channels than the scratch holds for it (the passes above instead) */
        {10, 11, 64, 36, 3, 3, 2, 2, 1, 1, 1, 1}, {9, 10, 32, 13, 3, 3, 2, 2, 0, 1, 1, 0},
        {5, 4, 32, 8, 3, 3, 1, 1, 1, 1, 2, -1},   {7, 9, 16, 5, 5, 3, 1, 1, 2, 1, 1, 1},
        {8, 7, 64, 48, 3, 3, 1, 1, 1, 1, 1, 0},   {6, 13, 16, 12, 3, 3, 2, 2, 1, 0, 1, 1},
        {9, 8, 16, 8, 3, 3, 2, 1, 1, 1, 1, 1},    {6, 6, 16, 8, 3, 3, 1, 1, 2, 2, 1, -1},
        {6, 6, 16, 40, 3, 3, 1, 1, 1, 1, 1, 1},
        /* gathered windows stepped pixel by pixel (gather_pairs): KWS's 10x4x1 over 13 output
         * channels in a batch of two of 25 pixels (a pair across the images), and a 3x4x2
         * window over an odd pixel count */
        {11, 10, 1, 13, 10, 4, 2, 2, 4, 1, 2, 1}, {9, 6, 2, 8, 3, 4, 1, 2, 1, 1, 1, -1},
    };
    const int16_t *k = shapes[index % (int32_t)(sizeof(shapes) / sizeof(shapes[0]))];
    mcugen_dims in = {k[10], k[0], k[1], k[2]}, fd = {k[3], k[4], k[5], k[2]}, od;
    mcugen_conv_params params;
    params.stride.h = k[6];
    params.stride.w = k[7];
    params.padding.h = k[8];
    params.padding.w = k[9];
    params.dilation.h = 1;
    params.dilation.w = 1;
    od.n = in.n;
    od.h = out_size(in.h, fd.h, params.stride.h, 1, params.padding.h);
    od.w = out_size(in.w, fd.w, params.stride.w, 1, params.padding.w);
    od.c = fd.n;
    const uint32_t shared = rng_state;
    rng_state = (0x9E3779B9u ^ (uint32_t)(index + 1) * 2654435761u) | 1u; /* (never 0) */
    check_conv(index, &in, &fd, &od, params, k[11]);
    rng_state = shared;
}

/* test_depthwise_3x3 sets it: 3x3 filters, dilation 1 along rows, stride 1 (2 in every third
 * case, by index: a draw would change every later case), channels a multiple of 8 (the Helium
 * path's assembly passes) */
static int dw_3x3_only;

static void test_depthwise(int32_t index)
{
    mcugen_dims in, fd, bd, od;
    mcugen_dw_conv_params params;
    do {
        in.n = uniform(1, 2);
        in.h = uniform(1, 12);
        in.w = uniform(1, 12);
        params.ch_mult = uniform(0, 5) == 0 ? 2 : 1;
        in.c = uniform(0, 2) == 0 ? uniform(1, 40) : 4 * uniform(1, 16);
        fd.n = 1;
        fd.h = uniform(1, 5);
        fd.w = uniform(1, 5);
        fd.c = in.c * params.ch_mult;
        params.stride.h = uniform(1, 2);
        params.stride.w = uniform(1, 2);
        params.dilation.h = uniform(0, 4) == 0 ? 2 : 1;
        params.dilation.w = uniform(0, 4) == 0 ? 2 : 1;
        if (dw_3x3_only) {
            params.ch_mult = 1;
            in.c = fd.c = 8 * uniform(1, 8);
            fd.h = fd.w = 3;
            params.stride.w = index % 3 == 2 ? 2 : 1;
            params.dilation.w = 1;
        }
        params.padding.h = uniform(0, fd.h - 1);
        params.padding.w = uniform(0, fd.w - 1);
        od.n = in.n;
        od.h = out_size(in.h, fd.h, params.stride.h, params.dilation.h, params.padding.h);
        od.w = out_size(in.w, fd.w, params.stride.w, params.dilation.w, params.padding.w);
        od.c = fd.c;
    } while (od.h < 1 || od.w < 1 || in.n * in.h * in.w * in.c > MAX_INPUT ||
             fd.h * fd.w * fd.c > MAX_FILTER || od.n * od.h * od.w * od.c > MAX_OUTPUT ||
             od.c > MAX_CHANNELS);
    bd.n = 1, bd.h = 1, bd.w = 1, bd.c = od.c;
    params.input_offset = uniform(-127, 128);
    params.output_offset = uniform(-128, 127);
    params.activation = random_activation();
    fill_s8(input, in.n * in.h * in.w * in.c);
    fill_s8(filter, fd.h * fd.w * fd.c);
    fill_quant(od.c, fd.h * fd.w);
    const int32_t *b = uniform(0, 5) == 0 ? NULL : bias;
    if (dw_3x3_only && index % 4 < 2) { /* by index: the quick loops */
        tame_quant(od.c);
        params.activation.min = INT8_MIN;
        params.activation.max = INT8_MAX;
    }
    const mcugen_per_channel_quant_params quant = {multiplier, shift};
    const mcugen_context ctx = {scratch, mcugen_depthwise_conv_fast_s8_buffer_size(&fd)};
    const int32_t bytes = od.n * od.h * od.w * od.c;
    prepare_outputs(bytes);
    if (mcugen_depthwise_conv_s8(&ctx, &params, &quant, &in, input, &fd, filter, &bd, b, &od,
                                 out_ref) != MCUGEN_OK) {
        put_text("FAIL depthwise: portable kernel rejected case ");
        put_int(index);
        end_line();
        ++failures;
        return;
    }
    /* the table a tiled chain's stripes get from the build on Cortex-M55 (the Helium path
     * only reads it), in two cases of three by index (a draw would change later cases) */
    params.mve_table =
            params.ch_mult == 1 && od.c >= 8 && index % 3 != 1 ? make_mve_table(b, od.c) : NULL;
    mcugen_conv_fast_params fp = fast_dw(&params);
    if (params.ch_mult == 1 && od.c % 4 == 0 && fd.h * fd.w <= 25 && index % 2 == 0) {
        /* the table a tiled chain's stripes get from the build (DSP path only reads it), in
         * every other case by index: a draw from the shared generator would change the cases
         * of every later test */
        fp.rq_table = make_dw_table(b, od.c, fd.h * fd.w, params.input_offset,
                                    params.output_offset);
    }
    if (mcugen_depthwise_conv_fast_s8(&ctx, &fp, &quant, &in, input, &fd, filter, b, &od,
                                      out_fast)) {
        ++fast_cases;
    } else {
        memcpy(out_fast, out_ref, (size_t)bytes);
    }
    count_spread(bytes, params.activation);
    compare("depthwise", index, bytes);
    /* the same call as a tiled chain's later stripe makes it (no checks; the same data and
     * build tables) */
    params.rq_table = fp.rq_table;
    memset(out_fast, GUARD, (size_t)bytes + 1);
    if (fast_mcugen_depthwise_conv_stripe_s8(&ctx, &params, &quant, &in, input, &fd, filter, &bd,
                                             b, &od, out_fast) != MCUGEN_OK) {
        memset(out_fast, GUARD, (size_t)bytes);
    }
    compare("depthwise_stripe", index, bytes);
}

static void test_depthwise_3x3(int32_t index)
{
    dw_3x3_only = 1;
    test_depthwise(index);
    dw_3x3_only = 0;
}

/* Fixed 3x3 depthwise shapes of the Helium path's row pass for a tiled chain's stripes
 * (dw3_rows_lean: stride 1, one column of padding each side, the build's table): odd and
 * even widths (the last pixel alone, in passes of 16 channels or of 8, the last pair at the
 * border), the narrowest rows (3 and
 * 4: no pair inside), stripes without vertical padding and with two rows of it; by index, the
 * quick requantization (the pass) or not (the general loop). The data come from a generator
 * seeded by the index, so the shared one draws nothing here. */
static void test_dw_shapes(int32_t index)
{
    /* in h, w, c; padding h */
    static const int16_t shapes[][4] = {
        {5, 5, 64, 1}, {4, 6, 16, 1}, {3, 4, 24, 0}, {6, 3, 32, 2}, {2, 8, 40, 1}, {7, 7, 16, 0},
        {4, 5, 24, 1},
    };
    const int16_t *k = shapes[index % (int32_t)(sizeof(shapes) / sizeof(shapes[0]))];
    const uint32_t shared = rng_state;
    rng_state = (0x7F4A7C15u ^ (uint32_t)(index + 1) * 2654435761u) | 1u; /* (never 0) */
    const mcugen_dims in = {1, k[0], k[1], k[2]}, fd = {1, 3, 3, k[2]};
    const mcugen_dims od = {1, k[0] + 2 * k[3] - 2, k[1], k[2]}, bd = {1, 1, 1, k[2]};
    mcugen_dw_conv_params params;
    memset(&params, 0, sizeof params);
    params.ch_mult = 1;
    params.stride.h = params.stride.w = 1;
    params.dilation.h = params.dilation.w = 1;
    params.padding.h = k[3];
    params.padding.w = 1;
    params.input_offset = uniform(-127, 128);
    params.output_offset = uniform(-128, 127);
    params.activation = random_activation();
    fill_s8(input, in.h * in.w * in.c);
    fill_s8(filter, 9 * fd.c);
    fill_quant(od.c, 9);
    if (index % 3 != 2) { /* the row pass's case */
        tame_quant(od.c);
        params.activation.min = INT8_MIN;
        params.activation.max = INT8_MAX;
    }
    const int32_t bytes = od.h * od.w * od.c;
    const mcugen_per_channel_quant_params quant = {multiplier, shift};
    const mcugen_context ctx = {scratch, mcugen_depthwise_conv_fast_s8_buffer_size(&fd)};
    prepare_outputs(bytes);
    if (mcugen_depthwise_conv_s8(&ctx, &params, &quant, &in, input, &fd, filter, &bd, bias,
                                 &od, out_ref) != MCUGEN_OK) {
        put_text("FAIL depthwise: portable kernel rejected case ");
        put_int(index);
        end_line();
        ++failures;
        rng_state = shared;
        return;
    }
    params.mve_table = make_mve_table(bias, od.c);
    const mcugen_conv_fast_params fp = fast_dw(&params);
    if (mcugen_depthwise_conv_fast_s8(&ctx, &fp, &quant, &in, input, &fd, filter, bias, &od,
                                      out_fast)) {
        ++fast_cases;
    } else {
        memcpy(out_fast, out_ref, (size_t)bytes);
    }
    count_spread(bytes, params.activation);
    compare("depthwise", index, bytes);
    memset(out_fast, GUARD, (size_t)bytes + 1); /* as a tiled chain's later stripe calls it */
    if (fast_mcugen_depthwise_conv_stripe_s8(&ctx, &params, &quant, &in, input, &fd, filter, &bd,
                                             bias, &od, out_fast) != MCUGEN_OK) {
        memset(out_fast, GUARD, (size_t)bytes);
    }
    compare("depthwise_stripe", index, bytes);
    rng_state = shared;
}

static void test_fully_connected(int32_t index)
{
    mcugen_dims in, fd, bd, od;
    mcugen_fc_params params;
    do {
        in.n = uniform(1, 3);
        in.h = in.w = 1;
        /* depths of whole 16-byte vectors too (the Helium path's block loop) */
        in.c = uniform(0, 2) == 0 ? 16 * uniform(1, 40)
                                  : (uniform(0, 1) ? uniform(1, 40) : uniform(1, 700));
        fd.n = in.c;
        fd.h = fd.w = 1;
        fd.c = uniform(1, 40);
        od.n = in.n;
        od.h = od.w = 1;
        od.c = fd.c;
    } while (in.n * in.c > MAX_INPUT || fd.n * fd.c > MAX_FILTER);
    bd.n = 1, bd.h = 1, bd.w = 1, bd.c = od.c;
    params.input_offset = uniform(-127, 128);
    params.filter_offset = 0;
    params.output_offset = uniform(-128, 127);
    params.activation = random_activation();
    params.per_channel = uniform(0, 1);
    params.real_scale = NULL;
    params.filter_layout = 0;
    params.rq_checked = 0;
    fill_s8(input, in.n * in.c);
    fill_s8(filter, fd.n * fd.c);
    fill_quant(od.c, in.c);
    const int32_t *b = uniform(0, 5) == 0 ? NULL : bias;
    fc_extreme_values(index, &params, od.c, in.c, in.n);
    params.kernel_sums = uniform(0, 1) ? make_kernel_sums(b, od.c, in.c, params.input_offset) : NULL;
    const mcugen_per_channel_quant_params quant = {multiplier, shift};
    const mcugen_context ctx = {scratch, mcugen_fully_connected_fast_s8_buffer_size(&fd)};
    const int32_t bytes = od.n * od.c;
    prepare_outputs(bytes);
    if (mcugen_fully_connected_s8(&ctx, &params, &quant, &in, input, &fd, filter, &bd, b, &od,
                                  out_ref) != MCUGEN_OK) {
        put_text("FAIL fully_connected: portable kernel rejected case ");
        put_int(index);
        end_line();
        ++failures;
        return;
    }
    const mcugen_fully_connected_fast_params fp = fast_fc(&params);
    if (mcugen_fully_connected_fast_s8(&ctx, &fp, &quant, &in, input, &fd, filter, b, &od,
                                       out_fast)) {
        ++fast_cases;
    } else {
        memcpy(out_fast, out_ref, (size_t)bytes);
    }
    count_spread(bytes, params.activation);
    if (!compare("fully_connected", index, bytes) || in.c % 4 != 0) {
        return;
    }
    /* the same case over the weights as mcugen builds them for Cortex-M4/M7 (no extra random
     * numbers): the portable loop and the fast path must both give out_ref */
    const int8_t *packed = make_fc_pairs4(od.c, in.c);
    params.filter_layout = MCUGEN_FC_LAYOUT_PAIRS4;
    params.rq_checked = fc_rq_checked(&params, b, od.c, in.c);
    memset(out_fast, GUARD, (size_t)bytes + 1);
    if (mcugen_fully_connected_s8(&ctx, &params, &quant, &in, input, &fd, packed, &bd, b, &od,
                                  out_fast) != MCUGEN_OK) {
        put_text("FAIL fully_connected: portable kernel rejected pairs4 case ");
        put_int(index);
        end_line();
        ++failures;
        return;
    }
    if (!compare("fully_connected", index, bytes)) {
        return;
    }
    memset(out_fast, GUARD, (size_t)bytes + 1);
    const mcugen_fully_connected_fast_params fp4 = fast_fc(&params);
    if (mcugen_fully_connected_fast_s8(&ctx, &fp4, &quant, &in, input, &fd, packed, b, &od,
                                       out_fast)) {
        ++fast_cases;
    } else {
        memcpy(out_fast, out_ref, (size_t)bytes);
    }
    compare("fully_connected", index, bytes);
}

/* TFLite's QuantizeMultiplier for a positive real scale. */
static void quantize_multiplier(double scale, int32_t *multiplier, int32_t *shift)
{
    int exponent = 0;
    const double fraction = frexp(scale, &exponent);
    int64_t q = (int64_t)llround(fraction * 2147483648.0);
    if (q == ((int64_t)1 << 31)) {
        q /= 2;
        ++exponent;
    }
    *multiplier = (int32_t)q;
    *shift = exponent;
}

static double random_scale(void)
{
    const double fraction = 1.0 + (double)(rng() % 1000u) / 1000.0; /* sequenced: same draws */
    return ldexp(fraction, -uniform(2, 9));                          /* on every compiler */
}

/* int8 ADD and SUB as TFLite prepares them (left_shift 20), same shapes, one side a
 * broadcast scalar or a broadcast row, against the -DMCUGEN_PORTABLE build; and parameters
 * that make rounding visible or that the fast rows must decline. */
static void test_add(int32_t index)
{
    int32_t count = uniform(0, 3) == 0 ? uniform(1, 9) : uniform(1, 3000);
    const int scalar1 = uniform(0, 7) == 0, scalar2 = !scalar1 && uniform(0, 7) == 0;
    mcugen_elementwise_params params;
    for (int32_t level = 0; level < MCUGEN_BROADCAST_MAX_LOOPS; ++level) {
        params.loop.extent[level] = 1;
        params.loop.input1_stride[level] = 0;
        params.loop.input2_stride[level] = 0;
    }
    params.loop.extent[MCUGEN_BROADCAST_MAX_LOOPS - 1] = count;
    params.loop.input1_stride[MCUGEN_BROADCAST_MAX_LOOPS - 1] = scalar1 ? 0 : 1;
    params.loop.input2_stride[MCUGEN_BROADCAST_MAX_LOOPS - 1] = scalar2 ? 0 : 1;
    params.activation = random_activation();
    double s1 = random_scale(), s2 = random_scale();
    /* an output scale near the sum's, so that most outputs land inside the clamp */
    double so = (s1 + s2) * (0.5 + (double)(rng() % 1000u) / 1000.0);
    if (uniform(0, 2) == 0) {
        /* powers of two: multipliers 2^30 and short shifts, so rounding ties are frequent */
        const int32_t a = uniform(2, 9), b = uniform(2, 9);
        s1 = ldexp(1.0, -a);
        s2 = ldexp(1.0, -b);
        so = ldexp(1.0, 1 - (a < b ? a : b) + uniform(-1, 1));
    }
    const double twice_max = 2.0 * (s1 > s2 ? s1 : s2);
    mcugen_rescale_quant_params q;
    q.left_shift = 20;
    q.input1_offset = uniform(-127, 128);
    q.input2_offset = uniform(-127, 128);
    q.output_offset = uniform(-128, 127);
    quantize_multiplier(s1 / twice_max, &q.input1_multiplier, &q.input1_shift);
    quantize_multiplier(s2 / twice_max, &q.input2_multiplier, &q.input2_shift);
    quantize_multiplier(twice_max / ((double)(1 << 20) * so), &q.output_multiplier,
                        &q.output_shift);
    fill_s8(input, count);
    fill_s8(filter, count);
    const int32_t mode = uniform(0, 7);
    if (mode <= 1) {
        /* Rounding made visible: one input (E) rescaled exactly (2^30, shift 0) and mostly at
         * its zero point, the other (G) and the output with small multipliers and shifts, so
         * that G's and the output's rounding, ties included, decide output bytes. */
        const int e1 = uniform(0, 1);
        int8_t *e_data = e1 ? input : filter;
        const int32_t e_offset = e1 ? q.input1_offset : q.input2_offset;
        int32_t *g_multiplier = e1 ? &q.input2_multiplier : &q.input1_multiplier;
        int32_t *g_shift = e1 ? &q.input2_shift : &q.input1_shift;
        *(e1 ? &q.input1_multiplier : &q.input2_multiplier) = 1 << 30;
        *(e1 ? &q.input1_shift : &q.input2_shift) = 0;
        *g_multiplier = uniform(0, 3) == 0 ? uniform(-(1 << 13), 1 << 13) : uniform(0, 1 << 13);
        *g_shift = uniform(0, 5) == 0 ? 0 : uniform(-4, -1);
        q.output_multiplier = uniform(0, 3) == 0 ? uniform(-(1 << 30), 1 << 30)
                                                 : uniform(1 << 30, INT32_MAX);
        q.output_shift = uniform(0, 3) == 0 ? uniform(0, 1) : uniform(-3, -1);
        for (int32_t i = 0; i < count; ++i) {
            if (uniform(0, 7) != 0) {
                e_data[i] = (int8_t)(e_offset > 127 ? -128 : -e_offset);
            }
        }
    } else if (mode == 2) {
        /* Anything the portable kernel accepts: the fast rows must decline what they do not
         * cover (no exact input, negative multipliers, shifts out of range, offsets). */
        int32_t *m[2] = {&q.input1_multiplier, &q.input2_multiplier};
        int32_t *sh[2] = {&q.input1_shift, &q.input2_shift};
        for (int k = 0; k < 2; ++k) {
            const int32_t kind = uniform(0, 2);
            *m[k] = kind == 0 ? 1 << 30 : kind == 1 ? uniform(0, INT32_MAX) : (int32_t)rng();
            *sh[k] = kind == 0 ? 0 : uniform(-31, 0);
        }
        q.output_multiplier = uniform(0, 1) ? uniform(0, INT32_MAX) : (int32_t)rng();
        q.output_shift = uniform(-31, 2);
        q.input1_offset = uniform(-130, 130);
        q.input2_offset = uniform(-130, 130);
        q.left_shift = uniform(0, 3) == 0 ? uniform(16, 20) : 20;
    }
    if (mode == 3 && !scalar1 && !scalar2) {
        /* rows: input 2 one row broadcast over input 1's rows (one call of the row each) */
        const int32_t row = uniform(1, 40);
        params.loop.extent[MCUGEN_BROADCAST_MAX_LOOPS - 1] = row;
        params.loop.extent[MCUGEN_BROADCAST_MAX_LOOPS - 2] = count / row;
        params.loop.input1_stride[MCUGEN_BROADCAST_MAX_LOOPS - 2] = row;
        count = row * (count / row);
        if (count == 0) {
            count = params.loop.extent[MCUGEN_BROADCAST_MAX_LOOPS - 1] = 1;
            params.loop.extent[MCUGEN_BROADCAST_MAX_LOOPS - 2] = 1;
        }
    }
    prepare_outputs(count);
    const int sub = uniform(0, 3) == 0;
    const mcugen_status ref = sub ? mcugen_sub_s8(&params, &q, input, filter, out_ref)
                                  : mcugen_add_s8(&params, &q, input, filter, out_ref);
    const mcugen_status fast = sub ? fast_mcugen_sub_s8(&params, &q, input, filter, out_fast)
                                   : fast_mcugen_add_s8(&params, &q, input, filter, out_fast);
    if (ref != MCUGEN_OK || fast != MCUGEN_OK) {
        put_text("FAIL add: a kernel rejected case ");
        put_int(index);
        end_line();
        ++failures;
        return;
    }
#if defined(MCUGEN_FAST_MVE) || defined(MCUGEN_FAST_DSP)
    ++fast_cases; /* (the DSP rows decline a multiplier of INT32_MIN, never drawn here) */
#endif
    count_spread(count, params.activation);
    compare(sub ? "sub" : "add", index, count);
}

/* int8 AVERAGE_POOL_2D and MAX_POOL_2D against the -DMCUGEN_PORTABLE build: random shapes,
 * windows up to the whole image (more than 256 taps, which the fast averages decline),
 * padding, channel counts that leave tails, unaligned inputs, activations. */
static void test_pool(int32_t index)
{
    mcugen_dims in, od;
    mcugen_pool_params params;
    const int average = uniform(0, 2) != 0;
    do {
        in.n = uniform(1, 2);
        in.h = uniform(1, 26);
        in.w = uniform(1, 26);
        in.c = uniform(0, 1) ? 8 * uniform(1, 10) : uniform(1, 70);
        const int global = uniform(0, 3) == 0;
        params.filter.h = global ? in.h : uniform(1, 6);
        params.filter.w = global ? in.w : uniform(1, 6);
        params.stride.h = uniform(1, 3);
        params.stride.w = uniform(1, 3);
        params.padding.h = uniform(0, params.filter.h - 1);
        params.padding.w = uniform(0, params.filter.w - 1);
        od.n = in.n;
        od.h = out_size(in.h, params.filter.h, params.stride.h, 1, params.padding.h);
        od.w = out_size(in.w, params.filter.w, params.stride.w, 1, params.padding.w);
        od.c = in.c;
    } while (od.h < 1 || od.w < 1 || in.n * in.h * in.w * in.c + 3 > MAX_INPUT ||
             od.n * od.h * od.w * od.c > MAX_OUTPUT);
    params.activation = random_activation();
    if (uniform(0, 15) == 0) {
        params.activation.min = -1000, params.activation.max = 1000; /* wider than int8 */
    }
    int8_t *data = input + uniform(0, 3);
    const int32_t size = in.n * in.h * in.w * in.c;
    /* a maximum of 127 would be clamped anyway; biased averages overflow int16 sums of more
     * than 256 taps */
    const int32_t bias = average ? uniform(-2, 2) : 0;
    for (int32_t i = 0; i < size; ++i) {
        data[i] = (int8_t)(!average ? uniform(-110, 100)
                           : bias == 2  ? uniform(60, 120)
                           : bias == -2 ? uniform(-128, -60)
                                        : uniform(-128, 127));
    }
    const int32_t bytes = od.n * od.h * od.w * od.c;
    prepare_outputs(bytes);
    const mcugen_status ref = average ? mcugen_avgpool_s8(&params, &in, data, &od, out_ref)
                                      : mcugen_maxpool_s8(&params, &in, data, &od, out_ref);
    const mcugen_status fast = average
                                   ? fast_mcugen_avgpool_s8(&params, &in, data, &od, out_fast)
                                   : fast_mcugen_maxpool_s8(&params, &in, data, &od, out_fast);
    if (ref != fast) {
        put_text("FAIL pool: status differs, case ");
        put_int(index);
        end_line();
        ++failures;
        return;
    }
#if defined(MCUGEN_FAST_MVE) || defined(MCUGEN_FAST_DSP)
    fast_cases += ref == MCUGEN_OK; /* (the averages decline windows of more than 256 taps) */
#endif
    if (ref != MCUGEN_OK) {
        return; /* an average window wholly in the padding: both fail */
    }
    count_spread(bytes, params.activation);
    compare(average ? "avgpool" : "maxpool", index, bytes);
}

/* Conv and depthwise (alternately) with the requantizations at the edges of the DSP path's
 * fast case (mcugen_conv_fast_dsp.c: shift in [-22, -1], |bias| + the largest sum < 2^30,
 * |output offset| <= 128) and just outside them, small multipliers so that the outputs stay
 * inside the clamp, sometimes extreme inputs (the largest sums) and a depthwise filter of more
 * than 255 taps (its weight sums). */
static void test_requant_edges(int32_t index)
{
    mcugen_dims in, fd, bd, od;
    const int dw = index & 1, big = dw && uniform(0, 5) == 0;
    mcugen_tile stride, dilation = {1, 1}, padding;
    do { /* until input, filter and output fit their buffers */
    stride.h = uniform(1, 2), stride.w = uniform(1, 2);
    in.n = 1;
    in.h = big ? uniform(16, 20) : uniform(1, 7);
    in.w = big ? uniform(17, 20) : uniform(1, 7);
    in.c = dw ? 4 * uniform(1, big ? 2 : 6) : uniform(1, 24);
    fd.n = dw ? 1 : uniform(1, 12);
    fd.h = big ? 16 : uniform(1, 3);
    fd.w = big ? 17 : uniform(1, 3);
    fd.c = dw ? in.c : in.c;
    padding.h = uniform(0, fd.h < 5 ? fd.h - 1 : 4); /* outputs within MAX_OUTPUT */
    padding.w = uniform(0, fd.w < 5 ? fd.w - 1 : 4);
    od.n = 1;
    od.h = out_size(in.h, fd.h, stride.h, 1, padding.h);
    od.w = out_size(in.w, fd.w, stride.w, 1, padding.w);
    od.c = dw ? in.c : fd.n;
    if (od.h < 1 || od.w < 1) {
        padding.h = fd.h < 5 ? fd.h - 1 : 4, padding.w = fd.w < 5 ? fd.w - 1 : 4;
        stride.h = stride.w = 1;
        od.h = out_size(in.h, fd.h, 1, 1, padding.h);
        od.w = out_size(in.w, fd.w, 1, 1, padding.w);
    }
    } while (in.h * in.w * in.c > MAX_INPUT || fd.n * fd.h * fd.w * fd.c > MAX_FILTER ||
             od.h * od.w * od.c > MAX_OUTPUT);
    bd.n = 1, bd.h = 1, bd.w = 1, bd.c = od.c;
    const int32_t input_offset = uniform(-127, 128);
    const int32_t output_offset = uniform(0, 7) == 0 ? 128 : uniform(-128, 127);
    const mcugen_activation act = random_activation();
    fill_s8(input, in.n * in.h * in.w * in.c);
    fill_s8(filter, dw ? fd.h * fd.w * fd.c : fd.n * fd.h * fd.w * fd.c);
    if (uniform(0, 3) == 0) { /* the largest sums: inputs and weights at the extremes */
        const int8_t x = input_offset > 0 ? 127 : -128;
        memset(input, x, (size_t)(in.n * in.h * in.w * in.c));
        memset(filter, -128, (size_t)(dw ? fd.h * fd.w * fd.c : fd.n * fd.h * fd.w * fd.c));
    }
    const int32_t taps = dw ? fd.h * fd.w : fd.h * fd.w * fd.c;
    const int32_t xmax = input_offset > 0 ? 127 + input_offset : 128 - input_offset;
    const int64_t limit = ((int64_t)1 << 30) - (int64_t)taps * 128 * xmax;
    for (int32_t c = 0; c < od.c; ++c) {
        const int32_t kind = uniform(0, 2);
        int32_t right = uniform(1, 22);
        if (kind == 0) { /* the shift at and past the ends of [-22, -1] */
            static const int32_t ends[] = {1, 0, -1, -2, -21, -22, -23, -24};
            right = -ends[uniform(0, 7)];
            bias[c] = uniform(-20000, 20000);
        } else if (kind == 1) { /* |bias| at the limit, one below or one above */
            const int32_t b = (int32_t)(limit - 1 + uniform(0, 1));
            bias[c] = uniform(0, 1) ? b : -b;
        } else {
            bias[c] = (int32_t)rng();
        }
        shift[c] = -right;
        /* outputs about |bias| * m / 2^(31 + right): a few tens */
        const int64_t m = ((int64_t)40 << (31 + (right > 0 ? right : 0))) /
                              ((int64_t)(bias[c] < 0 ? -(int64_t)bias[c] : bias[c]) +
                               taps * 2000 + 1) +
                          uniform(0, 3);
        multiplier[c] = (int32_t)(m < 1 ? 1 : (m > INT32_MAX ? INT32_MAX : m));
    }
    const int32_t *b = bias;
    const mcugen_per_channel_quant_params quant = {multiplier, shift};
    const int32_t bytes = od.n * od.h * od.w * od.c;
    prepare_outputs(bytes);
    int fast = 0;
    mcugen_status status;
    if (dw) {
        const mcugen_dw_conv_params params = {input_offset, output_offset, stride, padding,
                                              dilation,     act,           1,      NULL,
                                              NULL};
        const mcugen_context ctx = {scratch, mcugen_depthwise_conv_fast_s8_buffer_size(&fd)};
        status = mcugen_depthwise_conv_s8(&ctx, &params, &quant, &in, input, &fd, filter, &bd,
                                          b, &od, out_ref);
        const mcugen_conv_fast_params fp = fast_dw(&params);
        fast = status == MCUGEN_OK &&
               mcugen_depthwise_conv_fast_s8(&ctx, &fp, &quant, &in, input, &fd, filter, b, &od,
                                             out_fast);
    } else {
        const mcugen_conv_params params = {input_offset, output_offset, stride, padding,
                                           dilation,     act,           NULL,   NULL};
        const mcugen_context ctx = {scratch, mcugen_convolve_fast_s8_buffer_size(&fd)};
        status = mcugen_convolve_s8(&ctx, &params, &quant, &in, input, &fd, filter, &bd, b, &od,
                                    out_ref);
        const mcugen_conv_fast_params fp = fast_conv(&params);
        fast = status == MCUGEN_OK &&
               mcugen_convolve_fast_s8(&ctx, &fp, &quant, &in, input, &fd, filter, b, &od,
                                       out_fast);
    }
    if (status != MCUGEN_OK) {
        put_text("FAIL requant_edges: portable kernel rejected case ");
        put_int(index);
        end_line();
        ++failures;
        return;
    }
    if (fast) {
        ++fast_cases;
    } else {
        memcpy(out_fast, out_ref, (size_t)bytes);
    }
    count_spread(bytes, act);
    compare(dw ? "depthwise" : "conv", index, bytes); /* (under "requant_edges") */
}

typedef void (*test_fn)(int32_t index);

static int32_t runs; /* kernels run, for the PASS line */

static void run(const char *name, test_fn test)
{
    ++runs;
    const int before = failures;
    const int32_t fast_before = fast_cases;
    unclamped_bytes = compared_bytes = 0;
    for (int32_t i = 0; i < TEST_CASES && failures == before; ++i) {
        test(i);
    }
    /* a test of clamped outputs only could not fail: require a third inside the clamp */
    if (failures == before && 3 * unclamped_bytes < compared_bytes) {
        put_text("FAIL ");
        put_text(name);
        put_text(": only ");
        put_int(unclamped_bytes);
        put_text(" of ");
        put_int(compared_bytes);
        put_text(" output bytes inside the clamp");
        end_line();
        ++failures;
    }
    put_text(failures == before ? "ok " : "FAIL ");
    put_text(name);
    put_text(": ");
    put_int(TEST_CASES);
    put_text(" cases, ");
    put_int(fast_cases - fast_before);
    put_text(" on the fast path, ");
    put_int(unclamped_bytes);
    put_text(" of ");
    put_int(compared_bytes);
    put_text(" bytes inside the clamp");
    end_line();
}

/* A tiled chain's kept rows moved down (mcugen_move_rows) against memmove: sizes and distances
 * by case index (up to 1,600 bytes moved by 1 to 1,120, overlapping or not), the bytes from a
 * generator seeded by the index, so the shared one draws nothing here. */
static void test_move(int32_t index)
{
    const int32_t bytes = 1 + (index * 373) % 1600, apart = 1 + (index * 97) % 1120;
    uint32_t state = 2654435761u * (uint32_t)(index + 1);
    for (int32_t i = 0; i < bytes + apart; ++i) {
        state = state * 1664525u + 1013904223u;
        input[i] = (int8_t)(state >> 24);
    }
    memcpy(filter, input, (size_t)(bytes + apart));
    prepare_outputs(bytes);
    memmove(input, input + apart, (size_t)bytes);
    mcugen_move_rows(filter, filter + apart, bytes);
    memcpy(out_ref, input, (size_t)bytes);
    memcpy(out_fast, filter, (size_t)bytes);
#if defined(MCUGEN_FAST_MVE)
    ++fast_cases; /* (elsewhere mcugen_move_rows is memmove) */
#endif
    count_spread(bytes, (mcugen_activation){-128, 127});
    compare("move", index, bytes);
}

#if defined(TEST_BENCH)
/* Instruction counts of fixed shapes (KWS's pointwise and depthwise layers, a 3x3 conv),
 * fast vs portable: SysTick under QEMU -icount shift=0 ticks every 40 (mps2-an386) or 31.25
 * (mps3-an547) instructions; printed as ticks. */
#define SYST ((volatile uint32_t *)0xE000E010u)
static uint32_t ticks_since(uint32_t start)
{
    return (start - SYST[2]) & 0xFFFFFFu;
}

static void bench_line(const char *name, uint32_t fast, uint32_t portable, int32_t macs)
{
    put_text("BENCH ");
    put_text(name);
    put_text(" macs ");
    put_int(macs);
    put_text(" ticks fast ");
    put_int((int32_t)fast);
    put_text(" portable ");
    put_int((int32_t)portable);
    end_line();
}

static void bench(void)
{
    SYST[1] = 0xFFFFFFu;
    SYST[2] = 0u;
    SYST[0] = 5u;
    mcugen_dims in = {1, 25, 5, 64}, fd = {64, 1, 1, 64}, bd = {1, 1, 1, 64}, od = {1, 25, 5, 64};
    mcugen_conv_params cp = {-3, 5, {1, 1}, {0, 0}, {1, 1}, {-128, 127}, NULL, NULL};
    const mcugen_conv_fast_params fcp = fast_conv(&cp);
    fill_s8(input, MAX_INPUT);
    fill_s8(filter, MAX_FILTER);
    fill_quant(MAX_CHANNELS, 64);
    const mcugen_per_channel_quant_params quant = {multiplier, shift};
    mcugen_context ctx = {scratch, mcugen_convolve_fast_s8_buffer_size(&fd)};
    uint32_t t = SYST[2];
    (void)mcugen_convolve_fast_s8(&ctx, &fcp, &quant, &in, input, &fd, filter, bias, &od, out_fast);
    const uint32_t fast = ticks_since(t);
#if defined(TEST_BENCH_STOP)
    semihost_exit(0);
#endif
    t = SYST[2];
    (void)mcugen_convolve_s8(&ctx, &cp, &quant, &in, input, &fd, filter, &bd, bias, &od, out_ref);
    bench_line("conv1x1_25x5x64x64", fast, ticks_since(t), 125 * 64 * 64);

    mcugen_dims in3 = {1, 16, 16, 16}, fd3 = {16, 3, 3, 16}, od3 = {1, 16, 16, 16};
    bd.c = 16;
    mcugen_conv_params cp3 = {-3, 5, {1, 1}, {1, 1}, {1, 1}, {-128, 127}, NULL, NULL};
    const mcugen_conv_fast_params fcp3 = fast_conv(&cp3);
    ctx.size = mcugen_convolve_fast_s8_buffer_size(&fd3);
    t = SYST[2];
    (void)mcugen_convolve_fast_s8(&ctx, &fcp3, &quant, &in3, input, &fd3, filter, bias, &od3,
                                  out_fast);
    const uint32_t fast3 = ticks_since(t);
    t = SYST[2];
    (void)mcugen_convolve_s8(&ctx, &cp3, &quant, &in3, input, &fd3, filter, &bd, bias, &od3,
                             out_ref);
    bench_line("conv3x3_16x16x16x16", fast3, ticks_since(t), 256 * 16 * 144);

    mcugen_dims fdw = {1, 3, 3, 64};
    bd.c = 64;
    mcugen_dw_conv_params dp = {-3, 5, {1, 1}, {1, 1}, {1, 1}, {-128, 127}, 1, NULL, NULL};
    const mcugen_conv_fast_params fdp = fast_dw(&dp);
    ctx.size = mcugen_depthwise_conv_fast_s8_buffer_size(&fdw);
    t = SYST[2];
    (void)mcugen_depthwise_conv_fast_s8(&ctx, &fdp, &quant, &in, input, &fdw, filter, bias, &od,
                                        out_fast);
    const uint32_t fastd = ticks_since(t);
#if defined(TEST_BENCH_STOP_DW)
    semihost_exit(0);
#endif
    t = SYST[2];
    (void)mcugen_depthwise_conv_s8(&ctx, &dp, &quant, &in, input, &fdw, filter, &bd, bias, &od,
                                   out_ref);
    bench_line("dw3x3_25x5x64", fastd, ticks_since(t), 125 * 64 * 9);

    /* a first layer: 3 input channels, 3x3 stride 2 (VWW's, on a smaller image) */
    mcugen_dims in0 = {1, 48, 48, 3}, fd0 = {8, 3, 3, 3}, od0 = {1, 24, 24, 8};
    bd.c = 8;
    mcugen_conv_params cp0 = {-3, 5, {2, 2}, {0, 0}, {1, 1}, {-128, 127}, NULL, NULL};
    const mcugen_conv_fast_params fcp0 = fast_conv(&cp0);
    ctx.size = mcugen_convolve_fast_s8_buffer_size(&fd0);
    t = SYST[2];
    (void)mcugen_convolve_fast_s8(&ctx, &fcp0, &quant, &in0, input, &fd0, filter, bias, &od0,
                                  out_fast);
    const uint32_t fast0 = ticks_since(t);
#if defined(TEST_BENCH_STOP_FIRST)
    semihost_exit(0);
#endif
    t = SYST[2];
    (void)mcugen_convolve_s8(&ctx, &cp0, &quant, &in0, input, &fd0, filter, &bd, bias, &od0,
                             out_ref);
    bench_line("conv3x3s2_48x48x3x8", fast0, ticks_since(t), 576 * 8 * 27);

    /* a shallow pointwise layer: 8 -> 16 channels (VWW's second conv, on a smaller image) */
    mcugen_dims in8 = {1, 24, 24, 8}, fd8 = {16, 1, 1, 8}, od8 = {1, 24, 24, 16};
    bd.c = 16;
    mcugen_conv_params cp8 = {128, -128, {1, 1}, {0, 0}, {1, 1}, {-128, 127}, NULL, NULL};
    const mcugen_conv_fast_params fcp8 = fast_conv(&cp8);
    ctx.size = mcugen_convolve_fast_s8_buffer_size(&fd8);
    t = SYST[2];
    (void)mcugen_convolve_fast_s8(&ctx, &fcp8, &quant, &in8, input, &fd8, filter, bias, &od8,
                                  out_fast);
    const uint32_t fast8 = ticks_since(t);
    t = SYST[2];
    (void)mcugen_convolve_s8(&ctx, &cp8, &quant, &in8, input, &fd8, filter, &bd, bias, &od8,
                             out_ref);
    bench_line("conv1x1_24x24x8x16", fast8, ticks_since(t), 576 * 16 * 8);

    /* KWS's first layer: 10x4 over one channel, stride 2, padded (im2col, 40-byte columns) */
    mcugen_dims ink = {1, 49, 10, 1}, fdk = {64, 10, 4, 1}, odk = {1, 25, 5, 64};
    bd.c = 64;
    mcugen_conv_params cpk = {-3, 5, {2, 2}, {4, 1}, {1, 1}, {-128, 127}, NULL, NULL};
    const mcugen_conv_fast_params fcpk = fast_conv(&cpk);
    ctx.size = mcugen_convolve_fast_s8_buffer_size(&fdk);
    t = SYST[2];
    (void)mcugen_convolve_fast_s8(&ctx, &fcpk, &quant, &ink, input, &fdk, filter, bias, &odk,
                                  out_fast);
    const uint32_t fastk = ticks_since(t);
    t = SYST[2];
    (void)mcugen_convolve_s8(&ctx, &cpk, &quant, &ink, input, &fdk, filter, &bd, bias, &odk,
                             out_ref);
    bench_line("conv10x4s2_49x10x1x64", fastk, ticks_since(t), 125 * 64 * 40);
}
#endif

/* The scratch each fast path asks for, on a fixed list of filter shapes (h, w, c, n: out_c for
 * conv and FC, in_c * ch_mult for depthwise): tests/test_firmware_kernels.py compares the lines
 * with mcugen's Python mirrors (mcugen/ops/conv/emit.py, mcugen/ops/matmul/emit.py), which plan
 * that scratch in the arena; a mismatch would make a fast path decline silently. */
static void print_buffer_sizes(void)
{
    static const int32_t shapes[][4] = {{1, 1, 64, 64}, {3, 3, 16, 16},  {3, 3, 3, 16},
                                        {10, 4, 1, 64}, {3, 3, 256, 32}, {5, 5, 20, 7}};
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); ++i) {
        const int32_t h = shapes[i][0], w = shapes[i][1], c = shapes[i][2], n = shapes[i][3];
        const mcugen_dims conv = {n, h, w, c}, dw = {1, h, w, n}, fc = {c, 1, 1, n};
        put_text("scratch ");
        put_int(h), put_text(" "), put_int(w), put_text(" "), put_int(c), put_text(" "), put_int(n);
        put_text(": "), put_int(mcugen_convolve_fast_s8_buffer_size(&conv));
        put_text(" "), put_int(mcugen_depthwise_conv_fast_s8_buffer_size(&dw));
        put_text(" "), put_int(mcugen_fully_connected_fast_s8_buffer_size(&fc));
        end_line();
    }
}

int main(void)
{
    print_buffer_sizes();
#if defined(TEST_BENCH)
    bench();
#endif
    run("conv", test_conv);
    run("depthwise", test_depthwise);
    run("fully_connected", test_fully_connected);
    run("requant_edges", test_requant_edges);
    run("add", test_add);
    run("pool", test_pool);
    run("depthwise_3x3", test_depthwise_3x3); /* (last: the runs above keep their cases) */
    run("conv_shapes", test_conv_shapes);     /* (draws nothing from the shared generator) */
    run("dw_shapes", test_dw_shapes);         /* (draws nothing from the shared generator) */
    run("move", test_move);                   /* (draws nothing from the shared generator) */
#if defined(MCUGEN_FAST_MVE)
    put_text("path: MVE");
#elif defined(MCUGEN_FAST_DSP)
    put_text("path: DSP");
#else
    put_text("path: portable only");
#endif
    end_line();
    if (failures != 0) {
        return 1;
    }
    put_text("KERNELS PASS ");
    put_int(runs * TEST_CASES);
    put_text(" cases (");
    put_int(fast_cases);
    put_text(" on the fast path)");
    end_line();
    return 0;
}
