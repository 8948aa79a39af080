/* mcugen runtime: the int8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED fast paths for cores
 * with the DSP extension (Cortex-M4/M7): im2col into int16 and SMLAD, SMLABB/SMLATT for the
 * depthwise, SMMULR requantization. Bit-exact with the portable C (TFLite's reference integer
 * conv); compiled only under MCUGEN_FAST_DSP, except the scratch sizes, which every core
 * compiles. Conditions and the arithmetic argument: mcugen_conv_fast.h. */
#include "mcugen_conv_fast.h"
#include "mcugen_fast_common.h"

/* One output channel's requantization, decoded (see "requantization" below). */
typedef struct {
    int32_t bias;
    int32_t mult;
    int32_t right;
    int32_t add;
} rq_chan;

/* ---- scratch: plain arithmetic, compiled on every core so that the host can check it -------- */

/* The largest block: five columns where a column is small (a fifth column of 5 pixels per
 * call under tiling instead of 4 + a lone one), else four (scratch is RAM). */
static inline int32_t conv_columns(int32_t size4)
{
    return size4 <= 256 ? 5 : 4;
}

int32_t mcugen_convolve_fast_dsp_s8_buffer_size(const mcugen_dims *filter_dims)
{
    /* conv_columns int16 im2col columns, the requantization table, one column's staging */
    const int32_t size4 = round_up4(filter_dims->h * filter_dims->w * filter_dims->c);
    return (2 * conv_columns(size4) + 1) * size4 + (int32_t)sizeof(rq_chan) * filter_dims->n;
}

/* The depthwise runs over the pixels once per chunk of channels, up to DW_CHUNK_BYTES of
 * per-channel tables a chunk (at least one quad of four channels): the scratch stays O(taps). */
#define DW_CHUNK_BYTES 1280
#define DW_QUAD_BYTES(taps) (4 * ((int32_t)sizeof(rq_chan) + 4 + 1) + 8 * (taps))

static int32_t dw_quads(const mcugen_dims *filter_dims)
{
    const int32_t quads = (filter_dims->c + 3) >> 2;
    const int32_t fit = DW_CHUNK_BYTES / DW_QUAD_BYTES(filter_dims->h * filter_dims->w);
    const int32_t q = fit < quads ? fit : quads;
    return q < 1 ? 1 : q;
}

int32_t mcugen_depthwise_conv_fast_dsp_s8_buffer_size(const mcugen_dims *filter_dims)
{
    /* per chunk channel: its requantization, starting sum, input zero point and weights
     * widened to int16; per tap: two input offsets */
    const int32_t taps = filter_dims->h * filter_dims->w;
    return dw_quads(filter_dims) * DW_QUAD_BYTES(taps) + 8 * taps;
}

int32_t mcugen_fully_connected_fast_dsp_s8_buffer_size(const mcugen_dims *filter_dims)
{
    return 2 * round_up4(filter_dims->n); /* the input row as int16 */
}

#if defined(MCUGEN_FAST_DSP)

/* ---- requantization ------------------------------------------------------------------------
 * Per output channel, decoded once per call into a table in the scratch:
 *   fast (right > 0): y = SMMULR(2 acc, mult) = floor((acc mult + 2^30) / 2^31), which is
 *        requantize_decoded's doubling high multiply (left = 0) as long as 2 acc fits in int32;
 *        then floor((y + (y >> 31) + add) / 2^right) with add = 2^(right-1) + zp 2^right is its
 *        RoundingDivideByPOT plus the output offset (adding a multiple of 2^right before a floor
 *        shift adds the quotient exactly). Chosen only when it provably cannot overflow:
 *        shift in [-22, -1], |zp| <= 128 and |bias| + (the largest |sum| of products) < 2^30,
 *        so |2 acc| < 2^31, |y| <= 2^30 and |y + add| < 2^30 + 2^29 + 2^21 + 1; and mult >= 0
 *        (TFLite's multipliers are), so that y has the sign of acc or is 0 (see DWQ_RQ).
 *   exact (right == 0): requantize_fast with add holding the shift, for everything else
 *        (TFLite's mcugen_requantize for a multiplier of INT32_MIN: no decline). */

static inline int32_t smmulr(int32_t a, int32_t b)
{
#if defined(__GNUC__)
    int32_t r;
    __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    return (int32_t)(((int64_t)a * b + ((int64_t)1 << 31)) >> 32);
#endif
}

/* max_sum: a bound of |sum of w (x + offset)| over the accumulated products. Returns 1 when
 * every channel takes the fast requantization, else 0 (a multiplier INT32_MIN is exact). */
static int rq_table(rq_chan *t, const int32_t *bias, const int32_t *mult, const int32_t *shift,
                    int32_t count, int32_t zp, int64_t max_sum)
{
    /* fast needs |bias| < limit = 2^30 - max_sum, checked as bias + (limit - 1) < 2 limit - 1
     * unsigned; span 0 (never fast) when max_sum or |zp| is too large */
    const int ok = max_sum < ((int64_t)1 << 30) && zp >= -128 && zp <= 128;
    const uint32_t limit = ok ? (1u << 30) - (uint32_t)max_sum : 1u;
    const uint32_t span = ok ? 2u * limit - 1u : 0u;
    const uint32_t odd = 2u * (uint32_t)zp + 1u; /* add = 2^(right-1) + zp 2^right, one shift */
    int all = 1;
    for (int32_t c = 0; c < count; ++c, ++t) {
        const int32_t b = bias != NULL ? bias[c] : 0, m = mult[c], right = -shift[c];
        t->bias = b;
        t->mult = m;
        if ((uint32_t)b + (limit - 1u) < span && (uint32_t)(right - 1) < 22u && m >= 0) {
            t->right = right;
            t->add = (int32_t)(odd << (right - 1));
        } else {
            t->right = 0;
            t->add = -right;
            all = 0;
        }
    }
    return all;
}

/* Largest |x + offset| for int8 x, times 128 (the largest |w|): one product's bound. */
static inline int64_t max_product(int32_t offset)
{
    const int32_t lo = offset - 128 < 0 ? 128 - offset : offset - 128;
    const int32_t hi = offset + 127 < 0 ? -(offset + 127) : offset + 127;
    return 128 * (int64_t)(lo > hi ? lo : hi);
}

/* The activation, as every output needs it; full: the clamp is the int8 range (one SSAT). */
typedef struct {
    int32_t zp, lo, hi, full;
} rq_params;

static inline rq_params rq_params_of(int32_t zp, mcugen_activation act)
{
    const rq_params p = {zp, act.min, act.max, act.min == INT8_MIN && act.max == INT8_MAX};
    return p;
}

/* The fast requantization, output offset included, before the clamp. */
static inline int32_t rq_y(int32_t acc, int32_t mult, int32_t right, int32_t add)
{
    const int32_t y = smmulr((int32_t)((uint32_t)acc << 1), mult);
    return (y + (y >> 31) + add) >> right;
}

static inline int8_t clamp_s8(int32_t y, int32_t lo, int32_t hi)
{
    return (int8_t)(y < lo ? lo : (y > hi ? hi : y));
}

/* Kept out of line: the hot loops then keep their values in registers. */
#if defined(__GNUC__)
#define DSP_NOINLINE __attribute__((noinline))
#else
#define DSP_NOINLINE
#endif

/* The paths that only save instructions (special cases of a general loop: pointwise columns,
 * windows inside the input, unrolled 3x3 depthwise taps) are left out at -Os, where the
 * runtime's code size is what counts. */
#if defined(__OPTIMIZE_SIZE__)
#define DSP_SPEED_PATHS 0
#else
#define DSP_SPEED_PATHS 1
#endif

DSP_NOINLINE static int8_t rq_exact(int32_t acc, int32_t mult, int32_t shift, const rq_params *p)
{
    /* requantize_fast excludes INT32_MIN, which TFLite's arithmetic takes */
    const int32_t r = mult != INT32_MIN ? requantize_fast(acc, mult, shift)
                                        : mcugen_requantize(acc, mult, shift);
    const int32_t y = wrap_add(r, p->zp);
    return clamp_s8(y, p->lo, p->hi);
}

/* One output of channel q. */
static inline int8_t rq_out(int32_t acc, const rq_chan *q, const rq_params *p)
{
    if (q->right == 0) {
        return rq_exact(acc, q->mult, q->add, p);
    }
    const int32_t y = rq_y(acc, q->mult, q->right, q->add);
    return p->full ? (int8_t)__ssat(y, 8) : clamp_s8(y, p->lo, p->hi);
}

/* ---- conv: im2col into int16 and SMLAD ------------------------------------------------------
 * A block of n (5 or 4, or 1 for the last pixels) im2col columns of K = kh * kw * depth int16
 * values x + offset (0 in the padding) is stored by groups of four values, swizzled x0 x2 x1 x3
 * (the order __sxtb16 and sxtb16_ror8 unpack a word of four int8 weights into), group g of
 * column j at 4 n g + 4 j: one pointer walks all n columns and each group is one LDRD. The
 * last K % 4 values sit in a last group, zero-padded. */
static inline int32_t swizzle(int32_t k)
{
    return (k & ~3) | ((k & 1) << 1) | ((k >> 1) & 1);
}

static inline int32_t pack2(int32_t v)
{
    return (int32_t)(((uint32_t)v & 0xFFFFu) | ((uint32_t)v << 16));
}

/* One group of a column: the four int8 values of v plus the offset (offset2: in both
 * halfwords), as the two int16 words x0 x2, x1 x3: one SXTAB16 each. */
static inline void widen_group(int16_t *dst, int32_t v, int32_t offset2)
{
    store32(dst, __sxtab16(offset2, v));
    store32(dst + 2, sxtab16_ror8(offset2, v));
}

/* The n columns of a 1x1, stride-1, unpadded conv with depth % 4 == 0: pixel j's values are
 * src[j depth ..], contiguous, so no window to find. */
DSP_NOINLINE static void pointwise_cols(int16_t *cols, int32_t n, const int8_t *src,
                                        int32_t depth, int32_t offset)
{
    const int32_t offset2 = pack2(offset), step = 4 * n;
    for (int32_t j = 0; j < n; ++j) {
        int16_t *dst = cols + 4 * j;
        for (const int8_t *end = src + depth; src != end; src += 4, dst += step) {
            widen_group(dst, load32(src), offset2);
        }
    }
}

/* The taps [k0, k1) of a window row or column starting at `origin` that fall inside [0, limit). */
DSP_NOINLINE static void tap_range(int32_t origin, int32_t k, int32_t dilation, int32_t limit,
                                   int32_t *k0, int32_t *k1)
{
    int32_t a = 0, b = k;
    while (a < k && origin + a * dilation < 0) ++a;
    while (b > a && origin + (b - 1) * dilation >= limit) --b;
    *k0 = a;
    *k1 = b;
}

/* dst[0..n) = src[0..n), a word at a time while it can (unaligned: fine on Armv7E-M). */
static inline int8_t *copy_s8(int8_t *dst, const int8_t *src, int32_t n)
{
    for (; n >= 4; n -= 4, dst += 4, src += 4) {
        store32(dst, load32(src));
    }
    for (; n > 0; --n) {
        *dst++ = *src++;
    }
    return dst;
}

/* The rows of a window inside the image, len >= 4 contiguous bytes each, step >= round_up4(len)
 * bytes apart, into dst a word at a time: every row but the last copies up to 3 bytes past its
 * end, which the next row's copy overwrites (within the window's len * rows bytes); they are
 * read from before the next row's start, inside the image. */
static inline int8_t *stage_rows(int8_t *dst, const int8_t *row, int32_t rows, int32_t step,
                                 int32_t len)
{
    for (; rows > 1; --rows, row += step, dst += len) {
        for (int32_t i = 0; i < len; i += 4) {
            store32(dst + i, load32(row + i));
        }
    }
    return copy_s8(dst, row, len);
}

