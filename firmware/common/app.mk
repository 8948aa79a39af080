# Shared make logic for the firmware examples: generate the model's C with mcugen, build the
# test application (main.c + case.h + the generated C) for the host or a Cortex-M core, run it.
#
# An example's Makefile sets, then includes this file:
#   MODEL        the .tflite file
#   CASE         the test case .npz: input0.. and the expected output0..
#   MCUGEN_OPTS  more `mcugen build` options (--rounding, --prefix); --target is set per core
# Optional:
#   EXPECTED_KEY key prefix of the expected outputs in CASE (default: output)
#   OPT          optimisation flags (default: -O2; try make OPT=-Os)
#   EXTRA_CFLAGS appended to every compile
#                (-DMCUGEN_PROFILE -DAPP_PROFILE_RUNS=K: per-op timing, see profile_clock.c)
#   QEMU_TIMEOUT seconds a QEMU run may take (default: 300)
#   QEMU_EXTRA   more qemu-system-arm options (e.g. -icount shift=0 to count instructions)
#   BUILD        build directory (default: build)
#
# Targets:
#   host      build with the host cc and run           (build/host/)
#   qemu-m4   cross-build for Cortex-M4, print the size, run on QEMU mps2-an386   (build/m4/)
#   qemu-m55  cross-build for Cortex-M55, print the size, run on QEMU mps3-an547  (build/m55/)
#   all       the three above (the default)
#   build-host, build-m4, build-m55: build without running
#   clean     remove BUILD (run it on its own, not together with other targets)
#
# Regeneration: BUILD/<core>/gen/ (the generated C and mcugen.mk) depends on MODEL and on
# BUILD/<core>/mcugen.options, a stamp holding the model path and the mcugen options. The
# stamp is rewritten only when that text changes, so `mcugen build` reruns exactly when the
# .tflite is newer or the options changed. Compile flags have the same kind of stamp
# (BUILD/<core>/cflags), and case.h depends on CASE and a stamp of CASE/EXPECTED_KEY.
# The generator itself is not a prerequisite: after changing mcugen, run `make clean`.

ifndef MODEL
$(error MODEL is not set: the example Makefile must set MODEL, CASE and include app.mk)
endif
ifndef CASE
$(error CASE is not set: the example Makefile must set MODEL, CASE and include app.mk)
endif

COMMON_DIR   := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
BUILD        ?= build
ifeq ($(strip $(BUILD)),)
$(error BUILD is empty)
endif
PYTHON       ?= python3
MCUGEN       ?= $(PYTHON) -m mcugen
MCUGEN_OPTS  ?=
EXPECTED_KEY ?= output
OPT          ?= -O2
EXTRA_CFLAGS ?=
QEMU_TIMEOUT ?= 300
CROSS        ?= arm-none-eabi-
QEMU         ?= qemu-system-arm
CC           ?= cc

.DEFAULT_GOAL := all
.SUFFIXES:
.DELETE_ON_ERROR:

# ---- per-core settings ------------------------------------------------------------------

WARN := -Wall -Wextra -Werror

TARGET_host  := host
CC_host      := $(CC)
CFLAGS_host  := $(OPT) $(WARN)
LDFLAGS_host :=
APPSRCS_host := $(COMMON_DIR)/main.c $(COMMON_DIR)/profile_clock.c
EXE_host     := $(BUILD)/host/app

ARM_CFLAGS  := $(OPT) -g $(WARN) -ffunction-sections -fdata-sections -DAPP_BARE_METAL=1
ARM_LDFLAGS := -nostartfiles --specs=nano.specs --specs=nosys.specs -Wl,--gc-sections -L$(COMMON_DIR)
ARM_APPSRCS := $(COMMON_DIR)/main.c $(COMMON_DIR)/startup.c $(COMMON_DIR)/semihosting.c \
               $(COMMON_DIR)/profile_clock.c
QEMU_EXTRA  ?=
QEMU_FLAGS  := -nographic -monitor none -serial none -semihosting-config enable=on,target=native $(QEMU_EXTRA)

