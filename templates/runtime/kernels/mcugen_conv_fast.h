/* mcugen runtime: fast int8 inner loops for CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED.
 *
 * The public kernels (mcugen_conv.h, mcugen_fully_connected.h) validate their arguments, then
 * offer the work to these functions; each returns 1 when it computed the whole output and 0
 * when the caller must run its portable loops (a configuration the fast path does not cover,
 * or scratch too small). Every fast path is bit-exact with the portable C: the same int32
 * sums modulo 2^32 and the same requantization (mcugen_requantize's double rounding).
 *
 * Which path, chosen by the compiler's macros (so by -mcpu, i.e. mcugen's --target; see
 * mcugen_platform.h), and where it lives:
 *   MCUGEN_FAST_MVE  Helium (__ARM_FEATURE_MVE, Cortex-M55): ACLE MVE intrinsics;
 *                    mcugen_conv_fast_mve.c.
 *   MCUGEN_FAST_DSP  the DSP extension (__ARM_FEATURE_DSP, Cortex-M4/M7): SMLAD and friends;
 *                    mcugen_conv_fast_dsp.c.
 *   neither          (host, Cortex-M0/M3, or -DMCUGEN_PORTABLE): every function returns 0;
 *                    mcugen_conv_fast.c.
 *
 * How the sums stay exact:
 *   DSP conv: five output pixels at a time where the scratch holds five, else four (the last
 *        pixels one at a time) are copied (im2col) into int16 with the input offset added
 *        (|x + off| <= 255, SXTAB16), interleaved by groups of four in the order x0 x2 x1 x3,
 *        the order __sxtb16 / SXTB16 ROR #8 unpack a word of four int8 weights into; SMLAD
 *        then forms w * (x + off) exactly, one weight row against the block's pixels (asm
 *        loops: LDRD column pairs; a word-aligned row also loads two weight words per LDRD).
 *        Taps in the padding and the last group's padding are stored as 0, which is what
 *        skipping them adds. A 1x1 stride-1 unpadded conv widens its contiguous pixels
 *        directly; a window inside the input is copied a row at a time. A quick call (every
 *        channel fast, the int8 clamp) runs its blocks of four or five columns in naked asm
 *        functions (the channel loop, the products, the requantization and the stores with
 *        all fourteen registers); rows of size % 4 != 0 there read a whole last group (the
 *        next row's first bytes times the column's zero padding), the last row in C.
 *        FULLY_CONNECTED: the same with one input row; over MCUGEN_FC_LAYOUT_PAIRS4 weights a
 *        pair of units shares each word, one SMLAD of the raw word (256 A + B + 128, exact
 *        modulo 2^32) and one of its SXTB16 ROR 8 (A) per four MACs, B recovered once per
 *        unit. Depthwise (ch_mult 1, channels % 4 == 0): widened weights,
 *        SMLABB/SMLATT per channel from bias + input_offset * sum(w) (both from the build's
 *        table for a tiled chain's stripes, mcugen_conv_params.rq_table); taps in the padding
 *        read the input zero point (-input_offset), whose w * (x + off) is 0; 3x3 windows
 *        run their nine taps unrolled, in a quick chunk (every channel fast, the int8 clamp)
 *        in naked asm functions: a row's run of pixels with windows inside the input in one
 *        call, a border pixel through its offset table.
 *   DSP requantization: multipliers != INT32_MIN (else the portable C runs); per channel,
 *        when shift is in [-22, -1], |output offset| <= 128 and |bias| + the largest possible
 *        sum < 2^30 (so 2 acc fits in int32): SMMULR(2 acc, m) = floor((acc m + 2^30) / 2^31)
 *        (the doubling high multiply), then RoundingDivideByPOT and the output offset as one
 *        floor shift of y - (y < 0) + 2^(right-1) + offset 2^right; otherwise requantize_fast.
 *        The asm loops take (y < 0) from acc (multiplier >= 0: they differ only where y == 0,
 *        which the shift rounds alike) and add it with SMMLAR: y + add in one instruction.
 *   MVE conv: int8 x int8 dot products (VMLADAVA) plus input_offset * sum(w) + bias per
 *        output channel (four rows a pass, per call), which equals sum(w * (x + off)) + bias
 *        modulo 2^32; taps in the padding are stored as the input zero point (-input_offset),
 *        whose (x + off) is 0; a 1x1, stride-1, unpadded conv reads the input directly. Depth
 *        <= 48: two pixels' columns stay in registers while the rows stream past (a column's
 *        last block read at size - 16, its lanes the block before holds zeroed in x, so that
 *        the weights need no predicate; a 3x3 window of rows <= 16 bytes copied into a column
 *        first); deeper: three rows by two pixels a pass (asm loop; the one or two rows left
 *        over as a triple overlapping the last, which recomputes the same sums), the last
 *        pixel of an odd count four rows a pass. 3x3 windows over 16, 32 or 64 channels at
 *        stride 1 or 2 (the scratch holding 4 accumulators a channel): whole output rows, four
 *        (three) neighbouring pixels a pass over one window row and block of 16 channels, the
 *        input columns they share held in Q registers (those outside the input as the zero
 *        point) and three weight loads per channel feeding 12 (9) VMLADAVA; the kernel sums
 *        added at the requantization.
 *        Runs of pixel pairs whose windows lie inside the input skip the per-pixel window
 *        arithmetic and bounds checks; so do the pairs of a conv whose windows (<= 48 bytes)
 *        are all gathered (KWS's 10x4x1 first layer: gather_pairs, 40-byte columns in one asm
 *        pass, rows_40x2). A 1x1 conv over 64 contiguous channels (no shift > 0,
 *        out_c % 4 == 0, word-aligned data) runs four output channels by two pixels a pass in
 *        one naked asm function, the eight sums in the even registers and requantized as two
 *        vectors (pw64_4x2; an odd last pixel pw64_4x1); a tiled chain's stripes of it come
 *        straight from mcugen_convolve_stripe_s8 (mcugen_pointwise_stripe_fast_s8).
 *        FULLY_CONNECTED: two rows a pass, VMLADAVA for w . x and VADDVA for sum(w).
 *        Depthwise (ch_mult 1, channels >= 8, the last block of eight overlapping the one before
 *        when channels % 8 != 0): eight channels as int16 (x + off), VMULLB/VMULLT into int32;
 *        two neighbouring pixels (stride == dilation) share the window columns they both read,
 *        taps outside the input are skipped; 3x3 pairs whose columns are all inside the input
 *        (stride 1 or 2) run a whole row's worth in one assembly loop. The blocks' bias,
 *        multipliers and shifts come from the build's table for a tiled chain's stripes
 *        (mcugen_dw_conv_params.mve_table), else are arranged in the scratch per call. With
 *        that table, every shift negative, the full int8 clamp, 3x3 windows at stride 1 with
 *        one column of padding each side, the passes of a row are chosen once a row, not per
 *        pixel (dw3_rows_lean; the last pixel of an odd row in one asm pass of 16 channels).
 *        The requantization is vectorised: VQRDMULH is gemmlowp's
 *        SaturatingRoundingDoublingHighMul exactly (saturation included), and VRSHL after
 *        subtracting 1 from negative values is RoundingDivideByPOT (ties away from zero); the
 *        left shift is skipped when no shift of the call is positive; the output offset is
 *        added in int32 (wrapping, as the portable C) before the clamp.
 *
 * Scratch (ctx->buf, 4-byte aligned): the *_buffer_size functions below, which depend on the
 * path compiled in (0 for the portable build); mcugen plans the same sizes in the arena for
 * --target cortex-m4/m7 (DSP) and cortex-m55 (MVE), none for host (mcugen/ops/conv/emit.py).
 * With less scratch than that, a fast path declines and the portable loops run.
 */
