/* mcugen runtime: the int8 ADD/SUB fast path for the DSP extension (Cortex-M4/M7): four
 * elements a word, rescaled by SMMULR/SMMLAR, saturated by SSAT, packed by BFI, clamped by
 * SSUB8 + SEL. Bit-exact with TFLite's reference AddFunc; compiled only under MCUGEN_FAST_DSP.
 * Conditions and the arithmetic argument: mcugen_elementwise_fast.h. */
#include "mcugen_elementwise_fast.h"

#include "mcugen_fast_common.h"

#if defined(MCUGEN_FAST_DSP)

int mcugen_add_fast_s8_prepare(mcugen_add_fast_s8_args *a, const mcugen_elementwise_params *params,
                               int32_t sign, int32_t e_offset, int32_t g_offset)
{
    const int32_t r = a->g_shift, ro = a->o_shift;
    /* The SMMLARs add constants to |SRDHM| <= 2^28 + 2: the sums must stay below 2^31, so
     * |E's offset| << (19 + r) < 3 * 2^29 - 2^(r-1), and 128 << ro (ro <= 23) for the output. */
    const uint32_t e_abs = (uint32_t)(e_offset < 0 ? -e_offset : e_offset);
    if (ro > 23 || (19 + r > 30 ? e_abs != 0
                                : e_abs > ((0x60000000u - (1u << (r - 1)) - 1u) >> (19 + r)))) {
        return 0;
    }
    a->g_offset = g_offset * ((int32_t)1 << 21);
    a->g_round = (sign > 0 ? e_offset : -e_offset) * ((int32_t)1 << (19 + r > 30 ? 0 : 19 + r)) +
                 ((int32_t)1 << (r - 1));
    a->o_round = a->o_offset * ((int32_t)1 << ro) + ((int32_t)1 << (ro - 1));
    a->clamp = params->activation.min > -128 || params->activation.max < 127;
    a->low = (uint8_t)params->activation.min * 0x01010101u;
    a->high = (uint8_t)params->activation.max * 0x01010101u;
    return 1;
}

/* SMMLAR: acc + ((a * b + 2^31) >> 32), the rounded high word (not in ACLE). */
static inline int32_t smmlar(int32_t a, int32_t b, int32_t acc)
{
#if defined(__GNUC__)
    int32_t r;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(acc));
    return r;
#else
    return acc + (int32_t)(((int64_t)a * b + ((int64_t)1 << 31)) >> 32);
#endif
}

/* Byte v inserted at bit `at` of `word` (BFI; gcc 12 does not make one of the C). */
#if defined(__GNUC__)
#define bfi8(word, v, at)                                                                       \
    __extension__({                                                                             \
        uint32_t w_ = (word);                                                                   \
        __asm__("bfi %0, %1, %2, #8" : "+r"(w_) : "r"(v), "i"(at));                             \
        w_;                                                                                     \
    })
#else
#define bfi8(word, v, at) (((word) & ~(0xFFu << (at))) | (((uint32_t)(v) & 0xFFu) << (at)))
#endif

/* An empty asm that makes `p` depend on `v`: gcc would otherwise load all the bytes of a
 * block first and run out of registers. */
#if defined(__GNUC__)
#define after(p, v) __asm__("" : "+r"(p) : "r"(v))
#else
#define after(p, v) ((void)0)
#endif

/* The DSP blocks, one per way of combining the terms (COMBINE(ag, e): ag + e for ADD, ag - e or
 * e - ag for SUB as E is input 2 or 1), so that each is a single instruction and the loop's
 * constants fit the registers. G: A = (x + o) << 21 (|A| <= 2^29), SMMULR(A, m) is
 * SRDHM((x + o) << 20, m); the SMMLAR adds 2^(r-1) and E's offset term, (+-o_E << 19) << r,
 * so that E's term is just x << 19. The output: SMMULR(2S, m) is SRDHM(S, m); the SMMLAR adds
 * the rounding constant and the zero point << r; SSAT, four bytes packed, clamped by SEL. */
#define MCUGEN_ADD_ELEMENT(J, COMBINE)                                                          \
    do {                                                                                        \
        const int32_t A = (int32_t)((uint32_t)*xg++ << 21) + g_offset;                          \
        const int32_t ag =                                                                      \
            (smmlar(A, g_multiplier, g_round) - (int32_t)((uint32_t)A >> 31)) >> g_shift;       \
        const int32_t e = (int32_t)((uint32_t)*xe++ << 19);                                     \
        const int32_t s2 = 2 * (COMBINE);                                                       \
        const int32_t v =                                                                       \
            (smmlar(s2, o_multiplier, o_round) - (int32_t)((uint32_t)s2 >> 31)) >> o_shift;     \
        /* the first byte as is, the others inserted above it */                                \
        packed = J == 0 ? (uint32_t)__ssat(v, 8) : bfi8(packed, __ssat(v, 8), 8 * J);           \
        after(xg, packed);                                                                      \
        after(xe, packed);                                                                      \
    } while (0)

#define MCUGEN_ADD_BLOCKS(NAME, COMBINE)                                                        \
    void NAME(int32_t blocks, const int8_t *xe, const int8_t *xg, int8_t *y,                    \
              const mcugen_add_fast_s8_args *a)                                                 \
    {                                                                                           \
        const int32_t g_offset = a->g_offset, g_multiplier = a->g_multiplier;                  \
        const int32_t g_round = a->g_round, g_shift = a->g_shift;                              \
        const int32_t o_multiplier = a->o_multiplier, o_round = a->o_round;                    \
        const int32_t o_shift = a->o_shift;                                                     \
        const int32_t clamp = a->clamp;                                                         \
        for (const int8_t *end = y + 4 * blocks; y != end;) {                                   \
            uint32_t packed;                                                                    \
            MCUGEN_ADD_ELEMENT(0, COMBINE);                                                     \
            MCUGEN_ADD_ELEMENT(1, COMBINE);                                                     \
            MCUGEN_ADD_ELEMENT(2, COMBINE);                                                     \
            MCUGEN_ADD_ELEMENT(3, COMBINE);                                                     \
            if (clamp) {                                                                        \
                (void)__ssub8((int32_t)packed, (int32_t)a->low);                                \
                packed = __sel(packed, a->low);                                                 \
                (void)__ssub8((int32_t)packed, (int32_t)a->high);                               \
                packed = __sel(a->high, packed);                                                \
            }                                                                                   \
            store32(y, (int32_t)packed);                                                        \
            y += 4;                                                                             \
        }                                                                                       \
    }

MCUGEN_ADD_BLOCKS(mcugen_add_fast_s8_blocks, ag + e)
MCUGEN_ADD_BLOCKS(mcugen_sub_fast_s8_blocks_e2, ag - e)
MCUGEN_ADD_BLOCKS(mcugen_sub_fast_s8_blocks_e1, e - ag)
#undef MCUGEN_ADD_BLOCKS
#undef MCUGEN_ADD_ELEMENT

#else
typedef int mcugen_elementwise_fast_dsp_unused; /* ISO C: a translation unit is never empty */
#endif
