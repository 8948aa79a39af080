/*
 * mcugen_npu_engine_internal.h - what the engine's operations share (mcugen_npu_fm.c):
 * feature-map views, the OFM output stage (scaling, zero point, clamp, LUT) and the kernel
 * geometry of CONV/DEPTHWISE/POOL.  Not a public API: only the engine's .c files include it.
 * Existing declarations stay stable; new ones are added.
 */
#ifndef MCUGEN_NPU_ENGINE_INTERNAL_H
#define MCUGEN_NPU_ENGINE_INTERNAL_H

#include <stdint.h>

#include "mcugen_npu_device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Feature maps ------------------------------------------------------------------------------ */

/* One IFM, IFM2 or OFM of h x w x c elements as the hardware addresses it: four tiles (tile 0
 * top left, 1 top right, 2 bottom left, 3 bottom right; HEIGHT0 splits the left column of tiles,
 * HEIGHT1 the right one, WIDTH0 the columns), NHWC or NHCWB16.  Every tile the area touches was
 * checked against its region when the view was made, so reads and writes of (y < height,
 * x < width, c < depth) stay inside the operand's footprint. */
struct mcugen_npu_fm_view {
    uint8_t *tile[4];          /* host pointer of each tile's base (NULL: the area does not use it) */
    uint32_t height, width, depth;
    uint32_t height0, height1, width0;
    uint64_t stride_x, stride_y, stride_c;
    uint32_t elem_bytes;       /* 1, 2 or 4 */
    int is_signed;
    int brick16;               /* NHCWB16 */
};

/* Element size and signedness from a raw precision field (`is_ofm`: OFM bit layout). */
enum mcugen_npu_fault mcugen_npu_fm_format(uint16_t precision, int is_ofm, uint32_t *elem_bytes, int *is_signed,
                                           int *brick16);

/* A view of `fm`'s h x w x c area; a fault if the precision or format is not modelled or a tile
 * lies outside its region (the device checked the same extent: this only guards the engine). */
enum mcugen_npu_fault mcugen_npu_fm_view_init(struct mcugen_npu_fm_view *view, struct mcugen_npu_device *dev,
                                              const struct mcugen_npu_fm *fm, int is_ofm, uint32_t h, uint32_t w,
                                              uint32_t c);

/* Element (y, x, c): the caller keeps y < height, x < width, c < depth. */
int32_t mcugen_npu_fm_read(const struct mcugen_npu_fm_view *view, uint32_t y, uint32_t x, uint32_t c);
/* Store the low elem_bytes bytes of `value` (the caller has saturated it to the precision). */
void mcugen_npu_fm_write(const struct mcugen_npu_fm_view *view, uint32_t y, uint32_t x, uint32_t c, int32_t value);

/* A raw 16-bit zero point as the value it means: two's complement for a signed precision. */
int32_t mcugen_npu_zero_point(uint16_t raw, int is_signed);

/* ---- Arithmetic ------------------------------------------------------------------------------------ */

/* `acc` wrapped to the accumulator of ACC_FORMAT (0: 32-bit, 1: 40-bit two's complement). */
int64_t mcugen_npu_acc_wrap(int64_t acc, uint16_t acc_format);

/* round(acc * scale / 2^shift) in OFM rounding mode `rounding` (MCUGEN_NPU_ROUND_*), saturated
 * to int64; acc must be within 40 bits (+-2^39), shift 0..63:
 *  TFL:      TFLite's double rounding: SaturatingRoundingDoublingHighMul (the high word of
 *            2*acc*scale, ties towards +infinity) then RoundingDivideByPowerOfTwo by shift-31
 *            (ties away from zero); for shift < 31 TFLite first shifts acc left, which makes it
 *            one rounding: floor(x + 1/2).
 *  TRUNCATE: towards zero.
 *  NATURAL:  floor(x + 1/2). */
int64_t mcugen_npu_scale(int64_t acc, uint32_t scale, uint32_t shift, uint32_t rounding);

/* The OFM end of an operation: scaled value + OFM zero point, clamped to ACTIVATION_MIN/MAX and
 * the clip range, then the LUT when ACTIVATION selects one. */
struct mcugen_npu_output_stage {
    uint32_t rounding;         /* MCUGEN_NPU_ROUND_* from OFM_PRECISION */
    int32_t ofm_zero_point;
    int64_t min, max;          /* the clamp: activation range within the clip range */
    const uint8_t *lut;        /* 256 bytes in SHRAM, or NULL */
    int lut_signed;            /* index = value + 128 */
    uint32_t lut_kind;         /* MCUGEN_NPU_LUT_* (what `lut` holds) */
};

