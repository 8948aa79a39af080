/*
 * Host harness for templates/runtime/npu/mcugen_npu_weights.c, driven by tests/test_npu_weights.py.
 *
 *   npu_weights_harness decode IN OUT   records: u32 bytes, u32 capacity, u32 chunk, stream bytes;
 *                                       out: i32 status, u32 count, i16 weights[count].
 *                                       chunk 0 decodes with mcugen_npu_weights_decode, else with
 *                                       mcugen_npu_wdec_read in pieces of `chunk` weights, both
 *                                       into a buffer of `capacity` weights.
 *   npu_weights_harness count IN OUT    records: u32 bytes, stream bytes; out: i32 status, u32
 *                                       count (mcugen_npu_weights_decode with no output buffer).
 *   npu_weights_harness scale IN OUT    records: u32 bytes, bytes; out per 10-byte entry (and one
 *                                       past the end): i32 status, i64 bias, u32 scale, u32 shift.
 *   npu_weights_harness order IN OUT    records: i32 x 10 (mcugen_npu_weight_order in field
 *                                       order); out: u32 length, then per index i32 found, ofm,
 *                                       ky, kx, ifm; then the status of index = length.
 * All integers little-endian. Every buffer is allocated at its exact size so that AddressSanitizer
 * sees any access outside it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcugen_npu_weights.h"

static int read_u32(FILE *f, uint32_t *v)
{
    unsigned char b[4];
    if (fread(b, 1, 4, f) != 4) {
        return 0;
    }
    *v = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
    return 1;
}

static void write_u32(FILE *f, uint32_t v)
{
    unsigned char b[4];
    b[0] = (unsigned char)v;
    b[1] = (unsigned char)(v >> 8);
    b[2] = (unsigned char)(v >> 16);
    b[3] = (unsigned char)(v >> 24);
    fwrite(b, 1, 4, f);
}

static void write_u64(FILE *f, uint64_t v)
{
    write_u32(f, (uint32_t)v);
    write_u32(f, (uint32_t)(v >> 32));
}

static unsigned char *read_bytes(FILE *f, uint32_t n)
{
    /* exact size (one byte for an empty stream, which is never read) */
    unsigned char *p = (unsigned char *)malloc(n > 0 ? n : 1);
    if (p == NULL || (n > 0 && fread(p, 1, n, f) != n)) {
        free(p);
        return NULL;
    }
    return p;
}

static int do_decode(FILE *in, FILE *out)
{
    uint32_t bytes, capacity, chunk;
    while (read_u32(in, &bytes)) {
        unsigned char *stream;
        int16_t *weights = NULL;
        size_t count = 0, i;
        int status;
        if (!read_u32(in, &capacity) || !read_u32(in, &chunk) || (stream = read_bytes(in, bytes)) == NULL) {
            return 1;
        }
        /* exact size; a zero capacity still passes a valid pointer (NULL means count only) */
        weights = (int16_t *)malloc((capacity > 0 ? capacity : 1) * sizeof *weights);
        if (weights == NULL) {
            return 1;
        }
        if (chunk == 0) {
            status = mcugen_npu_weights_decode(bytes ? stream : NULL, bytes, weights, capacity, &count);
        } else {
            mcugen_npu_wdec dec;
            size_t got = 0;
            mcugen_npu_wdec_init(&dec, bytes ? stream : NULL, bytes);
            status = MCUGEN_NPU_W_OK;
            for (;;) {
                size_t want = chunk;
                if (want > capacity - count) {
                    want = capacity - count;
                }
                status = mcugen_npu_wdec_read(&dec, weights + count, want, &got);
                count += got;
                if (status != MCUGEN_NPU_W_OK || got < want || count == capacity) {
                    break;
                }
            }
        }
        write_u32(out, (uint32_t)status);
        write_u32(out, (uint32_t)count);
        for (i = 0; i < count; i++) {
            unsigned char b[2];
            b[0] = (unsigned char)((uint16_t)weights[i] & 0xFFu);
            b[1] = (unsigned char)((uint16_t)weights[i] >> 8);
            fwrite(b, 1, 2, out);
        }
        free(weights);
        free(stream);
    }
    return 0;
}

