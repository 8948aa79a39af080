/* mcugen runtime: compiler-specific placement of data (alignment, linker sections). */
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

#endif /* MCUGEN_PLATFORM_H */
