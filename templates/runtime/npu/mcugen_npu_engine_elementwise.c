/*
 * mcugen_npu_engine_elementwise.c - NPU_OP_ELEMENTWISE: binary ADD, SUB, MUL, MIN, MAX, SHL, SHR
 * and unary LRELU, ABS, CLZ, with IFM2 as a feature map (broadcast along h, w and c) or a scalar,
 * reversed operands.  The output stage (mcugen_npu_fm.c) adds the OFM zero point, clamps and
 * applies the LUT (8-bit; 32-bit entries for Vela's int32 OFMs; the 16-bit interpolating one).
 *
 * The arithmetic is the one Vela 5.2 programs for TFLite's kernels (docs/npu.md, section Engine):
 * operand A is the IFM (the IFM2 with reversed operands), B the other; a, b are A, B minus their
 * zero points.
 *  - ADD/SUB with IFM scale mode 0: a * OPA_SCALE +- b * OPB_SCALE; with mode 1 (2 mirrors it) the
 *    scaled operand is TFLite's `(a << S) * multiplier` rounded in the IFM's rounding mode
 *    (S = 20 for 8-bit, 15 for 16-bit IFMs; OPA_SCALE/shift hold the multiplier times 2^S) and
 *    the other is b << (S - 1), TFLite's exact half; then the OFM scale.
 *  - MUL of 8/16-bit operands: a * b, then the OFM scale; of a 32-bit operand: a * b divided by
 *    2^shift of OFM_SCALE alone (the 32-bit multiplier does not scale, as Vela's lowerings
 *    assume), in TFL mode with TFLite's double rounding (shift 31: SaturatingRoundingDoubling-
 *    HighMul, softmax; shift 34: MultiplyByQuantizedMultiplier with b the multiplier, MEAN).
 *  - ABS: |a| and LRELU: a < 0 ? a scaled : a, with the OFM scale.
 *  - MIN/MAX: of a and b; SHL/SHR: a shifted by b (SHR rounds in the OFM mode, the shift amount
 *    is taken as 0..63, SHL saturates); CLZ: leading zeros of a as a 32-bit word.  No OFM scale.
 * Everything else (IFM upscaling, other scale modes, 16-bit-mode operand scales above 65535, a
 * 32-bit operand with a 32-bit operand scale, an IFM depth other than the OFM's) is refused.
 */
#include "mcugen_npu_engine_internal.h"

struct ew_op {
    uint32_t mode;
    uint32_t h, w, c;
    struct mcugen_npu_fm_view ifm, ifm2, ofm;
    int binary, scalar, reversed, bcast_h, bcast_w, bcast_c;
    int32_t zp_ifm, zp_ifm2, scalar_value;
    uint32_t scale_mode, ifm_round, input_shift;
    int wide;                  /* an operand is 32-bit */
    struct mcugen_npu_output_stage out;
    const struct mcugen_npu_state *s;
};

static int is_binary(uint32_t mode)
{
    return mode != MCUGEN_NPU_ELEM_LRELU && mode != MCUGEN_NPU_ELEM_ABS && mode != MCUGEN_NPU_ELEM_CLZ;
}

/* floor(v / 2^shift + 1/2) (TFL, NATURAL) or towards zero (TRUNCATE), for |v| <= 2^62. */
static int64_t round_shift(int64_t v, uint32_t shift, uint32_t rounding)
{
    int64_t q, r;
    if (shift == 0u) {
        return v;
    }
    if (shift > 62u) {
        return 0; /* |v| / 2^63 < 1/2 */
    }
    if (rounding == MCUGEN_NPU_ROUND_TRUNCATE) {
        return v / ((int64_t)1 << shift);
    }
    v += (int64_t)1 << (shift - 1u);
    q = v / ((int64_t)1 << shift);
    r = v % ((int64_t)1 << shift);
    return r < 0 ? q - 1 : q; /* floor */
}

/* A 32-bit MUL's product p (|p| <= 2^62) divided by 2^shift in rounding mode `rounding`: TFL
 * is TFLite's double rounding, as mcugen_npu_scale does it with the second operand as the
 * multiplier (shift >= 31: round at 2^31 with ties up, then by 2^(shift-31) with ties away
 * from zero; below 31 one rounding). */
static int64_t round_product(int64_t p, uint32_t shift, uint32_t rounding)
{
    int64_t high;
    uint32_t rest;
    if (rounding != MCUGEN_NPU_ROUND_TFL || shift <= 31u) {
        return round_shift(p, shift, rounding);
    }
    high = round_shift(p, 31u, MCUGEN_NPU_ROUND_NATURAL);
    rest = shift - 31u;
    if (rest > 62u) {
        return 0;
    }
    /* ties away from zero: round the magnitude half up */
    if (high < 0) {
        return -round_shift(-high, rest, MCUGEN_NPU_ROUND_NATURAL);
    }
    return round_shift(high, rest, MCUGEN_NPU_ROUND_NATURAL);
}

