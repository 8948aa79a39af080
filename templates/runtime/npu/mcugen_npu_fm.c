/*
 * mcugen_npu_fm.c - the engine's shared infrastructure: feature-map views, the OFM output stage
 * and the kernel geometry (see mcugen_npu_engine_internal.h and docs/npu.md, section Engine).
 */
#include "mcugen_npu_engine_internal.h"

#include <stddef.h>

/* ---- Feature maps ------------------------------------------------------------------------------ */

enum mcugen_npu_fault mcugen_npu_fm_format(uint16_t precision, int is_ofm, uint32_t *elem_bytes, int *is_signed,
                                           int *brick16)
{
    uint32_t bits = is_ofm ? MCUGEN_NPU_OFM_PREC_BITS(precision) : MCUGEN_NPU_IFM_PREC_BITS(precision);
    uint32_t format = is_ofm ? MCUGEN_NPU_OFM_PREC_FORMAT(precision) : MCUGEN_NPU_IFM_PREC_FORMAT(precision);
    if (bits > 2u || format > MCUGEN_NPU_FORMAT_NHCWB16) {
        return MCUGEN_NPU_FAULT_UNSUPPORTED;
    }
    *elem_bytes = 1u << bits;
    *is_signed = (int)(precision & 1u);
    *brick16 = format == MCUGEN_NPU_FORMAT_NHCWB16;
    return MCUGEN_NPU_FAULT_NONE;
}

/* Bytes from a tile's base to one past its last element (the device's footprint rule). */
static uint64_t tile_bytes(const struct mcugen_npu_fm_view *v, uint32_t rows, uint32_t cols)
{
    uint64_t e = v->elem_bytes;
    uint64_t sx = v->brick16 ? 16u * e : v->stride_x;
    uint64_t sc = v->brick16 ? v->stride_c : 16u * e;
    uint64_t c_last = (uint64_t)v->depth - 1u;
    uint64_t c_term = (c_last / 16u) * sc + (c_last % 16u) * e;
    if (v->depth > 16u && (c_last / 16u - 1u) * sc + 15u * e > c_term) {
        c_term = (c_last / 16u - 1u) * sc + 15u * e;
    }
    return (uint64_t)(rows - 1u) * v->stride_y + (uint64_t)(cols - 1u) * sx + c_term + e;
}

enum mcugen_npu_fault mcugen_npu_fm_view_init(struct mcugen_npu_fm_view *view, struct mcugen_npu_device *dev,
                                              const struct mcugen_npu_fm *fm, int is_ofm, uint32_t h, uint32_t w,
                                              uint32_t c)
{
    uint32_t rows[4], cols[4];
    int used[4], t;
    enum mcugen_npu_fault fault = mcugen_npu_fm_format(fm->precision, is_ofm, &view->elem_bytes, &view->is_signed,
                                                       &view->brick16);
    if (fault != MCUGEN_NPU_FAULT_NONE) {
        return fault;
    }
    if (h == 0u || w == 0u || c == 0u) {
        return MCUGEN_NPU_FAULT_ENGINE;
    }
    view->height = h;
    view->width = w;
    view->depth = c;
    view->height0 = fm->height0_m1 + 1u;
    view->height1 = fm->height1_m1 + 1u;
    view->width0 = fm->width0_m1 + 1u;
    view->stride_x = fm->stride_x;
    view->stride_y = fm->stride_y;
    view->stride_c = fm->stride_c;
    used[0] = 1;
    rows[0] = h < view->height0 ? h : view->height0;
    cols[0] = w < view->width0 ? w : view->width0;
    used[1] = w > view->width0;
    rows[1] = h < view->height1 ? h : view->height1;
    cols[1] = w - cols[0];
    used[2] = h > view->height0;
    rows[2] = h - rows[0];
    cols[2] = cols[0];
    used[3] = w > view->width0 && h > view->height1;
    rows[3] = h - rows[1];
    cols[3] = cols[1];
    for (t = 0; t < 4; ++t) {
        view->tile[t] = NULL;
        if (used[t]) {
            view->tile[t] = mcugen_npu_region_ptr(dev, fm->region, fm->base[t], tile_bytes(view, rows[t], cols[t]));
            if (view->tile[t] == NULL) {
                return MCUGEN_NPU_FAULT_REGION_RANGE;
            }
        }
    }
    return MCUGEN_NPU_FAULT_NONE;
}

