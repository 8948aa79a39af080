/* mcugen runtime: the conv/depthwise/FULLY_CONNECTED fast paths' portable side (see
 * mcugen_conv_fast.h): the scratch size of the path compiled in (each ISA's sizes are in
 * mcugen_conv_fast_dsp.c, _mve.c), and, when no path is compiled in (host, Cortex-M0/M3,
 * -DMCUGEN_PORTABLE), entry points that decline so that the portable loops run. */
#include "mcugen_conv_fast.h"
#include "mcugen_fast_common.h"

/* The scratch of the path compiled in: each instruction set's size functions are compiled on
 * every core (mcugen_conv_fast_dsp.c, _mve.c), this picks the one that runs. */
int32_t mcugen_convolve_fast_s8_buffer_size(const mcugen_dims *filter_dims)
{
#if defined(MCUGEN_FAST_MVE)
    return mcugen_convolve_fast_mve_s8_buffer_size(filter_dims);
#elif defined(MCUGEN_FAST_DSP)
    return mcugen_convolve_fast_dsp_s8_buffer_size(filter_dims);
#else
    (void)filter_dims;
    return 0;
#endif
}

int32_t mcugen_depthwise_conv_fast_s8_buffer_size(const mcugen_dims *filter_dims)
{
#if defined(MCUGEN_FAST_MVE)
    return mcugen_depthwise_conv_fast_mve_s8_buffer_size(filter_dims);
#elif defined(MCUGEN_FAST_DSP)
    return mcugen_depthwise_conv_fast_dsp_s8_buffer_size(filter_dims);
#else
    (void)filter_dims;
    return 0;
#endif
}

int32_t mcugen_fully_connected_fast_s8_buffer_size(const mcugen_dims *filter_dims)
{
#if defined(MCUGEN_FAST_MVE)
    return mcugen_fully_connected_fast_mve_s8_buffer_size(filter_dims);
#elif defined(MCUGEN_FAST_DSP)
    return mcugen_fully_connected_fast_dsp_s8_buffer_size(filter_dims);
#else
    (void)filter_dims;
    return 0;
#endif
}

int mcugen_depthwise_fast_offsets_fit(const mcugen_conv_fast_params *params,
                                      const mcugen_dims *input_dims,
                                      const mcugen_dims *filter_dims, int32_t channels)
{
    /* kh dilation steps, not kh - 1: the Helium path forms the row step dil_h x in_w x ch
     * (and the column step) even for a one-row filter. Each term is an int32 or a product of
     * two: exact in int64. */
    const int64_t rows = (int64_t)input_dims->h + params->padding.h +
                         (int64_t)filter_dims->h * params->dilation.h;
    const int64_t cols = (int64_t)input_dims->w + params->padding.w +
                         (int64_t)filter_dims->w * params->dilation.w;
    if (rows > INT32_MAX || cols > INT32_MAX || channels < 1) {
        return 0;
    }
    /* rows * row_bytes < 2^62 when row_bytes fits: a product, not a division (which would
     * link libgcc's 64-bit __aeabi_ldivmod, ~0.8 KB of flash on Cortex-M) */
    const int64_t row_bytes = cols * channels; /* < 2^62 */
    return row_bytes <= INT32_MAX && rows * row_bytes <= INT32_MAX;
}

int mcugen_shifts_in_range(const int32_t *shift, int32_t n)
{
#if defined(MCUGEN_FAST_MVE)
    int32_t lo = 0, hi = 0; /* 0 is in range: min(0, shifts) >= -31 iff every shift is */
    int32_t c = 0;
    for (; c + 4 <= n; c += 4) { /* whole vectors unpredicated: four instructions a pass */
        const int32x4_t v = vldrwq_s32(shift + c);
        lo = vminvq_s32(lo, v);
        hi = vmaxvq_s32(hi, v);
    }
    if (c < n) {
        const mve_pred16_t p = vctp32q((uint32_t)(n - c));
        const int32x4_t v = vldrwq_z_s32(shift + c, p);
        lo = vminvq_p_s32(lo, v, p);
        hi = vmaxvq_p_s32(hi, v, p);
    }
    return lo >= -31 && hi <= 30;
#else
    uint32_t outside = 0; /* branchless: shift + 31 (mod 2^32) outside [0, 61] */
    for (int32_t c = 0; c < n; ++c) {
        outside |= (uint32_t)shift[c] + 31u > 61u;
    }
    return outside == 0;
#endif
}

#if !defined(MCUGEN_FAST_DSP) && !defined(MCUGEN_FAST_MVE)

int mcugen_convolve_fast_s8(const mcugen_context *ctx, const mcugen_conv_fast_params *params,
                            const mcugen_per_channel_quant_params *quant,
                            const mcugen_dims *input_dims, const int8_t *input,
                            const mcugen_dims *filter_dims, const int8_t *filter,
                            const int32_t *bias, const mcugen_dims *output_dims, int8_t *output)
{
    (void)ctx, (void)params, (void)quant, (void)input_dims, (void)input, (void)filter_dims;
    (void)filter, (void)bias, (void)output_dims, (void)output;
    return 0;
}

int mcugen_depthwise_conv_fast_s8(const mcugen_context *ctx, const mcugen_conv_fast_params *params,
                                  const mcugen_per_channel_quant_params *quant,
                                  const mcugen_dims *input_dims, const int8_t *input,
                                  const mcugen_dims *filter_dims, const int8_t *filter,
                                  const int32_t *bias, const mcugen_dims *output_dims,
                                  int8_t *output)
{
    (void)ctx, (void)params, (void)quant, (void)input_dims, (void)input, (void)filter_dims;
    (void)filter, (void)bias, (void)output_dims, (void)output;
    return 0;
}

int mcugen_fully_connected_fast_s8(const mcugen_context *ctx,
                                   const mcugen_fully_connected_fast_params *params,
                                   const mcugen_per_channel_quant_params *quant,
                                   const mcugen_dims *input_dims, const int8_t *input,
                                   const mcugen_dims *filter_dims, const int8_t *filter,
                                   const int32_t *bias, const mcugen_dims *output_dims,
                                   int8_t *output)
{
    (void)ctx, (void)params, (void)quant, (void)input_dims, (void)input, (void)filter_dims;
    (void)filter, (void)bias, (void)output_dims, (void)output;
    return 0;
}


#endif
