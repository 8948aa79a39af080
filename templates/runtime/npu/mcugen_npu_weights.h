/*
 * mcugen NPU runtime: the Ethos-U55 compressed weight format and the 80-bit bias/scale entries.
 *
 * Three pieces, all portable C99 without malloc (see templates/runtime/npu/README.md, "Weights"):
 *  - a streaming decoder for one compressed weight stream (slices of Golomb-Rice coded weight
 *    indices, optional zero runs, palette or direct mapping, end-of-stream markers) into signed
 *    9-bit weights held in int16_t; every read is bounds-checked against the stream, every write
 *    against the caller's buffer, whatever the bytes;
 *  - the decoder of the 10-byte bias/scale entries (40-bit signed bias, 32-bit scale, 6-bit shift);
 *  - the order in which Vela lays the weights of a CONV or DEPTHWISE kernel into the stream for
 *    Ethos-U55: which (ofm channel, ky, kx, ifm channel) a decoded index holds.
 */
#ifndef MCUGEN_NPU_WEIGHTS_H
#define MCUGEN_NPU_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MCUGEN_NPU_W_OK = 0,
    MCUGEN_NPU_W_ERR_ARGUMENT = -1,  /* a null pointer or a parameter out of its range */
    MCUGEN_NPU_W_ERR_TRUNCATED = -2, /* the stream ends inside a slice, or before its end marker */
    MCUGEN_NPU_W_ERR_CORRUPT = -3,   /* a field holds a value the format does not allow */
    MCUGEN_NPU_W_ERR_CAPACITY = -4   /* the stream holds more weights than the output takes */
} mcugen_npu_w_status;

/* ---- weight stream decoder -------------------------------------------------------------- */

#define MCUGEN_NPU_WDEC_RING 64 /* decoded values waiting to be interleaved; a power of two */

/* The decoder's whole state; treat as opaque (704 bytes on a 64-bit host, 688 on Cortex-M). */
typedef struct {
    const uint8_t *stream;
    size_t bytes;
    size_t bitpos;
    int status;        /* sticky: once an error, always that error */
    int at_end;        /* the end of the stream was reached after an end marker */
    int need_palette;  /* the next slice must set a palette (start of stream, after an end marker) */
    int have_slice;    /* a slice header has been read and its values are not all out yet */
    int prev_zero_runs;
    /* palette */
    int16_t palette[32];
    int palsize;
    int palbits;
    int direct_offset;
    /* current slice */
    int nvalues;       /* weights in the slice */
    int z_nvalues;     /* zero runs in the slice: nvalues + 1 if it set a palette, else nvalues */
    int zoff;          /* 1 if the slice starts with a zero run */
    int zero_runs;
    int w_div, w_trunc, w_uncompressed, w_max_symbols;
    int z_div, z_unary_len;
    /* chunk state (symbol counters include the padding symbols of the last chunk) */
    int w_pos, z_pos, w_carry, z_carry;
    int w_prev_enable, z_prev_enable, w_prev_n, z_prev_n;
    int w_prev_q[12], z_prev_q[12];
    int w_known, z_known; /* values whose remainder has been read */
    int decoding_done;    /* the slice's last chunk has been read */
    /* interleaving */
    int e_w, e_z;         /* next weight and next zero run to emit */
    uint32_t zeros_left;  /* zeros still to write of the run being emitted */
    int zeros_active;
    int16_t w_ring[MCUGEN_NPU_WDEC_RING];
    uint32_t z_ring[MCUGEN_NPU_WDEC_RING];
} mcugen_npu_wdec;

/* Start decoding `bytes` bytes at `stream` (which must stay valid while the decoder is used). */
void mcugen_npu_wdec_init(mcugen_npu_wdec *dec, const uint8_t *stream, size_t bytes);

/* Decode up to `n` further weights into `out` (out may be NULL: the weights are skipped), and
 * store how many in *got. Fewer than `n` only at the end of the stream (status OK) or on an error
 * (the status; *got then counts the weights written before it). */
mcugen_npu_w_status mcugen_npu_wdec_read(mcugen_npu_wdec *dec, int16_t *out, size_t n, size_t *got);

/* Decode a whole stream into out[0..capacity). *count gets the number of weights (on an error,
 * the number written before it). out may be NULL to count only: capacity is then ignored. */
mcugen_npu_w_status mcugen_npu_weights_decode(const uint8_t *stream, size_t bytes, int16_t *out,
                                              size_t capacity, size_t *count);

/* ---- bias/scale entries ----------------------------------------------------------------- */

#define MCUGEN_NPU_BIAS_SCALE_BYTES 10

typedef struct {
    int64_t bias;   /* 40-bit signed: -2^39 .. 2^39-1 */
    uint32_t scale;
    uint8_t shift;  /* 0 .. 63 */
} mcugen_npu_bias_scale;

/* Entry `index` of the `bytes`-byte scale stream at `stream`: bytes 0-4 the bias (two's
 * complement, little-endian), 5-8 the scale, byte 9 the shift in bits 5:0 and zero in bits 7:6.
 * TRUNCATED if the entry does not fit in the stream, CORRUPT if bits 7:6 of byte 9 are set. */
mcugen_npu_w_status mcugen_npu_bias_scale_decode(const uint8_t *stream, size_t bytes, size_t index,
                                                 mcugen_npu_bias_scale *entry);

/* ---- weight order ----------------------------------------------------------------------- */

typedef enum {
    MCUGEN_NPU_TRAVERSAL_DEPTH_FIRST = 0,  /* CONV, NPU_SET_KERNEL_STRIDE bit 2 = 0 */
    MCUGEN_NPU_TRAVERSAL_PART_KERNEL = 1,  /* CONV, NPU_SET_KERNEL_STRIDE bit 2 = 1 */
    MCUGEN_NPU_TRAVERSAL_DEPTHWISE = 2     /* NPU_OP_DEPTHWISE */
} mcugen_npu_traversal;

/* What decides the order of one weight stream. The stream covers ofm channels
 * [0, ofm_depth) of its own (Vela cuts an op's weights into one stream per OFM depth slice). */
typedef struct {
    int ofm_depth;        /* ofm channels in this stream */
    int kernel_h, kernel_w;
    int ifm_depth;        /* ifm channels per ofm channel; 1 for DEPTHWISE */
    int ofm_block_depth;  /* NPU_SET_OFM_BLK_DEPTH_M1 + 1 */
    int traversal;        /* mcugen_npu_traversal */
    int ifm_bits;         /* 8 or 16 */
    int dilation_x, dilation_y; /* 1 or 2 */
    int ofm_ublock_depth; /* 8 on U55-64/128/256, 4 on U55-32 */
    int ifm_ublock_depth; /* 8 on every U55 */
} mcugen_npu_weight_order;

/* Where decoded weight `index` belongs: weight (ofm, ky, kx, ifm) of the OHWI kernel. */
typedef struct {
    int ofm, ky, kx, ifm;
} mcugen_npu_weight_pos;

/* The number of weights (real and padding) the stream of `order` decodes to; 0 if a
 * parameter is out of range. */
size_t mcugen_npu_weight_order_length(const mcugen_npu_weight_order *order);

/* 1 and *pos set if decoded weight `index` is a real weight, 0 if it is padding (always 0 in the
 * stream), MCUGEN_NPU_W_ERR_ARGUMENT if the parameters are out of range or index >= length. */
int mcugen_npu_weight_order_position(const mcugen_npu_weight_order *order, size_t index,
                                     mcugen_npu_weight_pos *pos);

#ifdef __cplusplus
}
#endif

#endif /* MCUGEN_NPU_WEIGHTS_H */
