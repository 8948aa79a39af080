/*
 * npu_harness.c - host harness for the NPU device model and driver (tests/test_npu_device.py).
 *
 *   npu_harness MACS PAYLOAD [REGION ...] [-w WD_COMMANDS] [-t TIMEOUT_CYCLES] [-a] [-s] [-e N] [-E]
 *               [-l REGION:OFFSET:PATH ...] [-d REGION:OFFSET:LENGTH:PATH ...]
 *
 * REGION is `file:PATH` (contents), `zero:BYTES` (zero-filled), `same:N` (the buffer of region
 * N), or any of them with `@SIZE` appended: the size the driver is told (default the buffer's).
 * Runs the payload through ethosu_invoke_v3 (or -a: invoke_async + polling ethosu_wait) on a
 * device with MACS MACs/cycle and prints one line per decoded command, with the values read
 * back from the device's decoded state, then the result.  -w sets the device's watchdog (commands),
 * -t the driver's timeout (cycles), -a uses invoke_async, one poll and a blocking wait, -s dumps
 * every parameter command's value read back from the decoded state after the run, -e N makes
 * the operation hook refuse the N-th operation.  -E attaches the compute engine
 * (mcugen_npu_engine.h) behind the harness's hook; -l copies a file into a region at an offset
 * before the run (e.g. an IFM into the scratch region), -d writes a region's bytes
 * [OFFSET, OFFSET+LENGTH) to a file after the run (e.g. the OFM).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ethosu_driver.h"
#include "mcugen_npu_device.h"
#include "mcugen_npu_engine.h"

#define MAX_REGIONS 8
#define MAX_TRANSFERS 16

static struct mcugen_npu_device device;
static struct ethosu_driver driver;
static unsigned hook_calls;
static unsigned refuse_op; /* -e N: the hook refuses the N-th operation */
static int use_engine;     /* -E: the engine computes each operation after the harness's hook */

static void trace(struct mcugen_npu_device *dev, uint32_t offset, uint32_t word, uint32_t data, void *ctx)
{
    uint32_t param = MCUGEN_NPU_CMD_PARAM(word), value = data;
    const char *name = mcugen_npu_cmd_name(word);
    int cmd1 = MCUGEN_NPU_CMD_PAYLOAD_SIZE(word) == 1u;
    (void)ctx;
    if (mcugen_npu_state_readback(&dev->state, word, &param, &value) != 0) {
        param = MCUGEN_NPU_CMD_PARAM(word);
        value = data;
    }
    if (cmd1) {
        printf("cmd %06x %s %04x %08x\n", (unsigned)offset, name, (unsigned)param, (unsigned)value);
    } else {
        printf("cmd %06x %s %04x\n", (unsigned)offset, name, (unsigned)param);
    }
}

static enum mcugen_npu_fault hook(struct mcugen_npu_device *dev, uint32_t opcode, uint32_t param,
                                  const struct mcugen_npu_state *state, void *ctx)
{
    const struct mcugen_npu_state *s = state;
    (void)ctx;
    hook_calls++;
    if (opcode == MCUGEN_NPU_OP_CONV || opcode == MCUGEN_NPU_OP_DEPTHWISE || opcode == MCUGEN_NPU_OP_POOL) {
        /* the kernel as the engine will read it: size (from the dilated extent), stride, dilation */
        unsigned dx = MCUGEN_NPU_KSTRIDE_DILATION_X(s->kernel_stride), dy = MCUGEN_NPU_KSTRIDE_DILATION_Y(s->kernel_stride);
        printf("op size=%u,%u stride=%u,%u dilation=%u,%u block=%u,%u,%u\n", s->kernel_width_m1 / dx + 1u,
               s->kernel_height_m1 / dy + 1u, (unsigned)MCUGEN_NPU_KSTRIDE_X(s->kernel_stride),
               (unsigned)MCUGEN_NPU_KSTRIDE_Y(s->kernel_stride), dx, dy, s->ofm_blk_height_m1 + 1u,
               s->ofm_blk_width_m1 + 1u, s->ofm_blk_depth_m1 + 1u);
    }
    if (refuse_op != 0 && hook_calls == refuse_op) {
        return MCUGEN_NPU_FAULT_ENGINE;
    }
    if (use_engine) {
        return mcugen_npu_engine_hook(dev, opcode, param, state, NULL);
    }
    return MCUGEN_NPU_FAULT_NONE;
}

/* Overrides the driver's weak hook, as an application would: count cycles and NPU_ACTIVE. */
void ethosu_inference_begin(struct ethosu_driver *drv, void *user_arg)
{
    (void)user_arg;
    mcugen_npu_write_reg(drv->dev, MCUGEN_NPU_REG_PMEVTYPER(0), MCUGEN_NPU_PMU_EVENT_NPU_ACTIVE);
    mcugen_npu_write_reg(drv->dev, MCUGEN_NPU_REG_PMCNTENSET, MCUGEN_NPU_PMCNT_CYCLE | 1u);
    mcugen_npu_write_reg(drv->dev, MCUGEN_NPU_REG_PMCR,
                         MCUGEN_NPU_PMCR_CNT_EN | MCUGEN_NPU_PMCR_EVENT_CNT_RST | MCUGEN_NPU_PMCR_CYCLE_CNT_RST);
}

