/*
 * mcugen_profile_now(): the clock behind the generated code's per-op profile (-DMCUGEN_PROFILE,
 * see <prefix>_model.h). A free-running 32-bit counter; the model subtracts two readings
 * modulo 2^32. Compiled to nothing without -DMCUGEN_PROFILE.
 *
 *   bare metal, default    SysTick, clocked by the core clock, extended from 24 to 32 bits by
 *                          counting its wraps in SysTick_Handler. Under QEMU with
 *                          `-icount shift=0` the virtual clock advances 1 ns per instruction,
 *                          so a tick is (10^9 / core clock) instructions: 40 on mps2-an386
 *                          (25 MHz), 31.25 on mps3-an547 (32 MHz); a reading is exact to
 *                          one tick.
 *   bare metal, -DAPP_PROFILE_DWT   DWT->CYCCNT, the cycle counter of real Cortex-M3/M4/M7/M33/
 *                          M55 silicon (QEMU does not model it).
 *   host                   CLOCK_MONOTONIC in nanoseconds.
 */
#if defined(MCUGEN_PROFILE) && !(defined(APP_BARE_METAL) && APP_BARE_METAL)
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <time.h>
#endif
#include <stdint.h>

#ifdef MCUGEN_PROFILE
uint32_t mcugen_profile_now(void);

#if defined(APP_BARE_METAL) && APP_BARE_METAL && defined(APP_PROFILE_DWT)

#define DEMCR (*(volatile uint32_t *)0xE000EDFCu)
#define DWT_CTRL (*(volatile uint32_t *)0xE0001000u)
#define DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)

uint32_t mcugen_profile_now(void)
{
    if ((DWT_CTRL & 1u) == 0u) {
        DEMCR |= 1u << 24; /* TRCENA: power the DWT */
        DWT_CYCCNT = 0u;
        DWT_CTRL |= 1u;    /* CYCCNTENA */
    }
    return DWT_CYCCNT;
}

#elif defined(APP_BARE_METAL) && APP_BARE_METAL

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SCB_ICSR (*(volatile uint32_t *)0xE000ED04u)
#define SYST_RELOAD 0xFFFFFFu      /* the whole 24-bit range: one wrap every 2^24 ticks */
#define ICSR_PENDSTSET (1u << 26)  /* a SysTick exception is pending */

static volatile uint32_t systick_wraps;

/* Replaces startup.c's weak SysTick_Handler: one more 2^24 ticks. */
void SysTick_Handler(void);
void SysTick_Handler(void)
{
    systick_wraps += 1u;
}

uint32_t mcugen_profile_now(void)
{
    uint32_t wraps, value, pending;
    if ((SYST_CSR & 1u) == 0u) {
        SYST_RVR = SYST_RELOAD;
        SYST_CVR = 0u;
        SYST_CSR = 7u; /* ENABLE, TICKINT (count wraps), CLKSOURCE = the core clock */
    }
    /* SysTick counts down. A wrap between reading the wrap count and the value shows as a
     * changed count: read again. A wrap whose exception has not been taken yet shows as
     * PENDSTSET with a value just below the reload: count it here. */
    do {
        wraps = systick_wraps;
        value = SYST_CVR;
        pending = SCB_ICSR & ICSR_PENDSTSET;
    } while (wraps != systick_wraps);
    if (pending != 0u && value > SYST_RELOAD / 2u) {
        wraps += 1u;
    }
    return (wraps << 24) + (SYST_RELOAD - value);
}

#else

uint32_t mcugen_profile_now(void)
{
    struct timespec now;
    (void)clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint32_t)((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
}

#endif
#else
typedef int profile_clock_unused; /* ISO C forbids an empty translation unit */
#endif