# The core's flags (-mcpu, -mfpu, float ABI) come from the generated mcugen.mk
# (MCUGEN_ARCH_CFLAGS, for the --target below), for compiling and linking alike.
TARGET_m4   := cortex-m4
CC_m4       := $(CROSS)gcc
CFLAGS_m4   := $(ARM_CFLAGS)
LDSCRIPT_m4 := $(COMMON_DIR)/mps2_an386.ld
LDFLAGS_m4  := $(ARM_LDFLAGS) -T$(LDSCRIPT_m4) -Wl,-Map=$(BUILD)/m4/app.map
APPSRCS_m4  := $(ARM_APPSRCS)
EXE_m4      := $(BUILD)/m4/app.elf
QEMU_m4     := $(QEMU) -M mps2-an386 -cpu cortex-m4 $(QEMU_FLAGS)

TARGET_m55   := cortex-m55
CC_m55       := $(CROSS)gcc
CFLAGS_m55   := $(ARM_CFLAGS)
LDSCRIPT_m55 := $(COMMON_DIR)/mps3_an547.ld
LDFLAGS_m55  := $(ARM_LDFLAGS) -T$(LDSCRIPT_m55) -Wl,-Map=$(BUILD)/m55/app.map
APPSRCS_m55  := $(ARM_APPSRCS)
EXE_m55      := $(BUILD)/m55/app.elf
QEMU_m55     := $(QEMU) -M mps3-an547 -cpu cortex-m55 $(QEMU_FLAGS)

# Which cores the requested goals need: only their generated makefiles are included (made).
CORES_all := host m4 m55
CORES_host := host
CORES_build-host := host
CORES_qemu-m4 := m4
CORES_build-m4 := m4
CORES_qemu-m55 := m55
CORES_build-m55 := m55
GOALS := $(if $(MAKECMDGOALS),$(MAKECMDGOALS),$(.DEFAULT_GOAL))
CORES := $(sort $(foreach g,$(GOALS),$(CORES_$(g))))

ifneq ($(filter clean,$(GOALS)),)
ifneq ($(filter-out clean,$(GOALS)),)
$(error run 'make clean' on its own, then the other targets)
endif
endif

.PHONY: all host qemu-m4 qemu-m55 build-host build-m4 build-m55 clean FORCE
FORCE:

# $(call stamp_rule,FILE,VAR): FILE always holds the text of variable VAR and is rewritten
# (its mtime changes) only when that text changes, so what depends on FILE is remade exactly
# then. (A variable name, not the text: $(call) would split the text at its commas.)
define stamp_rule
$(1): FORCE
	@mkdir -p $$(@D)
	@printf '%s\n' '$$($(2))' | cmp -s - $$@ || printf '%s\n' '$$($(2))' > $$@
endef

# ---- the test case ----------------------------------------------------------------------

CASE_H := $(BUILD)/case.h
CASE_STAMP := $(CASE) --expected-key $(EXPECTED_KEY)
$(eval $(call stamp_rule,$(BUILD)/case.options,CASE_STAMP))
$(CASE_H): $(CASE) $(COMMON_DIR)/npz_to_header.py $(BUILD)/case.options
	$(PYTHON) $(COMMON_DIR)/npz_to_header.py $(CASE) $@ --expected-key $(EXPECTED_KEY)

# ---- per core: generate, include mcugen.mk, compile, link -------------------------------

# $(call gen_rules,CORE): the generated directory and the stamp of the options behind it.
define gen_rules
GEN_STAMP_$(1) := $(MODEL) $(MCUGEN_OPTS) --target $(TARGET_$(1))
$(call stamp_rule,$(BUILD)/$(1)/mcugen.options,GEN_STAMP_$(1))
$(BUILD)/$(1)/gen/mcugen.mk: $(MODEL) $(BUILD)/$(1)/mcugen.options
	rm -rf $(BUILD)/$(1)/gen
	$(MCUGEN) build $(MODEL) -o $(BUILD)/$(1)/gen $(MCUGEN_OPTS) --target $(TARGET_$(1))