#ifndef MCUGEN_CONV_FAST_H
#define MCUGEN_CONV_FAST_H

#include <stdint.h>

#include "mcugen_nn_types.h"
#include "mcugen_platform.h" /* which path: MCUGEN_FAST_MVE, MCUGEN_FAST_DSP or neither */

/* What the fast paths need of the conv and depthwise params (mcugen_conv.h), copied by the
 * caller, so that this file depends on no other kernel's header. */
typedef struct {
    int32_t input_offset;
    int32_t output_offset;
    mcugen_tile stride;
    mcugen_tile padding;
    mcugen_tile dilation;
    mcugen_activation activation;
    int32_t ch_mult; /* depthwise only */
    const int32_t *kernel_sums; /* conv only, optional: mcugen_conv_params.kernel_sums */
    const int32_t *rq_table;    /* optional: mcugen_conv_params.rq_table */
    const int32_t *mve_table;   /* depthwise only, optional: mcugen_dw_conv_params.mve_table */
} mcugen_conv_fast_params;

/* What the fast path needs of mcugen_fc_params (mcugen_fully_connected.h). */
typedef struct {
    int32_t input_offset;
    int32_t output_offset;
    mcugen_activation activation;
    int32_t per_channel;
    const int32_t *kernel_sums; /* optional: mcugen_fc_params.kernel_sums */
    int32_t filter_layout;      /* mcugen_fc_params.filter_layout */
    int32_t rq_checked;         /* mcugen_fc_params.rq_checked */
} mcugen_fully_connected_fast_params;