/* The address of element (y, x, c): its tile, then the layout's offset within the tile. */
static uint8_t *element(const struct mcugen_npu_fm_view *v, uint32_t y, uint32_t x, uint32_t c)
{
    uint8_t *base;
    uint64_t offset;
    if (x < v->width0) {
        if (y < v->height0) {
            base = v->tile[0];
        } else {
            base = v->tile[2];
            y -= v->height0;
        }
    } else {
        x -= v->width0;
        if (y < v->height1) {
            base = v->tile[1];
        } else {
            base = v->tile[3];
            y -= v->height1;
        }
    }
    if (v->brick16) {
        offset = (uint64_t)y * v->stride_y + (uint64_t)x * 16u * v->elem_bytes + (uint64_t)(c / 16u) * v->stride_c +
                 (uint64_t)(c % 16u) * v->elem_bytes;
    } else {
        offset = (uint64_t)y * v->stride_y + (uint64_t)x * v->stride_x + (uint64_t)c * v->elem_bytes;
    }
    return base + (size_t)offset;
}

int32_t mcugen_npu_fm_read(const struct mcugen_npu_fm_view *view, uint32_t y, uint32_t x, uint32_t c)
{
    const uint8_t *p = element(view, y, x, c);
    uint32_t raw = p[0];
    uint32_t i;
    for (i = 1; i < view->elem_bytes; ++i) {
        raw |= (uint32_t)p[i] << (8u * i);
    }
    if (view->elem_bytes == 4u) {
        return raw >= 0x80000000u ? -(int32_t)(~raw) - 1 : (int32_t)raw;
    }
    if (view->is_signed && (raw >> (8u * view->elem_bytes - 1u)) != 0u) {
        return (int32_t)raw - (int32_t)(1u << (8u * view->elem_bytes));
    }
    return (int32_t)raw;
}

void mcugen_npu_fm_write(const struct mcugen_npu_fm_view *view, uint32_t y, uint32_t x, uint32_t c, int32_t value)
{
    uint8_t *p = element(view, y, x, c);
    uint32_t raw = (uint32_t)value;
    uint32_t i;
    for (i = 0; i < view->elem_bytes; ++i) {
        p[i] = (uint8_t)(raw >> (8u * i));
    }
}

int32_t mcugen_npu_zero_point(uint16_t raw, int is_signed)
{
    return is_signed && raw >= 0x8000u ? (int32_t)raw - 0x10000 : (int32_t)raw;
}

/* ---- Arithmetic ------------------------------------------------------------------------------------ */

int64_t mcugen_npu_acc_wrap(int64_t acc, uint16_t acc_format)
{
    unsigned bits = acc_format == 1u ? 40u : 32u;
    uint64_t mask = (UINT64_C(1) << bits) - 1u;
    uint64_t u = (uint64_t)acc & mask;
    if ((u >> (bits - 1u)) != 0u) {
        return -(int64_t)(mask - u) - 1;
    }
    return (int64_t)u;
}

/* A 96-bit magnitude as hi:lo, and (hi:lo + add) >> shift saturated to 64 bits. */
struct wide {
    uint64_t hi, lo;
};

static struct wide wide_mul(uint64_t a, uint32_t b)
{
    struct wide w;
    uint64_t p_lo = (a & 0xFFFFFFFFu) * b;
    uint64_t p_hi = (a >> 32) * b;
    w.lo = p_lo + (p_hi << 32);
    w.hi = (p_hi >> 32) + (w.lo < p_lo);
    return w;
}

static uint64_t wide_add_shift(struct wide w, uint64_t add, uint32_t shift)
{
    uint64_t lo = w.lo + add;
    uint64_t hi = w.hi + (lo < w.lo);
    if (shift == 0u) {
        return hi != 0u ? UINT64_MAX : lo;
    }
    if ((hi >> shift) != 0u) {
        return UINT64_MAX;
    }
    return (lo >> shift) | (hi << (64u - shift));
}

static int64_t signed_of(int negative, uint64_t magnitude)
{
    if (magnitude > (uint64_t)INT64_MAX) {
        return negative ? INT64_MIN : INT64_MAX;
    }
    return negative ? -(int64_t)magnitude : (int64_t)magnitude;
}

/* floor(x + 1/2) of x = +-m / 2^shift */
static int64_t round_half_up(int negative, struct wide m, uint32_t shift)
{
    uint64_t half = shift == 0u ? 0u : UINT64_C(1) << (shift - 1u);
    if (shift == 0u) {
        return signed_of(negative, wide_add_shift(m, 0u, 0u));
    }
    if (negative) {
        if (m.hi == 0u && m.lo == 0u) {
            return 0;
        }
        /* -floor((m + half - 1) / 2^shift): m >= 1 here, so subtract 1 first */
        if (m.lo == 0u) {
            m.hi--;
        }
        m.lo--;
        return signed_of(1, wide_add_shift(m, half, shift));
    }
    return signed_of(0, wide_add_shift(m, half, shift));
}