static int64_t shift_left_saturating(int64_t v, int64_t amount)
{
    uint32_t n = amount < 0 ? 0u : amount > 63 ? 63u : (uint32_t)amount;
    int64_t limit = n == 0u ? INT64_MAX : INT64_MAX >> n;
    if (v > limit) {
        return INT64_MAX;
    }
    if (v < -limit) {
        return INT64_MIN;
    }
    return v * ((int64_t)1 << n);
}

static uint32_t clamp_shift(int64_t amount)
{
    return amount < 0 ? 0u : amount > 63 ? 63u : (uint32_t)amount;
}

static int64_t count_leading_zeros(int64_t a)
{
    uint32_t word = (uint32_t)(a & 0xFFFFFFFF);
    int64_t n = 0;
    while (n < 32 && (word & 0x80000000u) == 0u) {
        word <<= 1;
        ++n;
    }
    return n;
}

/* An operand of ADD/SUB after the IFM scaling (a, b without zero point). */
static int64_t add_operand(const struct ew_op *op, int64_t v, int is_a)
{
    const struct mcugen_npu_state *s = op->s;
    if (op->scale_mode == 0u) {
        return v * (int64_t)(is_a ? s->opa_scale : s->opb_scale);
    }
    if (is_a == (op->scale_mode == 1u)) { /* mode 1 scales A, mode 2 B, both by OPA_SCALE */
        return mcugen_npu_scale(v * ((int64_t)1 << op->input_shift), s->opa_scale,
                                (uint32_t)s->opa_scale_shift + op->input_shift, op->ifm_round);
    }
    return v * ((int64_t)1 << (op->input_shift - 1u));
}

static int64_t ofm_scaled(const struct ew_op *op, int64_t acc)
{
    return mcugen_npu_scale(mcugen_npu_acc_wrap(acc, 1u), op->s->ofm_scale, op->s->ofm_scale_shift,
                            op->out.rounding);
}

/* The operation's value for operands a, b (zero points removed), before the OFM zero point. */
static int64_t compute(const struct ew_op *op, int64_t a, int64_t b)
{
    switch (op->mode) {
    case MCUGEN_NPU_ELEM_ADD:
        return ofm_scaled(op, add_operand(op, a, 1) + add_operand(op, b, 0));
    case MCUGEN_NPU_ELEM_SUB:
        return ofm_scaled(op, add_operand(op, a, 1) - add_operand(op, b, 0));
    case MCUGEN_NPU_ELEM_MUL:
        if (op->wide) {
            return round_product(a * b, op->s->ofm_scale_shift, op->out.rounding);
        }
        return ofm_scaled(op, a * b);
    case MCUGEN_NPU_ELEM_MIN: return a < b ? a : b;
    case MCUGEN_NPU_ELEM_MAX: return a > b ? a : b;
    case MCUGEN_NPU_ELEM_SHL: return shift_left_saturating(a, b);
    case MCUGEN_NPU_ELEM_SHR: return round_shift(a, clamp_shift(b), op->out.rounding);
    case MCUGEN_NPU_ELEM_CLZ: return count_leading_zeros(a);
    case MCUGEN_NPU_ELEM_ABS: return ofm_scaled(op, a < 0 ? -a : a);
    default: /* LRELU */
        return a < 0 ? ofm_scaled(op, a) : a;
    }
}

static void run(const struct ew_op *op)
{
    uint32_t y, x, c;
    for (y = 0; y < op->h; ++y) {
        for (x = 0; x < op->w; ++x) {
            for (c = 0; c < op->c; ++c) {
                int64_t first = (int64_t)mcugen_npu_fm_read(&op->ifm, y, x, c) - op->zp_ifm;
                int64_t second = 0;
                if (op->binary) {
                    second = op->scalar ? op->scalar_value
                                        : mcugen_npu_fm_read(&op->ifm2, op->bcast_h ? 0u : y, op->bcast_w ? 0u : x,
                                                             op->bcast_c ? 0u : c);
                    second -= op->zp_ifm2;
                }
                mcugen_npu_fm_write(&op->ofm, y, x, c,
                                    mcugen_npu_output(&op->out, op->reversed ? compute(op, second, first)
                                                                             : compute(op, first, second)));
            }
        }
    }
}