static inline int8_t *fill_s8(int8_t *dst, int8_t value, int32_t n)
{
    for (; n > 0; --n) {
        *dst++ = value;
    }
    return dst;
}

/* Column j of a block of n: for depth % 4 == 0 straight from the input a word of four int8 at
 * a time; else the window's bytes are first gathered into `stage` (the input zero point,
 * -offset, in the padding and up to a whole group, so that they widen to 0), then widened a
 * word at a time. */
DSP_NOINLINE static void im2col_q15(int16_t *cols, int32_t j, int32_t n, const window *win,
                                    const mcugen_dims *in, const mcugen_dims *filter,
                                    const mcugen_tile *dilation, int32_t offset, int8_t *stage)
{
    const int32_t depth = filter->c, kw = filter->w, dil_w = dilation->w;
    const int32_t offset2 = pack2(offset);
    const int8_t zero = (int8_t)-offset;
    int16_t *dst = cols + 4 * j;
    if ((depth & 3) == 0) {
        const int32_t step = 4 * n; /* int16 values from one group of the column to the next */
        if (DSP_SPEED_PATHS && dil_w == 1 && win->x0 >= 0 && win->x0 + kw <= in->w &&
            win->y0 >= 0 &&
            win->y0 + (filter->h - 1) * dilation->h < in->h) {
            /* inside the input: each window row is kw * depth contiguous bytes */
            const int32_t row_words = kw * depth >> 2, row_step = dilation->h * in->w * depth;
            const int8_t *row = win->image + (win->y0 * in->w + win->x0) * depth;
            for (int32_t ky = 0; ky < filter->h; ++ky, row += row_step) {
                const int8_t *src = row;
                for (int32_t i = 0; i < row_words; ++i, src += 4, dst += step) {
                    widen_group(dst, load32(src), offset2);
                }
            }
            return;
        }
        for (int32_t ky = 0; ky < filter->h; ++ky) {
            const int32_t y = win->y0 + ky * dilation->h;
            for (int32_t kx = 0; kx < kw; ++kx) {
                const int32_t x = win->x0 + kx * dil_w;
                if (y < 0 || y >= in->h || x < 0 || x >= in->w) {
                    for (int32_t c = 0; c < depth; c += 4, dst += step) {
                        store32(dst, 0);
                        store32(dst + 2, 0);
                    }
                    continue;
                }
                const int8_t *pixel = win->image + (y * in->w + x) * depth;
                for (const int8_t *end = pixel + depth; pixel != end; pixel += 4, dst += step) {
                    widen_group(dst, load32(pixel), offset2);
                }
            }
        }
        return;
    }
    /* gather rows of taps (contiguous when dil_w == 1, depth == in->c), then widen */
    int8_t *s = stage;
    int32_t kx0, kx1;
    tap_range(win->x0, kw, dil_w, in->w, &kx0, &kx1);
    const int32_t len = kw * depth, step = dilation->h * in->w * depth;
    const int inside = DSP_SPEED_PATHS && dil_w == 1 && kx0 == 0 && kx1 == kw &&
                       win->y0 >= 0 && win->y0 + (filter->h - 1) * dilation->h < in->h &&
                       len >= 4 && step >= round_up4(len);
    if (inside) {
        s = stage_rows(s, win->image + (win->y0 * in->w + win->x0) * depth, filter->h, step, len);
    }
    for (int32_t ky = 0; ky < filter->h && !inside; ++ky) {
        const int32_t y = win->y0 + ky * dilation->h;
        if (y < 0 || y >= in->h || kx0 == kx1) {
            s = fill_s8(s, zero, kw * depth);
            continue;
        }
        const int32_t row = (y * in->w + win->x0) * depth; /* tap 0, maybe outside */
        s = fill_s8(s, zero, kx0 * depth);
        if (dil_w == 1) {
            s = copy_s8(s, win->image + (row + kx0 * depth), (kx1 - kx0) * depth);
        } else {
            for (int32_t kx = kx0; kx < kx1; ++kx) {
                s = copy_s8(s, win->image + (row + kx * dil_w * depth), depth);
            }
        }
        s = fill_s8(s, zero, (kw - kx1) * depth);
    }
    s = fill_s8(s, zero, (int32_t)(-(s - stage) & 3));
    for (const int8_t *p = stage; p != s; p += 4, dst += 4 * n) {
        widen_group(dst, load32(p), offset2);
    }
}

/* The last size % 4 products of one column: weights w[0..t), column group x (swizzled). */
static inline int32_t dot_tail(const int8_t *w, const int16_t *x, int32_t t, int32_t acc)
{
    for (int32_t i = 0; i < t; ++i) {
        acc = __smlabb(w[i], x[swizzle(i)], acc);
    }
    return acc;
}

/* The row kernels' asm, in pieces. DSP_GROUP_FIRST: four int8 weights loaded and widened
 * (even ones in we, odd ones in raw), then column 0's LDRD and two SMLADs into `acc`;
 * DSP_GROUP_NEXT: the next column's. DSP_TWO_GROUPS_A_PASS: the loop over n = groups,
 * unrolled twice, (groups + 1) / 2 passes where an odd count (carry clear) enters at 2. */
#define DSP_GROUP_FIRST(acc)                                                                   \
    "ldr    %[raw], [%[w]], #4\n\t"                                                            \
    "ldrd   %[xa], %[xb], [%[x]], #8\n\t"                                                      \
    "sxtb16 %[we], %[raw]\n\t"                                                                 \
    "sxtb16 %[raw], %[raw], ror #8\n\t"                                                        \
    "smlad  %[" acc "], %[we], %[xa], %[" acc "]\n\t"                                          \
    "smlad  %[" acc "], %[raw], %[xb], %[" acc "]\n\t"
#define DSP_GROUP_NEXT(acc)                                                                    \
    "ldrd   %[xa], %[xb], [%[x]], #8\n\t"                                                      \
    "smlad  %[" acc "], %[we], %[xa], %[" acc "]\n\t"                                          \
    "smlad  %[" acc "], %[raw], %[xb], %[" acc "]\n\t"
#define DSP_GROUP_4                                                                            \
    DSP_GROUP_FIRST("a0") DSP_GROUP_NEXT("a1") DSP_GROUP_NEXT("a2") DSP_GROUP_NEXT("a3")
#define DSP_TWO_GROUPS_A_PASS(group)                                                           \
    "adds   %[n], %[n], #1\n\t"                                                                \
    "lsrs   %[n], %[n], #1\n\t"                                                                \
    "bcc    2f\n"                                                                               \
    "1:\n\t" group "2:\n\t" group                                                              \
    "subs   %[n], %[n], #1\n\t"                                                                \
    "bne    1b"

#if defined(__GNUC__) && defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__)
#define DSP_WORD_PAIRS 1 /* -O2: the pair loops below where the row is word-aligned */
#else
#define DSP_WORD_PAIRS 0 /* -Os: only the loops above (less code); -O0: too few registers */
#endif

#if DSP_WORD_PAIRS
/* Column `acc`'s group against the widened weights in we (even) and `odd`. */
#define DSP_COL(acc, odd)                                                                      \
    "ldrd   %[xa], %[xb], [%[x]], #8\n\t"                                                      \
    "smlad  %[" acc "], %[we], %[xa], %[" acc "]\n\t"                                          \
    "smlad  %[" acc "], %[" odd "], %[xb], %[" acc "]\n\t"
/* One weight word (in `word`) widened into we and `word`, then against four columns. */
#define DSP_HALF_4(word)                                                                       \
    "sxtb16 %[we], %[" word "]\n\t"                                                            \
    "sxtb16 %[" word "], %[" word "], ror #8\n\t"                                              \
    DSP_COL("a0", word) DSP_COL("a1", word) DSP_COL("a2", word) DSP_COL("a3", word)
#define DSP_HALF_5(word) DSP_HALF_4(word) DSP_COL("a4", word)
/* The loop over n = groups (n >= 1) with a word-aligned w: two weight words a pass with one
 * LDRD (one load and one loop branch per two groups, not two and two); an odd count loads its
 * first word alone and enters at the second half. */
#define DSP_PAIRS_A_PASS(half)                                                                 \
    "lsrs   %[n], %[n], #1\n\t"                                                                \
    "bcc    1f\n\t"                                                                            \
    "adds   %[n], %[n], #1\n\t"                                                                \
    "ldr    %[wb], [%[w]], #4\n\t"                                                             \
    "b      2f\n"                                                                              \
    "1:\n\t"                                                                                   \
    "ldrd   %[wa], %[wb], [%[w]], #8\n\t"                                                      \
    half("wa")                                                                                 \
    "2:\n\t"                                                                                   \
    half("wb")                                                                                 \
    "subs   %[n], %[n], #1\n\t"                                                                \
    "bne    1b"
#endif

/* One filter row against a block of four columns, acc[j] += w . column j: each widened
 * weight word serves four SMLADs, each column word one, two column words per LDRD. gcc 12
 * neither pairs the column loads nor keeps the eleven live values in registers, hence the
 * loop in asm: two groups of four products (32 MACs) a pass, 32 instructions; an odd group
 * count enters at the second half. */
static inline void row_1x4(const int8_t *w, const int32_t *x, int32_t size, int32_t acc[4])
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int32_t groups = size >> 2;
#if DSP_WORD_PAIRS
    if (groups > 0 && ((uintptr_t)w & 3u) == 0) {
        int32_t n = groups, wa, wb, we, xa, xb;
        __asm__ volatile(
            DSP_PAIRS_A_PASS(DSP_HALF_4)
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [w] "+r"(w),
              [x] "+r"(x), [n] "+r"(n), [wa] "=&r"(wa), [wb] "=&r"(wb), [we] "=&r"(we),
              [xa] "=&r"(xa), [xb] "=&r"(xb)
            :
            : "cc", "memory");
    } else
#endif
#if defined(__GNUC__)
    if (groups > 0) {
        int32_t n = groups, raw, we, xa, xb;
        __asm__ volatile(
            DSP_TWO_GROUPS_A_PASS(DSP_GROUP_4)
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [w] "+r"(w),
              [x] "+r"(x), [n] "+r"(n), [raw] "=&r"(raw), [we] "=&r"(we), [xa] "=&r"(xa),
              [xb] "=&r"(xb)
            :
            : "cc", "memory");
    }
#else
    for (int32_t g = 0; g < groups; ++g, w += 4, x += 8) {
        const int32_t e = __sxtb16(load32(w)), o = sxtb16_ror8(load32(w));
        a0 = __smlad(o, x[1], __smlad(e, x[0], a0));
        a1 = __smlad(o, x[3], __smlad(e, x[2], a1));
        a2 = __smlad(o, x[5], __smlad(e, x[4], a2));
        a3 = __smlad(o, x[7], __smlad(e, x[6], a3));
    }
#endif
    if (size & 3) {
        const int16_t *x16 = (const int16_t *)x;
        a0 = dot_tail(w, x16, size & 3, a0);
        a1 = dot_tail(w, x16 + 4, size & 3, a1);
        a2 = dot_tail(w, x16 + 8, size & 3, a2);
        a3 = dot_tail(w, x16 + 12, size & 3, a3);
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

/* One filter row against a block of five columns (as row_1x4, x's groups 5 words apart): the
 * weight word serves five columns, 20 MACs in 20 instructions a group. Twelve registers: the
 * asm only when optimizing (at -O0 gcc keeps a frame pointer). */
static inline void row_1x5(const int8_t *w, const int32_t *x, int32_t size, int32_t acc[5])
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], a4 = acc[4];
    const int32_t groups = size >> 2;
