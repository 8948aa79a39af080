/* mcugen runtime: the fast int8 conv, depthwise and FULLY_CONNECTED paths for Helium (MVE,
 * Cortex-M55). See mcugen_conv_fast.h. */
#include "mcugen_conv_fast.h"
#include "mcugen_fast_common.h"

#if defined(MCUGEN_FAST_MVE)

int32_t mcugen_conv_fast_s8_buffer_size(const mcugen_dims *filter_dims)
{
    /* two int8 columns, 3 * out_c int32 sums */
    return 2 * round_up4(filter_dims->h * filter_dims->w * filter_dims->c) + 12 * filter_dims->n;
}

int32_t mcugen_dw_conv_fast_s8_buffer_size(const mcugen_dims *filter_dims)
{
    return 4 * filter_dims->c; /* one pixel's int32 sums */
}

int32_t mcugen_fc_fast_s8_buffer_size(const mcugen_dims *filter_dims)
{
    (void)filter_dims;
    return 0;
}
/* Requantize, add the zero point, clamp and store the low bytes of the active lanes. */
static inline void finish_x4(int8_t *out, int32x4_t acc, const int32_t *mult,
                             const int32_t *shift, int32_t zp, mcugen_activation act,
                             mve_pred16_t p)
{
    int32x4_t y = requantize_x4(acc, vldrwq_z_s32(mult, p), vldrwq_z_s32(shift, p));
    y = vaddq_n_s32(y, zp);
    y = vmaxq_s32(y, vdupq_n_s32(act.min));
    y = vminq_s32(y, vdupq_n_s32(act.max));
    vstrbq_p_s32(out, y, p);
}

/* The output zero point and clamp as vectors, made once per call. */
typedef struct {
    int32x4_t zp;
    int32x4_t min;
    int32x4_t max;
} out_consts;

static inline out_consts make_out_consts(int32_t zp, mcugen_activation act)
{
    out_consts k;
    k.zp = vdupq_n_s32(zp);
    k.min = vdupq_n_s32(act.min);
    k.max = vdupq_n_s32(act.max);
    return k;
}

/* Requantize, add the zero point, clamp. */
static inline int32x4_t requant_clamp(int32x4_t acc, int32x4_t mult, int32x4_t shift,
                                      const out_consts *k)
{
    const int32x4_t y = vaddq_s32(requantize_x4(acc, mult, shift), k->zp);
    return vminq_s32(vmaxq_s32(y, k->min), k->max);
}

/* out[c] = requantized, clamped accs[c] for c < n: full blocks of four, then the rest. */
static inline void requant_store(int8_t *out, const int32_t *accs, const int32_t *mult,
                                 const int32_t *shift, int32_t n, const out_consts *k)
{
    int32_t c = 0;
    for (; c + 4 <= n; c += 4) {
        vstrbq_s32(out + c, requant_clamp(vldrwq_s32(accs + c), vldrwq_s32(mult + c),
                                          vldrwq_s32(shift + c), k));
    }
    if (c < n) {
        const mve_pred16_t lanes = vctp32q((uint32_t)(n - c));
        vstrbq_p_s32(out + c,
                     requant_clamp(vldrwq_z_s32(accs + c, lanes), vldrwq_z_s32(mult + c, lanes),
                                   vldrwq_z_s32(shift + c, lanes), k),
                     lanes);
    }
}

/* Three rows (stride size) against two columns, plus the rows' sums:
 * acc0[r] = sums[r] + w_r . x0 and acc1[r] = sums[r] + w_r . x1 (modulo 2^32). */
