/* mcugen runtime: compiler-specific placement of data (alignment, linker sections), and which
 * fast kernel path the core has. */
#ifndef MCUGEN_PLATFORM_H
#define MCUGEN_PLATFORM_H

#if defined(__GNUC__) || defined(__clang__) || defined(__ARMCC_VERSION)
#define MCUGEN_ALIGNED(n) __attribute__((aligned(n)))
#else
#define MCUGEN_ALIGNED(n)
#endif

/* Named sections let a linker script place weights and the arena; define MCUGEN_NO_SECTIONS
 * to leave placement to the toolchain's defaults (for example on Mach-O hosts). */
#if (defined(__GNUC__) || defined(__clang__) || defined(__ARMCC_VERSION)) && \
    !defined(MCUGEN_NO_SECTIONS) && !defined(__APPLE__)
#define MCUGEN_SECTION(name) __attribute__((section(name)))
#else
#define MCUGEN_SECTION(name)
#endif

/* The fast int8 paths, chosen by the compiler's macros (so by -mcpu, i.e. mcugen's --target):
 * Helium on Cortex-M55, the DSP extension on Cortex-M4/M7, none on the host or Cortex-M0/M3, or
 * with -DMCUGEN_PORTABLE (see mcugen_conv_fast.h). */
#if !defined(MCUGEN_PORTABLE) && defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define MCUGEN_FAST_MVE 1
#elif !defined(MCUGEN_PORTABLE) && defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define MCUGEN_FAST_DSP 1
#endif

#endif /* MCUGEN_PLATFORM_H */