#if DSP_WORD_PAIRS
    if (groups > 0 && ((uintptr_t)w & 3u) == 0) {
        int32_t n = groups, wa, wb, we, xa, xb;
        __asm__ volatile(
            DSP_PAIRS_A_PASS(DSP_HALF_5)
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [a4] "+r"(a4),
              [w] "+r"(w), [x] "+r"(x), [n] "+r"(n), [wa] "=&r"(wa), [wb] "=&r"(wb),
              [we] "=&r"(we), [xa] "=&r"(xa), [xb] "=&r"(xb)
            :
            : "cc", "memory");
    } else
#endif
#if defined(__GNUC__) && defined(__OPTIMIZE__)
    if (groups > 0) {
        int32_t n = groups, raw, we, xa, xb;
        __asm__ volatile(
            "1:\n\t" DSP_GROUP_4 DSP_GROUP_NEXT("a4")
            "subs   %[n], %[n], #1\n\t"
            "bne    1b"
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [a4] "+r"(a4),
              [w] "+r"(w), [x] "+r"(x), [n] "+r"(n), [raw] "=&r"(raw), [we] "=&r"(we),
              [xa] "=&r"(xa), [xb] "=&r"(xb)
            :
            : "cc", "memory");
    }
#else
    for (int32_t g = 0; g < groups; ++g, w += 4, x += 10) {
        const int32_t e = __sxtb16(load32(w)), o = sxtb16_ror8(load32(w));
        a0 = __smlad(o, x[1], __smlad(e, x[0], a0));
        a1 = __smlad(o, x[3], __smlad(e, x[2], a1));
        a2 = __smlad(o, x[5], __smlad(e, x[4], a2));
        a3 = __smlad(o, x[7], __smlad(e, x[6], a3));
        a4 = __smlad(o, x[9], __smlad(e, x[8], a4));
    }
#endif
    if (size & 3) {
        const int16_t *x16 = (const int16_t *)x;
        a0 = dot_tail(w, x16, size & 3, a0);
        a1 = dot_tail(w, x16 + 4, size & 3, a1);
        a2 = dot_tail(w, x16 + 8, size & 3, a2);
        a3 = dot_tail(w, x16 + 12, size & 3, a3);
        a4 = dot_tail(w, x16 + 16, size & 3, a4);
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
    acc[4] = a4;
}

/* One filter row against one column (also FULLY_CONNECTED's): asm as row_1x4, two groups
 * (8 MACs) a pass in 14 instructions. */
static inline int32_t row_1x1(const int8_t *w, const int32_t *x, int32_t size, int32_t a)
{
    const int32_t groups = size >> 2;
#if defined(__GNUC__)
    if (groups > 0) {
        int32_t n = groups, raw, we, xa, xb;
        __asm__ volatile(
            DSP_TWO_GROUPS_A_PASS(DSP_GROUP_FIRST("a"))
            : [a] "+r"(a), [w] "+r"(w), [x] "+r"(x), [n] "+r"(n), [raw] "=&r"(raw),
              [we] "=&r"(we), [xa] "=&r"(xa), [xb] "=&r"(xb)
            :
            : "cc", "memory");
    }
#else
    for (int32_t g = groups; g > 0; --g, w += 4, x += 2) {
        const int32_t r0 = load32(w);
        a = __smlad(sxtb16_ror8(r0), x[1], __smlad(__sxtb16(r0), x[0], a));
    }
#endif
    return dot_tail(w, (const int16_t *)x, size & 3, a);
}

/* Every output channel of a block of n (5, 4 or 1) pixels (im2col columns x). The columns are
 * zero-padded to whole groups of four, so a filter row may run its last group into the next
 * row's first bytes (times 0: exact), which saves the scalar tail for all rows but the last. */
/* The channels of a block of n = 4 or 5 columns, n a constant: always inlined, one loop each
 * (one loop for both cost ic_resnet8's 3x3 convs 2% more instructions). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void block_n(const int8_t *w, const int32_t *x, int32_t size, const int32_t n,
                           const rq_chan *q, int32_t out_c, int8_t *out, const rq_params *p)
{
    const int32_t whole = round_up4(size);
    const rq_chan *const last = q + out_c - 1;
    const int full = p->full; /* locals: the stores to out may alias *p and *q */
    const int32_t s2 = 2 * out_c, s3 = 3 * out_c, s4 = 4 * out_c;
    for (; q <= last; ++q, ++out, w += size) {
        int32_t acc[5] = {q->bias, q->bias, q->bias, q->bias, q->bias};
        if (n == 5) {
            row_1x5(w, x, q != last ? whole : size, acc);
        } else {
            row_1x4(w, x, q != last ? whole : size, acc);
        }
        const int32_t mult = q->mult, right = q->right, add = q->add;
        if (right != 0 && full) {
            const int32_t y0 = rq_y(acc[0], mult, right, add);
            const int32_t y1 = rq_y(acc[1], mult, right, add);
            const int32_t y2 = rq_y(acc[2], mult, right, add);
            const int32_t y3 = rq_y(acc[3], mult, right, add);
            out[0] = (int8_t)__ssat(y0, 8);
            out[out_c] = (int8_t)__ssat(y1, 8);
            out[s2] = (int8_t)__ssat(y2, 8);
            out[s3] = (int8_t)__ssat(y3, 8);
            if (n == 5) {
                out[s4] = (int8_t)__ssat(rq_y(acc[4], mult, right, add), 8);
            }
        } else {
            out[0] = rq_out(acc[0], q, p);
            out[out_c] = rq_out(acc[1], q, p);
            out[s2] = rq_out(acc[2], q, p);
            out[s3] = rq_out(acc[3], q, p);
            if (n == 5) {
                out[s4] = rq_out(acc[4], q, p);
            }
        }
    }
}

DSP_NOINLINE static void conv_block5(const int8_t *w, const int32_t *x, int32_t size,
                                     const rq_chan *q, int32_t out_c, int8_t *out,
                                     const rq_params *p)
{
    block_n(w, x, size, 5, q, out_c, out, p);
}

#if DSP_WORD_PAIRS && defined(__thumb2__)
/* What the conv_block*_quick functions read besides their arguments. */
typedef struct {
    const rq_chan *rq;
    const rq_chan *rq_end;
    int32_t passes; /* groups (size / 4, size % 4 == 0), or groups / 4 for the 4-group pass */
    int32_t out_c;  /* bytes from one pixel's output to the next */
    int32_t rewind; /* CQ_PASS1: round_up4(size) - size, the bytes a row's pass reads past it */
} conv_run;

/* One weight word (in `word`) widened into r10 and `word`, against the five columns
 * (r1 walks them), sums in r4-r8. */
#define CQ_COL(acc, word)                                                                      \
    "ldrd   r11, r12, [r1], #8\n\t"                                                           \
    "smlad  " acc ", r10, r11, " acc "\n\t"                                                   \
    "smlad  " acc ", " word ", r12, " acc "\n\t"
#define CQ_HALF4(word)                                                                         \
    "sxtb16 r10, " word "\n\t"                                                                \
    "sxtb16 " word ", " word ", ror #8\n\t"                                                   \
    CQ_COL("r4", word) CQ_COL("r5", word) CQ_COL("r6", word) CQ_COL("r7", word)
#define CQ_HALF(word) CQ_HALF4(word)                                                           \
    CQ_COL("r8", word)
#define CQ_PAIR "ldrd   r3, r9, [r0], #8\n\t" CQ_HALF("r3") CQ_HALF("r9")
#define CQ_PAIR4 "ldrd   r3, r9, [r0], #8\n\t" CQ_HALF4("r3") CQ_HALF4("r9")
/* The groups of a row: two a pass, an odd count entering at the second half (r2 = groups);
 * or four a pass (r2 = groups / 4), one loop branch per 80 MACs. */
#define CQ_PASS2(HALF)                                                                         \
    "lsrs   r2, r2, #1\n\t"                                                                    \
    "bcc    3f\n\t"                                                                            \
    "adds   r2, r2, #1\n\t"                                                                    \
    "ldr    r9, [r0], #4\n\t"                                                                  \
    "b      4f\n"                                                                               \
    "3:\n\t"                                                                                   \
    "ldrd   r3, r9, [r0], #8\n\t"                                                             \
    HALF("r3")                                                                                 \
    "4:\n\t"                                                                                   \
    HALF("r9")                                                                                 \
    "subs   r2, r2, #1\n\t"                                                                    \
    "bne    3b\n\t"
/* One group a pass (any alignment: LDR, not LDRD), r2 = round_up4(size) / 4, then the
 * weights pointer back to the next row. */
#define CQ_PASS1(HALF)                                                                         \
    "3:\n\t"                                                                                   \
    "ldr    r9, [r0], #4\n\t"                                                                  \
    HALF("r9")                                                                                 \
    "subs   r2, r2, #1\n\t"                                                                    \
    "bne    3b\n\t"                                                                            \
    "ldr    r3, [sp, #20]\n\t"                                                                 \
    "sub    r0, r0, r3\n\t"
#define CQ_PASS4(PAIR)                                                                         \
    "3:\n\t" PAIR PAIR                                                                        \
    "subs   r2, r2, #1\n\t"                                                                    \
    "bne    3b\n\t"
/* Channel acc's output into acc: the fast requantization (see DWQ_RQ for the sign of the
 * rounding taken from acc), r9 the multiplier, r10 right, r11 add; no flags set. */
#define CQ_RQ(acc)                                                                             \
    "lsl    r3, " acc ", #1\n\t"                                                               \
    "add    r12, r11, " acc ", asr #31\n\t"                                                    \
    "smmlar r3, r3, r9, r12\n\t"                                                               \
    "asr    r3, r3, r10\n\t"                                                                   \
    "ssat   " acc ", #8, r3\n\t"
/* The channel loop around PASS: lr the output, [sp] x, +4 the table row, +8 its end, +12
 * the passes, +16 out_c, +20 rewind. */
#define CQ_BODY5(PASS)                                                                         \
    CQ_BODY(PASS, "mov    r8, r4\n\t", CQ_RQ("r8"), "strb   r8, [lr, r1, lsl #2]\n\t")
/* Four columns: the same without r8. */
#define CQ_BODY4(PASS) CQ_BODY(PASS, "", "", "")
#define CQ_BODY(PASS, INIT5, RQ5, STORE5)                                                      \
    "push   {r4-r11, lr}\n\t"                                                                  \
    "mov    lr, r2\n\t"                                                                        \
    "ldm    r3, {r4, r5, r6, r7, r8}\n\t"                                                      \
    "push   {r1, r4, r5, r6, r7, r8}\n"                                                         \
    "1:\n\t"                                                                                   \
    "ldr    r3, [sp, #4]\n\t"                                                                  \
    "ldr    r4, [r3]\n\t"                                                                      \
    "mov    r5, r4\n\t"                                                                        \
    "mov    r6, r4\n\t"                                                                        \
    "mov    r7, r4\n\t"                                                                        \
    INIT5                                                                                      \
    "ldr    r1, [sp]\n\t"                                                                      \
    "ldr    r2, [sp, #12]\n\t"                                                                 \
    PASS                                                                                       \
    "ldr    r3, [sp, #4]\n\t"                                                                  \
    "ldm    r3!, {r2, r9, r10, r11}\n\t"                                                       \
    "str    r3, [sp, #4]\n\t"                                                                  \
    "ldr    r2, [sp, #8]\n\t"                                                                  \
    "cmp    r3, r2\n\t"                                                                        \
    CQ_RQ("r4") CQ_RQ("r5") CQ_RQ("r6") CQ_RQ("r7") RQ5                                        \
    "ldr    r1, [sp, #16]\n\t"                                                                 \
    "strb   r4, [lr]\n\t"                                                                      \
    "strb   r5, [lr, r1]\n\t"                                                                  \
    "strb   r6, [lr, r1, lsl #1]\n\t"                                                          \
    "add    r3, lr, r1, lsl #1\n\t"                                                            \
    "strb   r7, [r3, r1]\n\t"                                                                  \
    STORE5                                                                                     \
    "add    lr, lr, #1\n\t"                                                                    \
    "bne    1b\n\t"                                                                            \
    "add    sp, sp, #24\n\t"                                                                   \
    "pop    {r4-r11, pc}"
