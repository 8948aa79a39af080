/*
 * mcugen NPU runtime: decoder of the Ethos-U55 compressed weight format, the 80-bit bias/scale
 * entries and Vela's weight order. The format is described in README.md ("Weights"); this is
 * our own code, written from the public description of the format.
 */
#include "mcugen_npu_weights.h"

#define ZDIV_DISABLE 6
#define ZDIV_EOS 7
#define WDIV_UNCOMPRESSED 7
#define RING_MASK (MCUGEN_NPU_WDEC_RING - 1)
/* A longer quotient cannot come from a valid stream: weight indices are below 512, and a zero
 * run this long (2^26 << 3) would not fit any output buffer. */
#define W_Q_MAX 511
#define Z_Q_MAX (1L << 26)

static int fail(mcugen_npu_wdec *d, int status)
{
    if (d->status == MCUGEN_NPU_W_OK) {
        d->status = status;
    }
    return 0;
}

/* Read n (0..16) bits, least significant first; 0 and TRUNCATED when the stream is too short. */
static int get_bits(mcugen_npu_wdec *d, int n, int *value)
{
    size_t total = d->bytes * 8u;
    int v = 0;
    int done = 0;
    if ((size_t)n > total - d->bitpos) {
        return fail(d, MCUGEN_NPU_W_ERR_TRUNCATED);
    }
    while (done < n) {
        size_t pos = d->bitpos;
        int off = (int)(pos & 7u);
        int take = 8 - off;
        if (take > n - done) {
            take = n - done;
        }
        v |= ((d->stream[pos >> 3] >> off) & ((1 << take) - 1)) << done;
        done += take;
        d->bitpos += (size_t)take;
    }
    *value = v;
    return 1;
}

void mcugen_npu_wdec_init(mcugen_npu_wdec *dec, const uint8_t *stream, size_t bytes)
{
    size_t i;
    unsigned char *raw = (unsigned char *)dec;
    if (dec == NULL) {
        return;
    }
    for (i = 0; i < sizeof *dec; i++) {
        raw[i] = 0;
    }
    dec->stream = stream;
    dec->bytes = bytes;
    dec->need_palette = 1;
    if (stream == NULL && bytes != 0) {
        dec->status = MCUGEN_NPU_W_ERR_ARGUMENT;
    }
    if (bytes > ((size_t)-1) / 8u) {
        dec->status = MCUGEN_NPU_W_ERR_ARGUMENT;
    }
}

/* Read the next slice header. 1: a slice; 0: the end of the stream or an error (status). */
static int read_header(mcugen_npu_wdec *d)
{
    int zdiv, slicelen, wdiv, wtrunc, newpal, i;
    if (!get_bits(d, 3, &zdiv)) {
        return 0;
    }
    while (zdiv == ZDIV_EOS) {
        /* end of a stream: skip to the next byte (the encoder pads with ones) */
        d->bitpos = (d->bitpos + 7u) & ~(size_t)7u;
        d->need_palette = 1;
        if (d->bitpos == d->bytes * 8u) {
            d->at_end = 1;
            return 0;
        }
        if (!get_bits(d, 3, &zdiv)) {
            return 0;
        }
    }
    if (zdiv > 3 && zdiv != ZDIV_DISABLE) {
        return fail(d, MCUGEN_NPU_W_ERR_CORRUPT);
    }
    if (!get_bits(d, 15, &slicelen) || !get_bits(d, 3, &wdiv) || !get_bits(d, 1, &wtrunc)
        || !get_bits(d, 1, &newpal)) {
        return 0;
    }
    if (d->need_palette && !newpal) {
        return fail(d, MCUGEN_NPU_W_ERR_CORRUPT); /* the first slice must set up the palette */
    }
    if (!newpal && (zdiv != ZDIV_DISABLE) != d->prev_zero_runs) {
        return fail(d, MCUGEN_NPU_W_ERR_CORRUPT); /* zero runs change only with a new palette */
    }
    if (wdiv == 6) {
        return fail(d, MCUGEN_NPU_W_ERR_CORRUPT);
    }
    if (newpal) {
        int size, bits;
        if (!get_bits(d, 5, &d->direct_offset) || !get_bits(d, 5, &size) || !get_bits(d, 3, &bits)) {
            return 0;
        }
        d->palsize = size > 0 ? size + 1 : 0;
        d->palbits = bits + 2;
        for (i = 0; i < d->palsize; i++) {
            int entry;
            if (!get_bits(d, d->palbits, &entry)) {
                return 0;
            }
            d->palette[i] = (int16_t)entry;
        }
    }
    d->need_palette = 0;
    d->zero_runs = zdiv != ZDIV_DISABLE;
    d->prev_zero_runs = d->zero_runs;
    d->nvalues = slicelen + 1;
    d->zoff = newpal ? 1 : 0;
    d->z_nvalues = d->nvalues + d->zoff;
    d->w_trunc = wtrunc;
    d->w_uncompressed = wdiv == WDIV_UNCOMPRESSED;
    if (d->w_uncompressed) {
        /* only remainders: as many bits as a palette index, or PALBITS without a palette */
        int bits = 0;
        if (d->palsize > 0) {
            while ((1 << bits) < d->palsize) {
                bits++;
            }
        } else {
            bits = d->palbits;
        }
        d->w_div = bits;
    } else {
        d->w_div = wdiv;
    }
    d->w_max_symbols = (d->w_uncompressed && d->w_div > 5) ? 8 : 12;
    d->z_div = d->zero_runs ? zdiv : 0;
    d->z_unary_len = d->z_div < 3 ? 12 : 8;
    d->w_pos = d->z_pos = d->w_carry = d->z_carry = 0;
    d->w_prev_enable = d->z_prev_enable = d->w_prev_n = d->z_prev_n = 0;
    d->w_known = d->z_known = 0;
    d->decoding_done = 0;
    d->e_w = d->e_z = 0;
    return 1;
}

