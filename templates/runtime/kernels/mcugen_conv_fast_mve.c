/* mcugen runtime: the int8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED fast paths for Helium
 * (MVE, Cortex-M55): int8 dot products (VMLADAVA) with the kernel sums, int16 lanes for the
 * depthwise, vectorised requantization. Bit-exact with the portable C (TFLite's reference
 * integer conv); compiled only under MCUGEN_FAST_MVE, except the scratch sizes, which every
 * core compiles. Conditions and the arithmetic argument: mcugen_conv_fast.h. */
#include "mcugen_conv_fast.h"
#include "mcugen_fast_common.h"

/* ---- scratch: plain arithmetic, compiled on every core so that the host can check it -------- */

int32_t mcugen_convolve_fast_mve_s8_buffer_size(const mcugen_dims *filter_dims)
{
    /* two int8 im2col columns; per output channel its sum and two pixels' accumulators */
    return 2 * round_up4(filter_dims->h * filter_dims->w * filter_dims->c) + 12 * filter_dims->n;
}

int32_t mcugen_depthwise_conv_fast_mve_s8_buffer_size(const mcugen_dims *filter_dims)
{
    /* the constants of the eight-channel blocks (bias, multiplier, shift) */
    return 96 * ((filter_dims->c + 7) / 8);
}

int32_t mcugen_fully_connected_fast_mve_s8_buffer_size(const mcugen_dims *filter_dims)
{
    (void)filter_dims;
    return 0;
}

#if defined(MCUGEN_FAST_MVE)

/* -Os (code size first): every conv runs the general three-rows-by-two-pixels pass, compiled
 * once; the passes specialised for small depths, for one pixel and for one segment, and the
 * assembly loops, are left out. */
#if defined(__OPTIMIZE_SIZE__) || !defined(__OPTIMIZE__)
#define MVE_LEAN 1
#else
#define MVE_LEAN 0
#endif

/* any shift[c] > 0, c < n: else the requantization skips its left shift */
static inline int any_left_shift(const int32_t *shift, int32_t n)
{
    /* (under tiling this runs on every stripe's call: whole vectors unpredicated, one VMAXV;
     * a predicated load a vector cost three instructions more, gcc moving the predicate) */
    int32x4_t most = vdupq_n_s32(0);
    int32_t c = 0;
    for (; c + 4 <= n; c += 4) {
        most = vmaxq_s32(most, vldrwq_s32(shift + c));
    }
    if (c < n) { /* (the lanes past n load as 0, which changes no answer) */
        most = vmaxq_s32(most, vldrwq_z_s32(shift + c, vctp32q((uint32_t)(n - c))));
    }
    return vmaxvq_s32(0, most) > 0;
}

/* Whether every shift[0 .. n) is negative (a right shift of at least one bit). */
static inline int all_shifts_negative(const int32_t *shift, int32_t n)
{
    int32_t most = INT32_MIN;
    for (int32_t c = 0; c < n; ++c) {
        most = shift[c] > most ? shift[c] : most;
    }
    return most < 0;
}

/* requantize_x4 when no shift is positive: shift is then the right shift itself. */
static inline int32x4_t requantize_right_x4(int32x4_t acc, int32x4_t multiplier,
                                            int32x4_t shift)
{
    acc = vqrdmulhq_s32(acc, multiplier);
    return vrshlq_s32(vqaddq_s32(acc, vshrq_n_s32(vandq_s32(acc, shift), 31)), shift);
}

/* The output zero point and clamp as vectors, made once per call, and whether some shift is
 * positive. */
typedef struct {
    int32x4_t zp;
    int32x4_t min;
    int32x4_t max;
    int left;
} out_consts;

static inline out_consts make_out_consts(int32_t zp, mcugen_activation act,
                                         const int32_t *shift, int32_t n)
{
    out_consts k;
    k.zp = vdupq_n_s32(zp);
    k.min = vdupq_n_s32(act.min);
    k.max = vdupq_n_s32(act.max);
    k.left = any_left_shift(shift, n);
    return k;
}

/* Requantize, add the zero point (wrapping, as the portable C), clamp. */
static inline int32x4_t requant_clamp(int32x4_t acc, int32x4_t mult, int32x4_t shift,
                                      const out_consts *k)
{
    const int32x4_t r = k->left ? requantize_x4(acc, mult, shift)
                                : requantize_right_x4(acc, mult, shift);
    return vminq_s32(vmaxq_s32(vaddq_s32(r, k->zp), k->min), k->max);
}

#if !MVE_LEAN
/* requant_store_pair's full blocks of four channels for two pixels when no shift is positive
 * (requantize_right_x4), in assembly: compiled from C, the constants the eight Q registers
 * could not hold were reloaded from the stack on every block (37 instructions a block, 24
 * here). The accumulators are read by a gather whose address vector (acc[2 c] .. acc[2 c + 6],
 * less 32 bytes) steps itself on; the zero point is added as a scalar. blocks >= 1. */
static inline __attribute__((always_inline)) void
requant_pair_right(int8_t *out0, int8_t *out1, const int32_t *acc,
                               const int32_t *mult, const int32_t *shift, int32_t blocks,
                               const out_consts *k, const int all_negative)
{
    int32x4_t at = vaddq_n_s32(vreinterpretq_s32_u32(vidupq_n_u32(0, 8)),
                               (int32_t)(uintptr_t)acc - 32);
    int32x4_t a, b, m, s;
    register int32_t n __asm__("lr") = blocks; /* the loop counter of DLS/LE */
#define REQ_PAIR_LOADS                                                                         \
    "dls     lr, lr\n"                                                                         \
    "1:\n\t"                                                                                   \
    "vldrw.u32 %q[a], [%q[at], #32]!\n\t" /* acc[2 c + 2 i], the first pixel */                \
    "vldrw.u32 %q[b], [%q[at], #4]\n\t"   /* acc[2 c + 2 i + 1], the second */                 \
    "vldrw.32 %q[m], [%[mult]], #16\n\t"                                                       \
    "vldrw.32 %q[s], [%[shift]], #16\n\t"                                                      \
    "vqrdmulh.s32 %q[a], %q[a], %q[m]\n\t"                                                     \
    "vqrdmulh.s32 %q[b], %q[b], %q[m]\n\t"
#define REQ_PAIR_STORES                                                                        \
    "vrshl.s32 %q[a], %q[a], %q[s]\n\t"                                                        \
    "vrshl.s32 %q[b], %q[b], %q[s]\n\t"                                                        \
    "vadd.i32 %q[a], %q[a], %[zp]\n\t"                                                         \
    "vadd.i32 %q[b], %q[b], %[zp]\n\t"                                                         \
    "vmax.s32 %q[a], %q[a], %q[lo]\n\t"                                                        \
    "vmax.s32 %q[b], %q[b], %q[lo]\n\t"                                                        \
    "vmin.s32 %q[a], %q[a], %q[hi]\n\t"                                                        \
    "vmin.s32 %q[b], %q[b], %q[hi]\n\t"                                                        \
    "vstrb.32 %q[a], [%[out0]], #4\n\t"                                                        \
    "vstrb.32 %q[b], [%[out1]], #4\n\t"                                                        \
    "le      lr, 1b"
#define REQ_PAIR_OPERANDS                                                                      \
    : [a] "=&w"(a), [b] "=&w"(b), [m] "=&w"(m), [s] "=&w"(s), [at] "+w"(at),                   \
      [out0] "+l"(out0), [out1] "+l"(out1), [mult] "+r"(mult), [shift] "+r"(shift), "+r"(n)    \
    : [zp] "r"(vgetq_lane_s32(k->zp, 0)), [lo] "w"(k->min), [hi] "w"(k->max)                   \
    : "memory"
    if (all_negative) { /* every shift < 0: the rounding fix is -1 for negative values alone */
        __asm__ __volatile__(REQ_PAIR_LOADS
                             "vshr.s32 %q[m], %q[a], #31\n\t"
                             "vqadd.s32 %q[a], %q[a], %q[m]\n\t"
                             "vshr.s32 %q[m], %q[b], #31\n\t"
                             "vqadd.s32 %q[b], %q[b], %q[m]\n\t"
                             REQ_PAIR_STORES REQ_PAIR_OPERANDS);
    } else { /* the fix is -1 for negative values where shift < 0 (volatile: the stores) */
        __asm__ __volatile__(REQ_PAIR_LOADS
                             "vand    %q[m], %q[a], %q[s]\n\t"
                             "vshr.s32 %q[m], %q[m], #31\n\t"
                             "vqadd.s32 %q[a], %q[a], %q[m]\n\t"
                             "vand    %q[m], %q[b], %q[s]\n\t"
                             "vshr.s32 %q[m], %q[m], #31\n\t"
                             "vqadd.s32 %q[b], %q[b], %q[m]\n\t"
                             REQ_PAIR_STORES REQ_PAIR_OPERANDS);
    }
#undef REQ_PAIR_LOADS
#undef REQ_PAIR_STORES
#undef REQ_PAIR_OPERANDS
}
#endif

/* out0[c] = requantized, clamped acc[2 c] and out1[c] the same of acc[2 c + 1] (out1 NULL:
 * none), c < n, four channels at a time: full blocks, then the rest predicated. */
static inline __attribute__((always_inline)) void
requant_store_pair(int8_t *out0, int8_t *out1, const int32_t *acc,
                               const int32_t *mult, const int32_t *shift, int32_t n,
                               const out_consts *k)
{
    const uint32x4_t every_other = vidupq_n_u32(0, 2);
    int32_t c = 0;
#if !MVE_LEAN
    if (out1 != NULL && !k->left && n >= 4) {
        c = n & ~3;
        requant_pair_right(out0, out1, acc, mult, shift, c / 4, k, 0);
        acc += 2 * c;
    }
#endif
    for (; !MVE_LEAN && c + 4 <= n; c += 4, acc += 8) { /* (-Os: all predicated, below) */
        const int32x4_t m = vldrwq_s32(mult + c), s = vldrwq_s32(shift + c);
        const int32x4_t a0 = vldrwq_gather_shifted_offset_s32(acc, every_other);
        vstrbq_s32(out0 + c, requant_clamp(a0, m, s, k));
        if (out1 != NULL) {
            const int32x4_t a1 = vldrwq_gather_shifted_offset_s32(acc + 1, every_other);
            vstrbq_s32(out1 + c, requant_clamp(a1, m, s, k));
        }
    }
    for (; c < n; c += 4, acc += 8) {
        const mve_pred16_t lanes = vctp32q((uint32_t)(n - c));
        const int32x4_t m = vldrwq_z_s32(mult + c, lanes), s = vldrwq_z_s32(shift + c, lanes);
        const int32x4_t a0 = vldrwq_gather_shifted_offset_z_s32(acc, every_other, lanes);
        vstrbq_p_s32(out0 + c, requant_clamp(a0, m, s, k), lanes);
        if (out1 != NULL) {
            const int32x4_t a1 = vldrwq_gather_shifted_offset_z_s32(acc + 1, every_other, lanes);
            vstrbq_p_s32(out1 + c, requant_clamp(a1, m, s, k), lanes);
        }
    }
}

/* Where a pass reads its two columns: `count` segments of `bytes` each, `stride` apart (one
 * segment: an im2col column; kh: the window rows of pixels inside the input, read in place). */
typedef struct {
    int32_t count, bytes, stride;
} segments;

/* Rows 0 .. 3 * triples - 1 (stride size) against two columns, three rows at a time, plus
 * the rows' sums: acc[2 r] = sums[r] + w_r . x0, acc[2 r + 1] = sums[r] + w_r . x1 (modulo
 * 2^32), for segments of 16 bytes or more (a tail only when there is one segment). The sums
 * seed the accumulators and each row's two results are stored side by side. The loop over the
 * full blocks of 16 is written in assembly: compiled from intrinsics, the code around it
 * spilled and reloaded its five pointers on every pass, as much work as a 64-deep pass itself.
 * VMLADAVA accumulates into even registers only, hence the register variables (gcc, clang). */
static inline __attribute__((always_inline)) void
rows_3x2_body(const int8_t *w, const int8_t *x0, const int8_t *x1, int32_t size, int32_t triples,
              const int32_t *sums, int32_t *acc, const segments *sg, const int one)
{
    const int32_t blocks = sg->bytes >> 4, rest = sg->bytes & 15; /* (rest: one segment) */
    const int32_t skip = sg->stride - sg->bytes; /* from a segment's end to the next */
    const mve_pred16_t p = vctp8q((uint32_t)rest);
    for (; triples > 0; --triples, sums += 3, acc += 6) {
        const int8_t *w1 = w + size, *w2 = w1 + size, *p0 = x0, *p1 = x1;
#if !MVE_LEAN
        /* (at -O0 and -Os, gcc 12 cannot find the registers: the intrinsics below run) */
        register int32_t a0 __asm__("r0") = sums[0];
        register int32_t b0 __asm__("r2") = a0;
        register int32_t a1 __asm__("r4") = sums[1];
        register int32_t b1 __asm__("r6") = a1;
        register int32_t a2 __asm__("r8") = sums[2];
        register int32_t b2 __asm__("r10") = a2;
        for (int32_t s = one ? 1 : sg->count;;) {
            register int32_t n __asm__("lr") = blocks; /* the loop counter of DLS/LE */
            __asm__("dls     lr, lr\n"
                    "1:\n\t"
                    "vldrb.8 q0, [%[p0]], #16\n\t"
                    "vldrb.8 q1, [%[p1]], #16\n\t"
                    "vldrb.8 q2, [%[w0]], #16\n\t"
                    "vmladava.s8 %[a0], q0, q2\n\t"
                    "vmladava.s8 %[b0], q1, q2\n\t"
                    "vldrb.8 q2, [%[w1]], #16\n\t"
                    "vmladava.s8 %[a1], q0, q2\n\t"
                    "vmladava.s8 %[b1], q1, q2\n\t"
                    "vldrb.8 q2, [%[w2]], #16\n\t"
                    "vmladava.s8 %[a2], q0, q2\n\t"
                    "vmladava.s8 %[b2], q1, q2\n\t"
                    "le      lr, 1b"
                    : [a0] "+r"(a0), [b0] "+r"(b0), [a1] "+r"(a1), [b1] "+r"(b1),
                      [a2] "+r"(a2), [b2] "+r"(b2), [p0] "+r"(p0), [p1] "+r"(p1), [w0] "+r"(w),
                      [w1] "+r"(w1), [w2] "+r"(w2), "+r"(n)
                    :
                    : "d0", "d1", "d2", "d3", "d4", "d5", "cc", "memory");
            if (--s == 0) {
                break;
            }
            p0 += skip; /* the next window row */
            p1 += skip;
        }
#else
        int32_t a0 = sums[0], a1 = sums[1], a2 = sums[2];
        int32_t b0 = a0, b1 = a1, b2 = a2;
        for (int32_t s = one ? 1 : sg->count;;) {
            for (int32_t n = blocks; n > 0; --n) {
                const int8x16_t xa = vldrbq_s8(p0), xb = vldrbq_s8(p1);
                const int8x16_t v0 = vldrbq_s8(w), v1 = vldrbq_s8(w1), v2 = vldrbq_s8(w2);
                p0 += 16;
                p1 += 16;
                w += 16;
                w1 += 16;
                w2 += 16;
                a0 = vmladavaq_s8(a0, xa, v0);
                b0 = vmladavaq_s8(b0, xb, v0);
                a1 = vmladavaq_s8(a1, xa, v1);
                b1 = vmladavaq_s8(b1, xb, v1);
                a2 = vmladavaq_s8(a2, xa, v2);
                b2 = vmladavaq_s8(b2, xb, v2);
            }
            if (--s == 0) {
                break;
            }
            p0 += skip;
            p1 += skip;
        }
#endif
        int32_t c0 = a0, d0 = b0, c1 = a1, d1 = b1, c2 = a2, d2 = b2;
        if (rest != 0) {
            const int8x16_t xa = vldrbq_z_s8(p0, p), xb = vldrbq_z_s8(p1, p);
            const int8x16_t v0 = vldrbq_z_s8(w, p), v1 = vldrbq_z_s8(w1, p);
            const int8x16_t v2 = vldrbq_z_s8(w2, p);
            c0 = vmladavaq_s8(c0, xa, v0);
            d0 = vmladavaq_s8(d0, xb, v0);
            c1 = vmladavaq_s8(c1, xa, v1);
            d1 = vmladavaq_s8(d1, xb, v1);
            c2 = vmladavaq_s8(c2, xa, v2);
            d2 = vmladavaq_s8(d2, xb, v2);
        }
        w = w2 + rest; /* the next triple */
        acc[0] = c0;
        acc[1] = d0;
        acc[2] = c1;
        acc[3] = d1;
        acc[4] = c2;
        acc[5] = d2;
    }
}

#if !MVE_LEAN
/* The assembly of rows_3x2_blocks. A triple's pass: the sums come in with one LDM and seed
 * both pixels, each segment's blocks run in a DLS/LE loop, the six results go out with one
 * STM; what the registers cannot hold is read from `g` (rows_3x2_blocks), through lr. */
#define R32_BLOCK                                                                              \
    "vldrb.8 q0, [%[p0]], #16\n\t"                                                             \
    "vldrb.8 q1, [%[p1]], #16\n\t"                                                             \
    "vldrb.8 q2, [%[w0]], #16\n\t"                                                             \
    "vmladava.s8 r0, q0, q2\n\t"                                                               \
    "vmladava.s8 r2, q1, q2\n\t"                                                               \
    "vldrb.8 q2, [%[w1]], #16\n\t"                                                             \
    "vmladava.s8 r4, q0, q2\n\t"                                                               \
    "vmladava.s8 r6, q1, q2\n\t"                                                               \
    "vldrb.8 q2, [%[w2]], #16\n\t"                                                             \
    "vmladava.s8 r8, q0, q2\n\t"                                                               \
    "vmladava.s8 r10, q1, q2\n\t"
/* a segment's blocks: a DLS/LE loop over g[3] of them, or unrolled (three: a 3x3 window's row
 * of 16 channels; four: a 1x1 conv's 64; six: a 3x3 row of 32), which saves the loop's
 * count, DLS and LE, about a tenth of a triple */
#define R32_BLOCKS(label)                                                                      \
    "ldr     lr, [%[g], #12]\n\t"                                                              \
    "dls     lr, lr\n"                                                                         \
    label ":\n\t" R32_BLOCK "le      lr, " label "b\n\t"
#define R32_BLOCKS3 R32_BLOCK R32_BLOCK R32_BLOCK
#define R32_BLOCKS4 R32_BLOCKS3 R32_BLOCK
#define R32_BLOCKS6 R32_BLOCKS3 R32_BLOCKS3
#define R32_HEAD                                                                               \
    "0:\n\t"                                                                                   \
    "ldr     lr, [%[g]]\n\t"                                                                   \
    "ldm     lr!, {r0, r4, r8}\n\t" /* the triple's sums seed both pixels */                   \
    "str     lr, [%[g]]\n\t"                                                                   \
    "mov     r2, r0\n\t"                                                                       \
    "mov     r6, r4\n\t"                                                                       \
    "mov     r10, r8\n\t"                                                                      \
    "ldrd    %[p0], %[p1], [%[g], #20]\n\t"
/* from a segment's end to the next window row's start */
#define R32_NEXT_SEGMENT                                                                       \
    "ldr     lr, [%[g], #28]\n\t"                                                              \
    "add     %[p0], %[p0], lr\n\t"                                                             \
    "add     %[p1], %[p1], lr\n\t"
/* the results out; the next triple (w2 is at its first row); after the last, once, the
 * triple that overlaps it when rows % 3 != 0 (g[10]: its first row, 0 when none) */
#define R32_TAIL                                                                               \
    "ldr     lr, [%[g], #4]\n\t"                                                               \
    "stm     lr!, {r0, r2, r4, r6, r8, r10}\n\t"                                               \
    "str     lr, [%[g], #4]\n\t"                                                               \
    "ldr     lr, [%[g], #16]\n\t"                                                              \
    "mov     %[w0], %[w2]\n\t"                                                                 \
    "add     %[w1], %[w2], lr\n\t"                                                             \
    "add     %[w2], %[w1], lr\n\t"                                                             \
    "ldr     lr, [%[g], #8]\n\t"                                                               \
    "subs    lr, lr, #1\n\t"                                                                   \
    "str     lr, [%[g], #8]\n\t"                                                               \
    "bne     0b\n\t"                                                                           \
    "ldr     lr, [%[g], #40]\n\t"                                                              \
    "cmp     lr, #0\n\t"                                                                       \
    "beq     9f\n\t"                                                                           \
    "mov     %[w0], lr\n\t"                                                                    \
    "ldr     lr, [%[g], #16]\n\t"                                                              \
    "add     %[w1], %[w0], lr\n\t"                                                             \
    "add     %[w2], %[w1], lr\n\t"                                                             \
    "ldr     lr, [%[g], #44]\n\t"                                                              \
    "str     lr, [%[g]]\n\t"                                                                   \
    "ldr     lr, [%[g], #48]\n\t"                                                              \
    "str     lr, [%[g], #4]\n\t"                                                               \
    "mov     lr, #0\n\t"                                                                       \
    "str     lr, [%[g], #40]\n\t"                                                              \
    "mov     lr, #1\n\t"                                                                       \
    "str     lr, [%[g], #8]\n\t"                                                               \
    "b       0b\n"                                                                             \
    "9:"
#define R32_OPERANDS                                                                           \
    : "=&r"(a0), "=&r"(b0), "=&r"(a1), "=&r"(b1), "=&r"(a2), "=&r"(b2), [w0] "+&r"(w),        \
      [w1] "+&r"(w1), [w2] "+&r"(w2), [p0] "=&r"(p0), [p1] "=&r"(p1)                           \
    : [g] "r"(g)                                                                               \
    : "lr", "d0", "d1", "d2", "d3", "d4", "d5", "cc", "memory"

/* rows_3x2_body for segments of whole 16-byte blocks (sg->bytes % 16 == 0, >= 16) and all
 * `rows` (>= 3) of the filter, every triple in one assembly loop: compiled from C, the code
 * between two triples' block loops (the sums, the pointers, the stores, reloaded from the
 * stack) cost about as much as a 64-deep pass itself. The one or two rows that whole triples
 * leave run as one more triple that overlaps the last (it recomputes one or two rows, the
 * same values): a pass of two rows, or two, cost more (16 = 5 * 3 + 1). A triple costs about
 * 20 instructions besides its blocks (one segment: a 1x1 conv or a column), 26 over a 3x3
 * window's three rows (unrolled), more over other counts (a loop). The accumulators are r0,
 * r2, ... r10 (VMLADAVA takes even registers); the five streams and g take six more, which
 * leaves one for a frame pointer (-fno-omit-frame-pointer). */