int64_t mcugen_npu_scale(int64_t acc, uint32_t scale, uint32_t shift, uint32_t rounding)
{
    int negative = acc < 0;
    uint64_t magnitude = negative ? (uint64_t)(-(acc + 1)) + 1u : (uint64_t)acc;
    struct wide m = wide_mul(magnitude, scale);
    if (rounding == MCUGEN_NPU_ROUND_TRUNCATE) {
        return signed_of(negative, wide_add_shift(m, 0u, shift));
    }
    if (rounding == MCUGEN_NPU_ROUND_TFL && shift >= 31u) {
        /* SaturatingRoundingDoublingHighMul: (p + 2^30) / 2^31 for p >= 0, (p + 1 - 2^30) / 2^31 for
         * p < 0, truncated towards zero; then RoundingDivideByPowerOfTwo (ties away from zero). */
        uint32_t r = shift - 31u;
        uint64_t t = negative ? wide_add_shift(m, (UINT64_C(1) << 30) - 1u, 31u)
                              : wide_add_shift(m, UINT64_C(1) << 30, 31u);
        if (r > 0u) {
            t = (t >> r) + ((t >> (r - 1u)) & 1u);
        }
        return signed_of(negative && t != 0u, t);
    }
    return round_half_up(negative, m, shift);
}

/* ---- Output stage ---------------------------------------------------------------------------------- */

static void range_of(uint32_t elem_bytes, int is_signed, int64_t *lo, int64_t *hi)
{
    unsigned bits = 8u * elem_bytes;
    if (is_signed) {
        *lo = -((int64_t)1 << (bits - 1u));
        *hi = ((int64_t)1 << (bits - 1u)) - 1;
    } else {
        *lo = 0;
        *hi = ((int64_t)1 << bits) - 1;
    }
}

enum mcugen_npu_fault mcugen_npu_output_stage_init(struct mcugen_npu_output_stage *out,
                                                   const struct mcugen_npu_device *dev,
                                                   const struct mcugen_npu_state *state)
{
    uint32_t elem, function = MCUGEN_NPU_ACT_FUNCTION(state->activation);
    int is_signed, brick16;
    int64_t lo, hi;
    enum mcugen_npu_fault fault = mcugen_npu_fm_format(state->ofm.precision, 1, &elem, &is_signed, &brick16);
    if (fault != MCUGEN_NPU_FAULT_NONE) {
        return fault;
    }
    out->rounding = MCUGEN_NPU_OFM_PREC_ROUND(state->ofm.precision);
    if (out->rounding > MCUGEN_NPU_ROUND_NATURAL) {
        return MCUGEN_NPU_FAULT_UNSUPPORTED;
    }
    out->ofm_zero_point = mcugen_npu_zero_point(state->ofm.zero_point, is_signed);
    switch (MCUGEN_NPU_ACT_CLIP_RANGE(state->activation)) {
    case 0u: range_of(elem, is_signed, &lo, &hi); break;
    case 2u: range_of(1u, 0, &lo, &hi); break;
    case 3u: range_of(1u, 1, &lo, &hi); break;
    case 5u: range_of(2u, 1, &lo, &hi); break;
    default: return MCUGEN_NPU_FAULT_UNSUPPORTED;
    }
    /* ACTIVATION_MIN/MAX are 16-bit: a 32-bit OFM of the full clip range is not clamped by them
     * (Vela writes the int16 limits there for int32 outputs). */
    if (!(elem == 4u && MCUGEN_NPU_ACT_CLIP_RANGE(state->activation) == 0u)) {
        /* int16, as Vela writes them, each brought into the clip range (so is the result, even
         * for a corrupt min > max, which gives max) */
        int64_t amin = mcugen_npu_zero_point(state->activation_min, 1);
        int64_t amax = mcugen_npu_zero_point(state->activation_max, 1);
        amin = amin < lo ? lo : amin > hi ? hi : amin;
        amax = amax < lo ? lo : amax > hi ? hi : amax;
        lo = amin;
        hi = amax;
    }
    out->min = lo;
    out->max = hi;
    out->lut = NULL;
    out->lut_signed = 0;
    out->lut_kind = MCUGEN_NPU_LUT_8BIT;
    if (function >= MCUGEN_NPU_ACT_LUT_FIRST && function <= MCUGEN_NPU_ACT_LUT_LAST) {
        uint32_t clip = MCUGEN_NPU_ACT_CLIP_RANGE(state->activation);
        uint32_t offset = (function - MCUGEN_NPU_ACT_LUT_FIRST) * MCUGEN_NPU_LUT_SLOT_BYTES;
        uint32_t bytes = 256u;
        int64_t lut_lo, lut_hi;
        if (dev->shram_bytes < MCUGEN_NPU_LUT_BYTES) {
            return MCUGEN_NPU_FAULT_UNSUPPORTED;
        }
        if (elem == 2u && is_signed && clip == 0u) {
            /* the 16-bit LUT: the whole int16 range indexes 512 entries */
            out->lut_kind = MCUGEN_NPU_LUT_16BIT;
            bytes = 512u * 4u;
        } else {
            /* an 8-bit index: an 8-bit OFM, or a clip range forced to 8 bits; a 32-bit OFM reads
             * 32-bit entries (Vela's int32 OFMs) */
            if (!(elem == 1u || clip == 2u || clip == 3u)) {
                return MCUGEN_NPU_FAULT_UNSUPPORTED;
            }
            out->lut_signed = clip == 3u || (clip != 2u && is_signed);
            range_of(1u, out->lut_signed, &lut_lo, &lut_hi);
            if (out->min < lut_lo || out->max > lut_hi || elem == 2u) {
                return MCUGEN_NPU_FAULT_UNSUPPORTED;
            }
            if (elem == 4u) {
                out->lut_kind = MCUGEN_NPU_LUT_32BIT_ENTRY;
                bytes = 256u * 4u;
            }
        }
        if (offset + bytes > MCUGEN_NPU_LUT_BYTES) {
            return MCUGEN_NPU_FAULT_UNSUPPORTED; /* the table would run past the LUT area */
        }
        out->lut = dev->shram + (dev->shram_bytes - MCUGEN_NPU_LUT_BYTES) + offset;
    } else if (function != 0u) {
        return MCUGEN_NPU_FAULT_UNSUPPORTED; /* TANH, SIGMOID: not modelled */
    }
    return MCUGEN_NPU_FAULT_NONE;
}

