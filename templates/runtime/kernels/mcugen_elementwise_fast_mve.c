/* mcugen runtime: the int8 ADD/SUB fast path for Helium (MVE, Cortex-M55): four int32 lanes a
 * step, rescaled by VQRDMLAH + VRSHL, stored narrowed. Bit-exact with TFLite's reference
 * AddFunc; compiled only under MCUGEN_FAST_MVE. Conditions and the arithmetic argument:
 * mcugen_elementwise_fast.h. */
#include "mcugen_elementwise_fast.h"

#include "mcugen_fast_common.h"

#if defined(MCUGEN_FAST_MVE)

int mcugen_add_fast_s8_prepare(mcugen_add_fast_s8_args *a, const mcugen_elementwise_params *params,
                               int32_t sign, int32_t e_offset, int32_t g_offset)
{
    (void)params;
    a->e_scale = sign > 0 ? ((int32_t)1 << 19) : -((int32_t)1 << 19);
    a->e_offset = e_offset * a->e_scale;
    a->g_offset = g_offset * ((int32_t)1 << 20);
    a->negate = sign < 0 && a->exact1;
    if (a->negate) {
        a->o_multiplier = -a->o_multiplier;
    }
    return 1;
}

/* Four lanes a step: E by one VMLAS; G and the output by VQRDMLAH onto -[v < 0] (the output's
 * from VQDMULH(S, +-1): -[S < 0], or -[S > 0] where the loop has -S), then VRSHL; offset,
 * clamp, narrowing store. */
void mcugen_add_fast_s8_blocks(int32_t blocks, const int8_t *xe, const int8_t *xg, int8_t *y,
                               const mcugen_add_fast_s8_args *a)
{
    const int32x4_t e_scale = vdupq_n_s32(a->e_scale), g_scale = vdupq_n_s32((int32_t)1 << 20);
    const int32x4_t low = vdupq_n_s32(a->base.min), high = vdupq_n_s32(a->base.max);
    const int32_t e_offset = a->e_offset, g_offset = a->g_offset;
    const int32_t g_multiplier = a->g_multiplier, g_shift = -a->g_shift;
    const int32_t sign = a->negate ? -1 : 1, o_multiplier = a->o_multiplier;
    const int32_t o_shift = -a->o_shift, o_offset = a->o_offset;
    for (int32_t i = 0; i < blocks; ++i) {
        const int32x4_t ae = vmlasq_n_s32(vldrbq_s32(xe), e_scale, e_offset);
        const int32x4_t g = vmlasq_n_s32(vldrbq_s32(xg), g_scale, g_offset);
        const int32x4_t ag =
            vrshlq_n_s32(vqrdmlahq_n_s32(vshrq_n_s32(g, 31), g, g_multiplier), g_shift);
        const int32x4_t s = vaddq_s32(ae, ag);
        int32x4_t v = vqrdmlahq_n_s32(vqdmulhq_n_s32(s, sign), s, o_multiplier);
        v = vaddq_n_s32(vrshlq_n_s32(v, o_shift), o_offset);
        vstrbq_s32(y, vminq_s32(vmaxq_s32(v, low), high));
        xe += 4, xg += 4, y += 4;
    }
}

#else
typedef int mcugen_elementwise_fast_mve_unused; /* ISO C: a translation unit is never empty */
#endif