static int do_count(FILE *in, FILE *out)
{
    uint32_t bytes;
    while (read_u32(in, &bytes)) {
        unsigned char *stream = read_bytes(in, bytes);
        size_t count = 0;
        int status;
        if (stream == NULL) {
            return 1;
        }
        status = mcugen_npu_weights_decode(bytes ? stream : NULL, bytes, NULL, 0, &count);
        write_u32(out, (uint32_t)status);
        write_u32(out, (uint32_t)count);
        free(stream);
    }
    return 0;
}

static int do_scale(FILE *in, FILE *out)
{
    uint32_t bytes;
    while (read_u32(in, &bytes)) {
        unsigned char *stream = read_bytes(in, bytes);
        size_t i;
        if (stream == NULL) {
            return 1;
        }
        for (i = 0; i <= bytes / MCUGEN_NPU_BIAS_SCALE_BYTES; i++) {
            mcugen_npu_bias_scale e;
            int status;
            memset(&e, 0, sizeof e);
            status = mcugen_npu_bias_scale_decode(stream, bytes, i, &e);
            write_u32(out, (uint32_t)status);
            write_u64(out, (uint64_t)e.bias);
            write_u32(out, e.scale);
            write_u32(out, e.shift);
        }
        free(stream);
    }
    return 0;
}

static int do_order(FILE *in, FILE *out)
{
    uint32_t f[10];
    for (;;) {
        mcugen_npu_weight_order o;
        mcugen_npu_weight_pos pos;
        size_t length, i;
        int k;
        for (k = 0; k < 10; k++) {
            if (!read_u32(in, &f[k])) {
                return k == 0 ? 0 : 1;
            }
        }
        o.ofm_depth = (int)f[0];
        o.kernel_h = (int)f[1];
        o.kernel_w = (int)f[2];
        o.ifm_depth = (int)f[3];
        o.ofm_block_depth = (int)f[4];
        o.traversal = (int)f[5];
        o.ifm_bits = (int)f[6];
        o.dilation_x = (int)f[7];
        o.dilation_y = (int)f[8];
        o.ofm_ublock_depth = (int)(f[9] & 0xFFFFu);
        o.ifm_ublock_depth = (int)(f[9] >> 16);
        length = mcugen_npu_weight_order_length(&o);
        write_u32(out, (uint32_t)length);
        for (i = 0; i <= length; i++) {
            int found;
            memset(&pos, 0, sizeof pos);
            found = mcugen_npu_weight_order_position(&o, i, &pos);
            write_u32(out, (uint32_t)found);
            write_u32(out, (uint32_t)pos.ofm);
            write_u32(out, (uint32_t)pos.ky);
            write_u32(out, (uint32_t)pos.kx);
            write_u32(out, (uint32_t)pos.ifm);
        }
    }
}

int main(int argc, char **argv)
{
    FILE *in, *out;
    int rc;
    if (argc != 4) {
        fprintf(stderr, "usage: %s decode|count|scale|order IN OUT\n", argv[0]);
        return 2;
    }
    in = fopen(argv[2], "rb");
    out = fopen(argv[3], "wb");
    if (in == NULL || out == NULL) {
        fprintf(stderr, "cannot open %s or %s\n", argv[2], argv[3]);
        return 2;
    }
    if (strcmp(argv[1], "decode") == 0) {
        rc = do_decode(in, out);
    } else if (strcmp(argv[1], "count") == 0) {
        rc = do_count(in, out);
    } else if (strcmp(argv[1], "scale") == 0) {
        rc = do_scale(in, out);
    } else if (strcmp(argv[1], "order") == 0) {
        rc = do_order(in, out);
    } else {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        rc = 2;
    }
    fclose(in);
    fclose(out);
    if (rc == 1) {
        fprintf(stderr, "malformed input\n");
    }
    return rc;
}