/* Map a weight index through the palette or the direct offset to a signed weight. */
static int index_to_weight(mcugen_npu_wdec *d, int index, int16_t *weight)
{
    int val;
    if (index >= 512) {
        return fail(d, MCUGEN_NPU_W_ERR_CORRUPT);
    }
    val = index < d->palsize ? d->palette[index] : index - d->palsize + d->direct_offset;
    if (val > 511) {
        return fail(d, MCUGEN_NPU_W_ERR_CORRUPT); /* not a 9-bit sign-magnitude value */
    }
    *weight = (int16_t)((val & 1) ? -(val >> 1) : (val >> 1));
    return 1;
}

/* Decode one chunk of the current slice: the weight unary part, the zero-run unary part, then
 * the remainders of the previous chunk's symbols (the order the encoder writes them in). */
static int decode_chunk(mcugen_npu_wdec *d)
{
    int balance = d->zero_runs ? d->w_pos - d->z_pos : 0;
    int w_enable = (balance < 8 || !d->zero_runs) && d->w_pos < d->nvalues;
    int z_enable = balance >= 0 && d->zero_runs && d->z_pos < d->z_nvalues;
    int w_unary0 = 0, w_n = 0, z_n = 0, i;
    int w_q[12], z_q[12];

    if (w_enable && !d->w_uncompressed && !get_bits(d, 12, &w_unary0)) {
        return 0;
    }
    if (z_enable) {
        int z_unary;
        long cnt = d->z_carry;
        if (!get_bits(d, d->z_unary_len, &z_unary)) {
            return 0;
        }
        for (i = 0; i < d->z_unary_len; i++) {
            if (z_unary & (1 << i)) {
                cnt++;
            } else {
                z_q[z_n++] = (int)cnt;
                cnt = 0;
            }
        }
        if (cnt > Z_Q_MAX) {
            return fail(d, MCUGEN_NPU_W_ERR_CORRUPT);
        }
        d->z_carry = (int)cnt;
        d->z_pos += z_n;
    }
    if (w_enable) {
        int ones = 0, w_unary1 = 0, cnt = d->w_carry;
        for (i = 0; i < d->w_max_symbols; i++) {
            ones += (w_unary0 >> i) & 1;
        }
        if (!get_bits(d, ones, &w_unary1)) {
            return 0;
        }
        for (i = 0; i < d->w_max_symbols; i++) {
            int code = 0;
            if (w_unary0 & (1 << i)) {
                code = 1 + (w_unary1 & 1);
                w_unary1 >>= 1;
            }
            cnt += code;
            if (code < 2 || d->w_trunc) {
                w_q[w_n++] = cnt;
                cnt = 0;
            }
        }
        if (cnt > W_Q_MAX) {
            return fail(d, MCUGEN_NPU_W_ERR_CORRUPT);
        }
        d->w_carry = cnt;
        d->w_pos += w_n;
    }
    if (d->w_prev_enable) {
        for (i = 0; i < d->w_prev_n && d->w_known < d->nvalues; i++) {
            int r;
            int16_t weight;
            if (d->w_prev_q[i] > W_Q_MAX) {
                return fail(d, MCUGEN_NPU_W_ERR_CORRUPT);
            }
            if (!get_bits(d, d->w_div, &r) || !index_to_weight(d, (d->w_prev_q[i] << d->w_div) + r, &weight)) {
                return 0;
            }
            if (d->w_known - d->e_w >= MCUGEN_NPU_WDEC_RING) {
                return fail(d, MCUGEN_NPU_W_ERR_CORRUPT);
            }
            d->w_ring[d->w_known & RING_MASK] = weight;
            d->w_known++;
        }
    }
    if (d->z_prev_enable) {
        for (i = 0; i < d->z_prev_n && d->z_known < d->z_nvalues; i++) {
            int r;
            if (!get_bits(d, d->z_div, &r)) {
                return 0;
            }
            if (d->z_known - d->e_z >= MCUGEN_NPU_WDEC_RING) {
                return fail(d, MCUGEN_NPU_W_ERR_CORRUPT);
            }
            d->z_ring[d->z_known & RING_MASK] = ((uint32_t)d->z_prev_q[i] << d->z_div) + (uint32_t)r;
            d->z_known++;
        }
    }
    d->w_prev_enable = w_enable;
    d->w_prev_n = w_n;
    d->z_prev_enable = z_enable;
    d->z_prev_n = z_n;
    for (i = 0; i < 12; i++) {
        d->w_prev_q[i] = i < w_n ? w_q[i] : 0;
        d->z_prev_q[i] = i < z_n ? z_q[i] : 0;
    }
    if (!w_enable && !z_enable) {
        d->decoding_done = 1;
    }
    return 1;
}