#define CQ_ARG __attribute__((unused)) /* read by the asm, in r0-r3 */

/* conv_block5 for a quick call (every channel fast, int8 clamp, word-aligned rows of whole
 * groups): the channel loop, the LDRD pair loop, the requantization and the five stores in
 * one naked asm function with all fourteen registers (x, the table pointers and the counts
 * on the stack): about 10 instructions per output besides the products, not ~20. */
__attribute__((naked, noinline)) static void conv_block5_quick(const int8_t *w CQ_ARG,
                                                                const int32_t *x CQ_ARG,
                                                                int8_t *out CQ_ARG,
                                                                const conv_run *run CQ_ARG)
{
    __asm__ volatile(CQ_BODY5(CQ_PASS2(CQ_HALF)));
}

/* The same for rows of a multiple of four groups (16 bytes), four groups a pass. */
__attribute__((naked, noinline)) static void conv_block5_quick4(const int8_t *w CQ_ARG,
                                                                 const int32_t *x CQ_ARG,
                                                                 int8_t *out CQ_ARG,
                                                                 const conv_run *run CQ_ARG)
{
    __asm__ volatile(CQ_BODY5(CQ_PASS4(CQ_PAIR)));
}

/* Blocks of four columns (the scratch's width for size > 256), four groups a pass, or two. */
__attribute__((naked, noinline)) static void conv_block4_quick4(const int8_t *w CQ_ARG,
                                                                 const int32_t *x CQ_ARG,
                                                                 int8_t *out CQ_ARG,
                                                                 const conv_run *run CQ_ARG)
{
    __asm__ volatile(CQ_BODY4(CQ_PASS4(CQ_PAIR4)));
}

__attribute__((naked, noinline)) static void conv_block4_quick(const int8_t *w CQ_ARG,
                                                                const int32_t *x CQ_ARG,
                                                                int8_t *out CQ_ARG,
                                                                const conv_run *run CQ_ARG)
{
    __asm__ volatile(CQ_BODY4(CQ_PASS2(CQ_HALF4)));
}

/* Rows of any length and alignment: one group (LDR) a pass, each row read to a whole group,
 * so the caller leaves the last row, which would read past the filter, to the C. */
__attribute__((naked, noinline)) static void conv_block5_quick1(const int8_t *w CQ_ARG,
                                                                 const int32_t *x CQ_ARG,
                                                                 int8_t *out CQ_ARG,
                                                                 const conv_run *run CQ_ARG)
{
    __asm__ volatile(CQ_BODY5(CQ_PASS1(CQ_HALF)));
}

__attribute__((naked, noinline)) static void conv_block4_quick1(const int8_t *w CQ_ARG,
                                                                 const int32_t *x CQ_ARG,
                                                                 int8_t *out CQ_ARG,
                                                                 const conv_run *run CQ_ARG)
{
    __asm__ volatile(CQ_BODY4(CQ_PASS1(CQ_HALF4)));
}

/* A block of n = 4 or 5 columns of a quick call (rows word-aligned when size % 4 == 0). */
static void conv_block_quick(const int8_t *w, const int32_t *x, int32_t size, int32_t n,
                             const rq_chan *q, int32_t out_c, int8_t *out, const rq_params *p)
{
    if ((size & 3) == 0) {
        const int fours = (size & 15) == 0;
        const conv_run run = {q, q + out_c, fours ? size >> 4 : size >> 2, out_c, 0};
        if (n == 5) {
            (fours ? conv_block5_quick4 : conv_block5_quick)(w, x, out, &run);
        } else {
            (fours ? conv_block4_quick4 : conv_block4_quick)(w, x, out, &run);
        }
        return;
    }
    /* every row but the last in asm (a row's whole last group reads the next row's first
     * bytes, times the column's zero padding), the last in C */
    const int32_t whole = round_up4(size), last = out_c - 1;
    if (last > 0) {
        const conv_run run = {q, q + last, whole >> 2, out_c, whole - size};
        (n == 5 ? conv_block5_quick1 : conv_block4_quick1)(w, x, out, &run);
    }
    int32_t acc[5] = {q[last].bias, q[last].bias, q[last].bias, q[last].bias, q[last].bias};
    if (n == 5) {
        row_1x5(w + last * size, x, size, acc);
    } else {
        row_1x4(w + last * size, x, size, acc);
    }
    for (int32_t j = 0; j < n; ++j) {
        out[last + j * out_c] = rq_out(acc[j], q + last, p);
    }
}
#define CONV_BLOCK_QUICK 1
#else
#define CONV_BLOCK_QUICK 0
#endif

DSP_NOINLINE static void conv_block(const int8_t *w, const int32_t *x, int32_t size, int32_t n,
                                    const rq_chan *q, int32_t out_c, int8_t *out,
                                    const rq_params *p)
{
    if (n == 4) {
        block_n(w, x, size, 4, q, out_c, out, p);
    } else {
        const int32_t whole = round_up4(size);
        const rq_chan *const last = q + out_c - 1;
        for (; q <= last; ++q, ++out, w += size) {
            *out = rq_out(row_1x1(w, x, q != last ? whole : size, q->bias), q, p);
        }
    }
}

/* The columns of the next block, rem pixels left, blocks of `wide` (5 or 4) preferred: with
 * five, as many blocks of four first as make the rest a multiple of five (rem = 5 a + 4 b,
 * b = 4 rem mod 5, when rem allows it), so that a stripe's row of 32 pixels runs 4+4+4+5+5+5+5
 * rather than six fives and two single columns; the last 1-3 one at a time. */
static inline int32_t block_columns(int32_t rem, int32_t wide)
{
    const int32_t fours = (4 * rem) % 5;
    if (wide == 5 && fours != 0 && 4 * fours <= rem) {
        return 4;
    }
    return rem >= wide ? wide : (rem >= 4 ? 4 : 1);
}

int mcugen_convolve_fast_s8(const mcugen_context *ctx, const mcugen_conv_fast_params *params,
                            const mcugen_per_channel_quant_params *quant,
                            const mcugen_dims *input_dims, const int8_t *input,
                            const mcugen_dims *filter_dims, const int8_t *filter,
                            const int32_t *bias, const mcugen_dims *output_dims, int8_t *output)
{
    const int32_t out_c = output_dims->c;
    const int32_t size = filter_dims->h * filter_dims->w * filter_dims->c;
    if (filter_dims->c != input_dims->c ||
        !scratch_ok(ctx, mcugen_convolve_fast_dsp_s8_buffer_size(filter_dims))) {
        return 0;
    }
    int16_t *cols = (int16_t *)ctx->buf;
    const int32_t *x = (const int32_t *)(const void *)cols;
    const int32_t most = conv_columns(round_up4(size));
    rq_chan *scratch_table = (rq_chan *)(void *)(cols + most * round_up4(size));
    int8_t *stage = (int8_t *)(void *)(scratch_table + out_c);
    const rq_chan *table = (const rq_chan *)(const void *)params->rq_table; /* the build's */
    int all = table != NULL && params->rq_table[4 * out_c] != 0; /* its last word */
    if (table == NULL) {
        all = rq_table(scratch_table, bias, quant->multiplier, quant->shift, out_c,
                       params->output_offset, size * max_product(params->input_offset));
        table = scratch_table;
    }
    const rq_params rp = rq_params_of(params->output_offset, params->activation);
    const int32_t pixels = output_dims->n * output_dims->h * output_dims->w;
    /* conv_block_quick's conditions */
    const int quick = CONV_BLOCK_QUICK && rp.full && ((uintptr_t)filter & 3u) == 0 && all;
    const int pointwise = DSP_SPEED_PATHS && size == input_dims->c && (size & 3) == 0 &&
                          params->stride.h == 1 && params->stride.w == 1 &&
                          params->padding.h == 0 &&
                          params->padding.w == 0 && input_dims->h == output_dims->h &&
                          input_dims->w == output_dims->w;
    for (int32_t p = 0; p < pixels;) {
        /* blocks of five columns where the scratch has five (with the LDRD weight pairs,
         * 37 instructions per 40 MACs against 31 per 32 for four, and a row's requantization
         * and set-up shared by five), else four; leftovers of fewer than four one column
         * each: none wasted. At -Os blocks of four only (conv_block5's code left out). */
        const int32_t rem = pixels - p, wide = DSP_SPEED_PATHS ? most : 4;
        const int32_t n = block_columns(rem, wide);
        if (pointwise) {
            pointwise_cols(cols, n, input + p * size, size, params->input_offset);
        }
        for (int32_t j = 0; j < n && !pointwise; ++j) {
            const window win = pixel_window(input_dims, output_dims, &params->stride,
                                            &params->padding, input, p + j);
            im2col_q15(cols, j, n, &win, input_dims, filter_dims, &params->dilation,
                       params->input_offset, stage);
        }
        if (n >= 4 && quick) {
#if CONV_BLOCK_QUICK
            conv_block_quick(filter, x, size, n, table, out_c, output + p * out_c, &rp);
#endif
        } else if (n == 5) {
            conv_block5(filter, x, size, table, out_c, output + p * out_c, &rp);
        } else {
            conv_block(filter, x, size, n, table, out_c, output + p * out_c, &rp);
        }
        p += n;
    }
    return 1;
}

/* ---- depthwise ------------------------------------------------------------------------------
 * ch_mult 1, channels % 4 == 0, pixel by pixel, four channels (a quad) at a time, over a chunk
 * of channels at a time (dw_quads: the scratch stays small). Built in the scratch: each tap's
 * input byte offset from the window's origin and, per chunk, the weights widened (per quad and
 * tap two words: __sxtb16 and sxtb16_ror8 of the four int8 weights) and per channel
 * bias + input_offset * sum(w). Every pixel starts from the latter (equal to
 * adding the offset to every input) and per tap widens one input word, SMLABB/SMLATT per
 * channel; at the border, the taps in the padding read a row of input zero points instead. */
#define DW_TAP(we, wo, xe, xo)                                                                \
    do {                                                                                     \
        a0 = __smlabb(we, xe, a0);                                                           \
        a2 = __smlatt(we, xe, a2);                                                           \
        a1 = __smlabb(wo, xo, a1);                                                           \
        a3 = __smlatt(wo, xo, a3);                                                           \
    } while (0)

/* Four outputs, channels q[0..3], from the sums of channels (0, 1, 2, 3); quick: every channel
 * takes the fast requantization and the clamp is the int8 range. */
#if defined(__GNUC__) && defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__)
/* rq_y and the int8 saturation of channel q's output in asm: its multiplier and shift with
 * one LDRD (gcc 12 loads the three fields one by one), and no sign extension before the
 * store. */
static inline int32_t rq_quick(int32_t acc, const rq_chan *q)
{
    int32_t m, r, a;
    __asm__("ldrd   %[m], %[r], [%[q], #4]\n\t"
            "ldr    %[a], [%[q], #12]\n\t"
            "lsl    %[acc], %[acc], #1\n\t"
            "smmulr %[acc], %[acc], %[m]\n\t"
            "add    %[acc], %[acc], %[acc], asr #31\n\t"
            "add    %[acc], %[acc], %[a]\n\t"
            "asr    %[acc], %[acc], %[r]\n\t"
            "ssat   %[acc], #8, %[acc]"
            : [acc] "+r"(acc), [m] "=&r"(m), [r] "=&r"(r), [a] "=&r"(a)
            : [q] "r"(q), "m"(*q));
    return acc;
}
#else
static inline int32_t rq_quick(int32_t acc, const rq_chan *q)
{
    return __ssat(rq_y(acc, q->mult, q->right, q->add), 8);
}
#endif

