/* Minimal Arm semihosting: see semihosting.h. */
#include "semihosting.h"

#include <stdint.h>

/* Operation numbers and the exit reason from the Arm semihosting specification. */
#define SYS_WRITE0 0x04u
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