static int32_t lut_word(const uint8_t *p)
{
    uint32_t raw = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return raw >= 0x80000000u ? -(int32_t)(~raw) - 1 : (int32_t)raw;
}

/* The 16-bit LUT: segment u >> 7 of u = v + 32768, its base plus slope * (u & 127) / 128 rounded
 * (ties up), saturated to int16: TFLite's int16 table lookup, for which Vela makes the table. */
static int32_t lut16(const uint8_t *lut, int64_t v)
{
    uint32_t u = (uint32_t)(v + 32768);
    uint32_t entry = (uint32_t)lut_word(lut + 4u * (u >> 7));
    int32_t base = (int32_t)(entry & 0xFFFFu) - ((entry & 0x8000u) != 0u ? 0x10000 : 0);
    int32_t slope = (int32_t)(entry >> 16) - ((entry & 0x80000000u) != 0u ? 0x10000 : 0);
    int32_t delta = slope * (int32_t)(u & 127u) + 64;
    int32_t r = base + (delta >= 0 ? delta / 128 : -((-delta + 127) / 128));
    return r < -32768 ? -32768 : r > 32767 ? 32767 : r;
}

int32_t mcugen_npu_output(const struct mcugen_npu_output_stage *out, int64_t scaled)
{
    int64_t v = scaled > INT64_MAX - 0x10000 ? INT64_MAX : scaled < INT64_MIN + 0x10000 ? INT64_MIN : scaled;
    v += out->ofm_zero_point;
    v = v < out->min ? out->min : v;
    v = v > out->max ? out->max : v;
    if (out->lut != NULL) {
        uint8_t b;
        if (out->lut_kind == MCUGEN_NPU_LUT_16BIT) {
            return lut16(out->lut, v);
        }
        if (out->lut_kind == MCUGEN_NPU_LUT_32BIT_ENTRY) {
            return lut_word(out->lut + 4u * (uint32_t)(out->lut_signed ? v + 128 : v));
        }
        b = out->lut[out->lut_signed ? v + 128 : v];
        return out->lut_signed ? (int32_t)b - (b >= 128u ? 256 : 0) : (int32_t)b;
    }
    return (int32_t)v;
}

/* ---- Kernel geometry ------------------------------------------------------------------------------- */