static inline void dw_finish(int8_t *out, int32_t a0, int32_t a1, int32_t a2, int32_t a3,
                             const rq_chan *q, const rq_params *p, int quick)
{
    if (quick) {
        out[0] = (int8_t)rq_quick(a0, q);
        out[1] = (int8_t)rq_quick(a1, q + 1);
        out[2] = (int8_t)rq_quick(a2, q + 2);
        out[3] = (int8_t)rq_quick(a3, q + 3);
    } else {
        out[0] = rq_out(a0, q, p);
        out[1] = rq_out(a1, q + 1, p);
        out[2] = rq_out(a2, q + 2, p);
        out[3] = rq_out(a3, q + 3, p);
    }
}

/* The tables a pixel needs, built once per call. */
typedef struct {
    const int32_t *offset; /* per tap: input bytes from the window's origin */
    const int32_t *wide;   /* per quad, per tap: the two widened weight words */
    const int32_t *init;   /* per channel: bias + input_offset * sum(w) */
    const rq_chan *rq;     /* per channel */
    int32_t *edge;         /* per tap: a border pixel's offsets */
    const int32_t *zero;   /* per quad: four input zero points, -input_offset */
    int32_t taps, channels, quick;
    int32_t kh, kw, dil_w, in_w, stride_w, pad_w, out_w, depth; /* depth: all the channels */
    int32_t row_step; /* 3x3 windows, dil_w 1 (else 0): bytes from one window row to the next */
    rq_params p;
} dw_tables;

/* The dw asm's taps, in pieces. */
/* One tap of dw_quads_3x3's asm: the input word at `addr`, the quad's two widened weight
 * words, four MACs. */
#define DW_TAP3(addr)                                                                          \
    "ldr    %[xw], " addr "\n\t"                                                                \
    "ldrd   %[we], %[wo], [%[w]], #8\n\t"                                                      \
    "sxtb16 %[xe], %[xw]\n\t"                                                                 \
    "sxtb16 %[xw], %[xw], ror #8\n\t"                                                          \
    "smlabb %[a0], %[we], %[xe], %[a0]\n\t"                                                    \
    "smlatt %[a2], %[we], %[xe], %[a2]\n\t"                                                    \
    "smlabb %[a1], %[wo], %[xw], %[a1]\n\t"                                                    \
    "smlatt %[a3], %[wo], %[xw], %[a3]\n\t"
#define DW_ROW3 DW_TAP3("[%[p]]") DW_TAP3("[%[p], %[d1]]") DW_TAP3("[%[p], %[d1], lsl #1]")
/* A tap whose input offset from x is entry k of the offset table o. */
#define DW_TAPO(k) "ldr    %[xw], [%[o], #" k "]\n\t" DW_TAP3("[%[x], %[xw]]")

/* Every quad of the chunk for one pixel, window origin x. */
static inline void dw_quads_of(const dw_tables *d, const int32_t *offset, const int8_t *x,
                               int8_t *out)
{
    /* locals: the int8 stores to out may alias *d, which would force reloads */
    const int32_t *w = d->wide, *init = d->init;
    const rq_chan *q = d->rq;
    const int32_t quick = d->quick;
    const int32_t *const off_end = offset + d->taps, *const end = init + d->channels;
    for (; init != end; init += 4, q += 4, x += 4, out += 4) {
        int32_t a0 = init[0], a1 = init[1], a2 = init[2], a3 = init[3];
        const int32_t *o = offset;
#if defined(__GNUC__) && defined(__OPTIMIZE__) /* -O0 has too few free registers */
        int32_t we, wo, xe, xw;
        if (DSP_SPEED_PATHS && off_end - o == 9) { /* 3x3 border: nine taps unrolled */
            __asm__ volatile(
                DW_TAPO("0") DW_TAPO("4") DW_TAPO("8") DW_TAPO("12") DW_TAPO("16")
                DW_TAPO("20") DW_TAPO("24") DW_TAPO("28") DW_TAPO("32")
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [w] "+r"(w),
                  [we] "=&r"(we), [wo] "=&r"(wo), [xe] "=&r"(xe), [xw] "=&r"(xw)
                : [x] "r"(x), [o] "r"(o)
                : "memory");
            dw_finish(out, a0, a1, a2, a3, q, &d->p, quick);
            continue;
        }
        /* per tap 11 instructions: offset, weights (LDRD), input word, 2 SXTB16, 4 MACs, loop */
        __asm__ volatile(
            "1:\n\t"
            "ldr    %[xw], [%[o]], #4\n\t"
            "ldrd   %[we], %[wo], [%[w]], #8\n\t"
            "ldr    %[xw], [%[x], %[xw]]\n\t"
            "sxtb16 %[xe], %[xw]\n\t"
            "sxtb16 %[xw], %[xw], ror #8\n\t"
            "smlabb %[a0], %[we], %[xe], %[a0]\n\t"
            "smlatt %[a2], %[we], %[xe], %[a2]\n\t"
            "smlabb %[a1], %[wo], %[xw], %[a1]\n\t"
            "smlatt %[a3], %[wo], %[xw], %[a3]\n\t"
            "cmp    %[o], %[end]\n\t"
            "bne    1b"
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [o] "+r"(o),
              [w] "+r"(w), [we] "=&r"(we), [wo] "=&r"(wo), [xe] "=&r"(xe), [xw] "=&r"(xw)
            : [x] "r"(x), [end] "r"(off_end)
            : "cc", "memory");
#else
        for (; o != off_end; ++o, w += 2) {
            const int32_t x0 = load32(x + o[0]);
            DW_TAP(w[0], w[1], __sxtb16(x0), sxtb16_ror8(x0));
        }
#endif
        dw_finish(out, a0, a1, a2, a3, q, &d->p, quick);
    }
}

#if defined(__GNUC__) && defined(__OPTIMIZE__)

/* dw_quads_of for a 3x3 window inside the input, dil_w 1: the nine taps unrolled, each input
 * word addressed from the window row (no offset table, no loop): 8 instructions a tap, not 11. */
static inline void dw_quads_3x3(const dw_tables *d, const int8_t *x, int8_t *out)
{
    /* locals: the int8 stores to out may alias *d, which would force reloads */
    const int32_t *w = d->wide, *init = d->init;
    const rq_chan *q = d->rq;
    const int32_t d1 = d->depth, row = d->row_step, quick = d->quick;
    const int32_t *const end = init + d->channels;
    for (; init != end; init += 4, q += 4, x += 4, out += 4) {
        int32_t a0 = init[0], a1 = init[1], a2 = init[2], a3 = init[3];
        const int8_t *p = x;
        int32_t we, wo, xe, xw;
        __asm__ volatile(
            DW_ROW3 "add    %[p], %[p], %[row]\n\t" DW_ROW3 "add    %[p], %[p], %[row]\n\t" DW_ROW3
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [p] "+r"(p),
              [w] "+r"(w), [we] "=&r"(we), [wo] "=&r"(wo), [xe] "=&r"(xe), [xw] "=&r"(xw)
            : [d1] "r"(d1), [row] "r"(row)
            : "memory");
        dw_finish(out, a0, a1, a2, a3, q, &d->p, quick);
    }
}
#define DW_3X3_ASM DSP_SPEED_PATHS
#else
#define DW_3X3_ASM 0 /* -O0 has too few free registers */
#endif

#if DW_3X3_ASM && defined(__thumb2__)
/* What dw_quads_3x3_quick reads besides its arguments: the chunk's starting sums and
 * requantization rows, its quad count, and the window's column and row steps in bytes. */
typedef struct {
    const int32_t *init;
    const rq_chan *rq;
    int32_t quads;
    int32_t d1;
    int32_t row;
    const int32_t *offsets; /* border windows: per tap, bytes from the window origin */
    int32_t pixels;         /* >= 1 */
    int32_t x_skip;         /* after a pixel's quads: to the next pixel's window origin */
    int32_t out_skip;       /* after a pixel's quads: to the next pixel's output */
} dw_run;

/* dw_quads_3x3 for a quick chunk (every channel fast, int8 clamp), each quad's taps,
 * requantization and stores in one assembly loop with all fourteen registers (a naked
 * function: no compiler-saved values to keep), the init and table pointers and the count on
 * the stack. Per quad: the nine taps (8 instructions each), per channel LDM of its row and
 * SMMLAR with the rounding's sign folded into add (7 with the store), 10 of loop: 113, not the
 * ~140 of the C loop around dw_quads_3x3's asm. The sign: (y + (y >> 31) + add) >> right with
 * y = SMMULR(2 acc, m), m >= 0 (rq_table's fast rows), takes acc >> 31 for y >> 31: they differ
 * only when acc < 0 and y == 0, where (add - 1) >> right == add >> right (add = 2^(right-1) +
 * zp 2^right, right >= 1); SMMLAR(2 acc, m, a) = a + SMMULR(2 acc, m) exactly. */
#define DWQ_TAP(addr) "ldr    r11, " addr "\n\t" DWQ_MAC
/* A border tap: entry k of the offset table (lr) gives the input word's place from x. */
#define DWQ_TAPO(k) "ldr    r11, [lr, #" k "]\n\t" "ldr    r11, [r1, r11]\n\t" DWQ_MAC
#define DWQ_MAC                                                                                \
    "ldrd   r8, r9, [r0], #8\n\t"                                                             \
    "sxtb16 r10, r11\n\t"                                                                      \
    "sxtb16 r11, r11, ror #8\n\t"                                                              \
    "smlabb r4, r8, r10, r4\n\t"                                                              \
    "smlatt r6, r8, r10, r6\n\t"                                                              \
    "smlabb r5, r9, r11, r5\n\t"                                                              \
    "smlatt r7, r9, r11, r7\n\t"
#define DWQ_ROW DWQ_TAP("[r1]") DWQ_TAP("[r1, r12]") DWQ_TAP("[r1, r12, lsl #1]")
/* The three rows of a window inside the input (r12: depth, lr: the row step), r1 restored. */
#define DWQ_3ROWS                                                                              \
    DWQ_ROW "add    r1, r1, lr\n\t"                                                             \
    DWQ_ROW "add    r1, r1, lr\n\t"                                                             \
    DWQ_ROW "sub    r1, r1, lr, lsl #1\n\t"
#define DWQ_RQ(acc)                                                                            \
    "ldm    r3!, {r8, r9, r10, r11}\n\t"                                                       \
    "lsl    r8, " acc ", #1\n\t"                                                               \
    "add    r11, r11, " acc ", asr #31\n\t"                                                    \
    "smmlar r8, r8, r9, r11\n\t"                                                               \
    "asr    r8, r8, r10\n\t"                                                                   \
    "ssat   r8, #8, r8\n\t"                                                                    \
    "strb   r8, [r2], #1\n\t"
/* The loop over a chunk's quads, TAPS the nine taps' asm (r1: the quad's window origin,
 * r12 and lr what the caller's prologue loaded). */
/* The loop over a run of pixels (x, out stepping by run->x_skip, run->out_skip after the
 * quads), and for each over the chunk's quads, TAPS the nine taps' asm (r1: the quad's window
 * origin; r12 and lr what the caller's prologue loaded). The stack: [sp] the init row, +4
 * the table row, +8 quads left; +12 wide, +16 init, +20 table, +24 quads, +28 pixels left,
 * +32 x_skip, +36 out_skip. */