static void rows_3x2_blocks(const int8_t *w, const int8_t *x0, const int8_t *x1, int32_t size,
                            int32_t rows, const int32_t *sums, int32_t *acc, const segments *sg)
{
    const int32_t last = rows - 3; /* the overlapping triple's first row */
    uint32_t g[13];
    g[0] = (uint32_t)(uintptr_t)sums;  /* the next triple's sums (advanced) */
    g[1] = (uint32_t)(uintptr_t)acc;   /* where its results go (advanced) */
    g[2] = (uint32_t)(rows / 3);       /* triples left */
    g[3] = (uint32_t)(sg->bytes >> 4); /* blocks per segment */
    g[4] = (uint32_t)size;             /* bytes per filter row */
    g[5] = (uint32_t)(uintptr_t)x0;
    g[6] = (uint32_t)(uintptr_t)x1;
    g[7] = (uint32_t)(sg->stride - sg->bytes); /* from a segment's end to the next */
    g[8] = (uint32_t)sg->count;
    g[10] = rows % 3 != 0 ? (uint32_t)(uintptr_t)(w + last * size) : 0u;
    g[11] = (uint32_t)(uintptr_t)(sums + last);
    g[12] = (uint32_t)(uintptr_t)(acc + 2 * last);
    register int32_t a0 __asm__("r0");
    register int32_t b0 __asm__("r2");
    register int32_t a1 __asm__("r4");
    register int32_t b1 __asm__("r6");
    register int32_t a2 __asm__("r8");
    register int32_t b2 __asm__("r10");
    const int8_t *w1 = w + size, *w2 = w1 + size, *p0, *p1;
    const int32_t blocks = sg->bytes >> 4;
    if (sg->count == 1 && blocks == 4) {
        __asm__ __volatile__( /* (volatile: its results are the stores) */
            R32_HEAD R32_BLOCKS4 R32_TAIL R32_OPERANDS);
    } else if (sg->count == 1) {
        __asm__ __volatile__(R32_HEAD R32_BLOCKS("2") R32_TAIL R32_OPERANDS);
    } else if (sg->count == 3 && blocks == 3) {
        __asm__ __volatile__(R32_HEAD R32_BLOCKS3 R32_NEXT_SEGMENT R32_BLOCKS3 R32_NEXT_SEGMENT
                                 R32_BLOCKS3 R32_TAIL R32_OPERANDS);
    } else if (sg->count == 3 && blocks == 6) {
        __asm__ __volatile__(R32_HEAD R32_BLOCKS6 R32_NEXT_SEGMENT R32_BLOCKS6 R32_NEXT_SEGMENT
                                 R32_BLOCKS6 R32_TAIL R32_OPERANDS);
    } else if (sg->count == 3) {
        __asm__ __volatile__(R32_HEAD R32_BLOCKS("2") R32_NEXT_SEGMENT R32_BLOCKS("3")
                                 R32_NEXT_SEGMENT R32_BLOCKS("4") R32_TAIL R32_OPERANDS);
    } else {
        __asm__ __volatile__(
            R32_HEAD
            "ldr     %[p0], [%[g], #32]\n\t"
            "str     %[p0], [%[g], #36]\n\t" /* segments left */
            "ldrd    %[p0], %[p1], [%[g], #20]\n"
            "1:\n\t" R32_BLOCKS("2")
            "ldr     lr, [%[g], #36]\n\t"
            "subs    lr, lr, #1\n\t"
            "beq     3f\n\t"
            "str     lr, [%[g], #36]\n\t" R32_NEXT_SEGMENT
            "b       1b\n"
            "3:\n\t" R32_TAIL R32_OPERANDS);
    }
}
#undef R32_BLOCK
#undef R32_BLOCKS
#undef R32_BLOCKS3
#undef R32_BLOCKS4
#undef R32_BLOCKS6
#undef R32_HEAD
#undef R32_NEXT_SEGMENT
#undef R32_TAIL
#undef R32_OPERANDS
#endif

/* rows_3x2_body compiled twice: for an im2col column or a 1x1 conv's pixel (one segment, the
 * pass as tight as it can be), and for window rows read in place (segments of whole blocks
 * run rows_3x2_blocks instead, from the caller). */
static __attribute__((noinline)) void rows_3x2(const int8_t *w, const int8_t *x0,
                                               const int8_t *x1, int32_t size, int32_t triples,
                                               const int32_t *sums, int32_t *acc,
                                               const segments *sg)
{
#if !MVE_LEAN
    if (sg->count == 1) {
        rows_3x2_body(w, x0, x1, size, triples, sums, acc, sg, 1);
        return;
    }
#endif
    rows_3x2_body(w, x0, x1, size, triples, sums, acc, sg, 0);
}

#if !MVE_LEAN
/* Small depths (up to three blocks of 16): the columns of np pixels (np * nb <= 6 vectors)
 * stay in registers while the rows stream past, one weight load per block and row:
 * acc[2 r + p] = sums[r] + w_r . x_p (modulo 2^32). A column longer than 16 bytes reads its
 * last block at size - 16, inside the row, so the weights need no predicate (a predicated load
 * costs a VPST more on every row): the lanes of that block which the block before already
 * holds are zeroed in x, once. Compiled once per (np, nb) used below, the loops unrolled. */
static inline __attribute__((always_inline)) void
rows_xs(const int8_t *w, const int8_t *x0, const int8_t *x1, int32_t size, int32_t rows,
        const int32_t *sums, int32_t *acc, const int np, const int nb)
{
    const int32_t last = nb > 1 ? size - 16 : 0; /* where the last block starts */
    const mve_pred16_t tail = nb > 1 ? (mve_pred16_t)(0xFFFFu << (16 * nb - size))
                                     : vctp8q((uint32_t)size);
    int8x16_t xa[3], xb[3];
    for (int b = 0; b < nb; ++b) {
        const int32_t at = b + 1 < nb ? 16 * b : last;
        const mve_pred16_t p = b + 1 < nb ? 0xFFFF : tail;
        xa[b] = vldrbq_z_s8(x0 + at, p);
        xb[b] = np == 2 ? vldrbq_z_s8(x1 + at, p) : xa[b];
    }
    for (; rows > 0; --rows, w += size, acc += 2) {
        int32_t a = *sums++, c = a;
        for (int b = 0; b < nb; ++b) {
            const int8x16_t v = b + 1 < nb ? vldrbq_s8(w + 16 * b)
                                : nb > 1   ? vldrbq_s8(w + last)
                                           : vldrbq_z_s8(w, tail);
            a = vmladavaq_s8(a, xa[b], v);
            if (np == 2) {
                c = vmladavaq_s8(c, xb[b], v);
            }
        }
        acc[0] = a;
        if (np == 2) {
            acc[1] = c;
        }
    }
}

/* The three rows of `seg` <= 16 bytes, `stride` apart, of a window inside the input (a 3x3
 * first layer's) as one column: read in place, each row needs its own predicated dot products
 * (three per row of the filter instead of two for 27 bytes). */
static inline void copy_rows3(int8_t *col, const int8_t *x, int32_t seg, int32_t stride)
{
    const mve_pred16_t p = vctp8q((uint32_t)seg);
    vstrbq_p_s8(col, vldrbq_z_s8(x, p), p);
    vstrbq_p_s8(col + seg, vldrbq_z_s8(x + stride, p), p);
    vstrbq_p_s8(col + 2 * seg, vldrbq_z_s8(x + 2 * stride, p), p);
}

/* rows_xs for two pixels of 40-byte columns (KWS's 10x4x1 first layer), in assembly: the three
 * weight loads step the row by their post-increments (16, 8 to the last block at 24, 16) and
 * the sums seed both accumulators; compiled from rows_xs a row cost 17 instructions, 13 here.
 * The six column blocks and two weight blocks take the eight Q registers. */
static __attribute__((noinline)) void rows_40x2(const int8_t *w, const int8_t *x0,
                                                const int8_t *x1, int32_t rows,
                                                const int32_t *sums, int32_t *acc)
{
    const mve_pred16_t tail = 0xFF00; /* bytes 32 .. 39 of the block at 24 */
    const int8x16_t a0 = vldrbq_s8(x0), a1 = vldrbq_s8(x0 + 16), a2 = vldrbq_z_s8(x0 + 24, tail);
    const int8x16_t b0 = vldrbq_s8(x1), b1 = vldrbq_s8(x1 + 16), b2 = vldrbq_z_s8(x1 + 24, tail);
    int8x16_t v, u;
    register int32_t a __asm__("r4");
    register int32_t c __asm__("r6");
    register int32_t n __asm__("lr") = rows;
    __asm__ __volatile__( /* (volatile: its results are the stores) */
            "dls     lr, lr\n"
            "1:\n\t"
            "ldr     %[a], [%[sums]], #4\n\t"
            "vldrb.8 %q[v], [%[w]], #16\n\t"
            "mov     %[c], %[a]\n\t"
            "vmladava.s8 %[a], %q[a0], %q[v]\n\t"
            "vldrb.8 %q[u], [%[w]], #8\n\t"
            "vmladava.s8 %[c], %q[b0], %q[v]\n\t"
            "vmladava.s8 %[a], %q[a1], %q[u]\n\t"
            "vldrb.8 %q[v], [%[w]], #16\n\t"
            "vmladava.s8 %[c], %q[b1], %q[u]\n\t"
            "vmladava.s8 %[a], %q[a2], %q[v]\n\t"
            "vmladava.s8 %[c], %q[b2], %q[v]\n\t"
            "strd    %[a], %[c], [%[acc]], #8\n\t"
            "le      lr, 1b"
            : [a] "=&r"(a), [c] "=&r"(c), [v] "=&w"(v), [u] "=&w"(u), [w] "+r"(w),
              [sums] "+r"(sums), [acc] "+r"(acc), "+r"(n)
            : [a0] "w"(a0), [a1] "w"(a1), [a2] "w"(a2), [b0] "w"(b0), [b1] "w"(b1),
              [b2] "w"(b2)
            : "memory");
}

/* rows_xs for two pixels and size <= 48. */
static __attribute__((noinline)) void rows_small(const int8_t *w, const int8_t *x0,
                                                 const int8_t *x1, int32_t size, int32_t rows,
                                                 const int32_t *sums, int32_t *acc)
{
    if (size <= 16) {
        rows_xs(w, x0, x1, size, rows, sums, acc, 2, 1);
    } else if (size <= 32) {
        rows_xs(w, x0, x1, size, rows, sums, acc, 2, 2);
    } else {
        rows_xs(w, x0, x1, size, rows, sums, acc, 2, 3);
    }
}

#endif

#if !MVE_LEAN
/* Rows two at a time against two columns, for the rows that whole triples leave (16 = 3 * 4 +
 * 2 * 2): acc[2 r] = sums[r] + w_r . x0, acc[2 r + 1] = sums[r] + w_r . x1 (modulo 2^32), with
 * the segments of rows_3x2_body (whole blocks, a tail only when there is one segment). One row
 * at a time through dot_s8 cost as much as a triple. */
static __attribute__((noinline)) void rows_2x2(const int8_t *w, const int8_t *x0,
                                               const int8_t *x1, int32_t size, int32_t pairs,
                                               const int32_t *sums, int32_t *acc,
                                               const segments *sg)
{
    const int32_t blocks = sg->bytes >> 4, rest = sg->bytes & 15; /* blocks >= 1 here */
    const int32_t skip = sg->stride - sg->bytes;
    const mve_pred16_t p = vctp8q((uint32_t)rest);
    for (; pairs > 0; --pairs, sums += 2, acc += 4) {
        const int8_t *w1 = w + size, *p0 = x0, *p1 = x1;
        register int32_t a0 __asm__("r0") = sums[0];
        register int32_t b0 __asm__("r2") = a0;
        register int32_t a1 __asm__("r4") = sums[1];
        register int32_t b1 __asm__("r6") = a1;
        for (int32_t s = sg->count;;) {
            register int32_t n __asm__("lr") = blocks; /* the loop counter of DLS/LE */
            __asm__("dls     lr, lr\n"
                    "1:\n\t"
                    "vldrb.8 q0, [%[p0]], #16\n\t"
                    "vldrb.8 q1, [%[p1]], #16\n\t"
                    "vldrb.8 q2, [%[w0]], #16\n\t"
                    "vmladava.s8 %[a0], q0, q2\n\t"
                    "vmladava.s8 %[b0], q1, q2\n\t"
                    "vldrb.8 q2, [%[w1]], #16\n\t"
                    "vmladava.s8 %[a1], q0, q2\n\t"
                    "vmladava.s8 %[b1], q1, q2\n\t"
                    "le      lr, 1b"
                    : [a0] "+r"(a0), [b0] "+r"(b0), [a1] "+r"(a1), [b1] "+r"(b1),
                      [p0] "+r"(p0), [p1] "+r"(p1), [w0] "+r"(w), [w1] "+r"(w1), "+r"(n)
                    :
                    : "d0", "d1", "d2", "d3", "d4", "d5", "cc", "memory");
            if (--s == 0) {
                break;
            }
            p0 += skip; /* the next window row */
            p1 += skip;
        }
        int32_t c0 = a0, d0 = b0, c1 = a1, d1 = b1;
        if (rest != 0) {
            const int8x16_t xa = vldrbq_z_s8(p0, p), xb = vldrbq_z_s8(p1, p);
            const int8x16_t v0 = vldrbq_z_s8(w, p), v1 = vldrbq_z_s8(w1, p);
            c0 = vmladavaq_s8(c0, xa, v0);
            d0 = vmladavaq_s8(d0, xb, v0);
            c1 = vmladavaq_s8(c1, xa, v1);
            d1 = vmladavaq_s8(d1, xb, v1);
        }
        w = w1 + rest; /* the next pair */
        acc[0] = c0;
        acc[1] = d0;
        acc[2] = c1;
        acc[3] = d1;
    }
}
#endif

#if !MVE_LEAN
/* Three contiguous columns of `size` bytes, whole blocks of 16 (a stripe's odd pixel count:
 * KWS's rows of five), rows two at a time: acc[2 r] and acc[2 r + 1] = sums[r] + w_r . x0 and
 * . x1 (the layout of rows_3x2), acc2[r] = sums[r] + w_r . x2, modulo 2^32. Per block, 5 loads
 * for 6 products, as rows_3x2; the third pixel alone (rows_4x1) cost half a pair. All in one
 * assembly loop, as rows_3x2_blocks, `g` holding what the registers cannot: the accumulators
 * are r0 .. r10 (VMLADAVA takes even registers), the five streams and g six more. rows is
 * even and > 0, size % 16 == 0 and > 0. */
#define R23_HEAD                                                                               \
    "0:\n\t"                                                                                   \
    "ldr     lr, [%[g]]\n\t"                                                                   \
    "ldrd    r0, r6, [lr], #8\n\t" /* the pair's sums seed the three pixels */                 \
    "str     lr, [%[g]]\n\t"                                                                   \
    "mov     r2, r0\n\t"                                                                       \
    "mov     r4, r0\n\t"                                                                       \
    "mov     r8, r6\n\t"                                                                       \
    "mov     r10, r6\n\t"                                                                      \
    "ldrd    %[p0], %[p1], [%[g], #8]\n\t"                                                     \
    "ldr     %[p2], [%[g], #16]\n\t"
#define R23_BLOCK                                                                              \
    "vldrb.8 q0, [%[p0]], #16\n\t"                                                             \
    "vldrb.8 q1, [%[p1]], #16\n\t"                                                             \
    "vldrb.8 q2, [%[p2]], #16\n\t"                                                             \
    "vldrb.8 q3, [%[w0]], #16\n\t"                                                             \
    "vmladava.s8 r0, q0, q3\n\t"                                                               \
    "vmladava.s8 r2, q1, q3\n\t"                                                               \
    "vmladava.s8 r4, q2, q3\n\t"                                                               \
    "vldrb.8 q3, [%[w1]], #16\n\t"                                                             \
    "vmladava.s8 r6, q0, q3\n\t"                                                               \
    "vmladava.s8 r8, q1, q3\n\t"                                                               \
    "vmladava.s8 r10, q2, q3\n\t"
#define R23_TAIL                                                                               \
    "ldr     lr, [%[g], #4]\n\t"                                                               \
    "stm     lr!, {r0, r2, r6, r8}\n\t"                                                        \
    "str     lr, [%[g], #4]\n\t"                                                               \
    "ldr     lr, [%[g], #20]\n\t"                                                              \
    "strd    r4, r10, [lr], #8\n\t"                                                            \
    "str     lr, [%[g], #20]\n\t"                                                              \
    "ldr     lr, [%[g], #24]\n\t" /* the next pair: w1 is at its first row */                 \
    "mov     %[w0], %[w1]\n\t"                                                                 \
    "add     %[w1], %[w1], lr\n\t"                                                             \
    "ldr     lr, [%[g], #28]\n\t"                                                              \
    "subs    lr, lr, #1\n\t"                                                                   \
    "str     lr, [%[g], #28]\n\t"                                                              \
    "bne     0b"
#define R23_OPERANDS                                                                           \
    : "=&r"(a0), "=&r"(b0), "=&r"(c0), "=&r"(a1), "=&r"(b1), "=&r"(c1), [w0] "+&r"(w),        \
      [w1] "+&r"(w1), [p0] "=&r"(p0), [p1] "=&r"(p1), [p2] "=&r"(p2)                           \
    : [g] "r"(g)                                                                               \
    : "lr", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "cc", "memory"

static __attribute__((noinline)) void rows_2x3(const int8_t *w, const int8_t *x0, int32_t size,
                                               int32_t rows, const int32_t *sums, int32_t *acc,
                                               int32_t *acc2)
{
    uint32_t g[8];
    g[0] = (uint32_t)(uintptr_t)sums; /* the next pair's sums (advanced) */
    g[1] = (uint32_t)(uintptr_t)acc;  /* where pixels 0 and 1 go (advanced) */
    g[2] = (uint32_t)(uintptr_t)x0;
    g[3] = (uint32_t)(uintptr_t)(x0 + size);
    g[4] = (uint32_t)(uintptr_t)(x0 + 2 * size);
    g[5] = (uint32_t)(uintptr_t)acc2; /* where pixel 2 goes (advanced) */
    g[6] = (uint32_t)size;
    g[7] = (uint32_t)(rows / 2); /* pairs of rows left */
    register int32_t a0 __asm__("r0");
    register int32_t b0 __asm__("r2");
    register int32_t c0 __asm__("r4");
    register int32_t a1 __asm__("r6");
    register int32_t b1 __asm__("r8");
    register int32_t c1 __asm__("r10");
    const int8_t *w1 = w + size, *p0, *p1, *p2;
    if (size == 64) { /* (KWS's pointwise: the four blocks unrolled, no loop count, DLS, LE) */
        __asm__ __volatile__( /* (volatile: its results are the stores) */
            R23_HEAD R23_BLOCK R23_BLOCK R23_BLOCK R23_BLOCK R23_TAIL R23_OPERANDS);
    } else {
        __asm__ __volatile__(R23_HEAD
                             "ldr     lr, [%[g], #24]\n\t"
                             "lsrs    lr, lr, #4\n\t"
                             "dls     lr, lr\n"
                             "1:\n\t" R23_BLOCK "le      lr, 1b\n\t" R23_TAIL R23_OPERANDS);
    }
}
#undef R23_HEAD
#undef R23_BLOCK
#undef R23_TAIL
#undef R23_OPERANDS

/* out[c] = requantized, clamped acc[c], c < n: contiguous accumulators, four a vector. */
static void requant_store_one(int8_t *out, const int32_t *acc, const int32_t *mult,
                              const int32_t *shift, int32_t n, const out_consts *k)
{
    int32_t c = 0;
    for (; c + 4 <= n; c += 4) { /* (whole vectors unpredicated: gcc moves a predicate dearly) */
        const int32x4_t a = vldrwq_s32(acc + c);
        vstrbq_s32(out + c, requant_clamp(a, vldrwq_s32(mult + c), vldrwq_s32(shift + c), k));
    }
    for (; c < n; c += 4) {
        const mve_pred16_t lanes = vctp32q((uint32_t)(n - c));
        const int32x4_t m = vldrwq_z_s32(mult + c, lanes), s = vldrwq_z_s32(shift + c, lanes);
        const int32x4_t a = vldrwq_z_s32(acc + c, lanes);
        vstrbq_p_s32(out + c, requant_clamp(a, m, s, k), lanes);
    }
}

#endif

/* sum_k w[k] * x[k] for one row. */
static inline int32_t dot_s8(const int8_t *w, const int8_t *x, int32_t size)
{
    int32_t acc = 0;
    int32_t k = 0;
    for (; k + 16 <= size; k += 16) {
        acc = vmladavaq_s8(acc, vldrbq_s8(x + k), vldrbq_s8(w + k));
    }
    if (k < size) {
        const mve_pred16_t p = vctp8q((uint32_t)(size - k));
        acc = vmladavaq_s8(acc, vldrbq_z_s8(x + k, p), vldrbq_z_s8(w + k, p));
    }
    return acc;
}

#if !MVE_LEAN
/* One column (the last pixel of an odd count): rows four at a time, then one at a time,
 * acc[2 r] = sums[r] + w_r . x (modulo 2^32); half the work of a pass over two copies of it.
 * The full blocks in assembly, as in rows_3x2. */
static __attribute__((noinline)) void rows_4x1(const int8_t *w, const int8_t *x, int32_t size,
                                               int32_t rows, const int32_t *sums, int32_t *acc)
{
    const int32_t blocks = size >> 4, rest = size & 15;
    const mve_pred16_t p = vctp8q((uint32_t)rest);
    for (; rows >= 4 && blocks > 0; rows -= 4, sums += 4, acc += 8) {
        const int8_t *w1 = w + size, *w2 = w1 + size, *w3 = w2 + size, *xp = x;
#if !MVE_LEAN
        register int32_t a0 __asm__("r0") = sums[0];
        register int32_t a1 __asm__("r2") = sums[1];
        register int32_t a2 __asm__("r4") = sums[2];
        register int32_t a3 __asm__("r6") = sums[3];
        register int32_t n __asm__("lr") = blocks;
        __asm__("dls     lr, lr\n"
                "1:\n\t"
                "vldrb.8 q0, [%[xp]], #16\n\t"
                "vldrb.8 q1, [%[w0]], #16\n\t"
                "vmladava.s8 %[a0], q0, q1\n\t"
                "vldrb.8 q1, [%[w1]], #16\n\t"
                "vmladava.s8 %[a1], q0, q1\n\t"
                "vldrb.8 q1, [%[w2]], #16\n\t"
                "vmladava.s8 %[a2], q0, q1\n\t"
                "vldrb.8 q1, [%[w3]], #16\n\t"
                "vmladava.s8 %[a3], q0, q1\n\t"
                "le      lr, 1b"
                : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xp] "+r"(xp),
                  [w0] "+r"(w), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), "+r"(n)
                :
                : "d0", "d1", "d2", "d3", "cc", "memory");