mcugen_npu_w_status mcugen_npu_wdec_read(mcugen_npu_wdec *dec, int16_t *out, size_t n, size_t *got)
{
    size_t written = 0;
    if (got != NULL) {
        *got = 0;
    }
    if (dec == NULL || got == NULL) {
        return MCUGEN_NPU_W_ERR_ARGUMENT;
    }
    while (written < n && dec->status == MCUGEN_NPU_W_OK) {
        if (dec->zeros_active) {
            size_t k = n - written;
            if ((size_t)dec->zeros_left < k) {
                k = dec->zeros_left;
            }
            if (out != NULL) {
                size_t j;
                for (j = 0; j < k; j++) {
                    out[written + j] = 0;
                }
            }
            written += k;
            dec->zeros_left -= (uint32_t)k;
            dec->zeros_active = dec->zeros_left > 0;
            continue;
        }
        if (!dec->have_slice) {
            if (dec->at_end || !read_header(dec)) {
                break; /* the end of the stream, or an error */
            }
            dec->have_slice = 1;
            continue;
        }
        /* The slice's values in stream order: [z0] w0 z1 w1 z2 ... (z0 only in a slice that sets a
         * palette; zero runs only when the slice uses them). */
        if (dec->zero_runs && dec->e_z < dec->e_w + dec->zoff) {
            if (dec->e_z < dec->z_known) {
                uint32_t zeros = dec->z_ring[dec->e_z & RING_MASK];
                dec->e_z++;
                dec->zeros_left = zeros;
                dec->zeros_active = zeros > 0;
                continue;
            }
        } else if (dec->e_w < dec->nvalues) {
            if (dec->e_w < dec->w_known) {
                if (out != NULL) {
                    out[written] = dec->w_ring[dec->e_w & RING_MASK];
                }
                written++;
                dec->e_w++;
                continue;
            }
        } else {
            /* every value is out: finish the slice's chunks, then read the next header */
            if (!dec->decoding_done) {
                decode_chunk(dec);
            } else {
                dec->have_slice = 0;
            }
            continue;
        }
        if (dec->decoding_done) {
            fail(dec, MCUGEN_NPU_W_ERR_CORRUPT); /* a value the chunks never delivered */
            break;
        }
        decode_chunk(dec);
    }
    *got = written;
    return (mcugen_npu_w_status)dec->status;
}