#define DWQ_LOOP(TAPS)                                                                         \
    "add    r4, r3, #24\n\t"                                                                   \
    "ldm    r4, {r7, r8, r9}\n\t"                                                              \
    "ldm    r3, {r4, r5, r6}\n\t"                                                              \
    "push   {r0, r4, r5, r6, r7, r8, r9}\n\t"                                                  \
    "sub    sp, sp, #12\n"                                                                      \
    "2:\n\t"                                                                                   \
    "add    r3, sp, #12\n\t"                                                                   \
    "ldm    r3, {r0, r4, r5, r6}\n\t"                                                          \
    "stmdb  r3, {r4, r5, r6}\n"                                                                 \
    "1:\n\t"                                                                                   \
    "ldr    r3, [sp]\n\t"                                                                      \
    "ldm    r3!, {r4, r5, r6, r7}\n\t"                                                         \
    "str    r3, [sp]\n\t"                                                                      \
    TAPS                                                                                       \
    "ldr    r3, [sp, #4]\n\t"                                                                  \
    DWQ_RQ("r4") DWQ_RQ("r5") DWQ_RQ("r6") DWQ_RQ("r7")                                        \
    "str    r3, [sp, #4]\n\t"                                                                  \
    "adds   r1, r1, #4\n\t"                                                                    \
    "ldr    r3, [sp, #8]\n\t"                                                                  \
    "subs   r3, r3, #1\n\t"                                                                    \
    "str    r3, [sp, #8]\n\t"                                                                  \
    "bne    1b\n\t"                                                                            \
    "ldr    r3, [sp, #32]\n\t"                                                                 \
    "add    r1, r1, r3\n\t"                                                                    \
    "ldr    r3, [sp, #36]\n\t"                                                                 \
    "add    r2, r2, r3\n\t"                                                                    \
    "ldr    r3, [sp, #28]\n\t"                                                                 \
    "subs   r3, r3, #1\n\t"                                                                    \
    "str    r3, [sp, #28]\n\t"                                                                 \
    "bne    2b\n\t"                                                                            \
    "add    sp, sp, #40\n\t"                                                                   \
    "pop    {r4-r11, pc}"
/* wide: the chunk's widened weights; x: the window origin of the first pixel, channel 0 of
 * the chunk; out: its output, channel 0 of the chunk. */
#define DWQ_ARG __attribute__((unused)) /* read by the asm, in r0-r3 */
__attribute__((naked, noinline)) static void dw_quads_3x3_quick(const int32_t *wide DWQ_ARG,
                                                                 const int8_t *x DWQ_ARG,
                                                                 int8_t *out DWQ_ARG,
                                                                 const dw_run *run DWQ_ARG)
{
    __asm__ volatile(
        "push   {r4-r11, lr}\n\t"
        "ldr    r12, [r3, #12]\n\t"
        "ldr    lr, [r3, #16]\n\t"
        DWQ_LOOP(DWQ_3ROWS));
}

/* The same for a 3x3 window at the border: tap t at x + offset[t] (run->offsets, which point
 * the taps in the padding at a row of input zero points). */
__attribute__((naked, noinline)) static void dw_quads_3x3o_quick(const int32_t *wide DWQ_ARG,
                                                                  const int8_t *x DWQ_ARG,
                                                                  int8_t *out DWQ_ARG,
                                                                  const dw_run *run DWQ_ARG)
{
    __asm__ volatile(
        "push   {r4-r11, lr}\n\t"
        "ldr    lr, [r3, #20]\n\t"
        DWQ_LOOP(DWQ_TAPO("0") DWQ_TAPO("4") DWQ_TAPO("8") DWQ_TAPO("12") DWQ_TAPO("16")
                 DWQ_TAPO("20") DWQ_TAPO("24") DWQ_TAPO("28") DWQ_TAPO("32")));
}
#define DW_3X3_QUICK 1
#else
#define DW_3X3_QUICK 0
#endif

/* Every pixel of an output row, the chunk's quads: row is the address of input row y0's
 * column 0 (perhaps outside the image), taps [k0, k1) of the window's rows inside; tap t of
 * the pixel with window origin x reads x + offset[t] (+ 4 per quad). */
DSP_NOINLINE static void dw_row(const dw_tables *d, uintptr_t row, int32_t k0, int32_t k1,
                                int8_t *out)
{
    const int32_t kw = d->kw, depth = d->depth;
    for (int32_t ox = 0; ox < d->out_w; ++ox, out += depth) {
        const int32_t x0 = ox * d->stride_w - d->pad_w;
#if DW_3X3_QUICK
        if (d->quick && d->row_step != 0 && k1 - k0 == 3 && x0 >= 0 && x0 + 2 < d->in_w) {
            /* the run of pixels whose windows are inside the input, in one call */
            const int32_t last = (d->in_w - 3 + d->pad_w) / d->stride_w;
            const int32_t n = (last < d->out_w - 1 ? last : d->out_w - 1) - ox + 1;
            const int32_t quads = d->channels >> 2;
            const dw_run run = {d->init, d->rq, quads, depth, d->row_step, d->offset, n,
                                d->stride_w * depth - 4 * quads, depth - 4 * quads};
            dw_quads_3x3_quick(d->wide, (const int8_t *)(row + (uintptr_t)(intptr_t)(x0 * depth)),
                               out, &run);
            ox += n - 1;
            out += (n - 1) * depth;
            continue;
        }
#endif
        int32_t k2 = 0, k3 = kw;
        if (x0 < 0 || x0 + (kw - 1) * d->dil_w >= d->in_w) {
            tap_range(x0, kw, d->dil_w, d->in_w, &k2, &k3);
        }
        const int8_t *x = (const int8_t *)(row + (uintptr_t)(intptr_t)(x0 * depth));
        const int32_t *offset = d->offset;
        if (k1 - k0 != d->kh || k3 - k2 != kw) {
            /* at the border, the taps in the padding read the zero points, which with
             * init's input_offset * sum(w) add w * (zero point + input_offset) = 0 */
            const int32_t to_zero = (int32_t)((uintptr_t)d->zero - (uintptr_t)x);
            int32_t *e = d->edge;
            for (int32_t t = 0; t < d->taps; ++t) {
                e[t] = to_zero;
            }
            for (int32_t ky = k0; ky < k1; ++ky) {
                for (int32_t t = ky * kw + k2; t < ky * kw + k3; ++t) {
                    e[t] = offset[t];
                }
            }
            offset = e;
        }
#if DW_3X3_QUICK
        if (d->quick && d->taps == 9) { /* a border window, or dilated */
            const dw_run run = {d->init, d->rq, d->channels >> 2, depth, d->row_step, offset,
                                1, 0, 0};
            dw_quads_3x3o_quick(d->wide, x, out, &run);
            continue;
        }
#endif
#if DW_3X3_ASM
        if (offset == d->offset && d->row_step != 0) {
            dw_quads_3x3(d, x, out);
            continue;
        }
#endif
        dw_quads_of(d, offset, x, out);
    }
}

/* The count (a multiple of 4) channels' weights, filter[t * channels + c], widened into wide
 * (per quad and tap: __sxtb16 and sxtb16_ror8 of the four int8 weights) and their starting
 * sums rq[c].bias + off * sum(w) into init: what the build's table holds (dsp_table.py). */
DSP_NOINLINE static void dw_widen(const int8_t *filter, int32_t channels, int32_t taps,
                                  int32_t off, int32_t count, const rq_chan *rq, int32_t *wide,
                                  int32_t *init)
{
    for (int32_t c = 0; c < count; c += 4) {
        /* the weight sums of channels (0, 2) and (1, 3), as int16 lanes: exact while
         * |sum| <= 128 taps < 2^15, else summed again below */
        int32_t se = 0, so = 0;
        const int8_t *w = filter + c;
        for (int32_t t = 0; t < taps; ++t, w += channels, wide += 2) {
            const int32_t raw = load32(w);
            wide[0] = __sxtb16(raw);
            wide[1] = sxtb16_ror8(raw);
            se = __sadd16(se, wide[0]);
            so = __sadd16(so, wide[1]);
        }
        int32_t sum[4] = {(int16_t)se, (int16_t)so, se >> 16, so >> 16};
        for (int32_t i = 0; i < 4 && taps > 255; ++i) {
            sum[i] = 0;
            for (int32_t t = 0; t < taps; ++t) {
                sum[i] += filter[t * channels + c + i];
            }
        }
        for (int32_t i = 0; i < 4; ++i) {
            init[c + i] = wrap_add(rq[c + i].bias, off * sum[i]);
        }
    }
}

int mcugen_depthwise_conv_fast_s8(const mcugen_context *ctx, const mcugen_conv_fast_params *params,
                                  const mcugen_per_channel_quant_params *quant,
                                  const mcugen_dims *input_dims, const int8_t *input,
                                  const mcugen_dims *filter_dims, const int8_t *filter,
                                  const int32_t *bias, const mcugen_dims *output_dims,
                                  int8_t *output)
{
    const int32_t channels = output_dims->c;
    if (params->ch_mult != 1 || (channels & 3) != 0 ||
        !mcugen_depthwise_fast_offsets_fit(params, input_dims, filter_dims, channels) ||
        !scratch_ok(ctx, mcugen_depthwise_conv_fast_dsp_s8_buffer_size(filter_dims))) {
        return 0;
    }
    const int32_t in_h = input_dims->h, in_w = input_dims->w;
    const int32_t kh = filter_dims->h, kw = filter_dims->w, taps = kh * kw;
    const int32_t dil_h = params->dilation.h, dil_w = params->dilation.w;
    const int32_t off = params->input_offset;
    /* channels per pass over the pixels: with the build's table the scratch holds no
     * per-channel tables but the zero row, so one pass when that fits (a pixel's set-up and
     * border offsets once, not once per chunk) */
    const int whole = params->rq_table != NULL && channels / 4 <= ctx->size / 4 - 2 * taps;
    const int32_t chunk = whole ? channels : 4 * dw_quads(filter_dims);
    rq_chan *table = (rq_chan *)ctx->buf;
    int32_t *init = (int32_t *)(void *)(table + (whole ? 0 : chunk));
    int32_t *offset = init + (whole ? 0 : chunk);
    int32_t *edge = offset + taps; /* a border pixel's offsets */
    int32_t *zero = edge + taps;   /* a row of input zero points, -input_offset */
    int32_t *const wide0 = zero + chunk / 4;
    const int64_t max_sum = taps * max_product(off);
    dw_tables d;
    d.offset = offset, d.wide = wide0, d.init = init, d.rq = table, d.edge = edge, d.zero = zero;
    d.taps = taps, d.kh = kh, d.kw = kw, d.dil_w = dil_w, d.in_w = in_w, d.depth = channels;
    d.stride_w = params->stride.w, d.pad_w = params->padding.w, d.out_w = output_dims->w;
    d.row_step = kh == 3 && kw == 3 && dil_w == 1 ? dil_h * in_w * channels : 0;
    d.p = rq_params_of(params->output_offset, params->activation);
    for (int32_t ky = 0, t = 0; ky < kh; ++ky) {
        for (int32_t kx = 0; kx < kw; ++kx, ++t) {
            offset[t] = (ky * dil_h * in_w + kx * dil_w) * channels;
        }
    }
    for (int32_t c = 0; c < chunk; c += 4) {
        zero[c >> 2] = (int32_t)(((uint32_t)-off & 0xFFu) * 0x01010101u);
    }
    for (int32_t c0 = 0; c0 < channels; c0 += chunk) {
        d.channels = channels - c0 < chunk ? channels - c0 : chunk;
        const int32_t *built = params->rq_table;
        if (built != NULL) { /* the build's table (dsp_table.py): this chunk's part of it */
            d.rq = (const rq_chan *)(const void *)built + c0;
            d.init = built + 4 * channels + c0;
            d.wide = built + 5 * channels + 2 * taps * (c0 >> 2);
            /* its last word: whether every channel takes the fast requantization */
            d.quick = built[5 * channels + taps * (channels >> 1)] != 0 && d.p.full;
        } else {
            d.quick = rq_table(table, bias != NULL ? bias + c0 : NULL, quant->multiplier + c0,
                               quant->shift + c0, d.channels, d.p.zp, max_sum) &&
                      d.p.full;
            d.rq = table;
            dw_widen(filter + c0, channels, taps, off, d.channels, table, wide0, init);
            d.wide = wide0, d.init = init;
        }
        int8_t *out = output + c0;
        for (int32_t b = 0; b < output_dims->n; ++b) {
            const int8_t *image = input + b * in_h * in_w * channels + c0;
            for (int32_t oy = 0; oy < output_dims->h; ++oy, out += d.out_w * channels) {
                const int32_t y0 = oy * params->stride.h - params->padding.h;
                int32_t k0, k1;
                tap_range(y0, kh, dil_h, in_h, &k0, &k1);
                /* input row y0 as an address, possibly outside the image */
                dw_row(&d, (uintptr_t)image + (uintptr_t)(intptr_t)(y0 * in_w * channels), k0,
                       k1, out);
            }
        }
    }
    return 1;
}