#else
        int32_t a0 = sums[0], a1 = sums[1], a2 = sums[2], a3 = sums[3];
        for (int32_t n = blocks; n > 0; --n) {
            const int8x16_t xv = vldrbq_s8(xp);
            a0 = vmladavaq_s8(a0, xv, vldrbq_s8(w));
            a1 = vmladavaq_s8(a1, xv, vldrbq_s8(w1));
            a2 = vmladavaq_s8(a2, xv, vldrbq_s8(w2));
            a3 = vmladavaq_s8(a3, xv, vldrbq_s8(w3));
            xp += 16;
            w += 16;
            w1 += 16;
            w2 += 16;
            w3 += 16;
        }
#endif
        int32_t c0 = a0, c1 = a1, c2 = a2, c3 = a3;
        if (rest != 0) {
            const int8x16_t xv = vldrbq_z_s8(xp, p);
            c0 = vmladavaq_s8(c0, xv, vldrbq_z_s8(w, p));
            c1 = vmladavaq_s8(c1, xv, vldrbq_z_s8(w1, p));
            c2 = vmladavaq_s8(c2, xv, vldrbq_z_s8(w2, p));
            c3 = vmladavaq_s8(c3, xv, vldrbq_z_s8(w3, p));
        }
        w = w3 + rest; /* the next four rows */
        acc[0] = c0;
        acc[2] = c1;
        acc[4] = c2;
        acc[6] = c3;
    }
    for (; rows > 0; --rows, w += size, acc += 2) {
        acc[0] = wrap_add(dot_s8(w, x, size), *sums++);
    }
}

#endif

/* sum of n int8 values */
static inline int32_t sum_s8(const int8_t *w, int32_t n)
{
    int32_t acc = 0;
    int32_t k = 0;
    for (; k + 16 <= n; k += 16) {
        acc = vaddvaq_s8(acc, vldrbq_s8(w + k));
    }
    if (k < n) {
        acc = vaddvaq_s8(acc, vldrbq_z_s8(w + k, vctp8q((uint32_t)(n - k))));
    }
    return acc;
}

/* [lo, hi): the taps k < n whose input coordinate start + k * step lies in [0, size). */
static inline void tap_range(int32_t start, int32_t step, int32_t n, int32_t size, int32_t *lo,
                             int32_t *hi)
{
    int32_t a = 0, b = n;
    while (a < n && start + a * step < 0) ++a;
    while (b > a && start + (b - 1) * step >= size) --b;
    *lo = a;
    *hi = b;
}

/* dst[0..n) = src[0..n), sixteen bytes a step, the last step predicated: the short rows of an
 * im2col column (9 bytes for a 3x3x1 window row) make a memcpy call cost more than the copy.
 * Not inlined: inlined, gcc hoists the trip counts of every such loop to the top of im2col_s8,
 * some 70 instructions a column. */
static __attribute__((noinline)) void copy_s8(int8_t *dst, const int8_t *src, int32_t n)
{
    for (; n > 16; n -= 16, dst += 16, src += 16) {
        vstrbq_s8(dst, vldrbq_s8(src));
    }
    const mve_pred16_t p = vctp8q((uint32_t)n);
    vstrbq_p_s8(dst, vldrbq_z_s8(src, p), p);
}

/* dst[0..n) = v */
static __attribute__((noinline)) void fill_s8(int8_t *dst, int8x16_t v, int32_t n)
{
    for (; n > 16; n -= 16, dst += 16) {
        vstrbq_s8(dst, v);
    }
    vstrbq_p_s8(dst, v, vctp8q((uint32_t)n));
}

/* sums[r] = bias[r] + off * sum(w_r) (modulo 2^32) for the rows of a filter (stride size),
 * four rows a pass: under tiling (a call per output row) this runs on every call, and one row
 * a pass cost as much as the pixels of a call's pointwise conv. */
static void row_sums(const int8_t *w, int32_t size, int32_t rows, int32_t off,
                     const int32_t *bias, int32_t *sums)
{
    const mve_pred16_t p = vctp8q((uint32_t)(size & 15));
    int32_t r = 0;
    for (; !MVE_LEAN && r + 4 <= rows; r += 4) { /* (-Os: one row at a time, below) */
        const int8_t *w0 = w + r * size, *w1 = w0 + size, *w2 = w1 + size, *w3 = w2 + size;
        int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        for (int32_t n = size >> 4; n > 0; --n, w0 += 16, w1 += 16, w2 += 16, w3 += 16) {
            a0 = vaddvaq_s8(a0, vldrbq_s8(w0));
            a1 = vaddvaq_s8(a1, vldrbq_s8(w1));
            a2 = vaddvaq_s8(a2, vldrbq_s8(w2));
            a3 = vaddvaq_s8(a3, vldrbq_s8(w3));
        }
        if ((size & 15) != 0) {
            a0 = vaddvaq_s8(a0, vldrbq_z_s8(w0, p));
            a1 = vaddvaq_s8(a1, vldrbq_z_s8(w1, p));
            a2 = vaddvaq_s8(a2, vldrbq_z_s8(w2, p));
            a3 = vaddvaq_s8(a3, vldrbq_z_s8(w3, p));
        }
        int32x4_t v = vdupq_n_s32(a0);
        v = vsetq_lane_s32(a1, v, 1);
        v = vsetq_lane_s32(a2, v, 2);
        v = vsetq_lane_s32(a3, v, 3);
        v = vmulq_n_s32(v, off); /* wraps, as the portable C's sums */
        vst1q_s32(sums + r, bias != NULL ? vaddq_s32(v, vld1q_s32(bias + r)) : v);
    }
    for (; r < rows; ++r) {
        const uint32_t s = (uint32_t)off * (uint32_t)sum_s8(w + r * size, size);
        sums[r] = (int32_t)(s + (bias != NULL ? (uint32_t)bias[r] : 0u));
    }
}

/* One im2col column of int8 (the input zero point in the padding, so that x + off is 0). The
 * taps inside the input horizontally, [kx0, kx1), are the same for every row. */
static void im2col_s8(int8_t *col, const window *win, const mcugen_dims *in,
                      const mcugen_dims *filter, const mcugen_tile *dilation, int32_t offset)
{
    const int32_t depth = filter->c, kw = filter->w, dh = dilation->h, dw = dilation->w;
    const int32_t in_h = in->h, in_w = in->w, row_bytes = kw * depth, x0 = win->x0;
    const int8x16_t pad = vdupq_n_s8((int8_t)(-offset));
    int32_t kx0, kx1;
    tap_range(x0, dw, kw, in_w, &kx0, &kx1);
    const int32_t left = kx0 * depth, right = (kw - kx1) * depth;
    const int32_t inside = row_bytes - left - right;
    int8_t *dst = col;
    for (int32_t ky = 0, y = win->y0; ky < filter->h; ++ky, y += dh, dst += row_bytes) {
        if (y < 0 || y >= in_h || inside == 0) {
            fill_s8(dst, pad, row_bytes);
            continue;
        }
        const int8_t *src = win->image + (y * in_w + x0 + kx0 * dw) * depth;
        if (left > 0) {
            fill_s8(dst, pad, left);
        }
        if (dw == 1) { /* the taps inside are contiguous */
            copy_s8(dst + left, src, inside);
        } else {
            for (int32_t kx = kx0; kx < kx1; ++kx, src += dw * depth) {
                copy_s8(dst + kx * depth, src, depth);
            }
        }
        if (right > 0) {
            fill_s8(dst + row_bytes - right, pad, right);
        }
    }
}

#if !MVE_LEAN
/* A small window (at most 64 bytes) whose taps all lie within 256 bytes of its first in the
 * input (KWS's 10x4 first layer over one channel: 94 bytes) is gathered, sixteen taps a VLDRB,
 * instead of copied row by row: im2col_s8 costs about 650 instructions for such a column, a
 * call per window row. For each tap k of the column: its byte offset from the window's
 * first tap, and its row and column in the window (dilated) to mask the taps outside the
 * input, which take the padding value. */
#define GATHER_MAX_VECTORS 4

typedef struct {
    int32_t vectors; /* 0: the window does not qualify */
    uint8_t offset[16 * GATHER_MAX_VECTORS];
    int8_t row[16 * GATHER_MAX_VECTORS], col[16 * GATHER_MAX_VECTORS];
} gather_plan;

static void gather_plan_make(gather_plan *g, const mcugen_dims *in, const mcugen_dims *filter,
                             const mcugen_tile *dilation)
{
    const int32_t kh = filter->h, kw = filter->w, c = filter->c, size = kh * kw * c;
    const int32_t rows = (kh - 1) * dilation->h, cols = (kw - 1) * dilation->w;
    g->vectors = 0;
    if (size > 16 * GATHER_MAX_VECTORS || rows > 126 || cols > 126 ||
        (rows * in->w + cols) * c + c - 1 > 255) {
        return;
    }
    g->vectors = (size + 15) / 16;
    for (int32_t k = 0; k < 16 * g->vectors; ++k) {
        const int32_t r = k / (kw * c), j = (k / c) % kw, ch = k % c;
        const int inside = k < size; /* the lanes past the column: never loaded */
        g->offset[k] = (uint8_t)(inside ? (r * dilation->h * in->w + j * dilation->w) * c + ch : 0);
        g->row[k] = (int8_t)(inside ? r * dilation->h : 127);
        g->col[k] = (int8_t)(inside ? j * dilation->w : 0);
    }
}

/* -128 .. 127 */
static inline int32_t clamp_s8(int32_t v)
{
    return v < -128 ? -128 : v > 127 ? 127 : v;
}

/* One column by gathers (g->vectors > 0); the last vector's store stops at the column's end,
 * as the scratch does. */
static void gather_col(int8_t *col, const gather_plan *g, const window *win,
                       const mcugen_dims *in, int32_t size, int32_t offset)
{
    const int8x16_t pad = vdupq_n_s8((int8_t)(-offset));
    /* (the window's first tap may lie before the image, padding: an address only, computed
     * as an integer, no lane outside the input is loaded) */
    const int8_t *base = (const int8_t *)((uintptr_t)win->image +
                                          (uintptr_t)((win->y0 * in->w + win->x0) * in->c));
    /* a tap is inside when -y0 <= row < h - y0 and -x0 <= col < w - x0 (row <= 126: the
     * clamped bounds decide the same) */
    const int8_t row_lo = (int8_t)clamp_s8(-win->y0), row_hi = (int8_t)clamp_s8(in->h - win->y0);
    const int8_t col_lo = (int8_t)clamp_s8(-win->x0), col_hi = (int8_t)clamp_s8(in->w - win->x0);
    for (int32_t v = 0; v < g->vectors; ++v, col += 16, size -= 16) {
        mve_pred16_t p = vcmpgeq_n_s8(vldrbq_s8(g->row + 16 * v), row_lo);
        p = vcmpltq_m_n_s8(vldrbq_s8(g->row + 16 * v), row_hi, p);
        p = vcmpgeq_m_n_s8(vldrbq_s8(g->col + 16 * v), col_lo, p);
        p = vcmpltq_m_n_s8(vldrbq_s8(g->col + 16 * v), col_hi, p);
        const int8x16_t x = vldrbq_gather_offset_z_s8(base, vldrbq_u8(g->offset + 16 * v), p);
        vstrbq_p_s8(col, vpselq_s8(x, pad, p), vctp8q((uint32_t)size));
    }
}
#endif

#if !MVE_LEAN
/* Every pixel of a conv whose small windows (at most 48 bytes) are all gathered (KWS's 10x4
 * first layer, padded on every side), in pairs: the windows step along the output rows
 * instead of coming from the pixel index, so that a pair pays neither pixel_window's
 * divisions nor the general loop's bounds tests and reloaded state (~200 instructions). */
static void next_window(window *win, int32_t *ox, const mcugen_conv_fast_params *params,
                        const mcugen_dims *in, const mcugen_dims *out)
{
    win->x0 += params->stride.w;
    if (++*ox < out->w) {
        return;
    }
    *ox = 0;
    win->x0 = -params->padding.w;
    win->y0 += params->stride.h;
    if (win->y0 + params->padding.h < out->h * params->stride.h) {
        return;
    }
    win->y0 = -params->padding.h; /* the next batch element */
    win->image += in->h * in->w * in->c;
}

static __attribute__((noinline)) void gather_pairs(const gather_plan *g,
                                                   const mcugen_conv_fast_params *params,
                                                   const mcugen_dims *in, const mcugen_dims *out,
                                                   const int8_t *input, const int8_t *filter,
                                                   int32_t size, const int32_t *sums,
                                                   int32_t *accs, int8_t *col0, int8_t *col1,
                                                   const mcugen_per_channel_quant_params *quant,
                                                   const out_consts *k, int8_t *output)
{
    const int32_t out_c = out->c, off = params->input_offset;
    window win = {input, -params->padding.h, -params->padding.w};
    int32_t ox = 0;
    int32_t pixels = out->n * out->h * out->w;
    const int32_t *mult = quant->multiplier, *shift = quant->shift;
    /* every shift negative: its own requantization of the full blocks of four channels */
    const int32_t fast = !k->left && all_shifts_negative(shift, out_c) ? out_c & ~3 : 0;
    for (; pixels >= 2; pixels -= 2, output += 2 * out_c) {
        gather_col(col0, g, &win, in, size, off);
        next_window(&win, &ox, params, in, out);
        gather_col(col1, g, &win, in, size, off);
        next_window(&win, &ox, params, in, out);
        if (size == 40 && out_c > 0) {
            rows_40x2(filter, col0, col1, out_c, sums, accs);
        } else {
            rows_small(filter, col0, col1, size, out_c, sums, accs);
        }
        if (fast > 0) {
            requant_pair_right(output, output + out_c, accs, mult, shift, fast / 4, k, 1);
        }
        requant_store_pair(output + fast, output + out_c + fast, accs + 2 * fast, mult + fast,
                           shift + fast, out_c - fast, k);
    }
    if (pixels == 1) {
        gather_col(col0, g, &win, in, size, off);
        rows_4x1(filter, col0, size, out_c, sums, accs);
        requant_store_pair(output, NULL, accs, quant->multiplier, quant->shift, out_c, k);
    }
}
#endif

#if !MVE_LEAN
/* The first three of contiguous pixels (rows_2x3), requantized: out[0 .. 3 out_c). acc2 holds
 * the third pixel's accumulators. */
static __attribute__((noinline)) void three_pixels(int8_t *out, const int8_t *x, const int8_t *w,
                                                   int32_t size, int32_t out_c,
                                                   const int32_t *sums, int32_t *acc,
                                                   int32_t *acc2,
                                                   const mcugen_per_channel_quant_params *quant,
                                                   const out_consts *k)
{
    rows_2x3(w, x, size, out_c, sums, acc, acc2);
    requant_store_pair(out, out + out_c, acc, quant->multiplier, quant->shift, out_c, k);
    requant_store_one(out + 2 * out_c, acc2, quant->multiplier, quant->shift, out_c, k);
}
#endif

#if !MVE_LEAN
/* A run of pixel pairs along an output row whose windows all lie inside the input (or a direct
 * 1x1 conv's pixels): what every pair of it shares, set once per call. Per pair, the general
 * loop below costs about 200 instructions besides the dot products and the requantization
 * (the pixel's window from its index by divisions, four bounds checks a window, the state of
 * a large function reloaded from the stack); a run costs a few. */
typedef struct {
    int32_t ok;          /* the call's windows qualify (pair_run_make) */
    int32_t step;        /* bytes from a pixel's window to the next one's */
    int32_t ox_lo, ox_hi; /* the output columns whose windows are inside horizontally */
    int32_t copy_seg;    /* > 0: three rows of that many bytes copied into a column first, */
    int32_t copy_stride; /* copy_stride apart in the input */
    const segments *sg;  /* how the dot products read a window */
    int8_t *col0, *col1;
} pair_run;

static void pair_run_make(pair_run *r, const mcugen_conv_fast_params *params,
                          const mcugen_dims *in, const mcugen_dims *filter, int32_t out_c,
                          int direct, int in_place, int small_rows, const segments *whole,
                          const segments *rows, int8_t *col0, int8_t *col1)
{
    const int32_t size = filter->h * filter->w * filter->c;
    const int single_tap = filter->h == 1 && filter->w == 1;
    const int blocks = size > 48 && size % 16 == 0;
    r->sg = whole;
    r->copy_seg = 0;
    r->copy_stride = 0;
    r->col0 = col0;
    r->col1 = col1;
    if (direct || single_tap) {
        r->ok = out_c >= 3 && (size <= 48 || blocks);
    } else if (in_place && small_rows) {
        r->ok = out_c >= 3;
        r->copy_seg = rows->bytes;
        r->copy_stride = rows->stride;
    } else {
        r->ok = in_place && out_c >= 3 && rows->bytes >= 16 && rows->bytes % 16 == 0;
        r->sg = rows;
    }
    const int32_t sw = params->stride.w, pw = params->padding.w;
    const int32_t reach = in->w - 1 - (filter->w - 1) * params->dilation.w + pw;
    r->step = direct ? size : sw * in->c;
    r->ox_lo = r->ox_hi = 0;
    if (r->ok && !direct) { /* (direct: every pixel's window is inside) */
        r->ox_lo = (pw + sw - 1) / sw;
        r->ox_hi = reach < 0 ? -1 : reach / sw;
    }
}

/* How many pairs from pixel p on form a run (0: none), and where the first window starts. */
static int32_t pair_run_length(const pair_run *r, const mcugen_conv_fast_params *params,
                               const mcugen_dims *in, const mcugen_dims *filter,
                               const mcugen_dims *out, const int8_t *input, int32_t p,
                               int32_t pixels, int direct, const int8_t **x)
{
    if (direct) {
        *x = input + p * r->step;
        return (pixels - p) / 2;
    }
    const int32_t per_image = out->h * out->w, b = p / per_image, rest = p - b * per_image;
    const int32_t oy = rest / out->w, ox = rest - oy * out->w;
    const int32_t y0 = oy * params->stride.h - params->padding.h;
    const int32_t last = r->ox_hi < out->w - 1 ? r->ox_hi : out->w - 1;
    if (ox < r->ox_lo || y0 < 0 || y0 + (filter->h - 1) * params->dilation.h >= in->h ||
        ox + 1 > last) {
        return 0;
    }
    *x = input + ((b * in->h + y0) * in->w + ox * params->stride.w - params->padding.w) * in->c;
    return (last + 1 - ox) / 2;
}

/* `pairs` pairs of a run from its first window x on: the dot products and the requantized
 * outputs, from out on. */
static __attribute__((noinline)) void pair_run_do(const pair_run *r, const int8_t *x,
                                                  int32_t pairs, int8_t *out,
                                                  const int8_t *filter, int32_t size,
                                                  int32_t out_c, const int32_t *sums,
                                                  int32_t *accs,
                                                  const mcugen_per_channel_quant_params *quant,
                                                  const out_consts *k)
{
    const int32_t stride = r->copy_stride;
    for (; pairs > 0; --pairs, x += 2 * r->step, out += 2 * out_c) {
        const int8_t *x0 = x, *x1 = x + r->step;
        if (r->copy_seg > 0) {
            copy_rows3(r->col0, x0, r->copy_seg, stride);
            copy_rows3(r->col1, x1, r->copy_seg, stride);
            x0 = r->col0;
            x1 = r->col1;
        }
        if (size <= 48) {
            rows_small(filter, x0, x1, size, out_c, sums, accs);
        } else {
            rows_3x2_blocks(filter, x0, x1, size, out_c, sums, accs, r->sg);
        }
        requant_store_pair(out, out + out_c, accs, quant->multiplier, quant->shift, out_c, k);
    }
}
#endif

#if !MVE_LEAN
/* A 1x1 conv over 64 contiguous channels (KWS's pointwise layers), every shift <= 0: four
 * output channels by two pixels a pass, the eight dot products in the eight even registers
 * VMLADAVA takes (so no accumulator goes through memory), then moved two at a time into one
 * vector per pixel and requantized there (requantize_right_x4, the zero point, the clamp).
 * The C loops of requant_store_pair and rows_3x2 cost about 15 instructions an output; this
 * about 11. Word loads (VLDRW) reach the second pixel (+64) and the four filter rows (+64 ..
 * +192) by immediate offsets: x and w 4-byte aligned. job (copied to the stack on entry):
 * [0] x (pixel pairs contiguous), [1] w, [2] sums, [3] mult, [4] shift, [5] out, [6] out_c (a
 * multiple of 4), [7] pairs > 0, [8] mult + out_c, [9] zp, [10] min, [11] max. */
#define PW64_BLOCK(o0, o1, w0, w1, w2, w3)                                                     \
    "vldrw.u32 q0, [r3, #" o0 "]\n\t"                                                          \
    "vldrw.u32 q1, [r3, #" o1 "]\n\t"                                                          \
    "vldrw.u32 q2, " w0 "\n\t"                                                                 \
    "vmladava.s8 r0, q0, q2\n\t"                                                               \
    "vmladava.s8 r8, q1, q2\n\t"                                                               \
    "vldrw.u32 q2, " w1 "\n\t"                                                                 \
    "vmladava.s8 r2, q0, q2\n\t"                                                               \
    "vmladava.s8 r10, q1, q2\n\t"                                                              \
    "vldrw.u32 q2, " w2 "\n\t"                                                                 \
    "vmladava.s8 r4, q0, q2\n\t"                                                               \
    "vmladava.s8 r12, q1, q2\n\t"                                                              \
    "vldrw.u32 q2, " w3 "\n\t"                                                                 \
    "vmladava.s8 r6, q0, q2\n\t"                                                               \
    "vmladava.s8 lr, q1, q2\n\t"
/* The four filter rows' blocks of a pass: the first load steps w to the next four rows
 * (+256), the others reach back. */
#define PW64_W_B0 "[r1], #256", "[r1, #-192]", "[r1, #-128]", "[r1, #-64]"
#define PW64_W_B1 "[r1, #-240]", "[r1, #-176]", "[r1, #-112]", "[r1, #-48]"
#define PW64_W_B2 "[r1, #-224]", "[r1, #-160]", "[r1, #-96]", "[r1, #-32]"
#define PW64_W_B3 "[r1, #-208]", "[r1, #-144]", "[r1, #-80]", "[r1, #-16]"
#define PW64_BLOCK_(args) PW64_BLOCK args
/* The -1 for negative values before the rounding shift: acc & shift has acc's sign where the
 * shift is negative (some shift 0: ANY), or acc's sign itself (every shift negative: NEG). */