static enum mcugen_npu_fault operands_setup(struct ew_op *op, struct mcugen_npu_device *dev)
{
    const struct mcugen_npu_state *s = op->s;
    uint32_t bcast = s->ifm2_broadcast;
    enum mcugen_npu_fault fault = mcugen_npu_fm_view_init(&op->ifm, dev, &s->ifm, 0, op->h, op->w, op->c);
    if (fault != MCUGEN_NPU_FAULT_NONE || !op->binary) {
        return fault;
    }
    op->scalar = (bcast & MCUGEN_NPU_BCAST_SCALAR) != 0u;
    op->reversed = (bcast & MCUGEN_NPU_BCAST_REVERSED) != 0u;
    op->bcast_h = (bcast & MCUGEN_NPU_BCAST_H) != 0u;
    op->bcast_w = (bcast & MCUGEN_NPU_BCAST_W) != 0u;
    op->bcast_c = (bcast & MCUGEN_NPU_BCAST_C) != 0u;
    if (op->scalar) {
        uint32_t bytes;
        int is_signed, brick16;
        fault = mcugen_npu_fm_format(s->ifm2.precision, 0, &bytes, &is_signed, &brick16);
        op->ifm2.elem_bytes = bytes;
        /* a 16-bit parameter: sign-extended for a signed or 32-bit IFM2 */
        op->scalar_value = mcugen_npu_zero_point(s->ifm2_scalar, is_signed || bytes == 4u);
        return fault;
    }
    return mcugen_npu_fm_view_init(&op->ifm2, dev, &s->ifm2, 0, op->bcast_h ? 1u : op->h, op->bcast_w ? 1u : op->w,
                                   op->bcast_c ? 1u : op->c);
}

enum mcugen_npu_fault mcugen_npu_engine_elementwise(struct mcugen_npu_device *dev, uint32_t param,
                                                    const struct mcugen_npu_state *state)
{
    struct ew_op op;
    enum mcugen_npu_fault fault;
    uint32_t ifm_bits;
    int add_sub;
    if (param > MCUGEN_NPU_ELEM_SHL || state->ifm_upscale != MCUGEN_NPU_UPSCALE_NONE ||
        state->ifm_depth_m1 != state->ofm_depth_m1 || state->ofm_scale_shift > 63u || state->opa_scale_shift > 63u) {
        return MCUGEN_NPU_FAULT_UNSUPPORTED;
    }
    op.s = state;
    op.mode = param;
    op.binary = is_binary(param);
    op.scalar = op.reversed = op.bcast_h = op.bcast_w = op.bcast_c = 0;
    op.scalar_value = 0;
    op.h = state->ofm_height_m1 + 1u;
    op.w = state->ofm_width_m1 + 1u;
    op.c = state->ofm_depth_m1 + 1u;
    fault = operands_setup(&op, dev);
    if (fault == MCUGEN_NPU_FAULT_NONE) {
        fault = mcugen_npu_fm_view_init(&op.ofm, dev, &state->ofm, 1, op.h, op.w, op.c);
    }
    if (fault == MCUGEN_NPU_FAULT_NONE) {
        fault = mcugen_npu_output_stage_init(&op.out, dev, state);
    }
    if (fault != MCUGEN_NPU_FAULT_NONE) {
        return fault;
    }
    op.zp_ifm = mcugen_npu_zero_point(state->ifm.zero_point, op.ifm.is_signed || op.ifm.elem_bytes == 4u);
    op.zp_ifm2 = 0;
    if (op.binary) {
        int ifm2_signed = op.scalar ? 1 : op.ifm2.is_signed || op.ifm2.elem_bytes == 4u;
        op.zp_ifm2 = mcugen_npu_zero_point(state->ifm2.zero_point, ifm2_signed);
    }
    op.wide = op.ifm.elem_bytes == 4u || (op.binary && op.ifm2.elem_bytes == 4u);
    op.scale_mode = MCUGEN_NPU_IFM_PREC_SCALE_MODE(state->ifm.precision);
    op.ifm_round = MCUGEN_NPU_IFM_PREC_ROUND(state->ifm.precision);
    ifm_bits = 8u * op.ifm.elem_bytes;
    op.input_shift = ifm_bits == 8u ? 20u : 15u;
    /* scale mode 0 has 16-bit operand scales (Vela: up to 32768, so unsigned); the 32-bit scale's
     * shift, with the input shift, must be one that mcugen_npu_scale takes. Only ADD/SUB read
     * the operand scales: a MUL after an ADD in one stream keeps the ADD's OPA_SCALE (Vela does
     * not rewrite it either), which is no fault. */
    add_sub = param == MCUGEN_NPU_ELEM_ADD || param == MCUGEN_NPU_ELEM_SUB;
    if (op.scale_mode > 2u || op.ifm_round > MCUGEN_NPU_ROUND_NATURAL ||
        (op.scale_mode == 0u && add_sub && (state->opa_scale > 0xFFFFu || state->opb_scale > 0xFFFFu)) ||
        (op.scale_mode != 0u && (op.wide || !add_sub ||
                                 state->opa_scale_shift + op.input_shift > 63u))) {
        return MCUGEN_NPU_FAULT_UNSUPPORTED;
    }
    run(&op);
    return MCUGEN_NPU_FAULT_NONE;
}
