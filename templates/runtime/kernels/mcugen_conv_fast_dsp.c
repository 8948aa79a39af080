/* mcugen runtime: the fast int8 conv, depthwise and FULLY_CONNECTED paths for cores with the
 * DSP extension (Cortex-M4/M7): SMLAD and friends. See mcugen_conv_fast.h. */
#include "mcugen_conv_fast.h"
#include "mcugen_fast_common.h"

#if defined(MCUGEN_FAST_DSP)

int32_t mcugen_conv_fast_s8_buffer_size(const mcugen_dims *filter_dims)
{
    return 8 * round_up4(filter_dims->h * filter_dims->w * filter_dims->c); /* four int16 columns */
}

int32_t mcugen_dw_conv_fast_s8_buffer_size(const mcugen_dims *filter_dims)
{
    (void)filter_dims;
    return 0;
}

int32_t mcugen_fc_fast_s8_buffer_size(const mcugen_dims *filter_dims)
{
    return 2 * round_up4(filter_dims->n); /* the input row as int16 */
}

/* Position of element k in a swizzled column: groups of four stored x0 x2 x1 x3 (the order
 * __sxtb16 and __sxtb16(__ror(., 8)) unpack a word of four int8 weights). */
static inline int32_t swizzle(int32_t k)
{
    return (k & ~3) | ((k & 1) << 1) | ((k >> 1) & 1);
}

/* dst[0..n) = swizzled (src + offset) as int16; n a multiple of 4. */
static inline void expand_q15(int16_t *dst, const int8_t *src, int32_t n, int32_t offset2)
{
    for (int32_t k = 0; k < n; k += 4) {
        const int32_t x = load32(src + k);
        store32(dst + k, __sadd16(__sxtb16(x), offset2));
        store32(dst + k + 2, __sadd16(sxtb16_ror8(x), offset2));
    }
}

/* Four im2col columns, interleaved: K = kh * kw * depth int16 values x + offset per column
 * (0 in the padding). The first K4 = K - K % 4 values of each column go in groups of four,
 * swizzled, one group of each column after the other (group g of column j at 16 g + 4 j), so
 * that one pointer walks all four; the last K % 4 values of column j follow at 4 K4 + 4 j. */
static inline int32_t col_index(int32_t k, int32_t j, int32_t size4)
{
    return k < size4 ? ((k >> 2) << 4) + 4 * j + (swizzle(k) & 3) : 4 * size4 + 4 * j + (k - size4);
}

static void im2col_q15(int16_t *cols, int32_t j, const window *win, const mcugen_dims *in,
                       const mcugen_dims *filter, const mcugen_tile *dilation, int32_t offset)
{
    const int32_t depth = filter->c, size = filter->h * filter->w * depth;
    const int32_t size4 = size & ~3;
    const int32_t offset2 = (int32_t)(((uint32_t)offset & 0xFFFFu) | ((uint32_t)offset << 16));
    int32_t k = 0;
    for (int32_t ky = 0; ky < filter->h; ++ky) {
        const int32_t y = win->y0 + ky * dilation->h;
        for (int32_t kx = 0; kx < filter->w; ++kx) {
            const int32_t x = win->x0 + kx * dilation->w;
            const int inside = y >= 0 && y < in->h && x >= 0 && x < in->w;
            const int8_t *pixel = win->image + (y * in->w + x) * in->c;
            if ((depth & 3) == 0) { /* whole groups: a word of four int8 at a time */
                int16_t *dst = cols + (k << 2) + 4 * j;
                for (int32_t c = 0; c < depth; c += 4, dst += 16) {
                    const int32_t v = inside ? load32(pixel + c) : 0;
                    store32(dst, inside ? __sadd16(__sxtb16(v), offset2) : 0);
                    store32(dst + 2, inside ? __sadd16(sxtb16_ror8(v), offset2) : 0);
                }
                k += depth;
                continue;
            }
            for (int32_t c = 0; c < depth; ++c, ++k) {
                cols[col_index(k, j, size4)] = inside ? (int16_t)(pixel[c] + offset) : 0;
            }
        }
    }
}