static void *raw_blocks[MAX_REGIONS + 1 + MAX_TRANSFERS];
static int raw_count;

/* 16-byte-aligned storage (the driver refuses unaligned base addresses), freed at exit. */
static unsigned char *alloc16(size_t size)
{
    unsigned char *raw = malloc(size + 16u);
    if (raw == NULL || raw_count > MAX_REGIONS + MAX_TRANSFERS) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    raw_blocks[raw_count++] = raw;
    return raw + ((16u - ((uintptr_t)raw & 15u)) & 15u);
}

static unsigned char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf;
    long n;
    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    buf = alloc16((size_t)n);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

/* -l and -d: a region, a byte offset in it, a length (-d) and a file. */
struct transfer {
    int region;
    size_t offset, length;
    const char *path;
};

static int parse_transfer(char *spec, int with_length, struct transfer *t)
{
    char *end;
    t->region = (int)strtol(spec, &end, 10);
    if (*end != ':') { return -1; }
    t->offset = (size_t)strtoull(end + 1, &end, 10);
    if (*end != ':') { return -1; }
    t->length = 0;
    if (with_length) {
        t->length = (size_t)strtoull(end + 1, &end, 10);
        if (*end != ':') { return -1; }
    }
    t->path = end + 1;
    return 0;
}

/* Copy a file into region bytes [offset, offset + file size); 0, or -1 if it does not fit. */
static int load_into(unsigned char *const *buffers, const size_t *sizes, int num, const struct transfer *t)
{
    size_t size;
    unsigned char *data;
    if (t->region < 0 || t->region >= num) { return -1; }
    data = read_file(t->path, &size);
    if (t->offset > sizes[t->region] || size > sizes[t->region] - t->offset) { return -1; }
    memcpy(buffers[t->region] + t->offset, data, size);
    return 0;
}

