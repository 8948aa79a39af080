"""Test applications that link several mcugen models into one program, on the host and on QEMU.

write_app() writes into a directory: cases.h (each model's inputs and the TFLM oracle's
outputs), main.c (runs every model, compares every output byte, prints one PASS or FAIL line
per check and returns 0 only if all pass) and a Makefile that uses the models only through the
mcugen.mk files it includes, as the README tells a firmware project to.

With external=True the models have no arena of their own (--arena external): main.c checks
that invoke before init_arena and a bad init_arena are errors, runs every model in one buffer of
SHARED_ARENA_BYTES (filled with garbage first: nothing may depend on a cleared arena), then runs
the first model as two instances with two arenas, interleaved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
COMMON = REPO / "firmware" / "common"
CTYPES = {np.dtype(np.int8): "int8_t", np.dtype(np.uint8): "uint8_t", np.dtype(np.int16): "int16_t",
          np.dtype(np.int32): "int32_t", np.dtype(np.float32): "float"}


@dataclass
class ModelCase:
    prefix: str
    inputs: list[np.ndarray]  # one inference
    outputs: list[np.ndarray]  # what the oracle gives for it
    inputs2: list[np.ndarray] | None = None  # a second inference (two instances)
    outputs2: list[np.ndarray] | None = None


def _array(name: str, values: np.ndarray) -> str:
    flat = np.ascontiguousarray(values).ravel()
    body = ", ".join(str(int(v)) for v in flat)
    return f"static const {CTYPES[flat.dtype]} {name}[{flat.size}] = {{ {body} }};\n"


def cases_header(cases: Sequence[ModelCase]) -> str:
    text = "/* Test cases: inputs and the TFLM oracle's outputs. */\n#include <stdint.h>\n"
    for case in cases:
        for tag, inputs, outputs in (("", case.inputs, case.outputs), ("2", case.inputs2, case.outputs2)):
            for i, value in enumerate(inputs or []):
                text += _array(f"{case.prefix}_in{tag}_{i}", value)
            for i, value in enumerate(outputs or []):
                text += _array(f"{case.prefix}_out{tag}_{i}", value)
    return text


MAIN_HEAD = r"""
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "mcugen_nn_types.h"
{includes}
#include "cases.h"

#if defined(APP_BARE_METAL) && APP_BARE_METAL
#include "semihosting.h"
static void say(const char *text) {{ semihost_write0(text); }}
#else
#include <stdio.h>
static void say(const char *text) {{ fputs(text, stdout); fflush(stdout); }}
#endif

static int failures;

static void check(int ok, const char *what)
{{
    say(ok ? "PASS " : "FAIL ");
    say(what);
    say("\n");
    failures += ok ? 0 : 1;
}}

static int same(const void *got, const void *want, size_t bytes)
{{
    return got != NULL && memcmp(got, want, bytes) == 0;
}}
"""

RUN_MODEL = r"""
/* Writes the inputs of case {tag} into {p}'s bound or static arena, invokes, compares. */
static int {p}_write{tag}(void)
{{
{writes}    return 1;
}}

static int {p}_outputs_are{tag}(void)
{{
    return 1{compares};
}}
"""

MAIN_STATIC = r"""
int main(void)
{{
{runs}    say(failures == 0 ? "ALL PASS\n" : "SOME FAIL\n");
    return failures == 0 ? 0 : 1;
}}
"""

STATIC_RUN = """    check({p}_init() == MCUGEN_OK && {p}_write() && {p}_invoke() == MCUGEN_OK && {p}_outputs_are(), "{p} bit-exact");
"""

MAIN_EXTERNAL = r"""
static uint8_t shared[SHARED_ARENA_BYTES + 16] __attribute__((aligned(16)));
static uint8_t second[{P}_ARENA_SIZE] __attribute__((aligned(16)));

