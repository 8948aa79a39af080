/*
 * Test application: runs one baked-in test case through an mcugen-generated model.
 *
 * Calls <prefix>_init(), copies case.h's inputs into <prefix>_input(0..n-1), calls
 * <prefix>_invoke(), compares every output byte with case.h's expected outputs and prints
 *     PASS <prefix> <n> bytes
 *     FAIL <prefix>: k of n bytes differ (first at i: got x want y)
 * (or "FAIL <prefix>: <reason>" when the model and the case do not fit together), then
 * returns 0 on PASS and 1 on FAIL. Byte index i counts through all outputs in order.
 *
 * Built with:
 *   -DAPP_PREFIX=<prefix>                  the model's C prefix (a bare identifier)
 *   -DAPP_MODEL_H=\"<prefix>_model.h\"     its header
 *   -DAPP_BARE_METAL=1                     print through semihosting (startup.c calls main
 *                                          and exits with its return value); else stdout
 * and case.h (written by npz_to_header.py) on the include path.
 *
 * With -DMCUGEN_PROFILE (the model's per-op timing hook, see <prefix>_model.h) it runs the case
 * APP_PROFILE_RUNS times (default 1), then prints before the PASS/FAIL line one line per op
 *     PROFILE <position> <op index> <kind> <calls> <ticks>
 * and "PROFILE_TOTAL <invokes> <ticks>" (the ticks spent inside invoke), ticks being what
 * profile_clock.c's mcugen_profile_now() counts. `mcugen profile --qemu` reads these lines.
 *
 * With -DMCUGEN_DUMP (the model's per-layer hook) it writes every op's outputs to the file
 * APP_DUMP_PATH (default "mcugen_dump.bin", through semihosting on bare metal: a file on the
 * host, relative to the emulator's working directory), in the records of the host harness
 * (int32 op index, int32 tensor index, int32 byte count, the bytes; little-endian), which
 * mcugen.analysis.per_layer.read_dump reads.
 *
 * A case.h with CASE_NUM_CASES N > 1 (npz_to_header.py, `mcugen verify --qemu`) holds N cases
 * one after another: they run in turn (one image, one init), every output byte of every case is
 * compared, and the PASS/FAIL line counts them all. With -DAPP_WRITE_OUTPUTS every case's
 * outputs are also written to APP_OUTPUTS_PATH (default "mcugen_outputs.bin"), in the dump's
 * records with the case number in place of the op index and the output number in place of the
 * tensor index, so that the host compares them with its references itself.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include APP_MODEL_H
#include "case.h"

#define APP_CAT_(a, b) a##b
#define APP_CAT(a, b) APP_CAT_(a, b)
#define MODEL_FN(name) APP_CAT(APP_PREFIX, name) /* MODEL_FN(_init) -> <prefix>_init */
#define APP_STR_(x) #x
#define APP_STR(x) APP_STR_(x)
#define PREFIX_TEXT APP_STR(APP_PREFIX)
#ifndef APP_PROFILE_RUNS
#define APP_PROFILE_RUNS 1 /* timed invokes with -DMCUGEN_PROFILE */
#endif

#if defined(APP_BARE_METAL) && APP_BARE_METAL
#include "semihosting.h"
static void print_text(const char *text)
{
    semihost_write0(text);
}
#else
#include <stdio.h>
static void print_text(const char *text)
{
    fputs(text, stdout);
    fflush(stdout);
}
#endif

#ifndef CASE_NUM_CASES
#define CASE_NUM_CASES 1 /* a case.h of one case */
#endif
#ifndef APP_OUTPUTS_PATH
#define APP_OUTPUTS_PATH "mcugen_outputs.bin"
#endif

#if defined(MCUGEN_DUMP) || defined(APP_WRITE_OUTPUTS)
/* A file of records (int32 a, int32 b, int32 byte count, the bytes; little-endian) on the
 * host: through semihosting on bare metal, stdio otherwise. */