static int dump_from(unsigned char *const *buffers, const size_t *sizes, int num, const struct transfer *t)
{
    FILE *f;
    if (t->region < 0 || t->region >= num || t->offset > sizes[t->region] ||
        t->length > sizes[t->region] - t->offset || (f = fopen(t->path, "wb")) == NULL) {
        return -1;
    }
    if (fwrite(buffers[t->region] + t->offset, 1, t->length, f) != t->length) {
        fclose(f);
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct mcugen_npu_config config = { 128u, 0u, 1u, 0u, 6u };
    unsigned char *buffers[MAX_REGIONS] = { 0 };
    uint64_t base_addr[MAX_REGIONS];
    size_t sizes[MAX_REGIONS], held[MAX_REGIONS]; /* told to the driver; allocated */
    unsigned char *payload;
    size_t payload_size;
    int num = 0, i, rc, use_async = 0, dump_state = 0, loads = 0, dumps = 0;
    struct transfer load[MAX_TRANSFERS], dump[MAX_TRANSFERS];
    unsigned long wd = 0, timeout = 0;
    const char *kinds[MCUGEN_NPU_KIND_COUNT] = { "STOP", "IRQ", "CONV", "DEPTHWISE", "POOL", "ELEMENTWISE",
                                                 "DMA_START", "DMA_WAIT", "KERNEL_WAIT", "PMU_MASK" };
    if (argc < 3) {
        fprintf(stderr, "usage: npu_harness MACS PAYLOAD [REGION ...] [-w N] [-t N] [-a]\n");
        return 2;
    }
    config.macs_per_cycle = (uint32_t)strtoul(argv[1], NULL, 10);
    payload = read_file(argv[2], &payload_size);
    for (i = 3; i < argc; ++i) {
        char *spec = argv[i], *at;
        size_t told = 0;
        int has_told = 0;
        if (strcmp(spec, "-w") == 0 && i + 1 < argc) { wd = strtoul(argv[++i], NULL, 10); continue; }
        if (strcmp(spec, "-t") == 0 && i + 1 < argc) { timeout = strtoul(argv[++i], NULL, 10); continue; }
        if (strcmp(spec, "-a") == 0) { use_async = 1; continue; }
        if (strcmp(spec, "-s") == 0) { dump_state = 1; continue; }
        if (strcmp(spec, "-e") == 0 && i + 1 < argc) { refuse_op = (unsigned)strtoul(argv[++i], NULL, 10); continue; }
        if (strcmp(spec, "-E") == 0) { use_engine = 1; continue; }
        if (strcmp(spec, "-l") == 0 && i + 1 < argc) {
            if (loads >= MAX_TRANSFERS || parse_transfer(argv[++i], 0, &load[loads++]) != 0) {
                fprintf(stderr, "bad -l %s\n", argv[i]);
                return 2;
            }
            continue;
        }
        if (strcmp(spec, "-d") == 0 && i + 1 < argc) {
            if (dumps >= MAX_TRANSFERS || parse_transfer(argv[++i], 1, &dump[dumps++]) != 0) {
                fprintf(stderr, "bad -d %s\n", argv[i]);
                return 2;
            }
            continue;
        }
        if (num >= MAX_REGIONS) { fprintf(stderr, "too many regions\n"); return 2; }
        at = strchr(spec, '@');
        if (at != NULL) { *at = '\0'; told = (size_t)strtoull(at + 1, NULL, 10); has_told = 1; }
        if (strncmp(spec, "file:", 5) == 0) {
            buffers[num] = read_file(spec + 5, &sizes[num]);
        } else if (strncmp(spec, "zero:", 5) == 0) {
            sizes[num] = (size_t)strtoull(spec + 5, NULL, 10);
            buffers[num] = alloc16(sizes[num]);
            memset(buffers[num], 0, sizes[num]);
        } else if (strncmp(spec, "same:", 5) == 0) {
            int other = atoi(spec + 5);
            if (other < 0 || other >= num) { fprintf(stderr, "bad alias\n"); return 2; }
            buffers[num] = buffers[other];
            sizes[num] = sizes[other];
        } else {
            fprintf(stderr, "bad region %s\n", spec);
            return 2;
        }
        held[num] = sizes[num];
        if (has_told) { sizes[num] = told; }
        base_addr[num] = (uint64_t)(uintptr_t)buffers[num];
        num++;
    }
    for (i = 0; i < loads; ++i) {
        if (load_into(buffers, held, num, &load[i]) != 0) { fprintf(stderr, "cannot load %s\n", load[i].path); return 2; }
    }
    if (mcugen_npu_device_init(&device, &config) != 0) { fprintf(stderr, "bad config\n"); return 2; }
    mcugen_npu_set_trace(&device, trace, NULL);
    mcugen_npu_set_op_hook(&device, hook, NULL);
    mcugen_npu_write_reg(&device, MCUGEN_NPU_REG_MODEL_WD_COMMANDS, (uint32_t)wd);
    if (ethosu_init(&driver, &device, NULL, 0, 0, 1) != 0) { fprintf(stderr, "init failed\n"); return 2; }
    if (timeout != 0) { mcugen_npu_driver_set_timeout(&driver, timeout); }
    {
        struct ethosu_driver *drv = ethosu_reserve_driver();
        if (drv != &driver) { fprintf(stderr, "reserve failed\n"); return 2; }
        if (use_async) {
            rc = ethosu_invoke_async(drv, payload, (int)payload_size, base_addr, sizes, num, NULL);
            if (rc == 0) {
                rc = ethosu_wait(drv, false); /* one poll: 1 while the device still runs */
                printf("poll %d\n", rc);
                if (rc == 1) {
                    rc = ethosu_wait(drv, true);
                }
            }
        } else {
            rc = ethosu_invoke_v3(drv, payload, (int)payload_size, base_addr, sizes, num, NULL);
        }
        ethosu_release_driver(drv);
    }
    printf("result %d status 0x%08x fault %u commands %u ops %u hooks %u\n", rc,
           (unsigned)mcugen_npu_driver_last_status(&driver), (unsigned)device.fault, (unsigned)device.commands,
           (unsigned)device.ops, hook_calls);
    printf("pmu cycles %u active %u\n", (unsigned)mcugen_npu_read_reg(&device, MCUGEN_NPU_REG_PMCCNTR_LO),
           (unsigned)mcugen_npu_read_reg(&device, MCUGEN_NPU_REG_PMEVCNTR(0)));
    for (i = 0; i < MCUGEN_NPU_KIND_COUNT; ++i) {
        printf("count %s %u\n", kinds[i], (unsigned)device.op_count[i]);
    }
    if (dump_state) { /* every parameter command, read back from the decoded state */
        uint32_t code;
        for (code = 0; code < 0x400u; ++code) {
            uint32_t kinds_of[2] = { code, code | MCUGEN_NPU_CMD1_FLAG };
            int k;
            for (k = 0; k < 2; ++k) {
                uint32_t param, data;
                if (mcugen_npu_state_readback(&device.state, kinds_of[k], &param, &data) == 0) {
                    printf("state %s %04x %08x\n", mcugen_npu_cmd_name(kinds_of[k]), (unsigned)param, (unsigned)data);
                }
            }
        }
    }
    printf("config 0x%08x id 0x%08x\n", (unsigned)mcugen_npu_read_reg(&device, MCUGEN_NPU_REG_CONFIG),
           (unsigned)mcugen_npu_read_reg(&device, MCUGEN_NPU_REG_ID));
    for (i = 0; i < dumps; ++i) {
        if (dump_from(buffers, held, num, &dump[i]) != 0) { fprintf(stderr, "cannot dump %s\n", dump[i].path); return 2; }
    }
    ethosu_deinit(&driver);
    mcugen_npu_device_deinit(&device);
    for (i = 0; i < raw_count; ++i) { free(raw_blocks[i]); }
    (void)payload;
    return 0;
}