/* ---- FULLY_CONNECTED ------------------------------------------------------------------------ */

#if defined(__GNUC__) && defined(__OPTIMIZE__) && !defined(__OPTIMIZE_SIZE__)
#define DSP_FC_ROWS4 1
#else
#define DSP_FC_ROWS4 0 /* -Os and -O0: row_1x1 (less code; too few free registers at -O0) */
#endif

#if DSP_FC_ROWS4
/* One weight word of row `acc` (loaded by `load`) against the column group in xa, xb. */
#define DSP_FC_ROW(load, acc)                                                                  \
    load                                                                                       \
    "sxtb16 %[we], %[raw]\n\t"                                                                  \
    "sxtb16 %[raw], %[raw], ror #8\n\t"                                                         \
    "smlad  %[" acc "], %[we], %[xa], %[" acc "]\n\t"                                           \
    "smlad  %[" acc "], %[raw], %[xb], %[" acc "]\n\t"
#define DSP_FC_GROUP                                                                           \
    "ldrd   %[xa], %[xb], [%[x]], #8\n\t"                                                      \
    DSP_FC_ROW("ldr    %[raw], [%[w0], %[d]]\n\t", "a1")                                        \
    DSP_FC_ROW("ldr    %[raw], [%[w0]], #4\n\t", "a0")                                          \
    DSP_FC_ROW("ldr    %[raw], [%[w2], %[d]]\n\t", "a3")                                        \
    DSP_FC_ROW("ldr    %[raw], [%[w2]], #4\n\t", "a2")

/* Four filter rows (w, w + depth, w + 2 depth, w + 3 depth) against one column: the column
 * word pair serves four rows, 16 MACs in 21 instructions a group, two groups a pass (vs 14
 * instructions for 8 MACs in row_1x1). Thirteen registers. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void rows_4x1(const int8_t *w, const int32_t *x, int32_t depth, int32_t acc[4])
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int32_t groups = depth >> 2;
    const int8_t *w0 = w, *w2 = w + 2 * depth;
    if (groups > 0) {
        int32_t n = groups, raw, we, xa, xb;
        __asm__ volatile(
            DSP_TWO_GROUPS_A_PASS(DSP_FC_GROUP)
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [w0] "+r"(w0),
              [w2] "+r"(w2), [x] "+r"(x), [n] "+r"(n), [raw] "=&r"(raw), [we] "=&r"(we),
              [xa] "=&r"(xa), [xb] "=&r"(xb)
            : [d] "r"(depth)
            : "cc", "memory");
    }
    if (depth & 3) {
        const int16_t *x16 = (const int16_t *)x;
        a0 = dot_tail(w0, x16, depth & 3, a0);
        a1 = dot_tail(w0 + depth, x16, depth & 3, a1);
        a2 = dot_tail(w2, x16, depth & 3, a2);
        a3 = dot_tail(w2 + depth, x16, depth & 3, a3);
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}
#endif

/* ---- FULLY_CONNECTED over weights in pairs of units (MCUGEN_FC_LAYOUT_PAIRS4) ----------------
 * Group g (depth values 4g .. 4g + 3) of a block of four units is 16 bytes at 16 g: words 0, 1
 * the pair of units 0 (A) and 1 (B), words 2, 3 the pair of units 2 and 3. Word j of a pair
 * holds depths d = 4g + j and d + 2 (the column's word j, x_d and x_(d+2), as im2col_q15 widens
 * them): bytes [B(d) ^ 0x80, A(d), B(d+2) ^ 0x80, A(d+2)]. Its two halfwords, as int16, are
 * (B + 128) + 256 A (byte 0 unsigned), so one SMLAD of the raw word adds 256 A x + B x + 128 x
 * and one SMLAD of SXTB16(word, ROR 8) = (A(d), A(d+2)) adds A x alone: 4 MACs in three
 * instructions (B needs no SXTB16). Over the row, modulo 2^32 like every int32 sum here,
 * raw = 256 dot_A + dot_B + 128 S with S the column's sum, so dot_B = raw - 256 dot_A - 128 S:
 * raw starts at bias_B + 256 bias_A - 128 S and unit B's sum is raw - 256 acc_A. */

#if DSP_FC_ROWS4
/* S: the sum of the column's `words` int16 pairs (x + offset), one SMLAD a word. */
static int32_t column_sum(const int32_t *x, int32_t words)
{
    int32_t s = 0;
    for (int32_t i = 0; i < words; ++i) {
        s = __smlad(x[i], 0x00010001, s);
    }
    return s;
}

/* A pair's starting sums: acc_A = bias_A, raw = bias_B + 256 bias_A + c (c = -128 S). */
static inline void pair_init(int32_t *a, int32_t *raw, const int32_t *bias, int32_t c)
{
    *a = bias != NULL ? bias[0] : 0;
    *raw = (int32_t)((uint32_t)c + (bias != NULL ? (uint32_t)bias[1] : 0u) + ((uint32_t)*a << 8));
}

/* Unit B's sum from the raw sum and unit A's. */
static inline int32_t pair_b(int32_t raw, int32_t a)
{
    return (int32_t)((uint32_t)raw - ((uint32_t)a << 8));
}

/* Word k (a pair's word j, against the column word xw): the raw SMLAD, then k's A halves. */
#define DSP_FCP_WORD(k, xw, raw, acc)                                                          \
    "smlad  %[" raw "], %[" k "], %[" xw "], %[" raw "]\n\t"                                   \
    "sxtb16 %[" k "], %[" k "], ror #8\n\t"                                                    \
    "smlad  %[" acc "], %[" k "], %[" xw "], %[" acc "]\n\t"
#define DSP_FCP_GROUP                                                                          \
    "ldrd   %[xa], %[xb], [%[x]], #8\n\t"                                                      \
    "ldmia  %[w]!, {%[k0], %[k1], %[k2], %[k3]}\n\t"                                           \
    DSP_FCP_WORD("k0", "xa", "p0", "a0") DSP_FCP_WORD("k1", "xb", "p0", "a0")                  \
    DSP_FCP_WORD("k2", "xa", "p1", "a2") DSP_FCP_WORD("k3", "xb", "p1", "a2")
#define DSP_FCP_OPERANDS                                                                       \
    [a0] "+r"(a0), [p0] "+r"(p0), [a2] "+r"(a2), [p1] "+r"(p1), [w] "+r"(w), [x] "+r"(x),    \
        [k0] "=&r"(k0), [k1] "=&r"(k1), [k2] "=&r"(k2), [k3] "=&r"(k3), [xa] "=&r"(xa),      \
        [xb] "=&r"(xb)

/* The two pairs of a block (w word-aligned): 16 MACs in 14 instructions a group (LDRD, LDM,
 * 4 SXTB16, 8 SMLAD), eight groups a pass counted down. The LDM's registers are fixed in
 * ascending order (word r into k_r). acc: A0, raw01, A2, raw23. Thirteen registers. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void pairs_4x1(const int8_t *w, const int32_t *x, int32_t groups, int32_t acc[4])
{
    int32_t a0 = acc[0], p0 = acc[1], a2 = acc[2], p1 = acc[3], xa, xb;
    register int32_t k0 __asm__("r8");
    register int32_t k1 __asm__("r9");
    register int32_t k2 __asm__("r10");
    register int32_t k3 __asm__("r11");
    int32_t n = groups >> 3;
    if (n > 0) {
        __asm__ volatile("1:\n\t" DSP_FCP_GROUP DSP_FCP_GROUP DSP_FCP_GROUP DSP_FCP_GROUP
                         DSP_FCP_GROUP DSP_FCP_GROUP DSP_FCP_GROUP DSP_FCP_GROUP
                         "subs   %[n], %[n], #1\n\t"
                         "bne    1b"
                         : DSP_FCP_OPERANDS, [n] "+r"(n)
                         :
                         : "cc", "memory");
    }
    for (n = groups & 7; n > 0; --n) {
        __asm__ volatile(DSP_FCP_GROUP : DSP_FCP_OPERANDS : : "memory");
    }
    acc[0] = a0;
    acc[1] = p0;
    acc[2] = a2;
    acc[3] = p1;
}
#endif

/* One output, the fast requantization decided per value rather than from a table (the
 * bound it needs, |acc| < 2^30 so that 2 acc fits int32, is checked on acc itself):
 * rq_table's argument holds for shift in [-22, -1] and |zp| <= 128 (zp_ok), else rq_exact. */
static inline int8_t fc_out(int32_t acc, int32_t mult, int32_t shift, int zp_ok,
                            const rq_params p)
{
#if DSP_FC_ROWS4
    const int32_t right = -shift;
    if (zp_ok && (uint32_t)acc + (1u << 30) < (1u << 31) && (uint32_t)(right - 1) < 22u) {
        const int32_t add = (int32_t)((2u * (uint32_t)p.zp + 1u) << (right - 1));
        const int32_t y = rq_y(acc, mult, right, add);
        return p.full ? (int8_t)__ssat(y, 8) : clamp_s8(y, p.lo, p.hi);
    }
#else
    (void)zp_ok; /* -Os: the exact form only, less code */
#endif
    return rq_exact(acc, mult, shift, &p);
}

#if DSP_FC_ROWS4
/* 1 when every output of the call takes the fast requantization with the int8 clamp and no
 * per-value check: rq_table's conditions for every unit, max_sum bounding |sum w (x + off)|,
 * and no negative multiplier (fc_quick_out). shifts: 1 (per tensor) or units. */
static int fc_quick(const int32_t *bias, int32_t units, const int32_t *mult,
                    const int32_t *shift, int32_t shifts, const rq_params *p, int64_t max_sum)
{
    if (!p->full || p->zp < -128 || p->zp > 128 || max_sum >= ((int64_t)1 << 30)) {
        return 0;
    }
    const uint32_t limit = (1u << 30) - (uint32_t)max_sum, span = 2u * limit - 1u;
    for (int32_t i = 0; i < shifts; ++i) {
        if ((uint32_t)(-shift[i] - 1) >= 22u || mult[i] < 0) {
            return 0;
        }
    }
    for (int32_t u = 0; u < units && bias != NULL; ++u) {
        if ((uint32_t)bias[u] + (limit - 1u) >= span) {
            return 0;
        }
    }
    return 1;
}

/* The fast requantization's output (rq_y, then the int8 clamp) for a multiplier and shift
 * that fc_quick accepted, odd = 2 zp + 1, in seven instructions: with t = ~shift = right - 1,
 * add = odd << t; SMMLAR(2 acc, mult, add) = y + add (add is whole in the high word); the -1
 * for y < 0 taken from acc instead, which differs only when y == 0 > acc (mult >= 0: y has
 * acc's sign or is 0), where (add - 1) >> right == add >> right since add is an odd multiple
 * of 2^(right - 1); the shift by right split into t and the SSAT's own ASR #1. */
