/* mcugen runtime: the int8 ADD/SUB fast paths' interface, internal to mcugen_elementwise.c.
 *
 * Ops: ADD and SUB, int8, where both inputs step by 0 or 1 along the innermost loop level.
 * Reference arithmetic: TFLite's AddFunc (see mcugen_elementwise.h), bit-exact.
 *
 * mcugen_elementwise.c prepares the call's constants (the conditions below) and, when a path is
 * compiled in (MCUGEN_FAST_DSP or MCUGEN_FAST_MVE, mcugen_platform.h), hands whole blocks of
 * four elements to it; the last count % 4 elements and every other configuration run the
 * portable row.
 *   MCUGEN_FAST_DSP  mcugen_elementwise_fast_dsp.c: SMMULR/SMMLAR rescales, SSAT, BFI packing
 *                    and an SSUB8 + SEL clamp, four elements a word.
 *   MCUGEN_FAST_MVE  mcugen_elementwise_fast_mve.c: four int32 lanes, VQRDMLAH + VRSHL rescales,
 *                    a narrowing store.
 * No scratch.
 *
 * The fast rows take the parameters TFLite's Prepare makes: left_shift 20, offsets in
 * [-128, 128] (so |x + offset| <= 256), and one input, E, with multiplier 2^30 and shift 0 (the
 * input of the larger scale), whose rescale is exact: SRDHM((x + o) << 20, 2^30) = (x + o) << 19.
 * The other input, G, and the output are rescaled with a multiplier m >= 0 and a shift -r <= -1:
 * then SRDHM(v, m) has v's sign or is 0, and RoundingDivideByPOT(SRDHM(v, m), r) equals
 * (SRDHM(v, m) + 2^(r-1) - [v < 0]) >> r (ties away from zero; where SRDHM is 0 the -1 changes
 * nothing, as 2^(r-1) - 1 < 2^r). With both inputs exact, G's (2^30, 0) is replaced by
 * (2^31 - 1, 1), which gives the same (x + o) << 19 for |x + o| <= 256. |aE|, |aG| <= 2^27 + 1,
 * so no sum below overflows. SUB negates E's term, which is exact. Any other configuration
 * (and steps other than 0 or 1) runs the portable row.
 */
/* mcugen: kernel-internal (the generated model does not include this header) */
#ifndef MCUGEN_ELEMENTWISE_FAST_H
#define MCUGEN_ELEMENTWISE_FAST_H

#include <stdint.h>

#include "mcugen_elementwise.h"
#include "mcugen_nn_types.h"
#include "mcugen_platform.h" /* which path: MCUGEN_FAST_MVE, MCUGEN_FAST_DSP or neither */

/* What one kernel's per-element arithmetic reads: at most one quant struct and a clamp. */
typedef struct {
    const mcugen_rescale_quant_params *rescale;
    const mcugen_pot_quant_params *pot;
    const mcugen_mul_quant_params *mul;
    const mcugen_prelu_quant_params *prelu;
    int32_t min;
    int32_t max;
    float min_f32;
    float max_f32;
} mcugen_elementwise_args;

typedef struct {
    mcugen_elementwise_args base; /* first member: the row functions get &base, cast back */
    int32_t fast;                 /* the fields below are set: the rows may take the fast loop */
    int32_t exact1;               /* E is input 1 (else input 2) */
    int32_t e_offset;             /* MVE: E's offset times e_scale, +-2^19 (SUB negates E's term) */
    int32_t e_scale;
    int32_t g_offset;             /* G: offset << 21 (DSP) or << 20 (MVE), multiplier, r, */
    int32_t g_multiplier;
    int32_t g_shift;
    int32_t g_round;              /* DSP: 2^(r-1) + (E's signed offset << 19) << r */
    int32_t o_multiplier;         /* MVE: negated when the loop computes -S */
    int32_t o_shift;
    int32_t o_offset;
    int32_t o_round;              /* DSP: 2^(r-1) + output offset << r */
    int32_t negate;               /* MVE: SUB with E = input 1 computes aG - aE = -S */
    int32_t clamp;                /* DSP: the activation is narrower than int8, */
    uint32_t low;                 /* its bounds in each byte */
    uint32_t high;
} mcugen_add_fast_s8_args;

/* The ISA part of the preparation, after mcugen_elementwise.c has checked the conditions above
 * and set exact1, g_multiplier, g_shift (r), o_multiplier, o_shift (ro) and o_offset: the path's
 * own constants from E's and G's offsets and the sign (1 ADD, -1 SUB). Returns 1 when the fast
 * blocks may run, 0 when the path's own bounds rule them out. */
int mcugen_add_fast_s8_prepare(mcugen_add_fast_s8_args *a, const mcugen_elementwise_params *params,
                               int32_t sign, int32_t e_offset, int32_t g_offset);

/* `blocks` blocks of four elements: E's and G's bytes in, the output's out. */
typedef void (*mcugen_add_fast_s8_blocks_fn)(int32_t blocks, const int8_t *xe, const int8_t *xg,
                                             int8_t *y, const mcugen_add_fast_s8_args *a);

/* ADD; SUB with E as input 2 (G - E) and as input 1 (E - G). */
void mcugen_add_fast_s8_blocks(int32_t blocks, const int8_t *xe, const int8_t *xg, int8_t *y,
                               const mcugen_add_fast_s8_args *a);
#if defined(MCUGEN_FAST_MVE)
/* Helium's blocks take the sign from the prepared constants: one function for all three */
#define mcugen_sub_fast_s8_blocks_e2 mcugen_add_fast_s8_blocks
#define mcugen_sub_fast_s8_blocks_e1 mcugen_add_fast_s8_blocks
#else
void mcugen_sub_fast_s8_blocks_e2(int32_t blocks, const int8_t *xe, const int8_t *xg, int8_t *y,
                                  const mcugen_add_fast_s8_args *a);
void mcugen_sub_fast_s8_blocks_e1(int32_t blocks, const int8_t *xe, const int8_t *xg, int8_t *y,
                                  const mcugen_add_fast_s8_args *a);
#endif

#endif /* MCUGEN_ELEMENTWISE_FAST_H */