mcugen_npu_w_status mcugen_npu_weights_decode(const uint8_t *stream, size_t bytes, int16_t *out,
                                              size_t capacity, size_t *count)
{
    mcugen_npu_wdec dec;
    mcugen_npu_w_status status;
    size_t got = 0, more = 0;
    if (count != NULL) {
        *count = 0;
    }
    if (count == NULL) {
        return MCUGEN_NPU_W_ERR_ARGUMENT;
    }
    mcugen_npu_wdec_init(&dec, stream, bytes);
    status = mcugen_npu_wdec_read(&dec, out, out != NULL ? capacity : (size_t)-1, &got);
    *count = got;
    if (status != MCUGEN_NPU_W_OK || out == NULL || got < capacity) {
        return status;
    }
    /* the buffer is full: the rest of the stream must hold no further weight */
    status = mcugen_npu_wdec_read(&dec, NULL, 1, &more);
    if (status == MCUGEN_NPU_W_OK && more > 0) {
        status = MCUGEN_NPU_W_ERR_CAPACITY;
    }
    return status;
}

mcugen_npu_w_status mcugen_npu_bias_scale_decode(const uint8_t *stream, size_t bytes, size_t index,
                                                 mcugen_npu_bias_scale *entry)
{
    const uint8_t *p;
    uint64_t raw = 0;
    int i;
    if (stream == NULL || entry == NULL) {
        return MCUGEN_NPU_W_ERR_ARGUMENT;
    }
    if (index >= bytes / MCUGEN_NPU_BIAS_SCALE_BYTES) {
        return MCUGEN_NPU_W_ERR_TRUNCATED;
    }
    p = stream + index * MCUGEN_NPU_BIAS_SCALE_BYTES;
    if (p[9] & 0xC0u) {
        return MCUGEN_NPU_W_ERR_CORRUPT;
    }
    for (i = 4; i >= 0; i--) {
        raw = (raw << 8) | p[i];
    }
    /* sign-extend 40 bits without relying on implementation-defined conversions */
    entry->bias = (int64_t)(raw ^ ((uint64_t)1 << 39)) - ((int64_t)1 << 39);
    entry->scale = (uint32_t)p[5] | ((uint32_t)p[6] << 8) | ((uint32_t)p[7] << 16) | ((uint32_t)p[8] << 24);
    entry->shift = (uint8_t)(p[9] & 0x3Fu);
    return MCUGEN_NPU_W_OK;
}

/* ---- weight order ----------------------------------------------------------------------- */

#define DIM_MAX 65536

static int order_valid(const mcugen_npu_weight_order *o)
{
    if (o == NULL) {
        return 0;
    }
    if (o->ofm_depth < 1 || o->ofm_depth > DIM_MAX || o->kernel_h < 1 || o->kernel_h > DIM_MAX
        || o->kernel_w < 1 || o->kernel_w > DIM_MAX || o->ifm_depth < 1 || o->ifm_depth > DIM_MAX
        || o->ofm_block_depth < 1 || o->ofm_block_depth > DIM_MAX) {
        return 0;
    }
    if (o->traversal < MCUGEN_NPU_TRAVERSAL_DEPTH_FIRST || o->traversal > MCUGEN_NPU_TRAVERSAL_DEPTHWISE) {
        return 0;
    }
    if (o->traversal == MCUGEN_NPU_TRAVERSAL_DEPTHWISE && o->ifm_depth != 1) {
        return 0;
    }
    if ((o->ifm_bits != 8 && o->ifm_bits != 16) || (o->dilation_x != 1 && o->dilation_x != 2)
        || (o->dilation_y != 1 && o->dilation_y != 2)) {
        return 0;
    }
    return o->ofm_ublock_depth >= 1 && o->ofm_ublock_depth <= 64 && o->ifm_ublock_depth >= 1
           && o->ifm_ublock_depth <= 64;
}

static long ceil_div(long a, long b)
{
    return (a + b - 1) / b;
}

/* Walk the blocks of the order (see README.md): with pos == NULL, the total length; otherwise
 * the position of `index` (1 real, 0 padding; -1 past the end). */