static inline int8_t fc_quick_out(int32_t acc, int32_t mult, int32_t shift, int32_t odd)
{
    const int32_t t = ~shift;
    const int32_t add = (int32_t)((uint32_t)odd << t);
#if defined(__GNUC__)
    int32_t z, r;
    __asm__("smmlar %0, %1, %2, %3"
            : "=r"(z)
            : "r"((int32_t)((uint32_t)acc << 1)), "r"(mult), "r"(add));
    z = (z + (acc >> 31)) >> t;
    __asm__("ssat %0, #8, %1, asr #1" : "=r"(r) : "r"(z));
    return (int8_t)r;
#else
    return (int8_t)__ssat(rq_y(acc, mult, t + 1, add), 8);
#endif
}

/* A block's four outputs (per unit quantization: step 4, the block's own multipliers; per
 * tensor: step 0, element 0), quick a constant (fc_quick holds: no per-value checks). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void fc_out4(const int32_t acc[4], const int32_t *mult, const int32_t *shift,
                           int32_t step, int zp_ok, const int quick, const rq_params p,
                           int8_t *out)
{
    const int32_t s1 = step >> 2, s2 = 2 * s1, s3 = 3 * s1; /* within a block */
    if (quick) {
        const int32_t odd = 2 * p.zp + 1;
        out[0] = fc_quick_out(acc[0], mult[0], shift[0], odd);
        out[1] = fc_quick_out(acc[1], mult[s1], shift[s1], odd);
        out[2] = fc_quick_out(acc[2], mult[s2], shift[s2], odd);
        out[3] = fc_quick_out(acc[3], mult[s3], shift[s3], odd);
    } else {
        out[0] = fc_out(acc[0], mult[0], shift[0], zp_ok, p);
        out[1] = fc_out(acc[1], mult[s1], shift[s1], zp_ok, p);
        out[2] = fc_out(acc[2], mult[s2], shift[s2], zp_ok, p);
        out[3] = fc_out(acc[3], mult[s3], shift[s3], zp_ok, p);
    }
}

/* The whole blocks of four units of one input row over TFLite's rows: rows_4x1. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void fc_rows_of(const int8_t *w, const int32_t *x, int32_t depth, int32_t blocks,
                              const int32_t *bias, const int32_t *mult, const int32_t *shift,
                              int32_t step, int zp_ok, const int quick, const rq_params p,
                              int8_t *out)
{
    for (; blocks > 0; --blocks, w += 4 * depth, out += 4, mult += step, shift += step) {
        int32_t acc[4] = {0, 0, 0, 0};
        if (bias != NULL) {
            acc[0] = bias[0], acc[1] = bias[1], acc[2] = bias[2], acc[3] = bias[3];
            bias += 4;
        }
        rows_4x1(w, x, depth, acc);
        fc_out4(acc, mult, shift, step, zp_ok, quick, p, out);
    }
}

/* The same over MCUGEN_FC_LAYOUT_PAIRS4 weights: pairs_4x1, c = -128 S. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void fc_pairs_of(const int8_t *w, const int32_t *x, int32_t depth, int32_t blocks,
                               const int32_t *bias, int32_t c, const int32_t *mult,
                               const int32_t *shift, int32_t step, int zp_ok, const int quick,
                               const rq_params p, int8_t *out)
{
    for (; blocks > 0; --blocks, w += 4 * depth, out += 4, mult += step, shift += step) {
        int32_t acc[4] = {0, c, 0, c};
        if (bias != NULL) {
            pair_init(&acc[0], &acc[1], bias, c);
            pair_init(&acc[2], &acc[3], bias + 2, c);
            bias += 4;
        }
        pairs_4x1(w, x, depth >> 2, acc);
        acc[1] = pair_b(acc[1], acc[0]);
        acc[3] = pair_b(acc[3], acc[2]);
        fc_out4(acc, mult, shift, step, zp_ok, quick, p, out);
    }
}

/* Out of line, with the activation by value: the int8 stores then force no reloads; one loop
 * each way (a runtime flag inside the one loop leaves the asm too few registers). */
DSP_NOINLINE static void fc_rows(const int8_t *w, const int32_t *x, int32_t depth,
                                 int32_t blocks, const int32_t *bias, const int32_t *mult,
                                 const int32_t *shift, int32_t step, int zp_ok,
                                 const rq_params p, int8_t *out)
{
    fc_rows_of(w, x, depth, blocks, bias, mult, shift, step, zp_ok, 0, p, out);
}

DSP_NOINLINE static void fc_rows_quick(const int8_t *w, const int32_t *x, int32_t depth,
                                       int32_t blocks, const int32_t *bias, const int32_t *mult,
                                       const int32_t *shift, int32_t step, const rq_params p,
                                       int8_t *out)
{
    fc_rows_of(w, x, depth, blocks, bias, mult, shift, step, 1, 1, p, out);
}

DSP_NOINLINE static void fc_pairs(const int8_t *w, const int32_t *x, int32_t depth,
                                  int32_t blocks, const int32_t *bias, int32_t c,
                                  const int32_t *mult, const int32_t *shift, int32_t step,
                                  int zp_ok, const rq_params p, int8_t *out)
{
    fc_pairs_of(w, x, depth, blocks, bias, c, mult, shift, step, zp_ok, 0, p, out);
}

/* Quick, with the step a constant (per unit: 4; per tensor: 0), so that the four outputs
 * load their multipliers and shifts at fixed offsets from one pointer each. */
DSP_NOINLINE static void fc_pairs_quick(const int8_t *w, const int32_t *x, int32_t depth,
                                        int32_t blocks, const int32_t *bias, int32_t c,
                                        const int32_t *mult, const int32_t *shift,
                                        const rq_params p, int8_t *out)
{
    fc_pairs_of(w, x, depth, blocks, bias, c, mult, shift, 4, 1, 1, p, out);
}

DSP_NOINLINE static void fc_pairs_quick_tensor(const int8_t *w, const int32_t *x, int32_t depth,
                                               int32_t blocks, const int32_t *bias, int32_t c,
                                               const int32_t *mult, const int32_t *shift,
                                               const rq_params p, int8_t *out)
{
    fc_pairs_of(w, x, depth, blocks, bias, c, mult, shift, 0, 1, 1, p, out);
}
#else
/* -Os, -O0: unit u (u < units & ~3) of MCUGEN_FC_LAYOUT_PAIRS4 weights on its own (less
 * code): an odd unit's bytes are 0 and 2 of its pair's words, 128 taken off again by the XOR,
 * an even unit's bytes 1 and 3 (ROR 8). */
static inline int32_t pair_half(const int8_t *w, uint32_t flip, uint32_t rot)
{
    const uint32_t v = (uint32_t)load32(w) ^ flip;
    return __sxtb16((int32_t)((v >> rot) | (v << (-rot & 31u)))); /* one ROR */
}

static int32_t fc_pair_unit(const int8_t *w, const int32_t *x, int32_t depth, int32_t u,
                            int32_t a)
{
    const uint32_t flip = (u & 1) ? 0x00800080u : 0u, rot = (u & 1) ? 0u : 8u;
    /* pair u / 2: block u / 4, words 2 (u / 2 % 2) and 2 (u / 2 % 2) + 1 of each group */
    w += (u >> 2) * 4 * depth + 8 * ((u >> 1) & 1);
    for (int32_t g = depth >> 2; g > 0; --g, w += 16, x += 2) {
        a = __smlad(pair_half(w + 4, flip, rot), x[1], __smlad(pair_half(w, flip, rot), x[0], a));
    }
    return a;
}
#endif

int mcugen_fully_connected_fast_s8(const mcugen_context *ctx,
                                   const mcugen_fully_connected_fast_params *params,
                                   const mcugen_per_channel_quant_params *quant,
                                   const mcugen_dims *input_dims, const int8_t *input,
                                   const mcugen_dims *filter_dims, const int8_t *filter,
                                   const int32_t *bias, const mcugen_dims *output_dims,
                                   int8_t *output)
{
    const int32_t depth = input_dims->c, units = output_dims->c;
    const int paired = params->filter_layout == MCUGEN_FC_LAYOUT_PAIRS4;
    const int checked = DSP_FC_ROWS4 && params->rq_checked; /* fc_quick holds: no INT32_MIN */
    if ((paired && (((uintptr_t)filter & 3u) != 0 || (depth & 3) != 0)) ||
        (params->filter_layout != 0 && !paired) ||
        (!checked && !multipliers_ok(quant->multiplier, params->per_channel ? units : 1)) ||
        !scratch_ok(ctx, mcugen_fully_connected_fast_dsp_s8_buffer_size(filter_dims))) {
        return 0;
    }
    int16_t *col = (int16_t *)ctx->buf;
    const int32_t *x = (const int32_t *)(const void *)col;
    const rq_params rp = rq_params_of(params->output_offset, params->activation);
    const int per_channel = params->per_channel;
    const int32_t *mult = quant->multiplier, *shift = quant->shift;
    const int zp_ok = rp.zp >= -128 && rp.zp <= 128;
#if DSP_FC_ROWS4
    const int quick = checked || fc_quick(bias, units, mult, shift, per_channel ? units : 1,
                                          &rp, depth * max_product(params->input_offset));
#endif
    /* the input row as a one-column im2col of a 1 x 1 x depth image */
    const mcugen_dims row = {1, 1, 1, depth};
    const mcugen_tile one = {1, 1};
    for (int32_t b = 0; b < input_dims->n; ++b) {
        const window win = {input + b * depth, 0, 0};
        /* the staging is col's upper half (from byte size4 = round_up4(depth)): widening
         * group g writes bytes 8 g .. 8 g + 7, below group g + 1's staging at size4 + 4 g + 4 */
        im2col_q15(col, 0, 1, &win, &row, &row, &one, params->input_offset,
                   (int8_t *)(void *)col + round_up4(depth));
        int8_t *out = output + b * units;
        int32_t u = units & ~3;
#if DSP_FC_ROWS4
        /* -128 S, the paired layout's correction (depth % 4 == 0: no padding in the column) */
        const int32_t c = paired ? (int32_t)(0u - ((uint32_t)column_sum(x, depth >> 1) << 7)) : 0;
        const int32_t step = per_channel ? 4 : 0;
        if (paired && quick && per_channel) {
            fc_pairs_quick(filter, x, depth, u >> 2, bias, c, mult, shift, rp, out);
        } else if (paired && quick) {
            fc_pairs_quick_tensor(filter, x, depth, u >> 2, bias, c, mult, shift, rp, out);
        } else if (paired) {
            fc_pairs(filter, x, depth, u >> 2, bias, c, mult, shift, step, zp_ok, rp, out);
        } else if (quick) {
            fc_rows_quick(filter, x, depth, u >> 2, bias, mult, shift, step, rp, out);
        } else {
            fc_rows(filter, x, depth, u >> 2, bias, mult, shift, step, zp_ok, rp, out);
        }
#else
        const int32_t full = paired ? u : 0; /* -Os, -O0: a unit at a time */
        u = 0;
#endif
        /* the units % 4 last units (every unit at -Os): plain rows, or pairs4 units */
        for (; u < units; ++u) {
            const int32_t q = per_channel ? u : 0;
#if DSP_FC_ROWS4
            const int32_t acc = row_1x1(filter + u * depth, x, depth, bias != NULL ? bias[u] : 0);
#else
            const int32_t b0 = bias != NULL ? bias[u] : 0;
            const int32_t acc = u < full ? fc_pair_unit(filter, x, depth, u, b0)
                                         : row_1x1(filter + u * depth, x, depth, b0);
#endif
            out[u] = fc_out(acc, mult[q], shift[q], zp_ok, rp); /* multipliers_ok: no INT32_MIN */
        }
    }
    return 1;
}

#endif /* MCUGEN_FAST_DSP */
