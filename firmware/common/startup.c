/*
 * Startup code for the bare-metal test programs (Cortex-M4 and Cortex-M55 under QEMU).
 *
 * The vector table (section .vectors, placed at address 0 by the linker script, where both
 * boards' VTOR points at reset) holds the initial stack pointer and the reset handler.
 * Reset_Handler enables the FPU (and MVE on the M55) when the code is built for one,
 * sets the stack limit on Armv8-M, copies .data from its load address, zeroes .bss, calls
 * main() and ends the program through semihosting with main's return value as the
 * emulator's exit status. Every fault prints what it can and exits with status 3.
 *
 * No interrupts are enabled (except SysTick's, by profile_clock.c in profiling builds) and nothing from newlib's crt0 runs (-nostartfiles): the test
 * programs use only memcpy/memset/memcmp from the C library, which need no initialisation.
 * The model arena (.mcugen_arena) is not zeroed here: <prefix>_init() clears it.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "semihosting.h"

/* Symbols defined by the linker script (sections.ld). */
extern uint32_t __stack_top;   /* initial main stack pointer */
extern uint32_t __stack_limit; /* lowest address the stack may use */
extern uint32_t __data_load;   /* where .data's initial values are in code memory */
extern uint32_t __data_start;
extern uint32_t __data_end;
extern uint32_t __bss_start;
extern uint32_t __bss_end;

int main(void);

void Reset_Handler(void) __attribute__((noreturn));
void Fault_Handler(void);
/* SysTick: a fault unless a source defines it (profile_clock.c does, to extend the counter). */
void SysTick_Handler(void) __attribute__((weak, alias("Fault_Handler")));
void fault_report(const uint32_t *frame) __attribute__((noreturn, used));

/* System control block registers (Armv7-M / Armv8-M architecture manuals). */
#define SCB_ICSR (*(volatile uint32_t *)0xE000ED04u)
#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)
#define SCB_HFSR (*(volatile uint32_t *)0xE000ED2Cu)
#define SCB_CFSR (*(volatile uint32_t *)0xE000ED28u)
#define SCB_MMFAR (*(volatile uint32_t *)0xE000ED34u)
#define SCB_BFAR (*(volatile uint32_t *)0xE000ED38u)

typedef void (*handler_fn)(void);

/* The first 16 entries of the vector table: the system exceptions. No IRQ is enabled. */
struct vector_table {
    uint32_t *initial_sp;
    handler_fn handlers[15];
};

__attribute__((section(".vectors"), used)) const struct vector_table vector_table = {
    &__stack_top,
    {
        Reset_Handler, /*  1 Reset */
        Fault_Handler, /*  2 NMI */
        Fault_Handler, /*  3 HardFault */
        Fault_Handler, /*  4 MemManage */
        Fault_Handler, /*  5 BusFault */
        Fault_Handler, /*  6 UsageFault */
        Fault_Handler, /*  7 SecureFault (Armv8-M), reserved on Armv7-M */
        0, 0, 0,       /*  8-10 reserved */
        Fault_Handler, /* 11 SVCall */
        Fault_Handler, /* 12 DebugMonitor */
        0,             /* 13 reserved */
        Fault_Handler, /* 14 PendSV */
        SysTick_Handler, /* 15 SysTick */
    },
};

void Reset_Handler(void)
{
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    /* CPACR: full access to coprocessors 10 and 11, the FPU (and MVE on Armv8.1-M). Must come
     * before any floating-point or vector instruction; DSB+ISB make it take effect. */
    SCB_CPACR |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
    /* Armv8-M: a stack overflow raises a UsageFault (STKOF) instead of corrupting memory. */
    __asm__ volatile("msr msplim, %0" : : "r"(&__stack_limit));
#endif
    memcpy(&__data_start, &__data_load, (size_t)((uintptr_t)&__data_end - (uintptr_t)&__data_start));
    memset(&__bss_start, 0, (size_t)((uintptr_t)&__bss_end - (uintptr_t)&__bss_start));
    semihost_exit(main());
}

/* Every fault comes here: pass the exception stack frame (MSP or PSP, per EXC_RETURN bit 2)
 * to fault_report. Naked, so that nothing is pushed before the frame is located. */
__attribute__((naked)) void Fault_Handler(void)
{
    __asm__ volatile(
        "tst lr, #4\n\t"
        "ite eq\n\t"
        "mrseq r0, msp\n\t"
        "mrsne r0, psp\n\t"
        "b fault_report\n\t");
}

static char *put_text(char *at, const char *text)
{
    while (*text != '\0') {
        *at++ = *text++;
    }
    return at;
}

static char *put_hex(char *at, uint32_t value)
{
    static const char digits[] = "0123456789abcdef";
    int shift;
    at = put_text(at, "0x");
    for (shift = 28; shift >= 0; shift -= 4) {
        *at++ = digits[(value >> shift) & 0xFu];
    }
    return at;
}

/* Prints "FAULT exception N pc=... cfsr=... hfsr=... mmfar=... bfar=..." and exits with 3. */
void fault_report(const uint32_t *frame)
{
    char line[160];
    char *at = line;
    uint32_t exception = SCB_ICSR & 0x1FFu;
    at = put_text(at, "FAULT exception ");
    *at++ = (char)('0' + exception / 10u % 10u);
    *at++ = (char)('0' + exception % 10u);
    at = put_text(at, " pc=");
    at = put_hex(at, frame[6]); /* stacked r0-r3, r12, lr, pc, xpsr */
    at = put_text(at, " cfsr=");
    at = put_hex(at, SCB_CFSR);
    at = put_text(at, " hfsr=");
    at = put_hex(at, SCB_HFSR);
    at = put_text(at, " mmfar=");
    at = put_hex(at, SCB_MMFAR);
    at = put_text(at, " bfar=");
    at = put_hex(at, SCB_BFAR);
    at = put_text(at, "\n");
    *at = '\0';
    semihost_write0(line);
    semihost_exit(3);
}