/* One filter row against four interleaved columns: acc[j] = sum_k w[k] * col_j[k]. */
static inline void dot_1x4(const int8_t *w, const int16_t *cols, int32_t size, int32_t acc[4])
{
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    const int32_t size4 = size & ~3;
    const int8_t *end = w + size4;
    const int16_t *x = cols;
    while (w != end) {
        const int32_t raw = load32(w);
        const int32_t we = __sxtb16(raw), wo = sxtb16_ror8(raw);
        w += 4;
        a0 = __smlad(we, load32(x), a0);
        a0 = __smlad(wo, load32(x + 2), a0);
        a1 = __smlad(we, load32(x + 4), a1);
        a1 = __smlad(wo, load32(x + 6), a1);
        a2 = __smlad(we, load32(x + 8), a2);
        a2 = __smlad(wo, load32(x + 10), a2);
        a3 = __smlad(we, load32(x + 12), a3);
        a3 = __smlad(wo, load32(x + 14), a3);
        x += 16;
    }
    for (int32_t t = 0; t < size - size4; ++t) {
        const int32_t v = end[t];
        a0 = __smlabb(v, x[t], a0);
        a1 = __smlabb(v, x[4 + t], a1);
        a2 = __smlabb(v, x[8 + t], a2);
        a3 = __smlabb(v, x[12 + t], a3);
    }
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
}

/* One filter row against one swizzled column. */
static inline int32_t dot_1x1(const int8_t *w0, const int16_t *c0, int32_t size)
{
    int32_t a = 0;
    const int32_t size4 = size & ~3;
    for (int32_t k = 0; k < size4; k += 4) {
        const int32_t w = load32(w0 + k);
        a = __smlad(__sxtb16(w), load32(c0 + k), a);
        a = __smlad(sxtb16_ror8(w), load32(c0 + k + 2), a);
    }
    for (int32_t k = size4; k < size; ++k) {
        a = __smlabb(w0[k], c0[k], a);
    }
    return a;
}

/* out[j * stride] = finish_s8(acc[j] + bias) for j < count: one output channel of up to four
 * pixels, with the channel's shifts decoded once (requantize_fast's arithmetic). */
static inline void finish_row(int8_t *out, int32_t stride, const int32_t acc[4], int32_t count,
                              int32_t bias, int32_t multiplier, int32_t shift, int32_t zp,
                              mcugen_activation act)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    for (int32_t j = 0; j < count; ++j) {
        const int32_t x = (int32_t)((uint32_t)wrap_add(acc[j], bias) << left);
        int32_t y = (int32_t)(((int64_t)x * multiplier + ((int64_t)1 << 30)) >> 31);
        if (right > 0) {
            y += y >> 31;
            y = (y >> right) + ((y >> (right - 1)) & 1);
        }
        y = wrap_add(y, zp);
        out[j * stride] = (int8_t)(y < act.min ? act.min : (y > act.max ? act.max : y));
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
    if (filter_dims->c != input_dims->c || !multipliers_ok(quant->multiplier, out_c) ||
        !scratch_ok(ctx, mcugen_conv_fast_s8_buffer_size(filter_dims))) {
        return 0;
    }
    int16_t *cols = (int16_t *)ctx->buf; /* four interleaved columns */
    const int32_t pixels = output_dims->n * output_dims->h * output_dims->w;
    const int32_t *mult = quant->multiplier, *shift = quant->shift;
    const int32_t zp = params->output_offset;
    const mcugen_activation act = params->activation;
    for (int32_t p = 0; p < pixels; p += 4) {
        const int32_t count = pixels - p < 4 ? pixels - p : 4;
        for (int32_t j = 0; j < 4; ++j) { /* missing pixels repeat the last (not stored) */
            const window win = pixel_window(input_dims, output_dims, &params->stride,
                                            &params->padding, input,
                                            p + (j < count ? j : count - 1));
            im2col_q15(cols, j, &win, input_dims, filter_dims, &params->dilation,
                       params->input_offset);
        }
        int8_t *out = output + p * out_c;
        for (int32_t oc = 0; oc < out_c; ++oc) {
            int32_t acc[4];
            dot_1x4(filter + oc * size, cols, size, acc);
            const int32_t b = bias != NULL ? bias[oc] : 0;
            finish_row(out + oc, out_c, acc, count, b, mult[oc], shift[oc], zp, act);
        }
    }
    return 1;
}