#if defined(APP_BARE_METAL) && APP_BARE_METAL
typedef int record_file;
#define NO_RECORD_FILE (-1)
static record_file record_open(const char *path)
{
    return semihost_open_write(path);
}
static void record_bytes(record_file file, const void *data, int32_t bytes)
{
    if (file != NO_RECORD_FILE) {
        (void)semihost_write(file, data, (unsigned long)bytes);
    }
}
static void record_close(record_file file)
{
    semihost_close(file);
}
#else
typedef FILE *record_file;
#define NO_RECORD_FILE NULL
static record_file record_open(const char *path)
{
    return fopen(path, "wb");
}
static void record_bytes(record_file file, const void *data, int32_t bytes)
{
    if (file != NO_RECORD_FILE) {
        (void)fwrite(data, 1, (size_t)bytes, file);
    }
}
static void record_close(record_file file)
{
    (void)fclose(file);
}
#endif

static void record_put(record_file file, int32_t a, int32_t b, const void *data, int32_t bytes)
{
    const int32_t header[3] = {a, b, bytes};
    record_bytes(file, header, (int32_t)sizeof(header));
    record_bytes(file, data, bytes);
}
#endif

#ifdef MCUGEN_DUMP
#ifndef APP_DUMP_PATH
#define APP_DUMP_PATH "mcugen_dump.bin"
#endif
static record_file dump_file = NO_RECORD_FILE;

/* The model calls this after each op, once per output tensor. */
void MODEL_FN(_dump_hook)(int32_t op_index, int32_t tensor_index, const void *data, int32_t bytes)
{
    record_put(dump_file, op_index, tensor_index, data, bytes);
}
#endif

/* A tiny line builder, so that the bare-metal build needs no printf. */
static char line[256];
static size_t line_len;

static void put_text(const char *text)
{
    while (*text != '\0' && line_len + 1 < sizeof(line)) {
        line[line_len++] = *text++;
    }
    line[line_len] = '\0';
}

static void put_int(int32_t value)
{
    char digits[12];
    int count = 0;
    uint32_t magnitude = value < 0 ? 0u - (uint32_t)value : (uint32_t)value;
    if (value < 0) {
        put_text("-");
    }
    do {
        digits[count++] = (char)('0' + magnitude % 10u);
        magnitude /= 10u;
    } while (magnitude != 0u);
    while (count > 0) {
        char one[2] = {digits[--count], '\0'};
        put_text(one);
    }
}

static void put_byte(uint8_t value, int as_int8)
{
    static const char hex[] = "0123456789abcdef";
    if (as_int8) {
        put_int((int32_t)(int8_t)value);
    } else {
        char text[5] = {'0', 'x', hex[value >> 4], hex[value & 0xFu], '\0'};
        put_text(text);
    }
}

static void finish_line(void)
{
    put_text("\n");
    print_text(line);
    line_len = 0;
}

#ifdef MCUGEN_PROFILE
static void put_u64(uint64_t value)
{
    char digits[21];
    int count = 0;
    do {
        digits[count++] = (char)('0' + (int)(value % 10u));
        value /= 10u;
    } while (value != 0u);
    while (count > 0) {
        char one[2] = {digits[--count], '\0'};
        put_text(one);
    }
}

/* The PROFILE lines described at the top. */
static void print_profile(int32_t invokes, uint64_t invoke_ticks)
{
    int32_t i;
    const MODEL_FN(_profile_entry) *entry;
    for (i = 0; (entry = MODEL_FN(_profile)(i)) != NULL; ++i) {
        put_text("PROFILE ");
        put_int(i);
        put_text(" ");
        put_int(entry->op_index);
        put_text(" ");
        put_text(entry->kind);
        put_text(" ");
        put_u64(entry->calls);
        put_text(" ");
        put_u64(entry->ticks);
        finish_line();
#ifdef MCUGEN_MODEL_HAS_NPU
        /* PROFILE_NPU <position> <cycles>: the simulated NPU's PMU cycles (Vela-compiled models) */
        put_text("PROFILE_NPU ");
        put_int(i);
        put_text(" ");
        put_u64(entry->npu_cycles);
        finish_line();
#endif
    }
    put_text("PROFILE_TOTAL ");
    put_int(invokes);
    put_text(" ");
    put_u64(invoke_ticks);
    finish_line();
}
#endif