/* IFM rows (or columns) an operation reads: as the device's footprint check computes them. */
static uint32_t span_of(uint32_t ofm, uint32_t stride, uint32_t extent, uint32_t pad_a, uint32_t pad_b)
{
    int64_t n = (int64_t)(ofm - 1u) * stride + extent - pad_a - pad_b;
    return n < 1 ? 1u : (uint32_t)n;
}

enum mcugen_npu_fault mcugen_npu_kernel_geometry_init(struct mcugen_npu_kernel_geometry *g,
                                                      const struct mcugen_npu_state *s)
{
    uint32_t ks = s->kernel_stride;
    if ((ks & (1u << 5)) != 0u || s->ifm_upscale > MCUGEN_NPU_UPSCALE_TRANSPOSE) {
        return MCUGEN_NPU_FAULT_UNSUPPORTED; /* weight decomposition, an unknown upscale mode */
    }
    if (s->ifm_pad_top > MCUGEN_NPU_ENGINE_MAX_PAD || s->ifm_pad_left > MCUGEN_NPU_ENGINE_MAX_PAD ||
        s->ifm_pad_right > MCUGEN_NPU_ENGINE_MAX_PAD || s->ifm_pad_bottom > MCUGEN_NPU_ENGINE_MAX_PAD) {
        return MCUGEN_NPU_FAULT_UNSUPPORTED;
    }
    g->ofm_h = s->ofm_height_m1 + 1u;
    g->ofm_w = s->ofm_width_m1 + 1u;
    g->ofm_c = s->ofm_depth_m1 + 1u;
    g->ifm_c = s->ifm_depth_m1 + 1u;
    g->stride_y = MCUGEN_NPU_KSTRIDE_Y(ks);
    g->stride_x = MCUGEN_NPU_KSTRIDE_X(ks);
    g->dilation_y = MCUGEN_NPU_KSTRIDE_DILATION_Y(ks);
    g->dilation_x = MCUGEN_NPU_KSTRIDE_DILATION_X(ks);
    if (s->kernel_height_m1 % g->dilation_y != 0u || s->kernel_width_m1 % g->dilation_x != 0u) {
        return MCUGEN_NPU_FAULT_ENGINE; /* a dilated extent is (k - 1) * dilation + 1 */
    }
    g->kernel_h = s->kernel_height_m1 / g->dilation_y + 1u;
    g->kernel_w = s->kernel_width_m1 / g->dilation_x + 1u;
    g->pad_top = s->ifm_pad_top;
    g->pad_left = s->ifm_pad_left;
    g->upscale = s->ifm_upscale;
    g->span_h = span_of(g->ofm_h, g->stride_y, s->kernel_height_m1 + 1u, s->ifm_pad_top, s->ifm_pad_bottom);
    g->span_w = span_of(g->ofm_w, g->stride_x, s->kernel_width_m1 + 1u, s->ifm_pad_left, s->ifm_pad_right);
    g->ifm_h = g->upscale != MCUGEN_NPU_UPSCALE_NONE ? (g->span_h + 1u) / 2u : g->span_h;
    g->ifm_w = g->upscale != MCUGEN_NPU_UPSCALE_NONE ? (g->span_w + 1u) / 2u : g->span_w;
    return MCUGEN_NPU_FAULT_NONE;
}

int mcugen_npu_kernel_tap(const struct mcugen_npu_kernel_geometry *g, const struct mcugen_npu_fm_view *ifm,
                          int32_t ifm_zero_point, uint32_t oy, uint32_t ox, uint32_t ky, uint32_t kx, uint32_t c,
                          int32_t *value)
{
    uint64_t uy = (uint64_t)oy * g->stride_y + (uint64_t)ky * g->dilation_y;
    uint64_t ux = (uint64_t)ox * g->stride_x + (uint64_t)kx * g->dilation_x;
    if (uy < g->pad_top || ux < g->pad_left) {
        return MCUGEN_NPU_TAP_PAD;
    }
    uy -= g->pad_top;
    ux -= g->pad_left;
    if (uy >= g->span_h || ux >= g->span_w) {
        return MCUGEN_NPU_TAP_PAD;
    }
    if (g->upscale == MCUGEN_NPU_UPSCALE_NONE) {
        *value = mcugen_npu_fm_read(ifm, (uint32_t)uy, (uint32_t)ux, c);
    } else if (g->upscale == MCUGEN_NPU_UPSCALE_TRANSPOSE && ((uy | ux) & 1u) != 0u) {
        *value = ifm_zero_point;
    } else {
        *value = mcugen_npu_fm_read(ifm, (uint32_t)(uy / 2u), (uint32_t)(ux / 2u), c);
    }
    return MCUGEN_NPU_TAP_DATA;
}