int mcugen_dw_conv_fast_s8(const mcugen_context *ctx, const mcugen_fast_conv_params *params,
                           const mcugen_per_channel_quant_params *quant,
                           const mcugen_dims *input_dims, const int8_t *input,
                           const mcugen_dims *filter_dims, const int8_t *filter,
                           const int32_t *bias, const mcugen_dims *output_dims, int8_t *output)
{
    (void)ctx;
    const int32_t channels = output_dims->c;
    if (params->ch_mult != 1 || (channels & 3) != 0 ||
        !multipliers_ok(quant->multiplier, channels)) {
        return 0;
    }
    const int32_t in_h = input_dims->h, in_w = input_dims->w;
    const int32_t kh = filter_dims->h, kw = filter_dims->w;
    const int32_t dil_h = params->dilation.h, dil_w = params->dilation.w;
    const int32_t off = params->input_offset;
    const int32_t offset2 = (int32_t)(((uint32_t)off & 0xFFFFu) | ((uint32_t)off << 16));
    const int32_t pixels = output_dims->n * output_dims->h * output_dims->w;
    const int32_t *mult = quant->multiplier, *shift = quant->shift;
    const int32_t zp = params->output_offset;
    const mcugen_activation act = params->activation;
    for (int32_t p = 0; p < pixels; ++p) {
        const window win = pixel_window(input_dims, output_dims, &params->stride,
                                        &params->padding, input, p);
        int32_t ky0 = 0, ky1 = kh, kx0 = 0, kx1 = kw;
        while (ky0 < kh && win.y0 + ky0 * dil_h < 0) ++ky0;
        while (ky1 > ky0 && win.y0 + (ky1 - 1) * dil_h >= in_h) --ky1;
        while (kx0 < kw && win.x0 + kx0 * dil_w < 0) ++kx0;
        while (kx1 > kx0 && win.x0 + (kx1 - 1) * dil_w >= in_w) --kx1;
        int8_t *out = output + p * channels;
        for (int32_t c = 0; c < channels; c += 4) {
            int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
            for (int32_t ky = ky0; ky < ky1; ++ky) {
                const int8_t *xrow =
                    win.image + ((win.y0 + ky * dil_h) * in_w + win.x0) * channels + c;
                const int8_t *wrow = filter + ky * kw * channels + c;
                for (int32_t kx = kx0; kx < kx1; ++kx) {
                    const int32_t xw = load32(xrow + kx * dil_w * channels);
                    const int32_t ww = load32(wrow + kx * channels);
                    const int32_t xe = __sadd16(__sxtb16(xw), offset2);
                    const int32_t xo = __sadd16(sxtb16_ror8(xw), offset2);
                    const int32_t we = __sxtb16(ww);
                    const int32_t wo = sxtb16_ror8(ww);
                    a0 = __smlabb(we, xe, a0);
                    a2 = __smlatt(we, xe, a2);
                    a1 = __smlabb(wo, xo, a1);
                    a3 = __smlatt(wo, xo, a3);
                }
            }
            if (bias != NULL) {
                a0 = wrap_add(a0, bias[c]);
                a1 = wrap_add(a1, bias[c + 1]);
                a2 = wrap_add(a2, bias[c + 2]);
                a3 = wrap_add(a3, bias[c + 3]);
            }
            out[c] = finish_s8(a0, mult[c], shift[c], zp, act);
            out[c + 1] = finish_s8(a1, mult[c + 1], shift[c + 1], zp, act);
            out[c + 2] = finish_s8(a2, mult[c + 2], shift[c + 2], zp, act);
            out[c + 3] = finish_s8(a3, mult[c + 3], shift[c + 3], zp, act);
        }
    }
    return 1;
}

int mcugen_fc_fast_s8(const mcugen_context *ctx, const mcugen_fast_fc_params *params,
                      const mcugen_per_channel_quant_params *quant,
                      const mcugen_dims *input_dims, const int8_t *input,
                      const mcugen_dims *filter_dims, const int8_t *filter, const int32_t *bias,
                      const mcugen_dims *output_dims, int8_t *output)
{
    const int32_t depth = input_dims->c, units = output_dims->c;
    if (!multipliers_ok(quant->multiplier, params->per_channel ? units : 1) ||
        !scratch_ok(ctx, mcugen_fc_fast_s8_buffer_size(filter_dims))) {
        return 0;
    }
    int16_t *col = (int16_t *)ctx->buf;
    const int32_t depth4 = depth & ~3;
    const int32_t off = params->input_offset;
    const int32_t offset2 = (int32_t)(((uint32_t)off & 0xFFFFu) | ((uint32_t)off << 16));
    const int32_t zp = params->output_offset;
    const mcugen_activation act = params->activation;
    for (int32_t b = 0; b < input_dims->n; ++b) {
        const int8_t *x = input + b * depth;
        expand_q15(col, x, depth4, offset2);
        for (int32_t k = depth4; k < depth; ++k) {
            col[k] = (int16_t)(x[k] + off);
        }
        int8_t *out = output + b * units;
        for (int32_t u = 0; u < units; ++u) {
            const int32_t q = params->per_channel ? u : 0;
            int32_t acc = dot_1x1(filter + u * depth, col, depth);
            if (bias != NULL) {
                acc = wrap_add(acc, bias[u]);
            }
            out[u] = finish_s8(acc, quant->multiplier[q], quant->shift[q], zp, act);
        }
    }
    return 1;
}


#else
typedef int mcugen_conv_fast_dsp_unused; /* ISO C: a translation unit is never empty */
#endif