#define PW64_FIX_ANY(a)                                                                        \
    "vand    q7, " a ", q3\n\t"                                                               \
    "vshr.s32 q7, q7, #31\n\t"
#define PW64_FIX_NEG(a) "vshr.s32 q7, " a ", #31\n\t"
#define PW64_REQ(a, FIX)                                                                       \
    "vqrdmulh.s32 " a ", " a ", q2\n\t" FIX(a)                                                 \
    "vqadd.s32 " a ", " a ", q7\n\t"                                                           \
    "vrshl.s32 " a ", " a ", q3\n\t"                                                           \
    "vadd.i32 " a ", " a ", q4\n\t"                                                            \
    "vmax.s32 " a ", " a ", q5\n\t"                                                            \
    "vmin.s32 " a ", " a ", q6\n\t"

#define PW64_4X2_ASM(FIX) \
        "push    {r4-r11, lr}\n\t" \
        "vpush   {d8-d15}\n\t" \
        "ldm     r0, {r1-r12}\n\t" \
        "push    {r1-r12}\n\t" /* [sp, #4 i] = job[i] */ \
        "vdup.32 q4, r10\n\t" \
        "vdup.32 q5, r11\n\t" \
        "vdup.32 q6, r12\n\t" \
        "ldr     r3, [sp]\n\t" \
        "ldr     r5, [sp, #20]\n" \
        "1:\n\t" /* a pair of pixels */ \
        "ldr     r1, [sp, #4]\n\t" \
        "ldr     r11, [sp, #8]\n\t" \
        "ldr     r7, [sp, #12]\n\t" \
        "ldr     r9, [sp, #16]\n" \
        "2:\n\t" /* four output channels */ \
        "ldm     r11, {r0, r2, r4, r6}\n\t" /* the sums seed both pixels */ \
        "ldm     r11!, {r8, r10, r12, lr}\n\t" \
        PW64_BLOCK_(("0", "64", PW64_W_B0)) \
        PW64_BLOCK_(("16", "80", PW64_W_B1)) \
        PW64_BLOCK_(("32", "96", PW64_W_B2)) \
        PW64_BLOCK_(("48", "112", PW64_W_B3)) \
        /* (lane idx2 takes the first register: QEMU's reading of the encoding gas makes) */ \
        "vmov    q0[2], q0[0], r0, r4\n\t" \
        "vmov    q0[3], q0[1], r2, r6\n\t" \
        "vmov    q1[2], q1[0], r8, r12\n\t" \
        "vmov    q1[3], q1[1], r10, lr\n\t" \
        "vldrw.u32 q2, [r7], #16\n\t" \
        "vldrw.u32 q3, [r9], #16\n\t" \
        PW64_REQ("q0", FIX) \
        PW64_REQ("q1", FIX) \
        "ldr     r0, [sp, #24]\n\t" \
        "add     r2, r5, r0\n\t" \
        "vstrb.32 q0, [r5], #4\n\t" \
        "vstrb.32 q1, [r2]\n\t" \
        "ldr     r0, [sp, #32]\n\t" \
        "cmp     r7, r0\n\t" \
        "bne     2b\n\t" \
        "ldr     r0, [sp, #24]\n\t" /* the next pair: past the second pixel's outputs */ \
        "add     r5, r5, r0\n\t" \
        "adds    r3, r3, #128\n\t" \
        "ldr     r0, [sp, #28]\n\t" \
        "subs    r0, r0, #1\n\t" \
        "str     r0, [sp, #28]\n\t" \
        "bne     1b\n\t" \
        "add     sp, sp, #48\n\t" \
        "vpop    {d8-d15}\n\t" \
        "pop     {r4-r11, pc}"

__attribute__((naked, noinline)) static void pw64_4x2(const uint32_t *job __attribute__((unused)))
{
    __asm__(PW64_4X2_ASM(PW64_FIX_ANY));
}

/* pw64_4x2 when every shift is negative */
__attribute__((naked, noinline)) static void pw64_4x2_neg(const uint32_t *job __attribute__((unused)))
{
    __asm__(PW64_4X2_ASM(PW64_FIX_NEG));
}

/* pw64_4x2 for one pixel (a stripe's odd last one): four output channels a pass, one vector of
 * sums; job as pw64_4x2's ([7] unused). Per block 9 instructions for 4 products where a pair
 * costs 14 for 8: half again, not twice, a pixel's share of a pair. */
#define PW64_BLOCK1(o0, w0, w1, w2, w3)                                                        \
    "vldrw.u32 q0, [r3, #" o0 "]\n\t"                                                          \
    "vldrw.u32 q2, " w0 "\n\t"                                                                 \
    "vmladava.s8 r0, q0, q2\n\t"                                                               \
    "vldrw.u32 q2, " w1 "\n\t"                                                                 \
    "vmladava.s8 r2, q0, q2\n\t"                                                               \
    "vldrw.u32 q2, " w2 "\n\t"                                                                 \
    "vmladava.s8 r4, q0, q2\n\t"                                                               \
    "vldrw.u32 q2, " w3 "\n\t"                                                                 \
    "vmladava.s8 r6, q0, q2\n\t"
#define PW64_BLOCK1_(args) PW64_BLOCK1 args

#define PW64_4X1_ASM(FIX) \
        "push    {r4-r11, lr}\n\t" \
        "vpush   {d8-d15}\n\t" \
        "ldm     r0, {r1-r12}\n\t" \
        "push    {r1-r12}\n\t" /* [sp, #4 i] = job[i] */ \
        "vdup.32 q4, r10\n\t" \
        "vdup.32 q5, r11\n\t" \
        "vdup.32 q6, r12\n\t" \
        "ldr     r3, [sp]\n\t" \
        "ldr     r5, [sp, #20]\n\t" \
        "ldr     r1, [sp, #4]\n\t" \
        "ldr     r11, [sp, #8]\n\t" \
        "ldr     r7, [sp, #12]\n\t" \
        "ldr     r9, [sp, #16]\n\t" \
        "ldr     r8, [sp, #32]\n" \
        "2:\n\t" /* four output channels */ \
        "ldm     r11!, {r0, r2, r4, r6}\n\t" \
        PW64_BLOCK1_(("0", PW64_W_B0)) \
        PW64_BLOCK1_(("16", PW64_W_B1)) \
        PW64_BLOCK1_(("32", PW64_W_B2)) \
        PW64_BLOCK1_(("48", PW64_W_B3)) \
        "vmov    q0[2], q0[0], r0, r4\n\t" \
        "vmov    q0[3], q0[1], r2, r6\n\t" \
        "vldrw.u32 q2, [r7], #16\n\t" \
        "vldrw.u32 q3, [r9], #16\n\t" \
        PW64_REQ("q0", FIX) \
        "vstrb.32 q0, [r5], #4\n\t" \
        "cmp     r7, r8\n\t" \
        "bne     2b\n\t" \
        "add     sp, sp, #48\n\t" \
        "vpop    {d8-d15}\n\t" \
        "pop     {r4-r11, pc}"

__attribute__((naked, noinline)) static void pw64_4x1(const uint32_t *job __attribute__((unused)))
{
    __asm__(PW64_4X1_ASM(PW64_FIX_ANY));
}

__attribute__((naked, noinline)) static void pw64_4x1_neg(const uint32_t *job __attribute__((unused)))
{
    __asm__(PW64_4X1_ASM(PW64_FIX_NEG));
}
#undef PW64_BLOCK1
#undef PW64_BLOCK1_
#undef PW64_BLOCK_
#undef PW64_W_B0
#undef PW64_W_B1
#undef PW64_W_B2
#undef PW64_W_B3
#undef PW64_4X1_ASM
#undef PW64_4X2_ASM
#undef PW64_FIX_ANY
#undef PW64_FIX_NEG
#undef PW64_BLOCK
#undef PW64_REQ

/* The largest shift[0 .. n), n a multiple of 4: whole vectors, one VMAXV. */
static inline int32_t most_shift(const int32_t *shift, int32_t n)
{
    int32x4_t most = vdupq_n_s32(INT32_MIN);
    for (int32_t c = 0; c < n; c += 4) {
        most = vmaxq_s32(most, vldrwq_s32(shift + c));
    }
    return vmaxvq_s32(INT32_MIN, most);
}

/* The 1x1 convs pw64_4x2 takes: 64 input channels read in place (stride 1, no padding), out_c
 * a multiple of 4, x and w word aligned, no shift > 0; pixels in pairs, an odd last pixel
 * alone (pw64_4x1). */
static int pw64_run(int32_t zp, mcugen_activation act,
                    const mcugen_per_channel_quant_params *quant, const int8_t *x,
                    const int8_t *w, const int32_t *sums, int32_t pixels, int32_t out_c,
                    int8_t *out)
{
    if (out_c % 4 != 0 || (((uintptr_t)x | (uintptr_t)w) & 3u) != 0) {
        return 0;
    }
    const int32_t most = most_shift(quant->shift, out_c);
    if (most > 0) {
        return 0;
    }
    uint32_t job[12];
    job[0] = (uint32_t)(uintptr_t)x;
    job[1] = (uint32_t)(uintptr_t)w;
    job[2] = (uint32_t)(uintptr_t)sums;
    job[3] = (uint32_t)(uintptr_t)quant->multiplier;
    job[4] = (uint32_t)(uintptr_t)quant->shift;
    job[5] = (uint32_t)(uintptr_t)out;
    job[6] = (uint32_t)out_c;
    job[7] = (uint32_t)(pixels / 2);
    job[8] = (uint32_t)(uintptr_t)(quant->multiplier + out_c);
    job[9] = (uint32_t)zp;
    job[10] = (uint32_t)act.min;
    job[11] = (uint32_t)act.max;
    if (pixels >= 2) {
        (most < 0 ? pw64_4x2_neg : pw64_4x2)(job);
    }
    if (pixels % 2 == 1) { /* the last pixel */
        job[0] = (uint32_t)(uintptr_t)(x + (pixels - 1) * 64);
        job[5] = (uint32_t)(uintptr_t)(out + (pixels - 1) * out_c);
        (most < 0 ? pw64_4x1_neg : pw64_4x1)(job);
    }
    return 1;
}
#endif

#if !MVE_LEAN
/* Whole output rows of a conv with 3x3 windows over 16, 32 or 64 channels (ResNet's layers),
 * stride 1 or 2, padding included: a group of np neighbouring pixels (np = 4 at stride 1, 3 at
 * stride 2) shares the input columns of a window row, so a pass over one window row and one
 * 16-channel block holds the nx = stride * (np - 1) + 3 input columns in Q registers (a column
 * outside the input: the padding value, -input_offset, so that x + off is 0 as im2col makes
 * it) and streams the filter past them, one output channel an iteration: three weight loads
 * feed 3 * np VMLADAVA (18 instructions for 12 products at stride 1, 15 for 9 at stride 2,
 * against 11 for 6 in rows_3x2, and no im2col for the border pixels). The accumulators live
 * in the scratch as acc[4 c + p] between passes (LDM/STM, one each per channel); the first
 * pass starts them from 0 (VMLADAV) and the requantization adds the kernel sums. The last
 * group of a row overlaps the one before when np does not divide the row (its pixels are
 * computed twice, the same values). */
#define WIN3_STR_(x) #x
#define WIN3_STR(x) WIN3_STR_(x)

/* the group's input columns, X_j = row + j * depth (the padding where bit j of `inside` is
 * clear; row is then only an address, never read) */
#define WIN3_X(j) (((inside >> (j)) & 1u) ? vldrbq_s8(row + (j) * depth) : pad)
#define WIN3_XIN(j) vldrbq_s8(row + (j) * depth)

/* One channel's iteration at stride 1: taps 1 and 2 at the weights' immediate offsets, tap 0
 * last, then the pointer steps to the next channel (LAST). The first pass of a group (START:
 * no LDM, MAC1 = VMLADAV) starts the sums from 0; win3_requant adds the kernel sums. */
#define WIN3_BODY4(START, MAC1, OFF1, OFF2, LAST)                                              \
    "dls     lr, lr\n"                                                                         \
    "1:\n\t" START                                                                             \
    "vldrw.u32 %q[v], [%[w], #" OFF1 "]\n\t"                                                   \
    MAC1 " r0, %q[x1], %q[v]\n\t"                                                              \
    MAC1 " r2, %q[x2], %q[v]\n\t"                                                              \
    MAC1 " r4, %q[x3], %q[v]\n\t"                                                              \
    MAC1 " r6, %q[x4], %q[v]\n\t"                                                              \
    "vldrw.u32 %q[v], [%[w], #" OFF2 "]\n\t"                                                   \
    "vmladava.s8 r0, %q[x2], %q[v]\n\t"                                                        \
    "vmladava.s8 r2, %q[x3], %q[v]\n\t"                                                        \
    "vmladava.s8 r4, %q[x4], %q[v]\n\t"                                                        \
    "vmladava.s8 r6, %q[x5], %q[v]\n\t" LAST                                                   \
    "vmladava.s8 r0, %q[x0], %q[v]\n\t"                                                        \
    "vmladava.s8 r2, %q[x1], %q[v]\n\t"                                                        \
    "vmladava.s8 r4, %q[x2], %q[v]\n\t"                                                        \
    "vmladava.s8 r6, %q[x3], %q[v]\n\t"                                                        \
    "stm     %[a]!, {r0, r2, r4, r6}\n\t"                                                      \
    "le      lr, 1b"
/* at stride 2: pixel p's tap k reads X_(2 p + k); acc[4 c + 3] is loaded and stored unchanged */
#define WIN3_BODY3(START, MAC1, OFF1, OFF2, LAST)                                              \
    "dls     lr, lr\n"                                                                         \
    "1:\n\t" START                                                                             \
    "vldrw.u32 %q[v], [%[w], #" OFF1 "]\n\t"                                                   \
    MAC1 " r0, %q[x1], %q[v]\n\t"                                                              \
    MAC1 " r2, %q[x3], %q[v]\n\t"                                                              \
    MAC1 " r4, %q[x5], %q[v]\n\t"                                                              \
    "vldrw.u32 %q[v], [%[w], #" OFF2 "]\n\t"                                                   \
    "vmladava.s8 r0, %q[x2], %q[v]\n\t"                                                        \
    "vmladava.s8 r2, %q[x4], %q[v]\n\t"                                                        \
    "vmladava.s8 r4, %q[x6], %q[v]\n\t" LAST                                                   \
    "vmladava.s8 r0, %q[x0], %q[v]\n\t"                                                        \
    "vmladava.s8 r2, %q[x2], %q[v]\n\t"                                                        \
    "vmladava.s8 r4, %q[x4], %q[v]\n\t"                                                        \
    "stm     %[a]!, {r0, r2, r4, r6}\n\t"                                                      \
    "le      lr, 1b"
#define WIN3_LDM "ldm     %[a], {r0, r2, r4, r6}\n\t"
/* tap 0's weights, then the next channel's (9 * depth bytes on: VLDRW's post-increment reaches
 * 508) */
#define WIN3_LAST_INC(depth) "vldrw.u32 %q[v], [%[w]], #" WIN3_STR(depth) "\n\t"
#define WIN3_LAST_ADD(depth)                                                                   \
    "vldrw.u32 %q[v], [%[w]]\n\t"                                                              \
    "add     %[w], %[w], #" WIN3_STR(depth) "\n\t"
#define WIN3_ASM4(BODY)                                                                        \
    __asm__ __volatile__(BODY                                                                  \
                         : [v] "=&w"(v), [w] "+r"(w), [a] "+r"(acc), "+r"(count)               \
                         : [x0] "w"(x0), [x1] "w"(x1), [x2] "w"(x2), [x3] "w"(x3),             \
                           [x4] "w"(x4), [x5] "w"(x5)                                          \
                         : "r0", "r2", "r4", "r6", "memory")
#define WIN3_ASM3(BODY)                                                                        \
    __asm__ __volatile__(BODY                                                                  \
                         : [v] "=&w"(v), [w] "+r"(w), [a] "+r"(acc), "+r"(count)               \
                         : [x0] "w"(x0), [x1] "w"(x1), [x2] "w"(x2), [x3] "w"(x3),             \
                           [x4] "w"(x4), [x5] "w"(x5), [x6] "w"(x6)                            \
                         : "r0", "r2", "r4", "r6", "memory")

/* A pass: the columns (all inside: unconditional loads), then the channels, first or not. */
#define WIN3_PASS4(name, depth_, OFF1, OFF2, LAST)                                             \
    static __attribute__((noinline)) void name(const int8_t *row, uint32_t inside,           \
                                               int8x16_t pad, const int8_t *w, int32_t n,     \
                                               int32_t *acc, int first)                       \
    {                                                                                          \
        const int32_t depth = depth_;                                                          \
        int8x16_t x0, x1, x2, x3, x4, x5, v;                                                   \
        if (inside == 0x3Fu) {                                                                 \
            x0 = WIN3_XIN(0), x1 = WIN3_XIN(1), x2 = WIN3_XIN(2), x3 = WIN3_XIN(3);           \
            x4 = WIN3_XIN(4), x5 = WIN3_XIN(5);                                                \
        } else {                                                                               \
            x0 = WIN3_X(0), x1 = WIN3_X(1), x2 = WIN3_X(2), x3 = WIN3_X(3);                   \
            x4 = WIN3_X(4), x5 = WIN3_X(5);                                                    \
        }                                                                                      \
        register int32_t count __asm__("lr") = n; /* the loop counter of DLS/LE */            \
        if (first) {                                                                           \
            WIN3_ASM4(WIN3_BODY4("", "vmladav.s8", OFF1, OFF2, LAST));                         \
        } else {                                                                               \
            WIN3_ASM4(WIN3_BODY4(WIN3_LDM, "vmladava.s8", OFF1, OFF2, LAST));                  \
        }                                                                                      \
    }
#define WIN3_PASS3(name, depth_, OFF1, OFF2, LAST)                                             \
    static __attribute__((noinline)) void name(const int8_t *row, uint32_t inside,           \
                                               int8x16_t pad, const int8_t *w, int32_t n,     \
                                               int32_t *acc, int first)                       \
    {                                                                                          \
        const int32_t depth = depth_;                                                          \
        int8x16_t x0, x1, x2, x3, x4, x5, x6, v;                                               \
        if (inside == 0x7Fu) {                                                                 \
            x0 = WIN3_XIN(0), x1 = WIN3_XIN(1), x2 = WIN3_XIN(2), x3 = WIN3_XIN(3);           \
            x4 = WIN3_XIN(4), x5 = WIN3_XIN(5), x6 = WIN3_XIN(6);                              \
        } else {                                                                               \
            x0 = WIN3_X(0), x1 = WIN3_X(1), x2 = WIN3_X(2), x3 = WIN3_X(3);                   \
            x4 = WIN3_X(4), x5 = WIN3_X(5), x6 = WIN3_X(6);                                    \
        }                                                                                      \
        register int32_t count __asm__("lr") = n;                                              \
        if (first) {                                                                           \
            WIN3_ASM3(WIN3_BODY3("", "vmladav.s8", OFF1, OFF2, LAST));                         \
        } else {                                                                               \
            WIN3_ASM3(WIN3_BODY3(WIN3_LDM, "vmladava.s8", OFF1, OFF2, LAST));                  \
        }                                                                                      \
    }

WIN3_PASS4(win3_pass4_c16, 16, "16", "32", WIN3_LAST_INC(144))
WIN3_PASS4(win3_pass4_c32, 32, "32", "64", WIN3_LAST_INC(288))
WIN3_PASS4(win3_pass4_c64, 64, "64", "128", WIN3_LAST_ADD(576))
WIN3_PASS3(win3_pass3_c16, 16, "16", "32", WIN3_LAST_INC(144))
WIN3_PASS3(win3_pass3_c32, 32, "32", "64", WIN3_LAST_INC(288))
WIN3_PASS3(win3_pass3_c64, 64, "64", "128", WIN3_LAST_ADD(576))

#undef WIN3_PASS4
#undef WIN3_PASS3
#undef WIN3_ASM4
#undef WIN3_ASM3
#undef WIN3_BODY4
#undef WIN3_BODY3
#undef WIN3_LDM
#undef WIN3_LAST_INC
#undef WIN3_LAST_ADD
#undef WIN3_X
#undef WIN3_XIN

/* win3_requant's full blocks of four channels when no shift is positive, in assembly (as
 * requant_pair_right: compiled from C, the constants were reloaded from the stack for every
 * vector): per block and pixel, the accumulators gathered by an address vector that steps
 * itself on (acc[4 c + p], acc[4 c + 4 + p], ...), the kernel sums added, requantized
 * (requantize_right_x4), the zero point added as a scalar, clamped, stored. PIX(p) is one
 * pixel; OUT(p) its output pointer. */
#define WIN3_RQ_PIX(load, out)                                                                 \
    "vldrw.u32 %q[t], [%q[at], #" load "\n\t"                                                  \
    "vadd.i32 %q[t], %q[t], %q[u]\n\t"                                                         \
    "vqrdmulh.s32 %q[t], %q[t], %q[m]\n\t"                                                     \
    "vand    %q[f], %q[t], %q[s]\n\t"                                                          \
    "vshr.s32 %q[f], %q[f], #31\n\t"                                                           \
    "vqadd.s32 %q[t], %q[t], %q[f]\n\t"                                                        \
    "vrshl.s32 %q[t], %q[t], %q[s]\n\t"                                                        \
    "vadd.i32 %q[t], %q[t], %[zp]\n\t"                                                         \
    "vmax.s32 %q[t], %q[t], %q[lo]\n\t"                                                        \
    "vmin.s32 %q[t], %q[t], %q[hi]\n\t"                                                        \
    "vstrb.32 %q[t], [%[" out "]], #4\n\t"
#define WIN3_RQ_HEAD                                                                           \
    "dls     lr, lr\n"                                                                         \
    "1:\n\t"                                                                                   \
    "vldrw.32 %q[m], [%[mult]], #16\n\t"                                                       \
    "vldrw.32 %q[s], [%[shift]], #16\n\t"                                                      \
    "vldrw.32 %q[u], [%[sums]], #16\n\t" WIN3_RQ_PIX("64]!", "o0") WIN3_RQ_PIX("4]", "o1")     \
        WIN3_RQ_PIX("8]", "o2")