static int order_walk(const mcugen_npu_weight_order *o, uint64_t index, uint64_t *length,
                      mcugen_npu_weight_pos *pos)
{
    const int pk = o->traversal == MCUGEN_NPU_TRAVERSAL_PART_KERNEL;
    const int dw = o->traversal == MCUGEN_NPU_TRAVERSAL_DEPTHWISE;
    const long ou_d = o->ofm_ublock_depth, iu_d = o->ifm_ublock_depth;
    const long ifm_block = (pk || o->ifm_bits == 16) ? 16 : 32;
    const long decomp_x = 8 / o->dilation_x, decomp_y = 8 / o->dilation_y;
    const long round = dw ? 4 : pk ? (o->ifm_bits == 16 ? 2 : 4) : 1;
    const long iz_n = dw ? 1 : iu_d;
    uint64_t total = 0;
    long ob, ib, sy, sx;
    for (ob = 0; ob < o->ofm_depth; ob += o->ofm_block_depth) {
        long cob = o->ofm_depth - ob < o->ofm_block_depth ? o->ofm_depth - ob : o->ofm_block_depth;
        long n_ou = ceil_div(cob, ou_d);
        for (ib = 0; ib < (dw ? 1 : o->ifm_depth); ib += ifm_block) {
            long cib = dw ? iu_d : pk ? (o->ifm_depth - ib < ifm_block ? o->ifm_depth - ib : ifm_block) : ifm_block;
            long outer_n = pk ? ceil_div(cib, iu_d) : 1;
            long inner_n = pk ? 1 : ceil_div(cib, iu_d);
            for (sy = 0; sy < o->kernel_h; sy += decomp_y) {
                long sh = o->kernel_h - sy < decomp_y ? o->kernel_h - sy : decomp_y;
                for (sx = 0; sx < o->kernel_w; sx += decomp_x) {
                    long sw = o->kernel_w - sx < decomp_x ? o->kernel_w - sx : decomp_x;
                    uint64_t elements = (uint64_t)ceil_div(sw * sh, round) * (uint64_t)round;
                    uint64_t per_e = (uint64_t)inner_n * (uint64_t)ou_d * (uint64_t)iz_n;
                    uint64_t per_ou = elements * per_e;
                    uint64_t per_outer = (uint64_t)n_ou * per_ou;
                    uint64_t sub_len = (uint64_t)outer_n * per_outer;
                    if (pos != NULL && index < sub_len) {
                        uint64_t t = index;
                        uint64_t io = t / per_outer, u, e, ii, oz, iz;
                        long ky, kx, ofm, ifm;
                        t %= per_outer;
                        u = t / per_ou;
                        t %= per_ou;
                        e = t / per_e;
                        t %= per_e;
                        ii = t / ((uint64_t)ou_d * (uint64_t)iz_n);
                        t %= (uint64_t)ou_d * (uint64_t)iz_n;
                        oz = t / (uint64_t)iz_n;
                        iz = t % (uint64_t)iz_n;
                        kx = (long)(e % (uint64_t)sw);
                        ky = (long)(e / (uint64_t)sw);
                        ifm = ib + (long)(ii + io) * iu_d + (long)iz;
                        ofm = ob + (long)u * ou_d + (long)oz;
                        if (ifm >= o->ifm_depth || ofm >= o->ofm_depth || ky >= sh) {
                            return 0;
                        }
                        pos->ofm = (int)ofm;
                        pos->ky = (int)(sy + ky);
                        pos->kx = (int)(sx + kx);
                        pos->ifm = (int)ifm;
                        return 1;
                    }
                    index -= pos != NULL ? sub_len : 0;
                    total += sub_len;
                }
            }
        }
    }
    if (length != NULL) {
        *length = total;
    }
    return -1;
}

size_t mcugen_npu_weight_order_length(const mcugen_npu_weight_order *order)
{
    uint64_t length = 0;
    if (!order_valid(order)) {
        return 0;
    }
    (void)order_walk(order, 0, &length, NULL);
    if (length > (uint64_t)((size_t)-1)) {
        return 0;
    }
    return (size_t)length;
}

int mcugen_npu_weight_order_position(const mcugen_npu_weight_order *order, size_t index,
                                     mcugen_npu_weight_pos *pos)
{
    int found;
    if (!order_valid(order) || pos == NULL) {
        return MCUGEN_NPU_W_ERR_ARGUMENT;
    }
    found = order_walk(order, (uint64_t)index, NULL, pos);
    return found < 0 ? MCUGEN_NPU_W_ERR_ARGUMENT : found;
}
