/*
 * Minimal Arm semihosting for bare-metal test programs run under QEMU or a debugger.
 *
 * A semihosting call is a "BKPT 0xAB" on M-profile: r0 holds the operation number, r1 a
 * pointer to its argument, r0 the result. The host (QEMU with -semihosting-config enable=on)
 * services it; without a debugger or semihosting-aware emulator the BKPT faults, so these
 * programs are for test runs, not for production firmware.
 */
#ifndef FIRMWARE_SEMIHOSTING_H
#define FIRMWARE_SEMIHOSTING_H

/* SYS_WRITE0: write a NUL-terminated string to the host's console. */
void semihost_write0(const char *text);

/* SYS_OPEN with mode "wb" (a new binary file on the host, relative to the emulator's working
 * directory): a handle, or -1. SYS_WRITE: 0 when all `bytes` were written. SYS_CLOSE. */
int semihost_open_write(const char *path);
int semihost_write(int handle, const void *data, unsigned long bytes);
void semihost_close(int handle);

/* Stop the program and make `status` the emulator's exit status (SYS_EXIT_EXTENDED with
 * ADP_Stopped_ApplicationExit; falls back to SYS_EXIT, which only tells 0 from non-zero). */
void semihost_exit(int status) __attribute__((noreturn));

#endif /* FIRMWARE_SEMIHOSTING_H */
