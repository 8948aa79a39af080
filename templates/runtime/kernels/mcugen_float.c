/* mcugen runtime: float32 window, transpose-conv and fully-connected kernels in TFLite's
 * reference loop order (see mcugen_float.h for the arithmetic that makes them bit-exact).
 * Portable C only: a vectorised sum would change the order of the additions. */
#include "mcugen_float.h"

#include <stddef.h>

/* ActivationFunctionWithMinMax: std::min(std::max(x, lo), hi) with std::max(a, b) = a < b ? b : a. */
static float clamp(float x, const mcugen_float_activation *a)
{
    const float low = (x < a->min) ? a->min : x;
    return (a->max < low) ? a->max : low;
}

static size_t at(const mcugen_dims *d, int32_t n, int32_t y, int32_t x, int32_t c)
{
    return (((size_t)n * (size_t)d->h + (size_t)y) * (size_t)d->w + (size_t)x) * (size_t)d->c + (size_t)c;
}

static int bad_window(const mcugen_tile *stride, const mcugen_tile *dilation)
{
    return stride->w < 1 || stride->h < 1 || dilation->w < 1 || dilation->h < 1;
}

static int inside(int32_t y, int32_t x, const mcugen_dims *d)
{
    return y >= 0 && y < d->h && x >= 0 && x < d->w;
}

