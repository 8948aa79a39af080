/* mcugen runtime: the CONV_2D and DEPTHWISE_CONV_2D kernels behind mcugen_conv.h: int8
 * (mcugen_convolve_s8, mcugen_depthwise_conv_s8, grouped convs included) and int16x8 (_s16).
 * Reference arithmetic: TFLite's reference_integer_ops ConvPerChannel and
 * DepthwiseConvPerChannel (int32 sums over the in-bounds taps, per-channel requantization;
 * int16x8 through mcugen_rescale.h).
 * Fast paths: the int8 kernels first offer the work to mcugen_convolve_fast_s8 /
 * mcugen_depthwise_conv_fast_s8 (mcugen_conv_fast.h: DSP on Cortex-M4/M7, Helium on
 * Cortex-M55, with enough scratch; conv groups == 1, depthwise ch_mult 1) and run the portable
 * loops when it declines; -DMCUGEN_PORTABLE leaves the dispatch out. */
#include "mcugen_conv.h"

#include <stddef.h>
#include <stdint.h>

#include "mcugen_conv_fast.h"
#include "mcugen_fixedpoint.h"
#include "mcugen_nn_types.h"

/* int32 addition that wraps like TFLite's accumulator does on every target, without the
 * undefined behaviour of signed overflow (the conversion back is two's complement on gcc,
 * clang and armclang). */
static inline int32_t wrap_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* sum of w[i] * (x[i] + x_offset), accumulated modulo 2^32 as TFLite's int32 does. Each
 * product is at most 128 * 255 in magnitude, so it is exact in int32. */
static inline int32_t dot_s8(const int8_t *x, const int8_t *w, int32_t n, int32_t x_offset)
{
    uint32_t acc = 0;
    for (int32_t i = 0; i < n; ++i) {
        acc += (uint32_t)((int32_t)w[i] * ((int32_t)x[i] + x_offset));
    }
    return (int32_t)acc;
}

/* Accumulator -> int8: + bias, rescale, + zero point, clamp (the clamp is within int8). */
static inline int8_t finish_s8(int32_t acc, const int32_t *bias, int32_t channel,
                               const mcugen_per_channel_quant_params *quant,
                               int32_t output_offset, mcugen_activation activation)
{
    if (bias != NULL) {
        acc = wrap_add(acc, bias[channel]);
    }
    int32_t y = mcugen_requantize(acc, quant->multiplier[channel], quant->shift[channel]);
    y = wrap_add(y, output_offset);
    return (int8_t)mcugen_clamp(y, activation.min, activation.max);
}

/* First tap index k in [0, taps) with origin + k * dilation >= 0. */
static inline int32_t first_tap(int32_t origin, int32_t dilation)
{
    return origin >= 0 ? 0 : (-origin + dilation - 1) / dilation;
}

/* One past the last tap index k < taps with origin + k * dilation < size. */
static inline int32_t end_tap(int32_t origin, int32_t dilation, int32_t size, int32_t taps)
{
    if (origin >= size) {
        return 0;
    }
    const int32_t inside = (size - 1 - origin) / dilation + 1;
    return inside < taps ? inside : taps;
}

static int dims_positive(const mcugen_dims *d)
{
    return d != NULL && d->n > 0 && d->h > 0 && d->w > 0 && d->c > 0;
}

static int32_t dims_count(const mcugen_dims *d)
{
    return d->n * d->h * d->w * d->c;
}

/* The checks both kernels share: geometry, offsets, clamp and shifts in range. A build-made
 * requantization table (rq_table != NULL) vouches for the shifts: mcugen's build made it from
 * them after checking them (SHIFT_RULE in mcugen/ops/conv/prepare.py), so a tiled chain's
 * stripes do not scan every channel's shift again on every call. */
static int common_args_ok(const mcugen_tile *stride, const mcugen_tile *padding,
                          const mcugen_tile *dilation, int32_t input_offset,
                          mcugen_activation activation,
                          const mcugen_per_channel_quant_params *quant, int32_t channels,
                          const int32_t *rq_table)
{
    if (stride->w < 1 || stride->h < 1 || dilation->w < 1 || dilation->h < 1 ||
        padding->w < 0 || padding->h < 0) {
        return 0;
    }
    if (input_offset < -127 || input_offset > 128) {
        return 0;
    }
    if (activation.min < INT8_MIN || activation.max > INT8_MAX || activation.min > activation.max) {
        return 0;
    }
    if (quant == NULL || quant->multiplier == NULL || quant->shift == NULL) {
        return 0;
    }
    /* TFLite's QuantizeMultiplier range; outside it the shifts would be undefined. */
    return rq_table != NULL || mcugen_shifts_in_range(quant->shift, channels);
}