int main(void)
{{
    static float values[{P}_INPUT0_BYTES]; /* int8 input: one float per byte */
    memset(values, 0, sizeof(values));
    check({p}_invoke() == MCUGEN_ARG_ERROR && {p}_input(0) == NULL && {p}_output(0) == NULL &&
          {p}_quantize_input(0, values) == MCUGEN_ARG_ERROR, "{p} invoke before init_arena is an error");
    check({p}_init_arena(NULL, sizeof(shared)) == MCUGEN_ARG_ERROR, "{p} init_arena(NULL) is an error");
    check({p}_init_arena(shared + 8, SHARED_ARENA_BYTES) == MCUGEN_ARG_ERROR, "{p} misaligned arena is an error");
    check({p}_init_arena(shared, {P}_ARENA_SIZE - 1) == MCUGEN_ARG_ERROR, "{p} too small arena is an error");
    check({p}_init_arena(shared, SHARED_ARENA_BYTES) == MCUGEN_OK && {p}_input(0) != NULL &&
          {p}_init_arena(shared + 8, SHARED_ARENA_BYTES) == MCUGEN_ARG_ERROR &&
          {p}_invoke() == MCUGEN_ARG_ERROR && {p}_input(0) == NULL,
          "{p} invoke after a refused init_arena is an error, even with an arena bound before");
    memset(shared, 0xA5, sizeof(shared)); /* garbage: nothing may rely on a cleared arena */
{runs}
    /* Two instances of {p}: each its own arena, interleaved; binding neither clears nor moves. */
    memset(second, 0x5A, sizeof(second));
    check({p}_init_arena(shared, SHARED_ARENA_BYTES) == MCUGEN_OK && {p}_write() &&
          {p}_init_arena(second, sizeof(second)) == MCUGEN_OK && {p}_write2() &&
          {p}_invoke() == MCUGEN_OK &&
          {p}_init_arena(shared, SHARED_ARENA_BYTES) == MCUGEN_OK && {p}_invoke() == MCUGEN_OK &&
          {p}_outputs_are() &&
          {p}_init_arena(second, sizeof(second)) == MCUGEN_OK && {p}_outputs_are2(),
          "{p} two instances with two arenas bit-exact");
    say(failures == 0 ? "ALL PASS\n" : "SOME FAIL\n");
    return failures == 0 ? 0 : 1;
}}
"""

SHARED_RUN = """    check({p}_init_arena(shared, SHARED_ARENA_BYTES) == MCUGEN_OK && {p}_write() && {p}_invoke() == MCUGEN_OK && {p}_outputs_are(), "{p} bit-exact in the shared arena");
"""


def _model_functions(case: ModelCase) -> str:
    text = ""
    for tag, inputs, outputs in (("", case.inputs, case.outputs), ("2", case.inputs2, case.outputs2)):
        if inputs is None or outputs is None:
            continue
        writes = "".join(
            f"    if ({case.prefix}_input({i}) == NULL) {{ return 0; }}\n"
            f"    memcpy({case.prefix}_input({i}), {case.prefix}_in{tag}_{i}, sizeof({case.prefix}_in{tag}_{i}));\n"
            for i in range(len(inputs)))
        compares = "".join(
            f" &&\n           same({case.prefix}_output({i}), {case.prefix}_out{tag}_{i}, sizeof({case.prefix}_out{tag}_{i}))"
            for i in range(len(outputs)))
        text += RUN_MODEL.format(p=case.prefix, tag=tag, writes=writes, compares=compares)
    return text


def main_source(cases: Sequence[ModelCase], external: bool) -> str:
    includes = "".join(f'#include "{c.prefix}_model.h"\n' for c in cases)
    text = MAIN_HEAD.format(includes=includes) + "".join(_model_functions(c) for c in cases)
    if not external:
        return text + MAIN_STATIC.format(runs="".join(STATIC_RUN.format(p=c.prefix) for c in cases))
    first = cases[0]
    runs = "".join(SHARED_RUN.format(p=c.prefix) for c in cases) * 2  # in turn, twice
    return text + MAIN_EXTERNAL.format(p=first.prefix, P=first.prefix.upper(), runs=runs)


# Host: ASan + UBSan. m4: the firmware's startup, semihosting and linker script, run on QEMU.
MAKEFILE = r"""
# Links the models of every directory in DIRS through their mcugen.mk files.
include $(addsuffix /mcugen.mk,$(DIRS))

OBJ := obj
WARN := -Wall -Wextra -Werror
ifeq ($(CORE),m4)
CC := arm-none-eabi-gcc
CFLAGS := -O2 $(WARN) -ffunction-sections -fdata-sections -DAPP_BARE_METAL=1 -I$(COMMON)
LDFLAGS := -nostartfiles --specs=nano.specs --specs=nosys.specs -Wl,--gc-sections -L$(COMMON) -T$(COMMON)/mps2_an386.ld
APP_SRCS := main.c $(COMMON)/startup.c $(COMMON)/semihosting.c
OUT := app.elf
else
CC := cc
CFLAGS := -O1 -g $(WARN) -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS := -fsanitize=address,undefined
APP_SRCS := main.c
OUT := app
endif
.DEFAULT_GOAL := $(OUT)
CFLAGS += $(MCUGEN_CFLAGS) $(MCUGEN_ARCH_CFLAGS) $(APP_DEFINES)
LDFLAGS += $(MCUGEN_ARCH_CFLAGS)

define compile
$(OBJ)/$(notdir $(1:.c=.o)): $(1)
	@mkdir -p $(OBJ)
	$(CC) $(CFLAGS) $(2) -c $$< -o $$@
endef
$(foreach s,$(MCUGEN_SRCS),$(eval $(call compile,$(s),$(MCUGEN_OWN_CFLAGS))))
$(foreach s,$(APP_SRCS),$(eval $(call compile,$(s),)))
OBJS := $(foreach s,$(APP_SRCS) $(MCUGEN_SRCS),$(OBJ)/$(notdir $(s:.c=.o)))

$(OUT): $(OBJS)
	$(CC) $(OBJS) $(LDFLAGS) $(MCUGEN_LDLIBS) -o $@

print-%:
	@echo '$($*)'
"""


def write_app(directory: Path, cases: Sequence[ModelCase], external: bool = False) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "cases.h").write_text(cases_header(cases))
    (directory / "main.c").write_text(main_source(cases, external))
    (directory / "Makefile").write_text(MAKEFILE.replace("$(COMMON)", str(COMMON)))