static inline void dot_3x2(const int8_t *w, const int8_t *x0, const int8_t *x1, int32_t size,
                           const int32_t *sums, int32_t *acc0, int32_t *acc1)
{
    const int8_t *w1 = w + size, *w2 = w1 + size;
    int32_t a0 = 0, a1 = 0, a2 = 0, b0 = 0, b1 = 0, b2 = 0;
    int32_t blocks = size >> 4;
    while (blocks-- > 0) {
        const int8x16_t xa = vldrbq_s8(x0), xb = vldrbq_s8(x1);
        const int8x16_t v0 = vldrbq_s8(w), v1 = vldrbq_s8(w1), v2 = vldrbq_s8(w2);
        x0 += 16;
        x1 += 16;
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
    if ((size & 15) != 0) {
        const mve_pred16_t p = vctp8q((uint32_t)(size & 15));
        const int8x16_t xa = vldrbq_z_s8(x0, p), xb = vldrbq_z_s8(x1, p);
        const int8x16_t v0 = vldrbq_z_s8(w, p), v1 = vldrbq_z_s8(w1, p);
        const int8x16_t v2 = vldrbq_z_s8(w2, p);
        a0 = vmladavaq_s8(a0, xa, v0);
        b0 = vmladavaq_s8(b0, xb, v0);
        a1 = vmladavaq_s8(a1, xa, v1);
        b1 = vmladavaq_s8(b1, xb, v1);
        a2 = vmladavaq_s8(a2, xa, v2);
        b2 = vmladavaq_s8(b2, xb, v2);
    }
    acc0[0] = (int32_t)((uint32_t)a0 + (uint32_t)sums[0]);
    acc0[1] = (int32_t)((uint32_t)a1 + (uint32_t)sums[1]);
    acc0[2] = (int32_t)((uint32_t)a2 + (uint32_t)sums[2]);
    acc1[0] = (int32_t)((uint32_t)b0 + (uint32_t)sums[0]);
    acc1[1] = (int32_t)((uint32_t)b1 + (uint32_t)sums[1]);
    acc1[2] = (int32_t)((uint32_t)b2 + (uint32_t)sums[2]);
}

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

/* Four rows (stride size) against one column. */
static inline int32x4_t dot_4x1(const int8_t *w, const int8_t *x, int32_t size)
{
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    const int8_t *w1 = w + size, *w2 = w1 + size, *w3 = w2 + size;
    int32_t k = 0;
    for (; k + 16 <= size; k += 16) {
        const int8x16_t xv = vldrbq_s8(x + k);
        a0 = vmladavaq_s8(a0, xv, vldrbq_s8(w + k));
        a1 = vmladavaq_s8(a1, xv, vldrbq_s8(w1 + k));
        a2 = vmladavaq_s8(a2, xv, vldrbq_s8(w2 + k));
        a3 = vmladavaq_s8(a3, xv, vldrbq_s8(w3 + k));
    }
    if (k < size) {
        const mve_pred16_t p = vctp8q((uint32_t)(size - k));
        const int8x16_t xv = vldrbq_z_s8(x + k, p);
        a0 = vmladavaq_s8(a0, xv, vldrbq_z_s8(w + k, p));
        a1 = vmladavaq_s8(a1, xv, vldrbq_z_s8(w1 + k, p));
        a2 = vmladavaq_s8(a2, xv, vldrbq_z_s8(w2 + k, p));
        a3 = vmladavaq_s8(a3, xv, vldrbq_z_s8(w3 + k, p));
    }
    int32x4_t acc = vdupq_n_s32(a0);
    acc = vsetq_lane_s32(a1, acc, 1);
    acc = vsetq_lane_s32(a2, acc, 2);
    return vsetq_lane_s32(a3, acc, 3);
}

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

/* One im2col column of int8 (the input zero point in the padding, so that x + off is 0). */
static void im2col_s8(int8_t *col, const window *win, const mcugen_dims *in,
                      const mcugen_dims *filter, const mcugen_tile *dilation, int32_t offset)
{
    const int32_t depth = filter->c;
    const int8_t pad = (int8_t)(-offset);
    int8_t *dst = col;
    for (int32_t ky = 0; ky < filter->h; ++ky) {
        const int32_t y = win->y0 + ky * dilation->h;
        if (y < 0 || y >= in->h) {
            memset(dst, pad, (size_t)(filter->w * depth));
            dst += filter->w * depth;
            continue;
        }
        const int8_t *row = win->image + y * in->w * in->c;
        if (dilation->w == 1) {
            int32_t kx0 = win->x0 < 0 ? -win->x0 : 0;
            int32_t kx1 = in->w - win->x0;
            kx0 = kx0 < filter->w ? kx0 : filter->w;
            kx1 = kx1 < filter->w ? kx1 : filter->w;
            kx1 = kx1 > kx0 ? kx1 : kx0;
            memset(dst, pad, (size_t)(kx0 * depth));
            memcpy(dst + kx0 * depth, row + (win->x0 + kx0) * depth,
                   (size_t)((kx1 - kx0) * depth));
            memset(dst + kx1 * depth, pad, (size_t)((filter->w - kx1) * depth));
            dst += filter->w * depth;
            continue;
        }
        for (int32_t kx = 0; kx < filter->w; ++kx, dst += depth) {
            const int32_t x = win->x0 + kx * dilation->w;
            if (x < 0 || x >= in->w) {
                memset(dst, pad, (size_t)depth);
            } else {
                memcpy(dst, row + x * depth, (size_t)depth);
            }
        }
    }
}

int mcugen_conv_fast_s8(const mcugen_context *ctx, const mcugen_fast_conv_params *params,
                        const mcugen_per_channel_quant_params *quant,
                        const mcugen_dims *input_dims, const int8_t *input,
                        const mcugen_dims *filter_dims, const int8_t *filter, const int32_t *bias,
                        const mcugen_dims *output_dims, int8_t *output)
{
    const int32_t out_c = output_dims->c;
    const int32_t size = filter_dims->h * filter_dims->w * filter_dims->c;
    if (filter_dims->c != input_dims->c ||
        !scratch_ok(ctx, mcugen_conv_fast_s8_buffer_size(filter_dims))) {
        return 0;
    }
    /* scratch: out_c sums (bias + input_offset * sum(w)), 2 * out_c accumulators (two
     * pixels), two columns */
    int32_t *sums = (int32_t *)ctx->buf;
    int32_t *accs0 = sums + out_c, *accs1 = accs0 + out_c;
    int8_t *col0 = (int8_t *)(accs1 + out_c), *col1 = col0 + round_up4(size);
    const int32_t off = params->input_offset;
    for (int32_t oc = 0; oc < out_c; ++oc) {
        const uint32_t s = (uint32_t)off * (uint32_t)sum_s8(filter + oc * size, size);
        sums[oc] = (int32_t)(s + (bias != NULL ? (uint32_t)bias[oc] : 0u));
    }
    /* a 1x1 window over an unpadded, stride-1 input is the input pixel itself */
    const int direct = filter_dims->h == 1 && filter_dims->w == 1 && params->stride.h == 1 &&
                       params->stride.w == 1 && params->padding.h == 0 &&
                       params->padding.w == 0 && input_dims->h == output_dims->h &&
                       input_dims->w == output_dims->w;
    const out_consts k = make_out_consts(params->output_offset, params->activation);
    const int32_t pixels = output_dims->n * output_dims->h * output_dims->w;
    for (int32_t p = 0; p < pixels; p += 2) {
        const int two = p + 1 < pixels; /* else pixel p twice, its copy not stored */
        const int8_t *x0 = input + p * size, *x1 = two ? x0 + size : x0;
        if (!direct) {
            const window w0 = pixel_window(input_dims, output_dims, &params->stride,
                                           &params->padding, input, p);
            im2col_s8(col0, &w0, input_dims, filter_dims, &params->dilation, off);
            x0 = x1 = col0;
            if (two) {
                const window w1 = pixel_window(input_dims, output_dims, &params->stride,
                                               &params->padding, input, p + 1);
                im2col_s8(col1, &w1, input_dims, filter_dims, &params->dilation, off);
                x1 = col1;
            }
        }
        /* the sums of three rows by two pixels at a time, then the requantization */
        int32_t row = 0;
        for (; row + 3 <= out_c; row += 3) {
            dot_3x2(filter + row * size, x0, x1, size, sums + row, accs0 + row, accs1 + row);
        }
        for (; row < out_c; ++row) {
            const int8_t *w = filter + row * size;
            accs0[row] = (int32_t)((uint32_t)dot_s8(w, x0, size) + (uint32_t)sums[row]);
            accs1[row] = (int32_t)((uint32_t)dot_s8(w, x1, size) + (uint32_t)sums[row]);
        }
        int8_t *out0 = output + p * out_c;
        requant_store(out0, accs0, quant->multiplier, quant->shift, out_c, &k);
        if (two) {
            requant_store(out0 + out_c, accs1, quant->multiplier, quant->shift, out_c, &k);
        }
    }
    return 1;
}

/* acc (even channels, odd channels) += w * (x + off) for eight channels of one tap. */
static inline void tap_x8(int32x4x2_t *acc, const int8_t *x, const int8_t *w, int16_t off)
{
    const int16x8_t xv = vaddq_n_s16(vldrbq_s16(x), off);
    const int16x8_t wv = vldrbq_s16(w);
    acc->val[0] = vaddq_s32(acc->val[0], vmullbq_int_s16(xv, wv));
    acc->val[1] = vaddq_s32(acc->val[1], vmulltq_int_s16(xv, wv));
}

int mcugen_dw_conv_fast_s8(const mcugen_context *ctx, const mcugen_fast_conv_params *params,
                           const mcugen_per_channel_quant_params *quant,
                           const mcugen_dims *input_dims, const int8_t *input,
                           const mcugen_dims *filter_dims, const int8_t *filter,
                           const int32_t *bias, const mcugen_dims *output_dims, int8_t *output)
{
    const int32_t channels = output_dims->c;
    if (params->ch_mult != 1 ||
        !scratch_ok(ctx, mcugen_dw_conv_fast_s8_buffer_size(filter_dims))) {
        return 0;
    }
    int32_t *accs = (int32_t *)ctx->buf; /* one pixel's sums */
    const int32_t in_h = input_dims->h, in_w = input_dims->w;
    const int32_t kh = filter_dims->h, kw = filter_dims->w;
    const int32_t dil_h = params->dilation.h, dil_w = params->dilation.w;
    const int16_t off = (int16_t)params->input_offset;
    const int32_t pixels = output_dims->n * output_dims->h * output_dims->w;
    const out_consts k = make_out_consts(params->output_offset, params->activation);
    const int32_t x_step = dil_w * channels, row_step = dil_h * in_w * channels;
    for (int32_t p = 0; p < pixels; ++p) {
        const window win = pixel_window(input_dims, output_dims, &params->stride,
                                        &params->padding, input, p);
        int32_t ky0 = 0, ky1 = kh, kx0 = 0, kx1 = kw;
        while (ky0 < kh && win.y0 + ky0 * dil_h < 0) ++ky0;
        while (ky1 > ky0 && win.y0 + (ky1 - 1) * dil_h >= in_h) --ky1;
        while (kx0 < kw && win.x0 + kx0 * dil_w < 0) ++kx0;
        while (kx1 > kx0 && win.x0 + (kx1 - 1) * dil_w >= in_w) --kx1;
        const int8_t *x_base =
            win.image + ((win.y0 + ky0 * dil_h) * in_w + win.x0 + kx0 * dil_w) * channels;
        const int8_t *w_base = filter + (ky0 * kw + kx0) * channels;
        const int32_t rows = ky1 - ky0, cols = kx1 - kx0;
        int8_t *out = output + p * channels;
        /* eight channels as int16 (x + off is exact); the products of the even channels and
         * of the odd ones widen to int32 separately and are stored interleaved (VST2), i.e.
         * in channel order, for one requantization pass over the pixel */
        int32_t c = 0;
        for (; c + 8 <= channels; c += 8) {
            int32x4x2_t acc;
            acc.val[0] = acc.val[1] = vdupq_n_s32(0);
            if (bias != NULL) {
                acc = vld2q_s32(bias + c);
            }
            const int8_t *x_row = x_base + c, *w_row = w_base + c;
            for (int32_t ky = 0; ky < rows; ++ky, x_row += row_step, w_row += kw * channels) {
                const int8_t *xp = x_row, *wp = w_row;
                for (int32_t kx = 0; kx < cols; ++kx, xp += x_step, wp += channels) {
                    tap_x8(&acc, xp, wp, off);
                }
            }
            vst2q_s32(accs + c, acc);
        }
        for (; c < channels; ++c) { /* the last channels one by one */
            uint32_t acc = bias != NULL ? (uint32_t)bias[c] : 0u;
            for (int32_t ky = 0; ky < rows; ++ky) {
                for (int32_t kx = 0; kx < cols; ++kx) {
                    const int32_t x = x_base[ky * row_step + kx * x_step + c];
                    const int32_t w = w_base[(ky * kw + kx) * channels + c];
                    acc += (uint32_t)(w * (x + off));
                }
            }
            accs[c] = (int32_t)acc;
        }
        requant_store(out, accs, quant->multiplier, quant->shift, channels, &k);
    }
    return 1;
}

int mcugen_fc_fast_s8(const mcugen_context *ctx, const mcugen_fast_fc_params *params,
                      const mcugen_per_channel_quant_params *quant,
                      const mcugen_dims *input_dims, const int8_t *input,
                      const mcugen_dims *filter_dims, const int8_t *filter, const int32_t *bias,
                      const mcugen_dims *output_dims, int8_t *output)
{
    (void)ctx;
    (void)filter_dims;
    const int32_t depth = input_dims->c, units = output_dims->c;
    const int32_t off = params->input_offset;
    for (int32_t b = 0; b < input_dims->n; ++b) {
        const int8_t *x = input + b * depth;
        int8_t *out = output + b * units;
        for (int32_t u = 0; u < units; u += 4) {
            const mve_pred16_t lanes = vctp32q((uint32_t)(units - u));
            int32_t a[4] = {0, 0, 0, 0};
            for (int32_t r = 0; r < 4 && u + r < units; ++r) {
                const int8_t *w = filter + (u + r) * depth;
                a[r] = (int32_t)((uint32_t)dot_s8(w, x, depth) +
                                 (uint32_t)off * (uint32_t)sum_s8(w, depth));
            }
            int32x4_t acc = vldrwq_s32(a);
            if (bias != NULL) {
                acc = vaddq_s32(acc, vldrwq_z_s32(bias + u, lanes));
            }
            if (params->per_channel) {
                finish_x4(out + u, acc, quant->multiplier + u, quant->shift + u,
                          params->output_offset, params->activation, lanes);
            } else {
                const int32_t m[4] = {quant->multiplier[0], quant->multiplier[0],
                                      quant->multiplier[0], quant->multiplier[0]};
                const int32_t s[4] = {quant->shift[0], quant->shift[0], quant->shift[0],
                                      quant->shift[0]};
                finish_x4(out + u, acc, m, s, params->output_offset, params->activation, lanes);
            }
        }
    }
    return 1;
}


#else
typedef int mcugen_conv_fast_mve_unused; /* ISO C: a translation unit is never empty */
#endif