/* The three LUTs (docs/npu.md, section Engine): 256 bytes indexed by an 8-bit value; 256 32-bit
 * entries indexed by an int8 value (a 32-bit OFM, clip range forced to int8: Vela's int8 SOFTMAX);
 * 512 32-bit entries `base | slope << 16` interpolated over int16 (a 16-bit signed OFM). */
#define MCUGEN_NPU_LUT_8BIT        0u
#define MCUGEN_NPU_LUT_32BIT_ENTRY 1u
#define MCUGEN_NPU_LUT_16BIT       2u

/* SHRAM layout of the LUT slots (Vela: the last 2 KiB of SHRAM, 8 slots of 256 bytes). */
#define MCUGEN_NPU_LUT_BYTES      2048u
#define MCUGEN_NPU_LUT_SLOT_BYTES 256u
#define MCUGEN_NPU_ACT_LUT_FIRST  16u
#define MCUGEN_NPU_ACT_LUT_LAST   23u

enum mcugen_npu_fault mcugen_npu_output_stage_init(struct mcugen_npu_output_stage *out,
                                                   const struct mcugen_npu_device *dev,
                                                   const struct mcugen_npu_state *state);
/* The OFM element for a scaled value (before the zero point). */
int32_t mcugen_npu_output(const struct mcugen_npu_output_stage *out, int64_t scaled);

/* ---- Kernel geometry (CONV, DEPTHWISE, POOL) -------------------------------------------------------- */

/* Where kernel tap (ky, kx) of OFM element (oy, ox) reads: the IFM is seen through its padding
 * and, with IFM_UPSCALE, at twice its size (nearest: each element twice; transpose: each
 * element followed by a zero, as Vela's TRANSPOSE_CONV uses it). */
struct mcugen_npu_kernel_geometry {
    uint32_t ofm_h, ofm_w, ofm_c;
    uint32_t ifm_h, ifm_w, ifm_c;        /* the IFM area the operation reads (the device's footprint) */
    uint32_t span_h, span_w;             /* that area in the upscaled space (ifm_h/w without upscale) */
    uint32_t kernel_h, kernel_w;         /* undilated kernel */
    uint32_t stride_y, stride_x, dilation_y, dilation_x;
    uint32_t pad_top, pad_left;
    uint32_t upscale;                    /* MCUGEN_NPU_UPSCALE_* */
};

/* Padding beyond this is refused: more than Vela writes, and with the device's footprint check it
 * bounds the kernel, so a corrupt stream cannot ask for an endless window walk. */
#define MCUGEN_NPU_ENGINE_MAX_PAD 255u

enum mcugen_npu_fault mcugen_npu_kernel_geometry_init(struct mcugen_npu_kernel_geometry *g,
                                                      const struct mcugen_npu_state *state);

/* What tap (ky, kx) of OFM element (oy, ox) sees in channel c: MCUGEN_NPU_TAP_DATA with *value
 * set (the stored element, or for a transpose zero the IFM zero point), or MCUGEN_NPU_TAP_PAD
 * for padding (a convolution adds nothing there, a pooling skips it). */
#define MCUGEN_NPU_TAP_PAD  0
#define MCUGEN_NPU_TAP_DATA 1
int mcugen_npu_kernel_tap(const struct mcugen_npu_kernel_geometry *g, const struct mcugen_npu_fm_view *ifm,
                          int32_t ifm_zero_point, uint32_t oy, uint32_t ox, uint32_t ky, uint32_t kx, uint32_t c,
                          int32_t *value);

/* ---- Operations ------------------------------------------------------------------------------------ */

/* Accumulators the engine keeps at once (int64): it walks an OFM depth block's weights once per
 * group of OFM positions that fits, restarting the weight decoder from a copy of its state. */
#define MCUGEN_NPU_ENGINE_ACCUMULATORS 1024u

enum mcugen_npu_fault mcugen_npu_engine_conv(struct mcugen_npu_device *dev, uint32_t opcode,
                                             const struct mcugen_npu_state *state);
enum mcugen_npu_fault mcugen_npu_engine_pool(struct mcugen_npu_device *dev, uint32_t mode,
                                             const struct mcugen_npu_state *state);
enum mcugen_npu_fault mcugen_npu_engine_elementwise(struct mcugen_npu_device *dev, uint32_t param,
                                                    const struct mcugen_npu_state *state);

#ifdef __cplusplus
}
#endif

#endif /* MCUGEN_NPU_ENGINE_INTERNAL_H */