#define WIN3_RQ_OPERANDS                                                                       \
    : [t] "=&w"(t), [f] "=&w"(f), [m] "=&w"(m), [s] "=&w"(s), [u] "=&w"(u), [at] "+w"(at),   \
      [o0] "+l"(o0), [o1] "+l"(o1), [o2] "+l"(o2), [o3] "+l"(o3), [mult] "+r"(mult),          \
      [shift] "+r"(shift), [sums] "+r"(sums), "+r"(count)                                     \
    : [zp] "r"(vgetq_lane_s32(k->zp, 0)), [lo] "w"(k->min), [hi] "w"(k->max)                  \
    : "memory"
static void win3_requant_right(int8_t *out, int32_t np, const int32_t *acc,
                               const int32_t *sums, const int32_t *mult, const int32_t *shift,
                               int32_t n, const out_consts *k)
{
    int32x4_t at = vaddq_n_s32(vreinterpretq_s32_u32(vshlq_n_u32(vidupq_n_u32(0, 1), 4)),
                               (int32_t)(uintptr_t)acc - 64); /* acc + 16 lane - 64 bytes */
    int32x4_t t, f, m, s, u;
    int8_t *o0 = out, *o1 = o0 + n, *o2 = o1 + n, *o3 = o2 + n;
    register int32_t count __asm__("lr") = n / 4; /* the loop counter of DLS/LE */
    if (np == 4) {
        __asm__ __volatile__(WIN3_RQ_HEAD WIN3_RQ_PIX("12]", "o3") "le      lr, 1b"
                             WIN3_RQ_OPERANDS);
    } else {
        __asm__ __volatile__(WIN3_RQ_HEAD "le      lr, 1b" WIN3_RQ_OPERANDS);
    }
}
#undef WIN3_RQ_PIX
#undef WIN3_RQ_HEAD
#undef WIN3_RQ_OPERANDS
#undef WIN3_STR
#undef WIN3_STR_

typedef void (*win3_pass_fn)(const int8_t *row, uint32_t inside, int8x16_t pad,
                             const int8_t *w, int32_t n, int32_t *acc, int first);

/* The pass for this depth and stride (3x3 windows: a channel's weights are 9 * depth bytes),
 * NULL when the conv does not qualify (or the scratch
 * cannot hold acc[4 c + p] after the sums: 16 out_c bytes where the two pixels' accumulators
 * and the columns are). */
static win3_pass_fn win3_pass(const mcugen_conv_fast_params *params, const mcugen_dims *in,
                              const mcugen_dims *filter, const mcugen_dims *out,
                              const int8_t *weights)
{
    const int32_t depth = filter->c, sw = params->stride.w;
    const int32_t np = sw == 1 ? 4 : 3;
    if (filter->h != 3 || filter->w != 3 || params->dilation.w != 1 || (sw != 1 && sw != 2) ||
        out->w < np || in->c != depth || ((uintptr_t)weights & 3u) != 0 ||
        8 * out->c > 2 * round_up4(filter->h * filter->w * depth)) {
        return NULL;
    }
    switch (depth) {
    case 16: return sw == 1 ? win3_pass4_c16 : win3_pass3_c16;
    case 32: return sw == 1 ? win3_pass4_c32 : win3_pass3_c32;
    case 64: return sw == 1 ? win3_pass4_c64 : win3_pass3_c64;
    default: return NULL;
    }
}

/* out[p * n + c] = requantized, clamped sums[c] + acc[4 c + p] (modulo 2^32), p < np, c < n:
 * four channels a vector, gathered from the group's accumulators. */
static void win3_requant(int8_t *out, int32_t np, const int32_t *acc, const int32_t *sums,
                         const int32_t *mult, const int32_t *shift, int32_t n,
                         const out_consts *k)
{
    if (!k->left && n % 4 == 0) {
        win3_requant_right(out, np, acc, sums, mult, shift, n, k);
        return;
    }
    const uint32x4_t channels = vidupq_n_u32(0, 4); /* acc[4 c], acc[4 c + 4], ... */
    for (int32_t c = 0; c < n; c += 4, acc += 16) {
        const mve_pred16_t lanes = vctp32q((uint32_t)(n - c));
        const int32x4_t m = vldrwq_z_s32(mult + c, lanes), s = vldrwq_z_s32(shift + c, lanes);
        const int32x4_t u = vldrwq_z_s32(sums + c, lanes);
        for (int32_t p = 0; p < np; ++p) {
            const int32x4_t a = vldrwq_gather_shifted_offset_z_s32(acc + p, channels, lanes);
            vstrbq_p_s32(out + p * n + c, requant_clamp(vaddq_s32(a, u), m, s, k), lanes);
        }
    }
}

/* The whole conv by groups of np pixels along each output row (win3_pass qualified it). */
static void win3_conv(win3_pass_fn pass, const mcugen_conv_fast_params *params,
                      const mcugen_per_channel_quant_params *quant, const mcugen_dims *in,
                      const int8_t *input, const mcugen_dims *filter, const int8_t *weights,
                      const int32_t *sums, const mcugen_dims *out, int8_t *output,
                      int32_t *acc, const out_consts *k)
{
    const int32_t depth = in->c, n = out->c, sw = params->stride.w, np = sw == 1 ? 4 : 3;
    const int32_t nx = sw * (np - 1) + 3, blocks = depth / 16;
    const int8x16_t pad = vdupq_n_s8((int8_t)(-params->input_offset));
    for (int32_t b = 0; b < out->n; ++b) {
        for (int32_t oy = 0; oy < out->h; ++oy) {
            const int32_t y0 = oy * params->stride.h - params->padding.h;
            int8_t *out_row = output + (b * out->h + oy) * out->w * n;
            for (int32_t ox = 0; ox < out->w; ox += np) {
                const int32_t gx = ox + np <= out->w ? ox : out->w - np;
                const int32_t x0 = gx * sw - params->padding.w;
                uint32_t inside = 0; /* bit j: input column x0 + j lies in the input */
                for (int32_t j = 0; j < nx; ++j) {
                    inside |= (uint32_t)(x0 + j >= 0 && x0 + j < in->w) << j;
                }
                for (int32_t ky = 0; ky < filter->h; ++ky) {
                    const int32_t y = y0 + ky * params->dilation.h;
                    const uint32_t rows = y >= 0 && y < in->h ? inside : 0u;
                    /* (an address only where columns lie outside: computed as an integer) */
                    const uintptr_t row = (uintptr_t)input +
                                          (uintptr_t)(((b * in->h + y) * in->w + x0) * depth);
                    const int8_t *w = weights + ky * 3 * depth;
                    for (int32_t h = 0; h < blocks; ++h) {
                        pass((const int8_t *)(row + (uintptr_t)(16 * h)), rows, pad, w + 16 * h,
                             n, acc, ky == 0 && h == 0);
                    }
                }
                win3_requant(out_row + gx * n, np, acc, sums, quant->multiplier, quant->shift, n,
                             k);
            }
        }
    }
}
#endif

#if !MVE_LEAN
/* The conv by win3_conv when it qualifies (1), else 0: its own function, so that the other
 * convs' calls (a tiled chain's many stripes) pay one test of the window for it. The scratch
 * as mcugen_convolve_fast_s8's: the sums first, then the accumulators. */
static __attribute__((noinline)) int win3_try(const mcugen_context *ctx,
                                              const mcugen_conv_fast_params *params,
                                              const mcugen_per_channel_quant_params *quant,
                                              const mcugen_dims *in, const int8_t *input,
                                              const mcugen_dims *filter, const int8_t *weights,
                                              const int32_t *bias, const mcugen_dims *out,
                                              int8_t *output)
{
    const win3_pass_fn pass = win3_pass(params, in, filter, out, weights);
    if (pass == NULL || !scratch_ok(ctx, mcugen_convolve_fast_mve_s8_buffer_size(filter))) {
        return 0;
    }
    const int32_t n = out->c;
    int32_t *scratch_sums = (int32_t *)ctx->buf;
    const int32_t *sums = params->kernel_sums;
    if (sums == NULL) {
        row_sums(weights, 9 * filter->c, n, params->input_offset, bias, scratch_sums);
        sums = scratch_sums;
    }
    const out_consts k = make_out_consts(params->output_offset, params->activation, quant->shift, n);
    win3_conv(pass, params, quant, in, input, filter, weights, sums, out, output, scratch_sums + n,
              &k);
    return 1;
}
#endif

/* Every tap of the window inside the input (then its rows can be read in place). */
static inline int window_inside(const window *win, const mcugen_dims *in,
                                const mcugen_dims *filter, const mcugen_tile *dilation)
{
    return win->y0 >= 0 && win->y0 + (filter->h - 1) * dilation->h < in->h && win->x0 >= 0 &&
           win->x0 + (filter->w - 1) * dilation->w < in->w;
}

int mcugen_convolve_fast_s8(const mcugen_context *ctx, const mcugen_conv_fast_params *params,
                            const mcugen_per_channel_quant_params *quant,
                            const mcugen_dims *input_dims, const int8_t *input,
                            const mcugen_dims *filter_dims, const int8_t *filter,
                            const int32_t *bias, const mcugen_dims *output_dims, int8_t *output)
{
    const int32_t out_c = output_dims->c;
    const int32_t size = filter_dims->h * filter_dims->w * filter_dims->c;
#if !MVE_LEAN
    if (filter_dims->w == 3 && (filter_dims->c & 15) == 0 &&
        win3_try(ctx, params, quant, input_dims, input, filter_dims, filter, bias, output_dims,
                 output)) {
        return 1;
    }
#endif
    if (filter_dims->c != input_dims->c ||
        !scratch_ok(ctx, mcugen_convolve_fast_mve_s8_buffer_size(filter_dims))) {
        return 0;
    }
    /* scratch: out_c sums (bias + input_offset * sum(w)), 2 * out_c accumulators (two
     * pixels, side by side), two columns; the sums come from the build when it made them */
    int32_t *scratch_sums = (int32_t *)ctx->buf;
    int32_t *accs = scratch_sums + out_c;
    int8_t *col0 = (int8_t *)(accs + 2 * out_c), *col1 = col0 + round_up4(size);
    const int32_t off = params->input_offset;
    const int32_t *sums = params->kernel_sums;
    if (sums == NULL) {
        row_sums(filter, size, out_c, off, bias, scratch_sums);
        sums = scratch_sums;
    }
    /* a 1x1 window over an unpadded, stride-1 input is the input pixel itself */
    const int direct = filter_dims->h == 1 && filter_dims->w == 1 && params->stride.h == 1 &&
                       params->stride.w == 1 && params->padding.h == 0 &&
                       params->padding.w == 0 && input_dims->h == output_dims->h &&
                       input_dims->w == output_dims->w;
#if !MVE_LEAN
    if (direct && size == 64 &&
        pw64_run(params->output_offset, params->activation, quant, input, filter, sums,
                 output_dims->n * output_dims->h * output_dims->w, out_c, output)) {
        return 1;
    }
#endif
    const out_consts k =
        make_out_consts(params->output_offset, params->activation, quant->shift, out_c);
    int32_t pixels = output_dims->n * output_dims->h * output_dims->w;
    /* pairs of pixels whose windows lie inside the input are read in place, no im2col, when
     * the window rows are whole blocks of 16 (kw * depth % 16 == 0, deep windows: rows_3x2 over
     * the rows); three rows of at most 16 bytes (a 3x3 first layer's) are copied into a column
     * with three predicated copies, not the general im2col or the gather */
    const int32_t seg_bytes = filter_dims->w * filter_dims->c;
    const int small_rows = !MVE_LEAN && filter_dims->h == 3 && seg_bytes <= 16; /* copy_rows3 */
    const int in_place = !direct && params->dilation.w == 1 &&
                         ((size > 48 && seg_bytes % 16 == 0) || small_rows);
#if !MVE_LEAN
    gather_plan gather;
    gather.vectors = 0;
    if (!direct) {
        gather_plan_make(&gather, input_dims, filter_dims, &params->dilation);
    }
#endif
    const int single_tap = filter_dims->h == 1 && filter_dims->w == 1;
    const segments whole = {1, size, 0};
    const segments rows = {filter_dims->h, seg_bytes, params->dilation.h * input_dims->w *
                                                          input_dims->c};
#if !MVE_LEAN
    /* an odd count of contiguous pixels (a tiled pointwise's stripe of five): the first three
     * at once, the rest in pairs; the third's accumulators go where the sums would be, unused
     * when the build made them */
    if (direct && pixels % 2 == 1 && pixels >= 3 && size >= 32 && size % 16 == 0 &&
        out_c % 2 == 0 && sums != scratch_sums) {
        three_pixels(output, input, filter, size, out_c, sums, accs, scratch_sums, quant, &k);
        input += 3 * size; /* (direct: pixel p is at input + p * size) */
        output += 3 * out_c;
        pixels -= 3;
    }
#endif
#if !MVE_LEAN
    pair_run run;
    pair_run_make(&run, params, input_dims, filter_dims, out_c, direct, in_place, small_rows,
                  &whole, &rows, col0, col1);
#endif
#if !MVE_LEAN
    if (!run.ok && gather.vectors > 0 && size <= 48) {
        gather_pairs(&gather, params, input_dims, output_dims, input, filter, size, sums, accs,
                     col0, col1, quant, &k, output);
        return 1;
    }
#endif
    for (int32_t p = 0; p < pixels; p += 2) {
#if !MVE_LEAN
        if (run.ok) { /* a run of pairs inside the input from p on */
            const int8_t *x = input;
            const int32_t n = pair_run_length(&run, params, input_dims, filter_dims,
                                              output_dims, input, p, pixels, direct, &x);
            if (n > 0) {
                pair_run_do(&run, x, n, output + p * out_c, filter, size, out_c, sums, accs,
                            quant, &k);
                p += 2 * n - 2;
                continue;
            }
        }
#endif
        const int two = p + 1 < pixels; /* else pixel p alone */
        const int8_t *x0 = input + p * size, *x1 = two ? x0 + size : x0;
        const segments *sg = &whole;
        if (!direct) {
            const window w0 = pixel_window(input_dims, output_dims, &params->stride,
                                           &params->padding, input, p);
            const window w1 = two ? pixel_window(input_dims, output_dims, &params->stride,
                                                 &params->padding, input, p + 1)
                                  : w0;
            const mcugen_tile *dil = &params->dilation;
            if (single_tap && window_inside(&w0, input_dims, filter_dims, dil) &&
                window_inside(&w1, input_dims, filter_dims, dil)) {
                /* a 1x1 window inside the input (strided, unpadded): its pixel, in place */
                x0 = w0.image + (w0.y0 * input_dims->w + w0.x0) * input_dims->c;
                x1 = w1.image + (w1.y0 * input_dims->w + w1.x0) * input_dims->c;
            } else if (in_place && two && window_inside(&w0, input_dims, filter_dims, dil) &&
                       window_inside(&w1, input_dims, filter_dims, dil)) {
                x0 = w0.image + (w0.y0 * input_dims->w + w0.x0) * input_dims->c;
                x1 = w1.image + (w1.y0 * input_dims->w + w1.x0) * input_dims->c;
                sg = &rows;
#if !MVE_LEAN
                if (small_rows) { /* three short rows: one column each, for rows_small */
                    copy_rows3(col0, x0, seg_bytes, rows.stride);
                    copy_rows3(col1, x1, seg_bytes, rows.stride);
                    x0 = col0;
                    x1 = col1;
                    sg = &whole;
                }
#endif
            } else {
#if !MVE_LEAN
                if (gather.vectors > 0) {
                    gather_col(col0, &gather, &w0, input_dims, size, off);
                    if (two) {
                        gather_col(col1, &gather, &w1, input_dims, size, off);
                    }
                } else
#endif
                {
                    im2col_s8(col0, &w0, input_dims, filter_dims, &params->dilation, off);
                    if (two) {
                        im2col_s8(col1, &w1, input_dims, filter_dims, &params->dilation, off);
                    }
                }
                x0 = x1 = col0;
                if (two) {
                    x1 = col1;
                }
            }
        }
        /* the sums, then the requantization */
#if !MVE_LEAN
        if (!two) {
            rows_4x1(filter, x0, size, out_c, sums, accs);
        } else if (size <= 48) {
            rows_small(filter, x0, x1, size, out_c, sums, accs);
        } else if (out_c >= 3 && sg->bytes >= 16 && sg->bytes % 16 == 0) {
            rows_3x2_blocks(filter, x0, x1, size, out_c, sums, accs, sg);
        } else
#endif
        { /* three rows by two pixels at a time, the rest two by two */
            int32_t triples = out_c / 3;
#if !MVE_LEAN
            int32_t pairs = 0;
            if (out_c % 3 == 2) {
                pairs = 1;
            } else if (out_c % 3 == 1 && triples > 0) {
                triples -= 1;
                pairs = 2;
            }
#endif
            rows_3x2(filter, x0, x1, size, triples, sums, accs, sg);
            int32_t row = 3 * triples;
#if !MVE_LEAN
            if (pairs > 0) {
                rows_2x2(filter + row * size, x0, x1, size, pairs, sums + row, accs + 2 * row,
                         sg);
                row += 2 * pairs;
            }
#endif
            for (; row < out_c; ++row) {
                const int8_t *w = filter + row * size;
                int32_t a0 = sums[row], a1 = sums[row];
                for (int32_t s = 0; s < sg->count; ++s, w += sg->bytes) {
                    a0 = wrap_add(a0, dot_s8(w, x0 + s * sg->stride, sg->bytes));
                    a1 = wrap_add(a1, dot_s8(w, x1 + s * sg->stride, sg->bytes));
                }
                accs[2 * row] = a0;
                accs[2 * row + 1] = a1;
            }
        }
        int8_t *out0 = output + p * out_c;
        requant_store_pair(out0, two ? out0 + out_c : NULL, accs, quant->multiplier,
                           quant->shift, out_c, &k);
    }
    return 1;
}

int mcugen_pointwise_stripe_fast_s8(const int32_t *kernel_sums, int32_t output_offset,
                                    mcugen_activation activation, const mcugen_tile *stride,
                                    const mcugen_tile *padding,
                                    const mcugen_per_channel_quant_params *quant,
                                    const mcugen_dims *input_dims, const int8_t *input,
                                    const mcugen_dims *filter_dims, const int8_t *filter,
                                    const mcugen_dims *output_dims, int8_t *output)
{
#if !MVE_LEAN
    if (kernel_sums != NULL && filter_dims->h == 1 && filter_dims->w == 1 &&
        filter_dims->c == 64 && input_dims->c == 64 && stride->h == 1 && stride->w == 1 &&
        padding->h == 0 && padding->w == 0 && input_dims->n == output_dims->n &&
        input_dims->h == output_dims->h && input_dims->w == output_dims->w) {
        return pw64_run(output_offset, activation, quant, input, filter, kernel_sums,
                        output_dims->n * output_dims->h * output_dims->w, output_dims->c, output);
    }
#else
    (void)kernel_sums, (void)output_offset, (void)activation, (void)stride, (void)padding;
    (void)quant, (void)input_dims, (void)input, (void)filter_dims, (void)filter;
    (void)output_dims, (void)output;
#endif
    return 0;
}

/* Depthwise (ch_mult 1): blocks of eight channels as int16 (x + off is exact), the products
 * of the even and of the odd channels widened to int32 separately (VMULLB/VMULLT); one or two
 * output pixels of a row per pass, the two sharing the input columns their windows share. */
typedef struct {
    int32x4_t e; /* channels c, c+2, c+4, c+6 */
    int32x4_t o; /* channels c+1, c+3, c+5, c+7 */
} acc8;

static inline void mac8(acc8 *a, int16x8_t x, int16x8_t w)
{
    a->e = vaddq_s32(a->e, vmullbq_int_s16(x, w));
    a->o = vaddq_s32(a->o, vmulltq_int_s16(x, w));
}

static inline int16x8_t load_x8(const int8_t *p, int16_t off)
{
    return vaddq_n_s16(vldrbq_s16(p), off);
}

/* The constants of the eight-channel blocks, made once per call in the scratch (or by the
 * build, params->mve_table, for a tiled chain's stripes: mcugen/ops/conv/mve_table.py): per block,
 * bias, multiplier and shift of the even channels then of the odd ones (24 int32), so that a
 * pass loads each with one VLDRW. The last block may overlap the one before (channels % 8). */
#define DW_BLOCK_WORDS 24

static inline int32_t dw_blocks(int32_t ch)
{
    return (ch + 7) / 8;
}

static void dw_table(int32_t *t, const int32_t *bias, const mcugen_per_channel_quant_params *quant,
                     int32_t ch)
{
    /* VLD2 splits eight int32 into the even and the odd ones: two instructions a vector where
     * gcc's gathers cost about eight (the table is rebuilt on every stripe of a tiled chain) */
    const int32x4_t zero = vdupq_n_s32(0);
    int32x4x2_t v;
    for (int32_t i = 0; i < dw_blocks(ch); ++i, t += DW_BLOCK_WORDS) {
        const int32_t c = 8 * i + 8 <= ch ? 8 * i : ch - 8;
        if (bias != NULL) {
            v = vld2q_s32(bias + c);
        } else {
            v.val[0] = v.val[1] = zero;
        }
        vst1q_s32(t, v.val[0]);
        vst1q_s32(t + 4, v.val[1]);
        v = vld2q_s32(quant->multiplier + c);
        vst1q_s32(t + 8, v.val[0]);
        vst1q_s32(t + 12, v.val[1]);
        v = vld2q_s32(quant->shift + c);
        vst1q_s32(t + 16, v.val[0]);
        vst1q_s32(t + 20, v.val[1]);
    }
}

/* The output zero point and clamp, and how the shifts requantize: some shift positive
 * (requantize_x4), some zero and none positive (requantize_right_x4), all negative (below). */
enum { DW_RIGHT_ALL, DW_RIGHT, DW_LEFT }; /* (mcugen/ops/conv/mve_table.py: SHIFT_MODES) */

typedef struct {
    int32_t zp;
    int16_t min, max;
    int mode;
    int full; /* min -128, max 127: the saturating narrowing is the clamp */
} dw_out;

static inline int dw_shift_mode(const int32_t *shift, int32_t n)
{
    int32_t most = INT32_MIN;
    for (int32_t c = 0; c < n; c += 4) {
        most = vmaxvq_s32(most, vldrwq_z_s32(shift + c, vctp32q((uint32_t)(n - c))));
    }
    return most > 0 ? DW_LEFT : most == 0 ? DW_RIGHT : DW_RIGHT_ALL;
}