/* "FAIL <prefix>: <what> <number>"; returns main's failure status, 1. */
static int fail(const char *what, int32_t number)
{
    put_text("FAIL " PREFIX_TEXT ": ");
    put_text(what);
    put_text(" ");
    put_int(number);
    finish_line();
    return 1;
}

/* "FAIL <prefix>: <kind> <index> has <m> bytes in the model, <c> in the case". */
static int fail_size(const char *kind, int32_t index, int32_t model_bytes, int32_t case_bytes)
{
    put_text("FAIL " PREFIX_TEXT ": ");
    put_text(kind);
    put_text(" ");
    put_int(index);
    put_text(" has ");
    put_int(model_bytes);
    put_text(" bytes in the model, ");
    put_int(case_bytes);
    put_text(" in the case");
    finish_line();
    return 1;
}

/* Copies case `number`'s inputs into the model: 0, or main's failure status. */
static int load_inputs(int32_t number)
{
    int32_t i;
    for (i = 0; i < CASE_NUM_INPUTS; ++i) {
        void *input = MODEL_FN(_input)(i);
        int32_t bytes = MODEL_FN(_input_bytes)(i);
        if (input == NULL) {
            return fail("the model has fewer inputs than the case:", CASE_NUM_INPUTS);
        }
        if (bytes != case_input_bytes[i]) {
            return fail_size("input", i, bytes, case_input_bytes[i]);
        }
        memcpy(input, case_inputs[i] + (size_t)number * (size_t)bytes, (size_t)bytes);
    }
    if (MODEL_FN(_input)(CASE_NUM_INPUTS) != NULL) {
        return fail("the model has more inputs than the case:", CASE_NUM_INPUTS);
    }
    return 0;
}

/* Output bytes compared so far, over every case, and the first that differed. */
typedef struct {
    int32_t total, differ, first;
    uint8_t got_first, want_first;
    int first_int8;
} verdict;

/* Compares case `number`'s outputs with its expected bytes into `result`: 0, or main's
 * failure status when the model and the case do not fit together. */
static int check_outputs(int32_t number, verdict *result)
{
    int32_t i;
    for (i = 0; i < CASE_NUM_OUTPUTS; ++i) {
        const uint8_t *output = (const uint8_t *)MODEL_FN(_output)(i);
        int32_t bytes = MODEL_FN(_output_bytes)(i);
        const uint8_t *want;
        int32_t j;
        if (output == NULL) {
            return fail("the model has fewer outputs than the case:", CASE_NUM_OUTPUTS);
        }
        if (bytes != case_expected_bytes[i]) {
            return fail_size("output", i, bytes, case_expected_bytes[i]);
        }
        want = case_expected[i] + (size_t)number * (size_t)bytes;
        for (j = 0; j < bytes; ++j) {
            if (output[j] != want[j] && result->differ++ == 0) {
                result->first = result->total + j;
                result->got_first = output[j];
                result->want_first = want[j];
                result->first_int8 = case_expected_is_int8[i];
            }
        }
        result->total += bytes;
    }
    if (MODEL_FN(_output)(CASE_NUM_OUTPUTS) != NULL) {
        return fail("the model has more outputs than the case:", CASE_NUM_OUTPUTS);
    }
    return 0;
}