/* mcugen_fc_params.filter_layout of the weights in blocks of four units, two pairs of units
 * whose words interleave the pair's weights (the second unit's byte offset by 128), which the
 * DSP path reads with one LDM a group and one SXTB16 per four MACs (mcugen_conv_fast_dsp.c,
 * "pairs of units"); the Helium path declines it. (Value 1 was an earlier layout.) */
#define MCUGEN_FC_LAYOUT_PAIRS4 2

/* Scratch bytes of the conv fast path compiled in (0 without one): the im2col columns and
 * per-channel sums. */
int32_t mcugen_convolve_fast_s8_buffer_size(const mcugen_dims *filter_dims);

/* Scratch bytes of the depthwise fast path compiled in: per-channel tables. */
int32_t mcugen_depthwise_conv_fast_s8_buffer_size(const mcugen_dims *filter_dims);

/* Scratch bytes of the FULLY_CONNECTED fast path compiled in: the input row as int16. */
int32_t mcugen_fully_connected_fast_s8_buffer_size(const mcugen_dims *filter_dims);

/* The same per instruction set, compiled on every core (plain arithmetic: the host checks them
 * against mcugen's planner, tests/test_kernel_scratch.py): mcugen_conv_fast_dsp.c, _mve.c. */
int32_t mcugen_convolve_fast_dsp_s8_buffer_size(const mcugen_dims *filter_dims);
int32_t mcugen_depthwise_conv_fast_dsp_s8_buffer_size(const mcugen_dims *filter_dims);
int32_t mcugen_fully_connected_fast_dsp_s8_buffer_size(const mcugen_dims *filter_dims);
int32_t mcugen_convolve_fast_mve_s8_buffer_size(const mcugen_dims *filter_dims);
int32_t mcugen_depthwise_conv_fast_mve_s8_buffer_size(const mcugen_dims *filter_dims);
int32_t mcugen_fully_connected_fast_mve_s8_buffer_size(const mcugen_dims *filter_dims);

/* 1 when every shift[0..n) lies in TFLite's QuantizeMultiplier range [-31, 30] (the public
 * kernels' argument check, on every call: under tiling once per stripe): four lanes at a time
 * with Helium, else scalar. Compiled on every core (mcugen_conv_fast.c). */