static inline int32x4_t dw_requant(int32x4_t acc, int32x4_t m, int32x4_t s, const dw_out *k)
{
    int32x4_t r;
    if (k->mode == DW_RIGHT_ALL) {
        /* requantize_right_x4 when every shift is negative: acc & shift has acc's sign */
        acc = vqrdmulhq_s32(acc, m);
        r = vrshlq_s32(vqaddq_s32(acc, vshrq_n_s32(acc, 31)), s);
    } else {
        r = k->mode == DW_LEFT ? requantize_x4(acc, m, s) : requantize_right_x4(acc, m, s);
    }
    return vaddq_n_s32(r, k->zp); /* wrapping, as the portable C */
}

/* Narrow the requantized even and odd channels of a block back into channel order (saturating
 * to int16, which changes nothing once clamped to int8), clamp, store. The full int8 range
 * clamps by saturating again, to int8 in the low bytes that VSTRB.16 stores. */
static inline void dw_narrow_store(int8_t *out, int32x4_t e, int32x4_t o, const dw_out *k)
{
    int16x8_t v;
    if (k->full) {
#if !MVE_LEAN
        /* (as the intrinsics below, without the register copies gcc makes for their kept
         * lanes: the kept lanes are don't-cares here) */
        int16x8_t h;
        __asm__("vqmovnb.s32 %q[h], %q[e]\n\t"
                "vqmovnt.s32 %q[h], %q[o]\n\t"
                "vqmovnb.s16 %q[v], %q[h]"
                : [h] "=&w"(h), [v] "=w"(v)
                : [e] "w"(e), [o] "w"(o));
#else
        v = vqmovntq_s32(vqmovnbq_s32(vreinterpretq_s16_s32(e), e), o);
        v = vreinterpretq_s16_s8(vqmovnbq_s16(vreinterpretq_s8_s16(v), v));
#endif
    } else {
        v = vqmovntq_s32(vqmovnbq_s32(vreinterpretq_s16_s32(e), e), o);
        v = vminq_s16(vmaxq_s16(v, vdupq_n_s16(k->min)), vdupq_n_s16(k->max));
    }
    vstrbq_s16(out, v);
}

/* Requantize the eight channels of a block (constants t), add the zero point, store. */
static inline void dw_store8(int8_t *out, acc8 a, const int32_t *t, const dw_out *k)
{
    const int32x4_t e = dw_requant(a.e, vld1q_s32(t + 8), vld1q_s32(t + 16), k);
    const int32x4_t o = dw_requant(a.o, vld1q_s32(t + 12), vld1q_s32(t + 20), k);
    dw_narrow_store(out, e, o, k);
}

/* dw_store8 of two pixels, each constant loaded once for both. */
static inline void dw_store_pair(int8_t *out0, int8_t *out1, acc8 a0, acc8 a1, const int32_t *t,
                                 const dw_out *k)
{
    int32x4_t m = vld1q_s32(t + 8), s = vld1q_s32(t + 16);
    const int32x4_t e0 = dw_requant(a0.e, m, s, k), e1 = dw_requant(a1.e, m, s, k);
    m = vld1q_s32(t + 12);
    s = vld1q_s32(t + 20);
    const int32x4_t o0 = dw_requant(a0.o, m, s, k), o1 = dw_requant(a1.o, m, s, k);
    dw_narrow_store(out0, e0, o0, k);
    dw_narrow_store(out1, e1, o1, k);
}

/* dw_store_pair when every shift is negative and the clamp is the full int8 range. */
static inline void dw_store_pair_fast(int8_t *out0, int8_t *out1, acc8 a0, acc8 a1,
                                      const int32_t *t, int32_t zp)
{
    const dw_out k = {zp, -128, 127, DW_RIGHT_ALL, 1};
    dw_store_pair(out0, out1, a0, a1, t, &k);
}

/* dw_store8 of two consecutive blocks (constants t), every shift negative, the clamp the full
 * int8 range. */
static inline void dw_store16_fast(int8_t *out, acc8 a0, acc8 a1, const int32_t *t, int32_t zp)
{
    const dw_out k = {zp, -128, 127, DW_RIGHT_ALL, 1};
    dw_store8(out, a0, t, &k);
    dw_store8(out + 8, a1, t + DW_BLOCK_WORDS, &k);
}

/* The geometry of one depthwise call, strides in bytes. */
typedef struct {
    int32_t ch, kw, rows;       /* channels, filter width, window rows inside the input */
    int32_t col_step, row_step; /* input: next tap of a row, next row */
    int32_t w_row;              /* filter: next row */
    int16_t off;
    const int32_t *table; /* dw_table */
} dw_geom;

static inline acc8 dw_bias(const int32_t *t)
{
    acc8 a;
    a.e = vld1q_s32(t);
    a.o = vld1q_s32(t + 4);
    return a;
}

/* One pixel, `taps` taps of each window row inside the input: x at the first of them in the
 * first row inside the input, w at its weights. */
static void dw_single(int8_t *out, const int8_t *x, const int8_t *w, int32_t taps,
                      const dw_geom *g, const dw_out *k)
{
    const int32_t *t = g->table;
    for (int32_t c = 0;; c += 8, t += DW_BLOCK_WORDS) {
        c = c + 8 <= g->ch ? c : g->ch - 8; /* the last block may overlap the one before */
        acc8 a = dw_bias(t);
        const int8_t *xr = x + c, *wr = w + c;
        for (int32_t r = 0; r < g->rows; ++r, xr += g->row_step, wr += g->w_row) {
            const int8_t *xp = xr, *wp = wr;
            for (int32_t n = taps; n > 0; --n, xp += g->col_step, wp += g->ch) {
                mac8(&a, load_x8(xp, g->off), vldrbq_s16(wp));
            }
        }
        dw_store8(out + c, a, t, k);
        if (c + 8 == g->ch) {
            return;
        }
    }
}

/* Two neighbouring pixels (stride == dilation): column j of a window row (input x0 + j * dw,
 * j <= kw) is the first pixel's tap j and the second's tap j - 1, loaded once for both;
 * columns [j0, j1) lie inside the input (j0 < j1). x at column j0 of the first row inside the
 * input, w at that row's weights. */
static void dw_pair(int8_t *out, const int8_t *x, const int8_t *w, int32_t j0, int32_t j1,
                    const dw_geom *g, const dw_out *k)
{
    const int first = j0 == 0, last = j1 == g->kw + 1;
    const int32_t lo = first ? 1 : j0, hi = last ? g->kw : j1;
    const int32_t both = hi > lo ? hi - lo : 0; /* the columns of both pixels */
    const int32_t *t = g->table;
    w += (lo - 1) * g->ch; /* the second pixel's weights at column lo */
    for (int32_t c = 0;; c += 8, t += DW_BLOCK_WORDS) {
        c = c + 8 <= g->ch ? c : g->ch - 8;
        acc8 a0 = dw_bias(t), a1 = a0;
        const int8_t *xr = x + c, *wr = w + c;
        for (int32_t r = 0; r < g->rows; ++r, xr += g->row_step, wr += g->w_row) {
            const int8_t *xp = xr, *wp = wr;
            int16x8_t w_prev = vldrbq_s16(wp); /* the second pixel's tap j - 1 */
            if (first) {
                mac8(&a0, load_x8(xp, g->off), w_prev);
                xp += g->col_step;
            }
            for (int32_t n = both; n > 0; --n) {
                wp += g->ch;
                const int16x8_t xv = load_x8(xp, g->off), wv = vldrbq_s16(wp);
                mac8(&a0, xv, wv);
                mac8(&a1, xv, w_prev);
                w_prev = wv;
                xp += g->col_step;
            }
            if (last) {
                mac8(&a1, load_x8(xp, g->off), w_prev);
            }
        }
        dw_store_pair(out + c, out + g->ch + c, a0, a1, t, k);
        if (c + 8 == g->ch) {
            return;
        }
    }
}

#if !MVE_LEAN
/* One window row of dw_pair3: first/last, columns 0 and 3; cs names the column step. */
#define DW_PAIR3_ROW(cs)                                                                       \
    "vldrb.s16 %q[wp], [%[wr]]\n\t" /* tap 0 */                                                \
    "cbz     %[first], 2f\n\t"                                                                 \
    "vldrb.s16 %q[xv], [%[xr]]\n\t" /* column 0: the first pixel's tap 0 */                    \
    "vadd.i16 %q[xv], %q[xv], %[off]\n\t"                                                      \
    "vmullb.s16 %q[tv], %q[xv], %q[wp]\n\t"                                                    \
    "vadd.i32 %q[a0e], %q[a0e], %q[tv]\n\t"                                                    \
    "vmullt.s16 %q[tv], %q[xv], %q[wp]\n\t"                                                    \
    "vadd.i32 %q[a0o], %q[a0o], %q[tv]\n"                                                      \
    "2:\n\t"                                                                                   \
    "add     %[xr], %[xr], %[" cs "]\n\t" /* column 1: tap 1 and tap 0 */                          \
    "add     %[wr], %[wr], %[ch]\n\t"                                                          \
    "vldrb.s16 %q[xv], [%[xr]]\n\t"                                                            \
    "vldrb.s16 %q[wn], [%[wr]]\n\t"                                                            \
    "vadd.i16 %q[xv], %q[xv], %[off]\n\t"                                                      \
    "vmullb.s16 %q[tv], %q[xv], %q[wp]\n\t"                                                    \
    "vadd.i32 %q[a1e], %q[a1e], %q[tv]\n\t"                                                    \
    "vmullt.s16 %q[tv], %q[xv], %q[wp]\n\t"                                                    \
    "vadd.i32 %q[a1o], %q[a1o], %q[tv]\n\t"                                                    \
    "vmullb.s16 %q[tv], %q[xv], %q[wn]\n\t"                                                    \
    "vadd.i32 %q[a0e], %q[a0e], %q[tv]\n\t"                                                    \
    "vmullt.s16 %q[tv], %q[xv], %q[wn]\n\t"                                                    \
    "vadd.i32 %q[a0o], %q[a0o], %q[tv]\n\t"                                                    \
    "add     %[xr], %[xr], %[" cs "]\n\t" /* column 2: tap 2 and tap 1 */                          \
    "add     %[wr], %[wr], %[ch]\n\t"                                                          \
    "vldrb.s16 %q[xv], [%[xr]]\n\t"                                                            \
    "vldrb.s16 %q[wp], [%[wr]]\n\t"                                                            \
    "vadd.i16 %q[xv], %q[xv], %[off]\n\t"                                                      \
    "vmullb.s16 %q[tv], %q[xv], %q[wn]\n\t"                                                    \
    "vadd.i32 %q[a1e], %q[a1e], %q[tv]\n\t"                                                    \
    "vmullt.s16 %q[tv], %q[xv], %q[wn]\n\t"                                                    \
    "vadd.i32 %q[a1o], %q[a1o], %q[tv]\n\t"                                                    \
    "vmullb.s16 %q[tv], %q[xv], %q[wp]\n\t"                                                    \
    "vadd.i32 %q[a0e], %q[a0e], %q[tv]\n\t"                                                    \
    "vmullt.s16 %q[tv], %q[xv], %q[wp]\n\t"                                                    \
    "vadd.i32 %q[a0o], %q[a0o], %q[tv]\n\t"                                                    \
    "add     %[xr], %[xr], %[" cs "]\n\t" /* column 3 (read only if last) */                       \
    "add     %[wr], %[wr], %[ch]\n\t" /* the next row's tap 0 */                               \
    "cbz     %[last], 3f\n\t"                                                                  \
    "vldrb.s16 %q[xv], [%[xr]]\n\t" /* column 3: the second pixel's tap 2 */                   \
    "vadd.i16 %q[xv], %q[xv], %[off]\n\t"                                                      \
    "vmullb.s16 %q[tv], %q[xv], %q[wp]\n\t"                                                    \
    "vadd.i32 %q[a1e], %q[a1e], %q[tv]\n\t"                                                    \
    "vmullt.s16 %q[tv], %q[xv], %q[wp]\n\t"                                                    \
    "vadd.i32 %q[a1o], %q[a1o], %q[tv]\n"                                                      \
    "3:\n\t"                                                                                   \
    "add     %[xr], %[xr], %[next]\n\t" /* column 0 of the next window row */

/* dw_pair for a filter three columns wide whose columns 1 and 2 lie inside the input (so that
 * only column 0, the first pixel's, and column 3, the second's, may be outside: first, last),
 * rows > 0. The window rows are an assembly loop: compiled from intrinsics, each row cost
 * about half again its 46 instructions (the column loop of two passes, spills of its pointers).
 * The four accumulators and four temporaries fill the eight Q registers; VLDRB.S16 and CBZ take
 * low registers only ("l"). x at column 1 of the first row inside, w at that row's tap 0. */
static inline void dw_pair3(int8_t *out, const int8_t *x, const int8_t *w, int32_t first,
                            int32_t last, const dw_geom *g, const dw_out *k_in)
{
    const dw_out kk = *k_in, *k = &kk; /* (a local: the asm's memory clobber reloads *k_in) */
    const int fast = kk.mode == DW_RIGHT_ALL && kk.full;
    const int32_t *t = g->table;
    const int32_t ch = g->ch, off = g->off, cs = g->col_step, next = g->row_step - 3 * cs;
    const int32_t rows = g->rows, last_c = ch - 8;
    for (int32_t c = 0;; t += DW_BLOCK_WORDS) {
        acc8 a0 = dw_bias(t), a1 = a0;
        const int8_t *xr = x + c, *wr = w + c;
        int16x8_t xv, tv, wp, wn;
        register int32_t n __asm__("lr") = rows; /* the loop counter of DLS/LE */
        __asm__("sub     %[xr], %[xr], %[cs]\n\t" /* column 0 (read only if first) */
                "dls     lr, lr\n"
                "1:\n\t"
                DW_PAIR3_ROW("cs")
                "le      lr, 1b"
                : [a0e] "+w"(a0.e), [a0o] "+w"(a0.o), [a1e] "+w"(a1.e), [a1o] "+w"(a1.o),
                  [xv] "=&w"(xv), [tv] "=&w"(tv), [wp] "=&w"(wp), [wn] "=&w"(wn),
                  [xr] "+l"(xr), [wr] "+l"(wr), "+r"(n)
                : [first] "l"(first), [last] "l"(last), [ch] "r"(ch), [cs] "r"(cs),
                  [off] "r"(off), [next] "r"(next)
                : "memory");
        if (fast) {
            dw_store_pair_fast(out + c, out + ch + c, a0, a1, t, k->zp);
        } else {
            dw_store_pair(out + c, out + ch + c, a0, a1, t, k);
        }
        if (c == last_c) {
            return;
        }
        c = c + 16 <= ch ? c + 8 : last_c; /* the last block may overlap the one before */
    }
}
#endif

#if !MVE_LEAN
/* Requantize lanes a0 and a1 of two pixels (multiplier at [t, #mo], shift at [t, #so], every
 * shift negative), add the zero point (lr). */
#define DW_REQ2(a0, a1, mo, so)                                                                \
    "vldrw.32 %q[wp], [%[t], #" mo "]\n\t"                                                     \
    "vldrw.32 %q[wn], [%[t], #" so "]\n\t"                                                     \
    "vqrdmulh.s32 %q[" a0 "], %q[" a0 "], %q[wp]\n\t"                                          \
    "vqrdmulh.s32 %q[" a1 "], %q[" a1 "], %q[wp]\n\t"                                          \
    "vshr.s32 %q[xv], %q[" a0 "], #31\n\t"                                                     \
    "vshr.s32 %q[tv], %q[" a1 "], #31\n\t"                                                     \
    "vqadd.s32 %q[" a0 "], %q[" a0 "], %q[xv]\n\t"                                             \
    "vqadd.s32 %q[" a1 "], %q[" a1 "], %q[tv]\n\t"                                             \
    "vrshl.s32 %q[" a0 "], %q[" a0 "], %q[wn]\n\t"                                             \
    "vrshl.s32 %q[" a1 "], %q[" a1 "], %q[wn]\n\t"                                             \
    "vadd.i32 %q[" a0 "], %q[" a0 "], lr\n\t"                                                  \
    "vadd.i32 %q[" a1 "], %q[" a1 "], lr\n\t"

/* dw_pair3 entirely in assembly, blocks and requantization included, for the common case:
 * channels a multiple of 8, dilation 1 (the column step is ch), every shift negative, the
 * clamp the full int8 range (dw_store_pair_fast). Compiled from C, the code between the
 * window rows and the stores (bias, pointers, constants reloaded from the stack) cost about
 * 70 instructions a block. The asm reads what changes per block from args: column 0 and tap 0
 * of the block (advanced by 8 here), rows, the output zero point, the table's end. */
static inline void dw_pair3_fast(int8_t *out, const int8_t *x, const int8_t *w, int32_t first,
                                 int32_t last, const dw_geom *g, int32_t zp)
{
    const int32_t ch = g->ch, off = g->off, next = g->row_step - 3 * ch;
    uint32_t args[5];
    args[0] = (uint32_t)(uintptr_t)x - (uint32_t)ch; /* column 0 (read only if first) */
    args[1] = (uint32_t)(uintptr_t)w;
    args[2] = (uint32_t)g->rows;
    args[3] = (uint32_t)zp;
    args[4] = (uint32_t)(uintptr_t)(g->table + dw_blocks(ch) * DW_BLOCK_WORDS);
    const int32_t *t = g->table;
    const int8_t *xr, *wr;
    int32x4_t a0e, a0o, a1e, a1o, tv, wp, wn;
    int16x8_t xv;
    __asm__ __volatile__( /* (volatile: its results are the stores) */
            "0:\n\t"
            "ldrd    %[xr], %[wr], [%[p]]\n\t" /* the block's column 0 and tap 0 */
            "vldrw.32 %q[a0e], [%[t]]\n\t"     /* bias */
            "vldrw.32 %q[a0o], [%[t], #16]\n\t"
            "add     lr, %[xr], #8\n\t"
            "str     lr, [%[p]]\n\t"
            "add     lr, %[wr], #8\n\t"
            "str     lr, [%[p], #4]\n\t"
            "vmov    %q[a1e], %q[a0e]\n\t"
            "vmov    %q[a1o], %q[a0o]\n\t"
            "ldr     lr, [%[p], #8]\n\t"
            "dls     lr, lr\n"
            "1:\n\t"
            DW_PAIR3_ROW("ch")
            "le      lr, 1b\n\t"
            "ldr     lr, [%[p], #12]\n\t" /* the output zero point */
            DW_REQ2("a0e", "a1e", "32", "64")
            DW_REQ2("a0o", "a1o", "48", "80")
            "vqmovnb.s32 %q[xv], %q[a0e]\n\t" /* channel order, saturated to int8 */
            "vqmovnt.s32 %q[xv], %q[a0o]\n\t"
            "vqmovnb.s16 %q[tv], %q[xv]\n\t"
            "vstrb.16 %q[tv], [%[out]]\n\t"
            "vqmovnb.s32 %q[xv], %q[a1e]\n\t"
            "vqmovnt.s32 %q[xv], %q[a1o]\n\t"
            "vqmovnb.s16 %q[tv], %q[xv]\n\t"
            "add     %[xr], %[out], %[ch]\n\t"
            "vstrb.16 %q[tv], [%[xr]]\n\t"
            "add     %[out], %[out], #8\n\t"
            "add     %[t], %[t], #96\n\t"
            "ldr     lr, [%[p], #16]\n\t"
            "cmp     %[t], lr\n\t"
            "bne     0b"
            : [a0e] "=&w"(a0e), [a0o] "=&w"(a0o), [a1e] "=&w"(a1e), [a1o] "=&w"(a1o),
              [xv] "=&w"(xv), [tv] "=&w"(tv), [wp] "=&w"(wp), [wn] "=&w"(wn), [xr] "=&l"(xr),
              [wr] "=&l"(wr), [out] "+l"(out), [t] "+r"(t)
            : [p] "r"(args), [first] "l"(first), [last] "l"(last), [ch] "r"(ch),
              [off] "r"(off), [next] "r"(next)
            : "lr", "cc", "memory");
}
#endif

#if !MVE_LEAN
/* One tap of sixteen channels (x at xr, weights at wr) into four accumulators. */
#define DW_TAP16                                                                               \
    "vldrb.s16 %q[xv], [%[xr]]\n\t"                                                           \
    "vldrb.s16 %q[wv], [%[wr]]\n\t"                                                           \
    "vadd.i16 %q[xv], %q[xv], %[off]\n\t"                                                     \
    "vmullb.s16 %q[tv], %q[xv], %q[wv]\n\t"                                                   \
    "vadd.i32 %q[a0e], %q[a0e], %q[tv]\n\t"                                                   \
    "vmullt.s16 %q[tv], %q[xv], %q[wv]\n\t"                                                   \
    "vadd.i32 %q[a0o], %q[a0o], %q[tv]\n\t"                                                   \
    "vldrb.s16 %q[xv], [%[xr], #8]\n\t"                                                       \
    "vldrb.s16 %q[wv], [%[wr], #8]\n\t"                                                       \
    "vadd.i16 %q[xv], %q[xv], %[off]\n\t"                                                     \
    "vmullb.s16 %q[tv], %q[xv], %q[wv]\n\t"                                                   \
    "vadd.i32 %q[a1e], %q[a1e], %q[tv]\n\t"                                                   \
    "vmullt.s16 %q[tv], %q[xv], %q[wv]\n\t"                                                   \
    "vadd.i32 %q[a1o], %q[a1o], %q[tv]\n\t"

/* dw_single for a filter three columns wide whose column 1 lies inside the input (has0,
 * has2: columns 0 and 2 too), channels a multiple of 8 and at least 16, rows > 0: sixteen
 * channels a pass (the last may overlap the one before by eight), the window rows an assembly
 * loop as in dw_pair3. x at column 1 of the first row inside, w at that row's tap 0. */