static int bias_ok(const mcugen_dims *bias_dims, const int32_t *bias, int32_t channels)
{
    return bias == NULL || (bias_dims != NULL && dims_positive(bias_dims) &&
                            dims_count(bias_dims) == channels);
}

int32_t mcugen_convolve_s8_get_buffer_size(const mcugen_dims *input_dims,
                                           const mcugen_dims *filter_dims)
{
    (void)input_dims;
    return mcugen_convolve_fast_s8_buffer_size(filter_dims); /* the fast paths' im2col */
}

/* mcugen_convolve_s8 once its arguments are checked (its stripe entry's too): the fast path,
 * else the portable loops. */
static mcugen_status convolve_run(const mcugen_context *ctx, const mcugen_conv_params *params,
                                  const mcugen_per_channel_quant_params *quant,
                                  const mcugen_dims *input_dims, const int8_t *input,
                                  const mcugen_dims *filter_dims, const int8_t *filter,
                                  const mcugen_dims *bias_dims, const int32_t *bias,
                                  const mcugen_dims *output_dims, int8_t *output)
{
    (void)bias_dims;
    const int32_t in_h = input_dims->h, in_w = input_dims->w, in_c = input_dims->c;
    const int32_t out_h = output_dims->h, out_w = output_dims->w, out_c = output_dims->c;
    const int32_t kh = filter_dims->h, kw = filter_dims->w, depth = filter_dims->c;
    const int32_t groups = in_c / depth;
    (void)ctx; /* scratch: only the fast paths use it */
#if !defined(MCUGEN_PORTABLE)
    const mcugen_conv_fast_params fast = {params->input_offset, params->output_offset,
                                          params->stride,       params->padding,
                                          params->dilation,     params->activation,
                                          1,                    params->kernel_sums,
                                          params->rq_table,     NULL};
    if (groups == 1 && mcugen_convolve_fast_s8(ctx, &fast, quant, input_dims, input, filter_dims,
                                               filter, bias, output_dims, output)) {
        return MCUGEN_OK; /* DSP or MVE inner loops (mcugen_conv_fast.h) */
    }
#endif
    const int32_t per_group = out_c / groups;
    const int32_t dil_h = params->dilation.h, dil_w = params->dilation.w;

    for (int32_t b = 0; b < input_dims->n; ++b) {
        const int8_t *image = input + b * in_h * in_w * in_c;
        for (int32_t oy = 0; oy < out_h; ++oy) {
            const int32_t y0 = oy * params->stride.h - params->padding.h;
            const int32_t ky_begin = first_tap(y0, dil_h);
            const int32_t ky_end = end_tap(y0, dil_h, in_h, kh);
            for (int32_t ox = 0; ox < out_w; ++ox) {
                const int32_t x0 = ox * params->stride.w - params->padding.w;
                const int32_t kx_begin = first_tap(x0, dil_w);
                const int32_t kx_end = end_tap(x0, dil_w, in_w, kw);
                int8_t *out = output + ((b * out_h + oy) * out_w + ox) * out_c;
                for (int32_t oc = 0; oc < out_c; ++oc) {
                    const int8_t *kernel = filter + oc * kh * kw * depth;
                    const int32_t channel0 = (oc / per_group) * depth;
                    int32_t acc = 0;
                    for (int32_t ky = ky_begin; ky < ky_end; ++ky) {
                        const int8_t *row = image + (y0 + ky * dil_h) * in_w * in_c;
                        for (int32_t kx = kx_begin; kx < kx_end; ++kx) {
                            const int8_t *pixel = row + (x0 + kx * dil_w) * in_c + channel0;
                            const int8_t *taps = kernel + (ky * kw + kx) * depth;
                            acc = wrap_add(acc, dot_s8(pixel, taps, depth, params->input_offset));
                        }
                    }
                    out[oc] = finish_s8(acc, bias, oc, quant, params->output_offset,
                                        params->activation);
                }
            }
        }
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_convolve_s8(const mcugen_context *ctx, const mcugen_conv_params *params,
                                 const mcugen_per_channel_quant_params *quant,
                                 const mcugen_dims *input_dims, const int8_t *input,
                                 const mcugen_dims *filter_dims, const int8_t *filter,
                                 const mcugen_dims *bias_dims, const int32_t *bias,
                                 const mcugen_dims *output_dims, int8_t *output)
{
    if (params == NULL || input == NULL || filter == NULL || output == NULL ||
        !dims_positive(input_dims) || !dims_positive(filter_dims) || !dims_positive(output_dims)) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t in_c = input_dims->c, out_c = output_dims->c, depth = filter_dims->c;
    if (input_dims->n != output_dims->n || filter_dims->n != out_c || in_c % depth != 0) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t groups = in_c / depth;
    if (out_c % groups != 0 || !bias_ok(bias_dims, bias, out_c) ||
        !common_args_ok(&params->stride, &params->padding, &params->dilation,
                        params->input_offset, params->activation, quant, out_c,
                        params->rq_table)) {
        return MCUGEN_ARG_ERROR;
    }
    return convolve_run(ctx, params, quant, input_dims, input, filter_dims, filter, bias_dims,
                        bias, output_dims, output);
}

int32_t mcugen_depthwise_conv_s8_get_buffer_size(const mcugen_dims *input_dims,
                                                 const mcugen_dims *filter_dims)
{
    (void)input_dims;
    return mcugen_depthwise_conv_fast_s8_buffer_size(filter_dims); /* the fast paths' sums */
}

/* mcugen_depthwise_conv_s8 once its arguments are checked (its stripe entry's too): the fast
 * path, else the portable loops. */
static mcugen_status depthwise_conv_run(const mcugen_context *ctx,
                                        const mcugen_dw_conv_params *params,
                                        const mcugen_per_channel_quant_params *quant,
                                        const mcugen_dims *input_dims, const int8_t *input,
                                        const mcugen_dims *filter_dims, const int8_t *filter,
                                        const mcugen_dims *bias_dims, const int32_t *bias,
                                        const mcugen_dims *output_dims, int8_t *output)
{
    (void)ctx; /* scratch: only the fast paths use it */
    (void)bias_dims;
    const int32_t in_h = input_dims->h, in_w = input_dims->w, in_c = input_dims->c;
    const int32_t out_h = output_dims->h, out_w = output_dims->w, out_c = output_dims->c;
    const int32_t kh = filter_dims->h, kw = filter_dims->w;
    const int32_t mult = params->ch_mult;
#if !defined(MCUGEN_PORTABLE)
    const mcugen_conv_fast_params fast = {params->input_offset, params->output_offset,
                                          params->stride,       params->padding,
                                          params->dilation,     params->activation,
                                          params->ch_mult,      NULL,
                                          params->rq_table,     params->mve_table};
    if (mcugen_depthwise_conv_fast_s8(ctx, &fast, quant, input_dims, input, filter_dims, filter,
                                      bias, output_dims, output)) {
        return MCUGEN_OK; /* DSP or MVE inner loops (mcugen_conv_fast.h) */
    }
#endif
    const int32_t dil_h = params->dilation.h, dil_w = params->dilation.w;
    const int32_t x_offset = params->input_offset;

    for (int32_t b = 0; b < input_dims->n; ++b) {
        const int8_t *image = input + b * in_h * in_w * in_c;
        for (int32_t oy = 0; oy < out_h; ++oy) {
            const int32_t y0 = oy * params->stride.h - params->padding.h;
            const int32_t ky_begin = first_tap(y0, dil_h);
            const int32_t ky_end = end_tap(y0, dil_h, in_h, kh);
            for (int32_t ox = 0; ox < out_w; ++ox) {
                const int32_t x0 = ox * params->stride.w - params->padding.w;
                const int32_t kx_begin = first_tap(x0, dil_w);
                const int32_t kx_end = end_tap(x0, dil_w, in_w, kw);
                int8_t *out = output + ((b * out_h + oy) * out_w + ox) * out_c;
                for (int32_t oc = 0; oc < out_c; ++oc) {
                    const int32_t ic = oc / mult;
                    uint32_t acc = 0; /* wraps like TFLite's int32 accumulator */
                    for (int32_t ky = ky_begin; ky < ky_end; ++ky) {
                        const int8_t *row = image + (y0 + ky * dil_h) * in_w * in_c;
                        const int8_t *taps = filter + ky * kw * out_c + oc;
                        for (int32_t kx = kx_begin; kx < kx_end; ++kx) {
                            const int32_t x = row[(x0 + kx * dil_w) * in_c + ic];
                            const int32_t w = taps[kx * out_c];
                            acc += (uint32_t)(w * (x + x_offset));
                        }
                    }
                    out[oc] = finish_s8((int32_t)acc, bias, oc, quant, params->output_offset,
                                        params->activation);
                }
            }
        }
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_depthwise_conv_s8(const mcugen_context *ctx,
                                       const mcugen_dw_conv_params *params,
                                       const mcugen_per_channel_quant_params *quant,
                                       const mcugen_dims *input_dims, const int8_t *input,
                                       const mcugen_dims *filter_dims, const int8_t *filter,
                                       const mcugen_dims *bias_dims, const int32_t *bias,
                                       const mcugen_dims *output_dims, int8_t *output)
{
    if (params == NULL || input == NULL || filter == NULL || output == NULL ||
        !dims_positive(input_dims) || !dims_positive(filter_dims) || !dims_positive(output_dims)) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t in_c = input_dims->c, out_c = output_dims->c;
    const int32_t mult = params->ch_mult;
    if (input_dims->n != output_dims->n || filter_dims->n != 1 || filter_dims->c != out_c ||
        mult < 1 || out_c != in_c * mult || !bias_ok(bias_dims, bias, out_c) ||
        !common_args_ok(&params->stride, &params->padding, &params->dilation,
                        params->input_offset, params->activation, quant, out_c,
                        params->rq_table)) {
        return MCUGEN_ARG_ERROR;
    }
    return depthwise_conv_run(ctx, params, quant, input_dims, input, filter_dims, filter,
                              bias_dims, bias, output_dims, output);
}

/* The stripe entries exist whatever the optimisation (code built for speed may call them). At
 * -Os the header sends stripes to the checked kernels and these entries forward to them too, so
 * that each *_run keeps one caller and is inlined. */
#if defined(__OPTIMIZE_SIZE__)
#undef mcugen_convolve_stripe_s8
#undef mcugen_depthwise_conv_stripe_s8
#define CONVOLVE_STRIPE_WORK mcugen_convolve_s8
#define DEPTHWISE_STRIPE_WORK mcugen_depthwise_conv_s8
#else
#define CONVOLVE_STRIPE_WORK convolve_run
#define DEPTHWISE_STRIPE_WORK depthwise_conv_run
#endif

mcugen_status mcugen_convolve_stripe_s8(const mcugen_context *ctx, const mcugen_conv_params *params,
                                        const mcugen_per_channel_quant_params *quant,
                                        const mcugen_dims *input_dims, const int8_t *input,
                                        const mcugen_dims *filter_dims, const int8_t *filter,
                                        const mcugen_dims *bias_dims, const int32_t *bias,
                                        const mcugen_dims *output_dims, int8_t *output)
{
#if defined(MCUGEN_FAST_MVE) && !defined(MCUGEN_PORTABLE)
    if (filter_dims->h == 1 && filter_dims->w == 1 && filter_dims->c == 64 && /* (no call else) */
        mcugen_pointwise_stripe_fast_s8(params->kernel_sums, params->output_offset,
                                        params->activation, &params->stride, &params->padding,
                                        quant, input_dims, input, filter_dims, filter,
                                        output_dims, output)) {
        return MCUGEN_OK; /* a 64-channel pointwise stripe: the Helium pass, no set-up */
    }
#endif
    return CONVOLVE_STRIPE_WORK(ctx, params, quant, input_dims, input, filter_dims, filter,
                                bias_dims, bias, output_dims, output);
}

mcugen_status mcugen_depthwise_conv_stripe_s8(const mcugen_context *ctx,
                                              const mcugen_dw_conv_params *params,
                                              const mcugen_per_channel_quant_params *quant,
                                              const mcugen_dims *input_dims, const int8_t *input,
                                              const mcugen_dims *filter_dims, const int8_t *filter,
                                              const mcugen_dims *bias_dims, const int32_t *bias,
                                              const mcugen_dims *output_dims, int8_t *output)
{
#if defined(MCUGEN_FAST_MVE) && !defined(MCUGEN_PORTABLE)
    if (params->mve_table != NULL) { /* the build's table: the Helium row passes, no set-up */
        const mcugen_conv_fast_params fast = {params->input_offset, params->output_offset,
                                              params->stride,       params->padding,
                                              params->dilation,     params->activation,
                                              params->ch_mult,      NULL,
                                              params->rq_table,     params->mve_table};
        if (mcugen_depthwise_stripe_fast_s8(&fast, input_dims, input, filter_dims, filter,
                                            output_dims, output)) {
            return MCUGEN_OK;
        }
    }
#endif
    return DEPTHWISE_STRIPE_WORK(ctx, params, quant, input_dims, input, filter_dims, filter,
                                 bias_dims, bias, output_dims, output);
}

/* --- int16x8 ---------------------------------------------------------------------------- */

/* Geometry and clamp checks of the s16 kernels: offsets 0, clamp within int16. */
static int s16_args_ok(const mcugen_tile *stride, const mcugen_tile *padding,
                       const mcugen_tile *dilation, int32_t input_offset, int32_t output_offset,
                       mcugen_activation activation, const mcugen_rescale_params *rescale,
                       int32_t channels)
{
    return stride->w >= 1 && stride->h >= 1 && dilation->w >= 1 && dilation->h >= 1 &&
           padding->w >= 0 && padding->h >= 0 && input_offset == 0 && output_offset == 0 &&
           activation.min >= INT16_MIN && activation.max <= INT16_MAX &&
           activation.min <= activation.max && mcugen_rescale_ok(rescale, channels);
}

static int bias64_ok(const mcugen_dims *bias_dims, const int64_t *bias, int32_t channels)
{
    return bias == NULL || (bias_dims != NULL && dims_positive(bias_dims) &&
                            dims_count(bias_dims) == channels);
}

/* Exact sum (wrapping in 64 bits, which TFLite's ranges never reach) -> int16. */
static inline int16_t finish_s16(uint64_t acc, const int64_t *bias, int32_t channel,
                                 const mcugen_rescale_params *rescale,
                                 mcugen_activation activation)
{
    if (bias != NULL) {
        acc += (uint64_t)bias[channel];
    }
    const int64_t sum = acc <= (uint64_t)INT64_MAX ? (int64_t)acc : -(int64_t)(~acc) - 1;
    return (int16_t)mcugen_clamp(mcugen_rescale(rescale, sum, channel), activation.min,
                                 activation.max);
}

mcugen_status mcugen_convolve_s16(const mcugen_context *ctx, const mcugen_conv_params *params,
                                  const mcugen_rescale_params *rescale,
                                  const mcugen_dims *input_dims, const int16_t *input,
                                  const mcugen_dims *filter_dims, const int8_t *filter,
                                  const mcugen_dims *bias_dims, const int64_t *bias,
                                  const mcugen_dims *output_dims, int16_t *output)
{
    (void)ctx; /* no scratch needed */
    if (params == NULL || input == NULL || filter == NULL || output == NULL ||
        !dims_positive(input_dims) || !dims_positive(filter_dims) || !dims_positive(output_dims)) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t in_h = input_dims->h, in_w = input_dims->w, in_c = input_dims->c;
    const int32_t out_h = output_dims->h, out_w = output_dims->w, out_c = output_dims->c;
    const int32_t kh = filter_dims->h, kw = filter_dims->w, depth = filter_dims->c;
    if (input_dims->n != output_dims->n || filter_dims->n != out_c || in_c % depth != 0) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t groups = in_c / depth;
    if (out_c % groups != 0 || !bias64_ok(bias_dims, bias, out_c) ||
        !s16_args_ok(&params->stride, &params->padding, &params->dilation, params->input_offset,
                     params->output_offset, params->activation, rescale, out_c)) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t per_group = out_c / groups;
    const int32_t dil_h = params->dilation.h, dil_w = params->dilation.w;

    for (int32_t b = 0; b < input_dims->n; ++b) {
        const int16_t *image = input + b * in_h * in_w * in_c;
        for (int32_t oy = 0; oy < out_h; ++oy) {
            const int32_t y0 = oy * params->stride.h - params->padding.h;
            const int32_t ky_begin = first_tap(y0, dil_h);
            const int32_t ky_end = end_tap(y0, dil_h, in_h, kh);
            for (int32_t ox = 0; ox < out_w; ++ox) {
                const int32_t x0 = ox * params->stride.w - params->padding.w;
                const int32_t kx_begin = first_tap(x0, dil_w);
                const int32_t kx_end = end_tap(x0, dil_w, in_w, kw);
                int16_t *out = output + ((b * out_h + oy) * out_w + ox) * out_c;
                for (int32_t oc = 0; oc < out_c; ++oc) {
                    const int8_t *kernel = filter + oc * kh * kw * depth;
                    const int32_t channel0 = (oc / per_group) * depth;
                    uint64_t acc = 0;
                    for (int32_t ky = ky_begin; ky < ky_end; ++ky) {
                        const int16_t *row = image + (y0 + ky * dil_h) * in_w * in_c;
                        for (int32_t kx = kx_begin; kx < kx_end; ++kx) {
                            const int16_t *pixel = row + (x0 + kx * dil_w) * in_c + channel0;
                            const int8_t *taps = kernel + (ky * kw + kx) * depth;
                            for (int32_t i = 0; i < depth; ++i) {
                                /* |product| <= 128 * 32768: exact in int32 */
                                acc += (uint64_t)(int64_t)((int32_t)taps[i] * (int32_t)pixel[i]);
                            }
                        }
                    }
                    out[oc] = finish_s16(acc, bias, oc, rescale, params->activation);
                }
            }
        }
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_depthwise_conv_s16(const mcugen_context *ctx,
                                        const mcugen_dw_conv_params *params,
                                        const mcugen_rescale_params *rescale,
                                        const mcugen_dims *input_dims, const int16_t *input,
                                        const mcugen_dims *filter_dims, const int8_t *filter,
                                        const mcugen_dims *bias_dims, const int64_t *bias,
                                        const mcugen_dims *output_dims, int16_t *output)
{
    (void)ctx; /* no scratch needed */
    if (params == NULL || input == NULL || filter == NULL || output == NULL ||
        !dims_positive(input_dims) || !dims_positive(filter_dims) || !dims_positive(output_dims)) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t in_h = input_dims->h, in_w = input_dims->w, in_c = input_dims->c;
    const int32_t out_h = output_dims->h, out_w = output_dims->w, out_c = output_dims->c;
    const int32_t kh = filter_dims->h, kw = filter_dims->w;
    const int32_t mult = params->ch_mult;
    if (input_dims->n != output_dims->n || filter_dims->n != 1 || filter_dims->c != out_c ||
        mult < 1 || out_c != in_c * mult || !bias64_ok(bias_dims, bias, out_c) ||
        !s16_args_ok(&params->stride, &params->padding, &params->dilation, params->input_offset,
                     params->output_offset, params->activation, rescale, out_c)) {
        return MCUGEN_ARG_ERROR;
    }
    const int32_t dil_h = params->dilation.h, dil_w = params->dilation.w;

    for (int32_t b = 0; b < input_dims->n; ++b) {
        const int16_t *image = input + b * in_h * in_w * in_c;
        for (int32_t oy = 0; oy < out_h; ++oy) {
            const int32_t y0 = oy * params->stride.h - params->padding.h;
            const int32_t ky_begin = first_tap(y0, dil_h);
            const int32_t ky_end = end_tap(y0, dil_h, in_h, kh);
            for (int32_t ox = 0; ox < out_w; ++ox) {
                const int32_t x0 = ox * params->stride.w - params->padding.w;
                const int32_t kx_begin = first_tap(x0, dil_w);
                const int32_t kx_end = end_tap(x0, dil_w, in_w, kw);
                int16_t *out = output + ((b * out_h + oy) * out_w + ox) * out_c;
                for (int32_t oc = 0; oc < out_c; ++oc) {
                    const int32_t ic = oc / mult;
                    uint64_t acc = 0;
                    for (int32_t ky = ky_begin; ky < ky_end; ++ky) {
                        const int16_t *row = image + (y0 + ky * dil_h) * in_w * in_c;
                        const int8_t *taps = filter + ky * kw * out_c + oc;
                        for (int32_t kx = kx_begin; kx < kx_end; ++kx) {
                            const int32_t x = row[(x0 + kx * dil_w) * in_c + ic];
                            const int32_t w = taps[kx * out_c];
                            acc += (uint64_t)(int64_t)(w * x);
                        }
                    }
                    out[oc] = finish_s16(acc, bias, oc, rescale, params->activation);
                }
            }
        }
    }
    return MCUGEN_OK;
}
