/* The host build's stand-in for firmware/common/semihosting.c: print to stdout. */
#include <stdio.h>

#include "semihosting.h"

void semihost_write0(const char *text)
{
    fputs(text, stdout);
    fflush(stdout);
}