int mcugen_shifts_in_range(const int32_t *shift, int32_t n);

/* Arguments as mcugen_convolve_s8, already validated by it (groups == 1 is checked here). */
int mcugen_convolve_fast_s8(const mcugen_context *ctx, const mcugen_conv_fast_params *params,
                            const mcugen_per_channel_quant_params *quant,
                            const mcugen_dims *input_dims, const int8_t *input,
                            const mcugen_dims *filter_dims, const int8_t *filter,
                            const int32_t *bias, const mcugen_dims *output_dims, int8_t *output);

/* A tiled chain's later stripes of a 1x1, stride-1, unpadded conv over 64 channels with the
 * build's kernel sums, straight from mcugen_convolve_stripe_s8 (Helium builds only: the
 * general entry's set-up cost about 300 instructions a call): 1 when computed, 0 when the
 * caller must run mcugen_convolve_fast_s8 (another shape, a shift > 0, unaligned data). */
int mcugen_pointwise_stripe_fast_s8(const int32_t *kernel_sums, int32_t output_offset,
                                    mcugen_activation activation, const mcugen_tile *stride,
                                    const mcugen_tile *padding,
                                    const mcugen_per_channel_quant_params *quant,
                                    const mcugen_dims *input_dims, const int8_t *input,
                                    const mcugen_dims *filter_dims, const int8_t *filter,
                                    const mcugen_dims *output_dims, int8_t *output);

/* 1 when every byte offset the depthwise fast paths form fits int32: they address each tap of
 * a window, in the padding too, from the window's origin, and rows from input row y0 (which
 * may be -padding), so every such offset is below the padded span
 * (in_h + pad_h + kh dil_h) x (in_w + pad_w + kw dil_w) x channels. Wider
 * geometries (huge dilations or padding) decline and run the portable loops, which form the
 * offsets of in-bounds taps only. Compiled on every core (mcugen_conv_fast.c). */
int mcugen_depthwise_fast_offsets_fit(const mcugen_conv_fast_params *params,
                                      const mcugen_dims *input_dims,
                                      const mcugen_dims *filter_dims, int32_t channels);

/* A tiled chain's later stripes of a 3x3 depthwise with the build's table (params->mve_table),
 * straight from mcugen_depthwise_conv_stripe_s8 (Helium builds only): 1 when computed by the
 * row passes (stride 1, one column of padding each side, every shift negative, the full int8
 * clamp, channels a multiple of 8 and at least 16), else 0. */
int mcugen_depthwise_stripe_fast_s8(const mcugen_conv_fast_params *params,
                                    const mcugen_dims *input_dims, const int8_t *input,
                                    const mcugen_dims *filter_dims, const int8_t *filter,
                                    const mcugen_dims *output_dims, int8_t *output);

/* Arguments as mcugen_depthwise_conv_s8, already validated by it. */
int mcugen_depthwise_conv_fast_s8(const mcugen_context *ctx, const mcugen_conv_fast_params *params,
                                  const mcugen_per_channel_quant_params *quant,
                                  const mcugen_dims *input_dims, const int8_t *input,
                                  const mcugen_dims *filter_dims, const int8_t *filter,
                                  const int32_t *bias, const mcugen_dims *output_dims,
                                  int8_t *output);

/* Arguments as mcugen_fully_connected_s8, already validated by it; only for filter_offset 0
 * and the fixed-point requantization (real_scale == NULL), which the caller checks. */
int mcugen_fully_connected_fast_s8(const mcugen_context *ctx,
                                   const mcugen_fully_connected_fast_params *params,
                                   const mcugen_per_channel_quant_params *quant,
                                   const mcugen_dims *input_dims, const int8_t *input,
                                   const mcugen_dims *filter_dims, const int8_t *filter,
                                   const int32_t *bias, const mcugen_dims *output_dims,
                                   int8_t *output);

#endif /* MCUGEN_CONV_FAST_H */