#ifdef APP_WRITE_OUTPUTS
/* Case `number`'s outputs as records (case, output number, bytes) of APP_OUTPUTS_PATH. */
static void write_outputs(record_file file, int32_t number)
{
    int32_t i;
    for (i = 0; i < CASE_NUM_OUTPUTS && MODEL_FN(_output)(i) != NULL; ++i) {
        record_put(file, number, i, MODEL_FN(_output)(i), MODEL_FN(_output_bytes)(i));
    }
}
#endif

#ifdef MCUGEN_PROFILE
/* APP_PROFILE_RUNS timed invokes of case 0 (after the untimed first one) and the PROFILE lines:
 * 0, or main's failure status. The inputs live in the arena, so every run copies them in again. */
static int profile_runs(void)
{
    int32_t run;
    uint64_t invoke_ticks = 0u;
    MODEL_FN(_profile_reset)();
    for (run = 0; run < APP_PROFILE_RUNS; ++run) {
        uint32_t start;
        mcugen_status status;
        (void)load_inputs(0);
        start = mcugen_profile_now();
        status = MODEL_FN(_invoke)();
        invoke_ticks += (uint32_t)(mcugen_profile_now() - start);
        if (status != MCUGEN_OK) {
            return fail("invoke returned status", (int32_t)status);
        }
    }
    print_profile(APP_PROFILE_RUNS, invoke_ticks);
    return 0;
}
#endif

int main(void)
{
    int32_t number;
    int failed;
    verdict result = {0, 0, -1, 0, 0, 0};
    mcugen_status status;
#ifdef APP_WRITE_OUTPUTS
    record_file outputs_file;
#endif

    status = MODEL_FN(_init)();
#ifdef MCUGEN_MODEL_HAS_NPU
    if (status != MCUGEN_OK) {
        return fail("init failed: npu error", MODEL_FN(_npu_error)());
    }
#endif
    if (status != MCUGEN_OK) {
        return fail("init returned status", (int32_t)status);
    }
#ifdef MCUGEN_DUMP
    dump_file = record_open(APP_DUMP_PATH);
    if (dump_file == NO_RECORD_FILE) {
        return fail("cannot open the dump file, status", -1);
    }
#endif
#ifdef APP_WRITE_OUTPUTS
    outputs_file = record_open(APP_OUTPUTS_PATH);
    if (outputs_file == NO_RECORD_FILE) {
        return fail("cannot open the outputs file, status", -1);
    }
#endif

    for (number = 0; number < CASE_NUM_CASES; ++number) {
        failed = load_inputs(number);
        if (failed) {
            return failed;
        }
        status = MODEL_FN(_invoke)();
#ifdef MCUGEN_MODEL_HAS_NPU
        if (status != MCUGEN_OK) {
            return fail("invoke failed: npu error", MODEL_FN(_npu_error)());
        }
#endif
        if (status != MCUGEN_OK) {
            return fail("invoke returned status", (int32_t)status);
        }
#ifdef MCUGEN_PROFILE
        if (number == 0) {
            failed = profile_runs();
            if (failed) {
                return failed;
            }
        }
#endif
#ifdef APP_WRITE_OUTPUTS
        write_outputs(outputs_file, number);
#endif
        failed = check_outputs(number, &result);
        if (failed) {
            return failed;
        }
    }
#ifdef MCUGEN_DUMP
    record_close(dump_file);
#endif
#ifdef APP_WRITE_OUTPUTS
    record_close(outputs_file);
#endif

    if (result.differ == 0) {
        put_text("PASS " PREFIX_TEXT " ");
        put_int(result.total);
        put_text(" bytes");
        finish_line();
        return 0;
    }
    put_text("FAIL " PREFIX_TEXT ": ");
    put_int(result.differ);
    put_text(" of ");
    put_int(result.total);
    put_text(" bytes differ (first at ");
    put_int(result.first);
    put_text(": got ");
    put_byte(result.got_first, result.first_int8);
    put_text(" want ");
    put_byte(result.want_first, result.first_int8);
    put_text(")");
    finish_line();
    return 1;
}