static inline void dw_single3(int8_t *out, const int8_t *x, const int8_t *w, int32_t has0,
                              int32_t has2, const dw_geom *g, const dw_out *k_in)
{
    const dw_out kk = *k_in, *k = &kk; /* (a local: the asm's memory clobber reloads *k_in) */
    const int fast = kk.mode == DW_RIGHT_ALL && kk.full;
    const int32_t ch = g->ch, off = g->off, cs = g->col_step, next = g->row_step - 2 * cs;
    const int32_t rows = g->rows, last_c = ch - 16;
    const int32_t *t = g->table;
    for (int32_t c = 0;;) {
        acc8 a0 = dw_bias(t), a1 = dw_bias(t + DW_BLOCK_WORDS);
        const int8_t *xr = x + c, *wr = w + c;
        int16x8_t xv, tv, wv;
        register int32_t n __asm__("lr") = rows; /* the loop counter of DLS/LE */
        __asm__("sub     %[xr], %[xr], %[cs]\n\t" /* column 0 (read only if has0) */
                "dls     lr, lr\n"
                "1:\n\t"
                "cbz     %[has0], 2f\n\t"
                DW_TAP16
                "2:\n\t"
                "add     %[xr], %[xr], %[cs]\n\t" /* column 1 */
                "add     %[wr], %[wr], %[ch]\n\t"
                DW_TAP16
                "add     %[xr], %[xr], %[cs]\n\t" /* column 2 (read only if has2) */
                "add     %[wr], %[wr], %[ch]\n\t"
                "cbz     %[has2], 3f\n\t"
                DW_TAP16
                "3:\n\t"
                "add     %[xr], %[xr], %[next]\n\t" /* the next window row */
                "add     %[wr], %[wr], %[ch]\n\t"
                "le      lr, 1b"
                : [a0e] "+w"(a0.e), [a0o] "+w"(a0.o), [a1e] "+w"(a1.e), [a1o] "+w"(a1.o),
                  [xv] "=&w"(xv), [tv] "=&w"(tv), [wv] "=&w"(wv), [xr] "+l"(xr),
                  [wr] "+l"(wr), "+r"(n)
                : [has0] "l"(has0), [has2] "l"(has2), [ch] "r"(ch), [cs] "r"(cs),
                  [off] "r"(off), [next] "r"(next)
                : "memory");
        if (fast) {
            dw_store16_fast(out + c, a0, a1, t, k->zp);
        } else {
            dw_store8(out + c, a0, t, k);
            dw_store8(out + c + 8, a1, t + DW_BLOCK_WORDS, k);
        }
        if (c == last_c) {
            return;
        }
        /* the last pass may overlap the one before by eight channels (a block) */
        const int32_t step = c + 32 <= ch ? 16 : last_c - c;
        c += step;
        t += (step / 8) * DW_BLOCK_WORDS;
    }
}
#endif

#if !MVE_LEAN
/* Requantize one vector a of a block (multiplier at [t, #mo], shift at [t, #so], every shift
 * negative), add the zero point (lr). */
#define DW_REQ1(a, mo, so)                                                                     \
    "vldrw.32 %q[wv], [%[t], #" mo "]\n\t"                                                     \
    "vldrw.32 %q[tv], [%[t], #" so "]\n\t"                                                     \
    "vqrdmulh.s32 %q[" a "], %q[" a "], %q[wv]\n\t"                                            \
    "vshr.s32 %q[xv], %q[" a "], #31\n\t"                                                      \
    "vqadd.s32 %q[" a "], %q[" a "], %q[xv]\n\t"                                               \
    "vrshl.s32 %q[" a "], %q[" a "], %q[tv]\n\t"                                               \
    "vadd.i32 %q[" a "], %q[" a "], lr\n\t"

/* dw_single3 entirely in assembly, passes of sixteen channels and their requantization
 * included, in the case of dw_pair3_fast (every shift negative, the full int8 clamp, dilation
 * 1) with channels a multiple of 16: compiled from C, the bias, the table's loads and the
 * stores between the window rows cost about 80 instructions a pass, here about 50. x at
 * column 1 of the first row inside, w at that row's tap 0. */
static void dw_single3_fast(int8_t *out, const int8_t *x, const int8_t *w, int32_t has0,
                            int32_t has2, const dw_geom *g, int32_t zp)
{
    const int32_t ch = g->ch, off = g->off, next = g->row_step - 2 * ch;
    uint32_t args[5];
    args[0] = (uint32_t)(uintptr_t)x - (uint32_t)ch; /* column 0 (read only if has0) */
    args[1] = (uint32_t)(uintptr_t)w;
    args[2] = (uint32_t)g->rows;
    args[3] = (uint32_t)zp;
    args[4] = (uint32_t)(uintptr_t)(g->table + dw_blocks(ch) * DW_BLOCK_WORDS);
    const int32_t *t = g->table;
    const int8_t *xr, *wr;
    int32x4_t a0e, a0o, a1e, a1o;
    int16x8_t xv, tv, wv;
    __asm__ __volatile__( /* (volatile: its results are the stores) */
            "0:\n\t"
            "ldrd    %[xr], %[wr], [%[p]]\n\t" /* the pass's column 0 and tap 0 */
            "vldrw.32 %q[a0e], [%[t]]\n\t"     /* the two blocks' bias */
            "vldrw.32 %q[a0o], [%[t], #16]\n\t"
            "vldrw.32 %q[a1e], [%[t], #96]\n\t"
            "vldrw.32 %q[a1o], [%[t], #112]\n\t"
            "add     lr, %[xr], #16\n\t"
            "str     lr, [%[p]]\n\t"
            "add     lr, %[wr], #16\n\t"
            "str     lr, [%[p], #4]\n\t"
            "ldr     lr, [%[p], #8]\n\t"
            "dls     lr, lr\n"
            "1:\n\t"
            "cbz     %[has0], 2f\n\t"
            DW_TAP16
            "2:\n\t"
            "add     %[xr], %[xr], %[ch]\n\t" /* column 1 */
            "add     %[wr], %[wr], %[ch]\n\t"
            DW_TAP16
            "add     %[xr], %[xr], %[ch]\n\t" /* column 2 (read only if has2) */
            "add     %[wr], %[wr], %[ch]\n\t"
            "cbz     %[has2], 3f\n\t"
            DW_TAP16
            "3:\n\t"
            "add     %[xr], %[xr], %[next]\n\t" /* the next window row */
            "add     %[wr], %[wr], %[ch]\n\t"
            "le      lr, 1b\n\t"
            "ldr     lr, [%[p], #12]\n\t" /* the output zero point */
            DW_REQ1("a0e", "32", "64")
            DW_REQ1("a0o", "48", "80")
            DW_REQ1("a1e", "128", "160")
            DW_REQ1("a1o", "144", "176")
            "vqmovnb.s32 %q[xv], %q[a0e]\n\t" /* channel order, saturated to int8 */
            "vqmovnt.s32 %q[xv], %q[a0o]\n\t"
            "vqmovnb.s16 %q[tv], %q[xv]\n\t"
            "vstrb.16 %q[tv], [%[out]]\n\t"
            "vqmovnb.s32 %q[xv], %q[a1e]\n\t"
            "vqmovnt.s32 %q[xv], %q[a1o]\n\t"
            "vqmovnb.s16 %q[tv], %q[xv]\n\t"
            "vstrb.16 %q[tv], [%[out], #8]\n\t"
            "add     %[out], %[out], #16\n\t"
            "add     %[t], %[t], #192\n\t"
            "ldr     lr, [%[p], #16]\n\t"
            "cmp     %[t], lr\n\t"
            "bne     0b"
            : [a0e] "=&w"(a0e), [a0o] "=&w"(a0o), [a1e] "=&w"(a1e), [a1o] "=&w"(a1o),
              [xv] "=&w"(xv), [tv] "=&w"(tv), [wv] "=&w"(wv), [xr] "=&l"(xr), [wr] "=&l"(wr),
              [out] "+l"(out), [t] "+r"(t)
            : [p] "r"(args), [has0] "l"(has0), [has2] "l"(has2), [ch] "r"(ch), [off] "r"(off),
              [next] "r"(next)
            : "lr", "cc", "memory");
}
#undef DW_REQ1
#endif


#if !MVE_LEAN
/* Two neighbouring pixels `apart` bytes apart in the input (stride != dilation: no column in
 * common, as a stride of 2 makes) whose windows lie inside the input horizontally: each weight
 * load serves both, as do the block's constants. x at column 0 of the first row inside. */
static void dw_pair_apart(int8_t *out, const int8_t *x, const int8_t *w, int32_t apart,
                          const dw_geom *g, const dw_out *k)
{
    const int32_t *t = g->table;
    for (int32_t c = 0;; c += 8, t += DW_BLOCK_WORDS) {
        c = c + 8 <= g->ch ? c : g->ch - 8;
        acc8 a0 = dw_bias(t), a1 = a0;
        const int8_t *xr = x + c, *wr = w + c;
        for (int32_t r = g->rows; r > 0; --r, xr += g->row_step, wr += g->w_row) {
            const int8_t *xp = xr, *wp = wr;
            for (int32_t n = g->kw; n > 0; --n, xp += g->col_step, wp += g->ch) {
                const int16x8_t wv = vldrbq_s16(wp);
                mac8(&a0, load_x8(xp, g->off), wv);
                mac8(&a1, load_x8(xp + apart, g->off), wv);
            }
        }
        dw_store_pair(out + c, out + g->ch + c, a0, a1, t, k);
        if (c + 8 == g->ch) {
            return;
        }
    }
}
#endif

#if !MVE_LEAN
/* One tap of eight channels (xv, widened and offset) times weights w into pixel a's lanes. */
#define DW_MAC(a, w)                                                                           \
    "vmullb.s16 %q[tv], %q[xv], %q[" w "]\n\t"                                                 \
    "vadd.i32 %q[" a "e], %q[" a "e], %q[tv]\n\t"                                              \
    "vmullt.s16 %q[tv], %q[xv], %q[" w "]\n\t"                                                 \
    "vadd.i32 %q[" a "o], %q[" a "o], %q[tv]\n\t"

/* The input column at xr, widened to int16, plus the input offset. */
#define DW_LDX                                                                                 \
    "vldrb.s16 %q[xv], [%[xr]]\n\t"                                                            \
    "vadd.i16 %q[xv], %q[xv], %[off]\n\t"

/* One window row of two pixels of stride 1 (a0: columns 0-2, a1: columns 1-3, every one inside
 * the input): each column and each tap loaded once. xr at column 0, wr at tap 0; both end at
 * the next row's. */
#define DW_RUN_ROW1                                                                            \
    "vldrb.s16 %q[wp], [%[wr]]\n\t" DW_LDX DW_MAC("a0", "wp")                                  \
    "add     %[xr], %[xr], %[ch]\n\t"                                                          \
    "add     %[wr], %[wr], %[ch]\n\t"                                                          \
    "vldrb.s16 %q[wn], [%[wr]]\n\t" DW_LDX DW_MAC("a1", "wp") DW_MAC("a0", "wn")               \
    "add     %[xr], %[xr], %[ch]\n\t"                                                          \
    "add     %[wr], %[wr], %[ch]\n\t"                                                          \
    "vldrb.s16 %q[wp], [%[wr]]\n\t" DW_LDX DW_MAC("a1", "wn") DW_MAC("a0", "wp")               \
    "add     %[xr], %[xr], %[ch]\n\t" DW_LDX DW_MAC("a1", "wp")                                \
    "add     %[xr], %[xr], %[next]\n\t"                                                        \
    "add     %[wr], %[wr], %[ch]\n\t"

/* The same for stride 2 (a0: columns 0-2, a1: columns 2-4): column 2 is a0's tap 2 and a1's
 * tap 0, loaded once; tap 2 stays in wn until column 4. */
#define DW_RUN_ROW2                                                                            \
    "vldrb.s16 %q[wp], [%[wr]]\n\t" DW_LDX DW_MAC("a0", "wp")                                  \
    "add     %[xr], %[xr], %[ch], lsl #1\n\t"                                                  \
    "add     %[wr], %[wr], %[ch], lsl #1\n\t"                                                  \
    "vldrb.s16 %q[wn], [%[wr]]\n\t" DW_LDX DW_MAC("a1", "wp") DW_MAC("a0", "wn")               \
    "sub     %[xr], %[xr], %[ch]\n\t"                                                          \
    "sub     %[wr], %[wr], %[ch]\n\t"                                                          \
    "vldrb.s16 %q[wp], [%[wr]]\n\t" DW_LDX DW_MAC("a0", "wp")                                  \
    "add     %[xr], %[xr], %[ch], lsl #1\n\t" DW_LDX DW_MAC("a1", "wp")                        \
    "add     %[xr], %[xr], %[ch]\n\t" DW_LDX DW_MAC("a1", "wn")                                \
    "add     %[xr], %[xr], %[next]\n\t"                                                        \
    "add     %[wr], %[wr], %[ch], lsl #1\n\t"

/* A run of pairs of pixels (ROW: their window rows) with every column inside the input, each
 * pair's blocks as in dw_pair3_fast, the pairs looped in the assembly too: per pair, C's
 * window checks and call cost as much as a block of eight channels. args: [0] x and [1] w of
 * the block, [2] rows, [3] output zero point, [4] the table's end, [5] pairs left, [6] the
 * table, [7] x from the end of a pair's blocks to the next pair. */
#define DW_RUN_ASM(ROW)                                                                        \
    __asm__ __volatile__(                                                                      \
            "0:\n\t"                                                                           \
            "ldrd    %[xr], %[wr], [%[p]]\n\t" /* the block's column 0 and tap 0 */            \
            "vldrw.32 %q[a0e], [%[t]]\n\t"     /* bias */                                      \
            "vldrw.32 %q[a0o], [%[t], #16]\n\t"                                                \
            "add     lr, %[xr], #8\n\t"                                                        \
            "str     lr, [%[p]]\n\t"                                                           \
            "add     lr, %[wr], #8\n\t"                                                        \
            "str     lr, [%[p], #4]\n\t"                                                       \
            "vmov    %q[a1e], %q[a0e]\n\t"                                                     \
            "vmov    %q[a1o], %q[a0o]\n\t"                                                     \
            "ldr     lr, [%[p], #8]\n\t"                                                       \
            "dls     lr, lr\n"                                                                 \
            "1:\n\t" ROW "le      lr, 1b\n\t"                                                  \
            "ldr     lr, [%[p], #12]\n\t" /* the output zero point */                          \
            DW_REQ2("a0e", "a1e", "32", "64")                                                  \
            DW_REQ2("a0o", "a1o", "48", "80")                                                  \
            "vqmovnb.s32 %q[xv], %q[a0e]\n\t" /* channel order, saturated to int8 */           \
            "vqmovnt.s32 %q[xv], %q[a0o]\n\t"                                                  \
            "vqmovnb.s16 %q[tv], %q[xv]\n\t"                                                   \
            "vstrb.16 %q[tv], [%[out]]\n\t"                                                    \
            "vqmovnb.s32 %q[xv], %q[a1e]\n\t"                                                  \
            "vqmovnt.s32 %q[xv], %q[a1o]\n\t"                                                  \
            "vqmovnb.s16 %q[tv], %q[xv]\n\t"                                                   \
            "add     %[xr], %[out], %[ch]\n\t"                                                 \
            "vstrb.16 %q[tv], [%[xr]]\n\t"                                                     \
            "add     %[out], %[out], #8\n\t"                                                   \
            "add     %[t], %[t], #96\n\t"                                                      \
            "ldr     lr, [%[p], #16]\n\t"                                                      \
            "cmp     %[t], lr\n\t"                                                             \
            "bne     0b\n\t"                                                                   \
            "add     %[out], %[out], %[ch]\n\t" /* the next pair: past the second pixel */     \
            "ldrd    %[xr], %[wr], [%[p]]\n\t"                                                 \
            "ldr     lr, [%[p], #28]\n\t"                                                      \
            "add     %[xr], %[xr], lr\n\t"                                                     \
            "sub     %[wr], %[wr], %[ch]\n\t" /* back at channel 0 */                          \
            "strd    %[xr], %[wr], [%[p]]\n\t"                                                 \
            "ldr     %[t], [%[p], #24]\n\t"                                                    \
            "ldr     lr, [%[p], #20]\n\t"                                                      \
            "subs    lr, lr, #1\n\t"                                                           \
            "str     lr, [%[p], #20]\n\t"                                                      \
            "bne     0b"                                                                       \
            : [a0e] "=&w"(a0e), [a0o] "=&w"(a0o), [a1e] "=&w"(a1e), [a1o] "=&w"(a1o),          \
              [xv] "=&w"(xv), [tv] "=&w"(tv), [wp] "=&w"(wp), [wn] "=&w"(wn), [xr] "=&l"(xr),  \
              [wr] "=&l"(wr), [out] "+l"(out), [t] "+r"(t)                                     \
            : [p] "r"(args), [ch] "r"(ch), [off] "r"(off), [next] "r"(next)                    \
            : "lr", "cc", "memory")

/* `pairs` pairs of neighbouring pixels of stride 1 or 2 whose window columns all lie inside
 * the input, in the case of dw_pair3_fast (channels a multiple of 8, dilation 1 along rows,
 * every shift negative, the full int8 clamp), rows > 0. x at column 0 of the first pair's
 * first row inside, w at that row's tap 0. */
static void dw_run3_fast(int8_t *out, const int8_t *x, const int8_t *w, int32_t pairs,
                         int32_t stride, const dw_geom *g, int32_t zp)
{
    const int32_t ch = g->ch, off = g->off, next = g->row_step - (stride + 2) * ch;
    uint32_t args[8];
    args[0] = (uint32_t)(uintptr_t)x;
    args[1] = (uint32_t)(uintptr_t)w;
    args[2] = (uint32_t)g->rows;
    args[3] = (uint32_t)zp;
    args[4] = (uint32_t)(uintptr_t)(g->table + dw_blocks(ch) * DW_BLOCK_WORDS);
    args[5] = (uint32_t)pairs;
    args[6] = (uint32_t)(uintptr_t)g->table;
    args[7] = (uint32_t)((2 * stride - 1) * ch); /* the blocks moved x by ch of 2 * stride * ch */
    const int32_t *t = g->table;
    const int8_t *xr, *wr;
    int32x4_t a0e, a0o, a1e, a1o, tv, wp, wn;
    int16x8_t xv;
    if (stride == 1) {
        DW_RUN_ASM(DW_RUN_ROW1);
    } else {
        DW_RUN_ASM(DW_RUN_ROW2);
    }
}

/* The pixels [lo, hi) of an output row whose windows (3 columns, dilation 1) lie inside the
 * input: ox * stride - pad >= 0 and ox * stride - pad + 2 <= in_w - 1. */
static inline void dw_inside_columns(int32_t pad, int32_t stride, int32_t in_w, int32_t out_w,
                                     int32_t *lo, int32_t *hi)
{
    const int32_t last = in_w - 3 + pad; /* the largest ox * stride */
    *lo = (pad + stride - 1) / stride;
    *hi = last < 0 ? 0 : last / stride + 1 < out_w ? last / stride + 1 : out_w;
}
#endif

#if !MVE_LEAN
/* The common 3x3 case in few instructions a call: stride and dilation 1, one column of
 * padding each side (out_w == in_w >= 3), channels a multiple of 8 and at least 16, one image,
 * the build's table (mve_table) saying every shift is negative, the full int8 clamp. A tiled
 * chain calls the depthwise once a stripe (KWS: a row of five pixels), and the general loop
 * below spent about 450 instructions a call deciding, pixel by pixel, what this decides once
 * a row: the first pair at the left border (dw_pair3_fast), the pairs inside (dw_run3_fast),
 * then the last pixel alone (dw_single3) or the last pair at the right border. The same
 * passes with the same arguments as the general loop, so the same bytes. */
static int dw3_rows_lean(const mcugen_conv_fast_params *params, const mcugen_dims *in,
                         const int8_t *input, const int8_t *filter, const mcugen_dims *out,
                         int8_t *output)
{
    const int32_t ch = out->c, width = in->w, in_h = in->h;
    dw_geom g;
    g.ch = ch;
    g.kw = 3;
    g.col_step = ch;
    g.row_step = width * ch;
    g.w_row = 3 * ch;
    g.off = (int16_t)params->input_offset;
    g.table = params->mve_table;
    const dw_out k = {params->output_offset, -128, 127, DW_RIGHT_ALL, 1};
    const int32_t pairs = (width - 3) / 2; /* inside: pixels 2 .. width - 2 */
    const int odd = width % 2;             /* then one pixel, else a pair at the border */
    int8_t *o = output;
    for (int32_t oy = 0; oy < out->h; ++oy, o += width * ch) {
        const int32_t y0 = oy - params->padding.h;
        const int32_t ky0 = y0 < 0 ? -y0 : 0, ky1 = in_h - y0 < 3 ? in_h - y0 : 3;
        g.rows = ky1 - ky0;
        const int8_t *x = input + (y0 + ky0) * g.row_step, *w = filter + ky0 * g.w_row;
        dw_pair3_fast(o, x, w, 0, 1, &g, k.zp); /* pixels 0 and 1: column -1 outside */
        if (pairs > 0) {
            dw_run3_fast(o + 2 * ch, x + ch, w, pairs, 1, &g, k.zp);
        }
        int8_t *last = o + (2 + 2 * pairs) * ch;
        const int8_t *xl = x + (1 + 2 * pairs) * ch; /* the column left of the last pixels */
        if (odd && ch % 16 == 0) {
            dw_single3_fast(last, xl + ch, w, 1, 0, &g, k.zp);
        } else if (odd) {
            dw_single3(last, xl + ch, w, 1, 0, &g, &k);
        } else {
            dw_pair3_fast(last, xl + ch, w, 1, 0, &g, k.zp);
        }
    }
    return 1;
}

static inline int dw3_lean_fits(const mcugen_conv_fast_params *params, const mcugen_dims *in,
                                const mcugen_dims *filter, const mcugen_dims *out)
{
    const int32_t ch = out->c;
    return params->mve_table != NULL && params->ch_mult == 1 && in->n == 1 && filter->h == 3 &&
           filter->w == 3 && params->stride.h == 1 && params->stride.w == 1 &&
           params->dilation.h == 1 && params->dilation.w == 1 && params->padding.w == 1 &&
           params->padding.h >= 0 && params->padding.h <= 2 && in->w >= 3 &&
           out->w == in->w && out->h == in->h + 2 * params->padding.h - 2 && out->h > 0 &&
           in->h <= 4096 && in->w <= 4096 && ch <= 4096 && ch % 8 == 0 && ch >= 16 &&
           params->activation.min == -128 && params->activation.max == 127 &&
           params->mve_table[dw_blocks(ch) * DW_BLOCK_WORDS] == DW_RIGHT_ALL;
}
#endif

int mcugen_depthwise_stripe_fast_s8(const mcugen_conv_fast_params *params,
                                    const mcugen_dims *input_dims, const int8_t *input,
                                    const mcugen_dims *filter_dims, const int8_t *filter,
                                    const mcugen_dims *output_dims, int8_t *output)
{
#if !MVE_LEAN
    if (dw3_lean_fits(params, input_dims, filter_dims, output_dims)) {
        return dw3_rows_lean(params, input_dims, input, filter, output_dims, output);
    }
#else
    (void)params, (void)input_dims, (void)input, (void)filter_dims, (void)filter;
    (void)output_dims, (void)output;
#endif
    return 0;
}