endef

# $(call core_rules,CORE), evaluated right after BUILD/CORE/gen/mcugen.mk is included:
# the objects (with -MMD header dependencies), the compile-flags stamp and the link. Every
# file gets the core's flags and the include path (MCUGEN_ARCH_CFLAGS, MCUGEN_CFLAGS); only
# mcugen's own files get MCUGEN_OWN_CFLAGS (-std=c99, -ffp-contract=off).
define core_rules
PREFIX_$(1) := $$(MCUGEN_PREFIX)
SRCS_$(1) := $$(APPSRCS_$(1)) $$(MCUGEN_SRCS)
ALLCFLAGS_$(1) := $$(MCUGEN_ARCH_CFLAGS) $$(CFLAGS_$(1)) $$(MCUGEN_CFLAGS) -I$(BUILD) -I$(COMMON_DIR) \
    -DAPP_PREFIX=$$(MCUGEN_PREFIX) -DAPP_MODEL_H=\"$$(MCUGEN_PREFIX)_model.h\" $(EXTRA_CFLAGS)
OWNCFLAGS_$(1) := $$(MCUGEN_OWN_CFLAGS)
LDFLAGS_$(1) := $$(MCUGEN_ARCH_CFLAGS) $$(LDFLAGS_$(1))
OBJS_$(1) := $$(patsubst %.c,$(BUILD)/$(1)/obj/%.o,$$(notdir $$(SRCS_$(1))))
FLAGS_STAMP_$(1) := $$(CC_$(1)) $$(ALLCFLAGS_$(1)) $$(OWNCFLAGS_$(1)) $$(LDFLAGS_$(1))
$(call stamp_rule,$(BUILD)/$(1)/cflags,FLAGS_STAMP_$(1))

$(BUILD)/$(1)/obj/%.o: $(COMMON_DIR)/%.c $(BUILD)/$(1)/cflags
	@mkdir -p $$(@D)
	$$(CC_$(1)) $$(ALLCFLAGS_$(1)) -MMD -MP -c $$< -o $$@
$(BUILD)/$(1)/obj/%.o: $(BUILD)/$(1)/gen/%.c $(BUILD)/$(1)/cflags
	@mkdir -p $$(@D)
	$$(CC_$(1)) $$(ALLCFLAGS_$(1)) $$(OWNCFLAGS_$(1)) -MMD -MP -c $$< -o $$@
$(BUILD)/$(1)/obj/main.o: $(CASE_H)

$$(EXE_$(1)): $$(OBJS_$(1)) $$(LDSCRIPT_$(1)) $$(if $$(LDSCRIPT_$(1)),$(COMMON_DIR)/sections.ld)
	$$(CC_$(1)) $$(OBJS_$(1)) $$(LDFLAGS_$(1)) $$(MCUGEN_LDLIBS) -o $$@

-include $$(OBJS_$(1):.o=.d)
endef

$(foreach c,$(CORES),$(eval $(call gen_rules,$(c))))
# Each core's mcugen.mk starts a set of its own: empty what an mcugen.mk accumulates first.
$(foreach c,$(CORES),$(foreach v,$(MCUGEN_ACCUMULATED),$(eval $(v) :=))$(eval include $(BUILD)/$(c)/gen/mcugen.mk)$(eval $(call core_rules,$(c))))

# ---- goals ------------------------------------------------------------------------------

all: host qemu-m4 qemu-m55

build-host: $(EXE_host)
build-m4: $(EXE_m4)
build-m55: $(EXE_m55)

host: $(EXE_host)
	$(EXE_host)

qemu-m4: $(EXE_m4)
	$(CROSS)size $(EXE_m4)
	timeout $(QEMU_TIMEOUT) $(QEMU_m4) -kernel $(EXE_m4)

qemu-m55: $(EXE_m55)
	$(CROSS)size $(EXE_m55)
	timeout $(QEMU_TIMEOUT) $(QEMU_m55) -kernel $(EXE_m55)

clean:
	rm -rf $(BUILD)
