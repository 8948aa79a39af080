/* Minimal Arm semihosting: see semihosting.h. */
#include "semihosting.h"

#include <stdint.h>

/* Operation numbers and the exit reason from the Arm semihosting specification. */
#define SYS_OPEN 0x01u
#define SYS_CLOSE 0x02u
#define SYS_WRITE 0x05u
#define SYS_WRITE0 0x04u
#define SYS_OPEN_MODE_WB 5u /* fopen's "wb" in the specification's mode table */
#define SYS_EXIT 0x18u
#define SYS_EXIT_EXTENDED 0x20u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u
#define ADP_STOPPED_RUNTIME_ERROR_UNKNOWN 0x20023u

static uint32_t semihost_call(uint32_t operation, const void *argument)
{
    register uint32_t r0 __asm__("r0") = operation;
    register const void *r1 __asm__("r1") = argument;
    /* "memory": the host reads (and may write) the argument block through r1. */
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void semihost_write0(const char *text)
{
    (void)semihost_call(SYS_WRITE0, text);
}

static uint32_t text_length(const char *text)
{
    uint32_t length = 0;
    while (text[length] != '\0') {
        ++length;
    }
    return length;
}

int semihost_open_write(const char *path)
{
    const uint32_t block[3] = {(uint32_t)(uintptr_t)path, SYS_OPEN_MODE_WB, text_length(path)};
    return (int)semihost_call(SYS_OPEN, block);
}

int semihost_write(int handle, const void *data, unsigned long bytes)
{
    const uint32_t block[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)data, (uint32_t)bytes};
    return (int)semihost_call(SYS_WRITE, block); /* the bytes not written */
}

void semihost_close(int handle)
{
    const uint32_t block[1] = {(uint32_t)handle};
    (void)semihost_call(SYS_CLOSE, block);
}

void semihost_exit(int status)
{
    /* The 64-bit-style parameter block: {reason, exit status}. */
    uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
    (void)semihost_call(SYS_EXIT_EXTENDED, block);
    /* Only reached when the host lacks SYS_EXIT_EXTENDED. On 32-bit Arm, SYS_EXIT takes the
     * reason itself in r1 (not a pointer): ApplicationExit means success. */
    (void)semihost_call(SYS_EXIT, (const void *)(uintptr_t)(status == 0 ? ADP_STOPPED_APPLICATION_EXIT
                                                                        : ADP_STOPPED_RUNTIME_ERROR_UNKNOWN));
    for (;;) {
    }
}