int mcugen_depthwise_conv_fast_s8(const mcugen_context *ctx, const mcugen_conv_fast_params *params,
                                  const mcugen_per_channel_quant_params *quant,
                                  const mcugen_dims *input_dims, const int8_t *input,
                                  const mcugen_dims *filter_dims, const int8_t *filter,
                                  const int32_t *bias, const mcugen_dims *output_dims,
                                  int8_t *output)
{
    const int32_t ch = output_dims->c;
#if !MVE_LEAN
    if (dw3_lean_fits(params, input_dims, filter_dims, output_dims)) {
        return dw3_rows_lean(params, input_dims, input, filter, output_dims, output);
    }
#endif
    /* fewer than eight channels: the portable loops (the last block overlaps the one before) */
    if (params->ch_mult != 1 || ch < 8 ||
        !mcugen_depthwise_fast_offsets_fit(params, input_dims, filter_dims, ch) ||
        !scratch_ok(ctx, mcugen_depthwise_conv_fast_mve_s8_buffer_size(filter_dims))) {
        return 0;
    }
    const int32_t in_h = input_dims->h, in_w = input_dims->w;
    const int32_t kh = filter_dims->h, kw = filter_dims->w;
    const int32_t sh = params->stride.h, sw = params->stride.w;
    const int32_t dh = params->dilation.h, dw = params->dilation.w;
    const int32_t *table = params->mve_table; /* the build's (mcugen_dw_conv_params) */
    if (table == NULL) {
        int32_t *made = (int32_t *)ctx->buf;
        dw_table(made, bias, quant, ch);
        table = made;
    }
    dw_geom g;
    g.ch = ch;
    g.kw = kw;
    g.col_step = dw * ch;
    g.row_step = dh * in_w * ch;
    g.w_row = kw * ch;
    g.off = (int16_t)params->input_offset;
    g.table = table;
    dw_out k;
    k.zp = params->output_offset;
    k.min = (int16_t)params->activation.min;
    k.max = (int16_t)params->activation.max;
    /* (the build's table ends with the mode) */
    k.mode = params->mve_table != NULL ? table[dw_blocks(ch) * DW_BLOCK_WORDS]
                                       : dw_shift_mode(quant->shift, ch);
    k.full = k.min == -128 && k.max == 127;
#if !MVE_LEAN
    const int fast3 = k.mode == DW_RIGHT_ALL && k.full && ch % 8 == 0 && dw == 1;
    /* runs of pairs inside the input: stride 1 or 2 along rows, a filter three wide */
    const int run3 = fast3 && kw == 3 && (sw == 1 || sw == 2);
    int32_t in_lo, in_hi; /* pixels [in_lo, in_hi) of a row: every window column inside */
    dw_inside_columns(params->padding.w, sw, in_w, output_dims->w, &in_lo, &in_hi);
#endif
    for (int32_t b = 0; b < output_dims->n; ++b) {
        const int8_t *image = input + b * in_h * in_w * ch;
        for (int32_t oy = 0; oy < output_dims->h; ++oy) {
            const int32_t y0 = oy * sh - params->padding.h;
            int32_t ky0, ky1;
            tap_range(y0, dh, kh, in_h, &ky0, &ky1);
            g.rows = ky1 - ky0;
            /* the first window row inside the input (or any row: no row is read then) */
            const int8_t *x_rows = image + (g.rows > 0 ? (y0 + ky0 * dh) * in_w * ch : 0);
            const int8_t *w_rows = filter + ky0 * g.w_row;
            int8_t *out = output + ((b * output_dims->h + oy) * output_dims->w) * ch;
            for (int32_t ox = 0; ox < output_dims->w; out += ch) {
                const int32_t x0 = ox * sw - params->padding.w;
                /* two pixels when the second's window is the first's moved by one column */
                const int pair = ox + 1 < output_dims->w && sw == dw;
                int32_t j0, j1;
                tap_range(x0, dw, kw + pair, in_w, &j0, &j1);
                const int8_t *x = x_rows + (j1 > j0 ? (x0 + j0 * dw) * ch : 0);
#if !MVE_LEAN
                if (run3 && g.rows > 0 && ox >= in_lo && ox + 1 < in_hi) {
                    const int32_t run = (in_hi - ox) / 2; /* pairs */
                    dw_run3_fast(out, x_rows + x0 * ch, w_rows, run, sw, &g, k.zp);
                    ox += 2 * run;
                    out += (2 * run - 1) * ch;
                    continue;
                }
                if (pair && kw == 3 && j0 <= 1 && j1 >= 3 && g.rows > 0 && fast3) {
                    dw_pair3_fast(out, x_rows + (x0 + dw) * ch, w_rows, j0 == 0, j1 == 4, &g,
                                  k.zp);
                    ox += 2;
                    out += ch;
                    continue;
                }
                if (pair && kw == 3 && j0 <= 1 && j1 >= 3 && g.rows > 0) {
                    dw_pair3(out, x_rows + (x0 + dw) * ch, w_rows, j0 == 0, j1 == 4, &g, &k);
                    ox += 2;
                    out += ch;
                    continue;
                }
#endif
                if (pair && j1 > j0) {
                    dw_pair(out, x, w_rows, j0, j1, &g, &k);
                    ox += 2;
                    out += ch;
                    continue;
                }
#if !MVE_LEAN
                if (ox + 1 < output_dims->w && sw != dw && j0 == 0 && j1 == kw &&
                    x0 + sw + (kw - 1) * dw < in_w) { /* both windows inside horizontally */
                    dw_pair_apart(out, x, w_rows, sw * ch, &g, &k);
                    ox += 2;
                    out += ch;
                    continue;
                }
#endif
                j1 = j1 < kw ? j1 : kw; /* (one pixel: kw columns) */
#if !MVE_LEAN
                if (kw == 3 && j0 <= 1 && j1 >= 2 && g.rows > 0 && ch % 8 == 0 && ch >= 16) {
                    dw_single3(out, x_rows + (x0 + dw) * ch, w_rows, j0 == 0, j1 == 3, &g, &k);
                    ++ox;
                    continue;
                }
#endif
                dw_single(out, x, w_rows + j0 * ch, j1 > j0 ? j1 - j0 : 0, &g, &k);
                ++ox;
            }
        }
    }
    return 1;
}

#if !MVE_LEAN
/* d_r += w_r . x over n (>= 1) whole 16-byte blocks, every pointer advanced past them; x is
 * loaded once for the four VMLADAVAs. gcc 12 indexes the five streams from one counter (16
 * instructions a pass); the asm walks them with post-incremented loads (10). VMLADAVA takes
 * even accumulator registers ("Te"). Always inlined, so the accumulators stay in registers. */
static inline __attribute__((always_inline)) void dot4_blocks16(
    const int8_t **xp, const int8_t **w0p, const int8_t **w1p, const int8_t **w2p, const int8_t **w3p, int32_t n,
    int32_t *d0p, int32_t *d1p, int32_t *d2p, int32_t *d3p)
{
    const int8_t *x = *xp, *w0 = *w0p, *w1 = *w1p, *w2 = *w2p, *w3 = *w3p;
    int32_t d0 = *d0p, d1 = *d1p, d2 = *d2p, d3 = *d3p;
    int8x16_t xv, wv, wv2;
    register int32_t count __asm__("lr") = n; /* the loop counter of DLS/LE */
    __asm__ volatile(
        "dls         lr, lr\n"
        "1:\n\t"
        "vldrb.8     %q[xv], [%[x]], #16\n\t"
        "vldrb.8     %q[wv], [%[w0]], #16\n\t"
        "vmladava.s8 %[d0], %q[xv], %q[wv]\n\t"
        "vldrb.8     %q[wv2], [%[w1]], #16\n\t"
        "vmladava.s8 %[d1], %q[xv], %q[wv2]\n\t"
        "vldrb.8     %q[wv], [%[w2]], #16\n\t"
        "vmladava.s8 %[d2], %q[xv], %q[wv]\n\t"
        "vldrb.8     %q[wv2], [%[w3]], #16\n\t"
        "vmladava.s8 %[d3], %q[xv], %q[wv2]\n\t"
        "le          lr, 1b"
        : [d0] "+Te"(d0), [d1] "+Te"(d1), [d2] "+Te"(d2), [d3] "+Te"(d3), [x] "+r"(x),
          [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), "+r"(count),
          [xv] "=&w"(xv), [wv] "=&w"(wv), [wv2] "=&w"(wv2)
        :
        : "cc", "memory");
    *xp = x, *w0p = w0, *w1p = w1, *w2p = w2, *w3p = w3;
    *d0p = d0, *d1p = d1, *d2p = d2, *d3p = d3;
}
#endif

/* Four rows (w, w + depth, ...; the last `clamp` rows repeat row 3 - clamp) against x: the raw
 * int8 dot products w_r . x. x is loaded once for the four VMLADAVAs (16 MACs each); the input
 * offset comes in through the kernel sums. */
static inline int32x4_t dot4(const int8_t *w, int32_t depth, int32_t last_row,
                             const int8_t *x)
{
    const int8_t *w0 = w, *w1 = w + (last_row < 1 ? last_row : 1) * depth;
    const int8_t *w2 = w + (last_row < 2 ? last_row : 2) * depth;
    const int8_t *w3 = w + (last_row < 3 ? last_row : 3) * depth;
    int32_t d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    int32_t k = depth;
#if !MVE_LEAN
    if (k >= 16) {
        dot4_blocks16(&x, &w0, &w1, &w2, &w3, k >> 4, &d0, &d1, &d2, &d3);
        k &= 15;
    }
#endif
    for (; k >= 16; k -= 16) { /* -Os: the loop in C */
        const int8x16_t xv = vldrbq_s8(x);
        x += 16;
        d0 = vmladavaq_s8(d0, xv, vldrbq_s8(w0));
        w0 += 16;
        d1 = vmladavaq_s8(d1, xv, vldrbq_s8(w1));
        w1 += 16;
        d2 = vmladavaq_s8(d2, xv, vldrbq_s8(w2));
        w2 += 16;
        d3 = vmladavaq_s8(d3, xv, vldrbq_s8(w3));
        w3 += 16;
    }
    if (k > 0) {
        const mve_pred16_t p = vctp8q((uint32_t)k);
        const int8x16_t xv = vldrbq_z_s8(x, p);
        d0 = vmladavaq_s8(d0, xv, vldrbq_z_s8(w0, p));
        d1 = vmladavaq_s8(d1, xv, vldrbq_z_s8(w1, p));
        d2 = vmladavaq_s8(d2, xv, vldrbq_z_s8(w2, p));
        d3 = vmladavaq_s8(d3, xv, vldrbq_z_s8(w3, p));
    }
    int32x4_t v = vdupq_n_s32(d0);
    v = vsetq_lane_s32(d1, v, 1);
    v = vsetq_lane_s32(d2, v, 2);
    return vsetq_lane_s32(d3, v, 3);
}

/* One unit's kernel sum, for calls without the build's (mcugen_fc_params.kernel_sums):
 * bias + off * the sum of the unit's weights, modulo 2^32. */
static int32_t fc_kernel_sum(const int8_t *w, int32_t depth, int32_t off, int32_t bias)
{
    int32_t s = 0;
    for (int32_t k = 0; k < depth; k += 16) {
        s = vaddvaq_s8(s, vldrbq_z_s8(w + k, vctp8q((uint32_t)(depth - k))));
    }
    return wrap_add(bias, (int32_t)((uint32_t)off * (uint32_t)s));
}

/* The kernel sums of units u .. u + 3 (the lanes past the last unit unused). */
static inline int32x4_t fc_sums4(const mcugen_fully_connected_fast_params *params,
                                 const int8_t *filter, const int32_t *bias, int32_t depth,
                                 int32_t u, int32_t units)
{
    const mve_pred16_t lanes = vctp32q((uint32_t)(units - u));
    if (params->kernel_sums != NULL) {
        return vldrwq_z_s32(params->kernel_sums + u, lanes);
    }
    int32_t sum[4] = {0, 0, 0, 0};
    for (int32_t r = 0; r < 4 && u + r < units; ++r) {
        sum[r] = fc_kernel_sum(filter + (u + r) * depth, depth, params->input_offset,
                               bias != NULL ? bias[u + r] : 0);
    }
    return vldrwq_s32(sum);
}

#if !MVE_LEAN
/* Whole blocks of four units for depth % 16 == 0 or depth < 16 (one predicated block) with
 * the build's kernel sums (the common case): the per-block work is only the dot products, one vector add, the requantization and
 * a store, without dot4's tail and row clamps (a block costs ~30 instructions besides the
 * 10 a 64-MAC pass). */
__attribute__((noinline)) static void fc_blocks16(const int8_t *x, const int8_t *w, int32_t depth, int32_t blocks,
                        const int32_t *sums, const int32_t *mult, const int32_t *shift,
                        int per_channel, const out_consts *k, int8_t *out)
{
    int32x4_t m = vdupq_n_s32(mult[0]), s = vdupq_n_s32(shift[0]);
    const int32_t step = per_channel ? 4 : 0;
    for (; blocks > 0; --blocks, w += 4 * depth, sums += 4, out += 4) {
        const int8_t *xp = x, *w0 = w, *w1 = w + depth, *w2 = w1 + depth, *w3 = w2 + depth;
        int32_t d0 = 0, d1 = 0, d2 = 0, d3 = 0;
        if (depth >= 16) {
            dot4_blocks16(&xp, &w0, &w1, &w2, &w3, depth >> 4, &d0, &d1, &d2, &d3);
        } else { /* one predicated block (the loads zero the lanes past depth) */
            const mve_pred16_t p = vctp8q((uint32_t)depth);
            const int8x16_t xv = vldrbq_z_s8(x, p);
            d0 = vmladavq_s8(xv, vldrbq_z_s8(w0, p));
            d1 = vmladavq_s8(xv, vldrbq_z_s8(w1, p));
            d2 = vmladavq_s8(xv, vldrbq_z_s8(w2, p));
            d3 = vmladavq_s8(xv, vldrbq_z_s8(w3, p));
        }
        int32x4_t acc = vldrwq_s32(sums);
        acc = vsetq_lane_s32(vgetq_lane_s32(acc, 0) + d0, acc, 0);
        acc = vsetq_lane_s32(vgetq_lane_s32(acc, 1) + d1, acc, 1);
        acc = vsetq_lane_s32(vgetq_lane_s32(acc, 2) + d2, acc, 2);
        acc = vsetq_lane_s32(vgetq_lane_s32(acc, 3) + d3, acc, 3);
        if (step) {
            m = vldrwq_s32(mult);
            s = vldrwq_s32(shift);
        }
        mult += step;
        shift += step;
        vstrbq_s32(out, requant_clamp(acc, m, s, k));
    }
}
#endif

#if !MVE_LEAN
/* fc_blocks16 for depth % 16 == 0 when no shift is positive, every block in one assembly
 * loop: compiled from C, the code around the dot products (pointers and constants reloaded
 * from the stack, four lane inserts) cost about 90 instructions a block; here about 37. The
 * sums seed the accumulators (one LDM), which reach a vector through memory (two STRD, one
 * VLDRW); what the registers cannot hold is read from `g`, through lr and xp between the
 * block loops (a register stays free for a frame pointer). The accumulators are r0, r2, r4
 * and r6 (VMLADAVA takes even registers). */
static void fc_blocks16_right(const int8_t *x, const int8_t *w, int32_t depth, int32_t blocks,
                              const int32_t *sums, const int32_t *mult, const int32_t *shift,
                              int per_channel, const out_consts *k, int8_t *out)
{
    uint32_t g[15];
    int32_t tensor_mult[4], tensor_shift[4]; /* per tensor: the one pair in four lanes */
    if (!per_channel) {
        vst1q_s32(tensor_mult, vdupq_n_s32(mult[0]));
        vst1q_s32(tensor_shift, vdupq_n_s32(shift[0]));
        mult = tensor_mult;
        shift = tensor_shift;
    }
    g[0] = (uint32_t)(uintptr_t)sums;
    g[1] = (uint32_t)(uintptr_t)mult;
    g[2] = (uint32_t)(uintptr_t)shift;
    g[3] = per_channel ? 16u : 0u; /* the constants' step per block */
    g[4] = (uint32_t)blocks;
    g[5] = (uint32_t)(depth >> 4);
    g[6] = (uint32_t)depth;
    g[7] = (uint32_t)(uintptr_t)x;
    g[8] = (uint32_t)vgetq_lane_s32(k->zp, 0);
    /* g[9] .. g[12]: the four accumulators on their way to a vector */
    register int32_t d0 __asm__("r0");
    register int32_t d1 __asm__("r2");
    register int32_t d2 __asm__("r4");
    register int32_t d3 __asm__("r6");
    const int8_t *w1 = w + depth, *w2 = w1 + depth, *w3 = w2 + depth, *xp;
    int32x4_t xv, wv, a, m, sh;
    __asm__ __volatile__( /* (volatile: its results are the stores) */
        "0:\n\t"
        "ldr     %[xp], [%[g], #28]\n\t"
        "ldr     lr, [%[g]]\n\t"
        "ldm     lr!, {r0, r2, r4, r6}\n\t" /* the block's sums seed the dot products */
        "str     lr, [%[g]]\n\t"
        "ldr     lr, [%[g], #20]\n\t"
        "dls     lr, lr\n"
        "1:\n\t"
        "vldrb.8 %q[xv], [%[xp]], #16\n\t"
        "vldrb.8 %q[wv], [%[w0]], #16\n\t"
        "vmladava.s8 r0, %q[xv], %q[wv]\n\t"
        "vldrb.8 %q[wv], [%[w1]], #16\n\t"
        "vmladava.s8 r2, %q[xv], %q[wv]\n\t"
        "vldrb.8 %q[wv], [%[w2]], #16\n\t"
        "vmladava.s8 r4, %q[xv], %q[wv]\n\t"
        "vldrb.8 %q[wv], [%[w3]], #16\n\t"
        "vmladava.s8 r6, %q[xv], %q[wv]\n\t"
        "le      lr, 1b\n\t"
        "strd    r0, r2, [%[g], #36]\n\t"
        "strd    r4, r6, [%[g], #44]\n\t"
        "vldrw.32 %q[a], [%[g], #36]\n\t"
        "ldr     lr, [%[g], #12]\n\t" /* the multipliers and shifts of the block */
        "ldr     %[xp], [%[g], #4]\n\t"   /* (xp: free until the next block) */
        "vldrw.32 %q[m], [%[xp]]\n\t"
        "add     %[xp], %[xp], lr\n\t"
        "str     %[xp], [%[g], #4]\n\t"
        "ldr     %[xp], [%[g], #8]\n\t"
        "vldrw.32 %q[sh], [%[xp]]\n\t"
        "add     %[xp], %[xp], lr\n\t"
        "str     %[xp], [%[g], #8]\n\t"
        "vqrdmulh.s32 %q[a], %q[a], %q[m]\n\t"
        "vand    %q[m], %q[a], %q[sh]\n\t" /* -1 for negative values when shift < 0 */
        "vshr.s32 %q[m], %q[m], #31\n\t"
        "vqadd.s32 %q[a], %q[a], %q[m]\n\t"
        "vrshl.s32 %q[a], %q[a], %q[sh]\n\t"
        "ldr     lr, [%[g], #32]\n\t"
        "vadd.i32 %q[a], %q[a], lr\n\t"
        "vmax.s32 %q[a], %q[a], %q[lo]\n\t"
        "vmin.s32 %q[a], %q[a], %q[hi]\n\t"
        "vstrb.32 %q[a], [%[out]], #4\n\t"
        "ldr     lr, [%[g], #24]\n\t" /* the next four rows: w3 is at the first */
        "mov     %[w0], %[w3]\n\t"
        "add     %[w1], %[w0], lr\n\t"
        "add     %[w2], %[w1], lr\n\t"
        "add     %[w3], %[w2], lr\n\t"
        "ldr     lr, [%[g], #16]\n\t"
        "subs    lr, lr, #1\n\t"
        "str     lr, [%[g], #16]\n\t"
        "bne     0b"
        : "=&r"(d0), "=&r"(d1), "=&r"(d2), "=&r"(d3), [w0] "+&r"(w), [w1] "+&r"(w1),
          [w2] "+&r"(w2), [w3] "+&r"(w3), [xp] "=&r"(xp), [out] "+&l"(out),
          [xv] "=&w"(xv), [wv] "=&w"(wv), [a] "=&w"(a), [m] "=&w"(m), [sh] "=&w"(sh)
        : [g] "r"(g), [lo] "w"(k->min), [hi] "w"(k->max)
        : "lr", "cc", "memory");
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
    (void)ctx;
    (void)filter_dims;
    if (params->filter_layout != 0) {
        return 0; /* the Cortex-M4/M7 layout: mcugen builds it for DSP targets only */
    }
    const int32_t depth = input_dims->c, units = output_dims->c, batch = input_dims->n;
    const int per_channel = params->per_channel;
    const int32_t *mult = quant->multiplier, *shift = quant->shift;
    const out_consts k =
        make_out_consts(params->output_offset, params->activation, shift, per_channel ? units : 1);
    int32x4_t m = vdupq_n_s32(mult[0]), s = vdupq_n_s32(shift[0]);
    const int32_t full = units & ~3; /* units in whole blocks of four */
    for (int32_t b = 0; b < batch; ++b) {
        const int8_t *x = input + b * depth, *w = filter;
        int8_t *out = output + b * units;
        int32_t u = 0;
#if !MVE_LEAN
        if (params->kernel_sums != NULL && (depth % 16 == 0 || depth < 16) && full > 0) {
            if (depth >= 16 && !k.left) {
                fc_blocks16_right(x, w, depth, full / 4, params->kernel_sums, mult, shift,
                                  per_channel, &k, out);
            } else {
                fc_blocks16(x, w, depth, full / 4, params->kernel_sums, mult, shift,
                            per_channel, &k, out);
            }
            u = full;
            w += full * depth;
        }
#endif
        for (; u < units; u += 4, w += 4 * depth) {
            /* a last, partial block repeats its last row (those lanes are not stored) */
            const int32_t last_row = u < full ? 3 : units - 1 - u;
            const int32x4_t acc = vaddq_s32(dot4(w, depth, last_row, x),
                                            fc_sums4(params, filter, bias, depth, u, units));
            if (per_channel) {
                const mve_pred16_t lanes = vctp32q((uint32_t)(units - u));
                m = vldrwq_z_s32(mult + u, lanes);
                s = vldrwq_z_s32(shift + u, lanes);
            }
            const int32x4_t y = requant_clamp(acc, m, s, &k);
            if (u < full) {
                vstrbq_s32(out + u, y);
            } else {
                vstrbq_p_s32(out + u, y, vctp32q((uint32_t)(units - u)));
            }
        }
    }
    return 1;
}

#endif /* MCUGEN_FAST_MVE */