mcugen_status mcugen_convolve_f32(const mcugen_conv_f32_params *params,
                                  const mcugen_dims *input_dims, const float *input,
                                  const mcugen_dims *filter_dims, const float *filter,
                                  const float *bias,
                                  const mcugen_dims *output_dims, float *output)
{
    int32_t b, oy, ox, oc, fy, fx, ic;
    if (bad_window(&params->stride, &params->dilation) || filter_dims->c != input_dims->c ||
        filter_dims->n != output_dims->c || input_dims->n != output_dims->n) {
        return MCUGEN_ARG_ERROR;
    }
    for (b = 0; b < output_dims->n; ++b) {
        for (oy = 0; oy < output_dims->h; ++oy) {
            for (ox = 0; ox < output_dims->w; ++ox) {
                const int32_t y0 = oy * params->stride.h - params->padding.h;
                const int32_t x0 = ox * params->stride.w - params->padding.w;
                for (oc = 0; oc < output_dims->c; ++oc) {
                    float total = 0.0f;
                    for (fy = 0; fy < filter_dims->h; ++fy) {
                        const int32_t iy = y0 + params->dilation.h * fy;
                        for (fx = 0; fx < filter_dims->w; ++fx) {
                            const int32_t ix = x0 + params->dilation.w * fx;
                            const float *in;
                            const float *w;
                            if (!inside(iy, ix, input_dims)) {
                                continue;
                            }
                            in = input + at(input_dims, b, iy, ix, 0);
                            w = filter + at(filter_dims, oc, fy, fx, 0);
                            for (ic = 0; ic < input_dims->c; ++ic) {
                                const float product = in[ic] * w[ic];
                                total += product;
                            }
                        }
                    }
                    output[at(output_dims, b, oy, ox, oc)] =
                        clamp(total + (bias != NULL ? bias[oc] : 0.0f), &params->activation);
                }
            }
        }
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_depthwise_conv_f32(const mcugen_conv_f32_params *params,
                                        const mcugen_dims *input_dims, const float *input,
                                        const mcugen_dims *filter_dims, const float *filter,
                                        const float *bias,
                                        const mcugen_dims *output_dims, float *output)
{
    int32_t b, oy, ox, ic, m, fy, fx;
    const int32_t mult = params->ch_mult;
    if (bad_window(&params->stride, &params->dilation) || mult < 1 ||
        input_dims->c * mult != output_dims->c || filter_dims->c != output_dims->c ||
        input_dims->n != output_dims->n) {
        return MCUGEN_ARG_ERROR;
    }
    for (b = 0; b < output_dims->n; ++b) {
        for (oy = 0; oy < output_dims->h; ++oy) {
            for (ox = 0; ox < output_dims->w; ++ox) {
                const int32_t y0 = oy * params->stride.h - params->padding.h;
                const int32_t x0 = ox * params->stride.w - params->padding.w;
                for (ic = 0; ic < input_dims->c; ++ic) {
                    for (m = 0; m < mult; ++m) {
                        const int32_t oc = m + ic * mult;
                        float total = 0.0f;
                        for (fy = 0; fy < filter_dims->h; ++fy) {
                            const int32_t iy = y0 + params->dilation.h * fy;
                            for (fx = 0; fx < filter_dims->w; ++fx) {
                                const int32_t ix = x0 + params->dilation.w * fx;
                                float product;
                                if (!inside(iy, ix, input_dims)) {
                                    continue;
                                }
                                product = input[at(input_dims, b, iy, ix, ic)] *
                                          filter[at(filter_dims, 0, fy, fx, oc)];
                                total += product;
                            }
                        }
                        output[at(output_dims, b, oy, ox, oc)] =
                            clamp(total + (bias != NULL ? bias[oc] : 0.0f), &params->activation);
                    }
                }
            }
        }
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_transpose_conv_f32(const mcugen_conv_f32_params *params,
                                        const mcugen_dims *input_dims, const float *input,
                                        const mcugen_dims *filter_dims, const float *filter,
                                        const float *bias,
                                        const mcugen_dims *output_dims, float *output)
{
    int32_t b, iy, ix, ic, fy, fx, oc;
    size_t i;
    const size_t count = (size_t)output_dims->n * (size_t)output_dims->h * (size_t)output_dims->w *
                         (size_t)output_dims->c;
    if (params->stride.w < 1 || params->stride.h < 1 || filter_dims->c != input_dims->c ||
        filter_dims->n != output_dims->c || input_dims->n != output_dims->n) {
        return MCUGEN_ARG_ERROR;
    }
    for (i = 0; i < count; ++i) {
        output[i] = 0.0f;
    }
    /* The reference scatters: every input element adds its products to the outputs it meets. */
    for (b = 0; b < input_dims->n; ++b) {
        for (iy = 0; iy < input_dims->h; ++iy) {
            for (ix = 0; ix < input_dims->w; ++ix) {
                const int32_t y0 = iy * params->stride.h - params->padding.h;
                const int32_t x0 = ix * params->stride.w - params->padding.w;
                for (ic = 0; ic < input_dims->c; ++ic) {
                    const float value = input[at(input_dims, b, iy, ix, ic)];
                    for (fy = 0; fy < filter_dims->h; ++fy) {
                        for (fx = 0; fx < filter_dims->w; ++fx) {
                            if (!inside(y0 + fy, x0 + fx, output_dims)) {
                                continue;
                            }
                            for (oc = 0; oc < output_dims->c; ++oc) {
                                const float product = value * filter[at(filter_dims, oc, fy, fx, ic)];
                                output[at(output_dims, b, y0 + fy, x0 + fx, oc)] += product;
                            }
                        }
                    }
                }
            }
        }
    }
    for (i = 0; i < count; ++i) {
        float acc = output[i];
        if (bias != NULL) {
            acc += bias[i % (size_t)output_dims->c];
        }
        output[i] = clamp(acc, &params->activation);
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_fully_connected_f32(const mcugen_float_activation *activation,
                                         int32_t batches, int32_t depth, int32_t units,
                                         const float *input, const float *weights,
                                         const float *bias, float *output)
{
    int32_t b, u, d;
    if (batches < 0 || depth < 0 || units < 0) {
        return MCUGEN_ARG_ERROR;
    }
    for (b = 0; b < batches; ++b) {
        const float *row = input + (size_t)b * (size_t)depth;
        for (u = 0; u < units; ++u) {
            const float *w = weights + (size_t)u * (size_t)depth;
            float total = 0.0f;
            for (d = 0; d < depth; ++d) {
                const float product = row[d] * w[d];
                total += product;
            }
            output[(size_t)b * (size_t)units + (size_t)u] =
                clamp(total + (bias != NULL ? bias[u] : 0.0f), activation);
        }
    }
    return MCUGEN_OK;
}

/* The in-bounds part [start, end) of a window of `size` taps at `origin` over `extent`. */
static void window_span(int32_t origin, int32_t size, int32_t extent, int32_t *start, int32_t *end)
{
    *start = origin < 0 ? -origin : 0;
    *end = (extent - origin < size) ? extent - origin : size;
}

typedef enum { POOL_AVERAGE, POOL_MAX } pool_kind;

static mcugen_status pool_f32(pool_kind kind, const mcugen_pool_f32_params *params,
                              const mcugen_dims *input_dims, const float *input,
                              const mcugen_dims *output_dims, float *output)
{
    int32_t b, oy, ox, c, fy, fx;
    if (params->stride.w < 1 || params->stride.h < 1 || params->filter.w < 1 || params->filter.h < 1 ||
        input_dims->c != output_dims->c || input_dims->n != output_dims->n) {
        return MCUGEN_ARG_ERROR;
    }
    for (b = 0; b < output_dims->n; ++b) {
        for (oy = 0; oy < output_dims->h; ++oy) {
            for (ox = 0; ox < output_dims->w; ++ox) {
                const int32_t y0 = oy * params->stride.h - params->padding.h;
                const int32_t x0 = ox * params->stride.w - params->padding.w;
                int32_t fy0, fy1, fx0, fx1;
                window_span(y0, params->filter.h, input_dims->h, &fy0, &fy1);
                window_span(x0, params->filter.w, input_dims->w, &fx0, &fx1);
                if (fy1 <= fy0 || fx1 <= fx0) {
                    if (kind == POOL_AVERAGE) {
                        return MCUGEN_ARG_ERROR;
                    }
                }
                for (c = 0; c < output_dims->c; ++c) {
                    float value;
                    if (kind == POOL_AVERAGE) {
                        float total = 0.0f;
                        int32_t count = 0;
                        for (fy = fy0; fy < fy1; ++fy) {
                            for (fx = fx0; fx < fx1; ++fx) {
                                total += input[at(input_dims, b, y0 + fy, x0 + fx, c)];
                                ++count;
                            }
                        }
                        value = total / (float)count;
                    } else {
                        value = -3.40282347e+38f; /* std::numeric_limits<float>::lowest() */
                        for (fy = fy0; fy < fy1; ++fy) {
                            for (fx = fx0; fx < fx1; ++fx) {
                                const float tap = input[at(input_dims, b, y0 + fy, x0 + fx, c)];
                                value = (value < tap) ? tap : value;
                            }
                        }
                    }
                    output[at(output_dims, b, oy, ox, c)] = clamp(value, &params->activation);
                }
            }
        }
    }
    return MCUGEN_OK;
}

mcugen_status mcugen_avgpool_f32(const mcugen_pool_f32_params *params,
                                 const mcugen_dims *input_dims, const float *input,
                                 const mcugen_dims *output_dims, float *output)
{
    return pool_f32(POOL_AVERAGE, params, input_dims, input, output_dims, output);
}

mcugen_status mcugen_maxpool_f32(const mcugen_pool_f32_params *params,
                                 const mcugen_dims *input_dims, const float *input,
                                 const mcugen_dims *output_dims, float *output)
{
    return pool_f32(POOL_MAX, params, input_dims, input, output_dims, output);
}
