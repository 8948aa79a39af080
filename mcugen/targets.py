"""The CPUs mcugen builds for: one frozen Target value per `--target` name.

Everything that depends on the core is a field here, read where it is needed, instead of the
name being compared in many places:

    name            the --target name; report.json's "target", BuildOptions.key()
    dsp             the Arm DSP extension (__ARM_FEATURE_DSP: SMLAD and friends)
    mve             M-profile Vector Extension, Helium (__ARM_FEATURE_MVE)
    fast_path       which int8 fast path the kernels compile (mcugen_conv_fast.h: MVE before
                    DSP), or None for the portable C; codegen sizes fast-path scratch for it
                    and the planner plans that scratch only when there is a fast path
    core_flags      arm-none-eabi-gcc flags for the core (code size, MCUGEN_ARCH_CFLAGS in
                    mcugen.mk); () for the host, which uses the host compiler
    qemu            the QEMU board that emulates the core (profile --qemu, build
                    --instructions), or None when there is none
    clock_mhz       the default clock that turns instructions into ns (one instruction a
                    cycle); None for the host, which measures ns directly
    npu_clock_mhz   the clock of an Ethos-U beside the core, which turns the simulated NPU's
                    cycles (its PMU) into ns in `mcugen profile`: 500 MHz, the core clock of
                    Vela's default system configuration (Ethos_U55_High_End_Embedded), for every
                    target (the host runs the same simulated NPU)
    npu             the Ethos-U55 configuration beside the core (mcugen/npu/config.py), which
                    --npu sets; None: the core runs every op. Code reading a target asks
                    `target.npu`, never a name

`target(name)` looks one up; an unknown name is an McugenError that lists the valid ones.
"""

from __future__ import annotations

from .errors import McugenError
from .npu.config import NpuConfig
from .records import dataclass


@dataclass(frozen=True)
class QemuBoard:
    """A QEMU machine for a core, and its SysTick clock (the core clock QEMU gives the board:
    25 MHz on mps2-an386, 32 MHz on mps3-an547; measured: a 600,000-instruction loop read
    15,000 and 19,200 ticks under -icount shift=0)."""

    make_core: str  # firmware/common/app.mk's core name: build-<core>, BUILD/<core>/app.elf
    machine: str  # qemu-system-arm -M
    cpu: str  # qemu-system-arm -cpu
    systick_hz: float

    def instructions(self, ticks: int) -> int:
        """SysTick ticks under -icount shift=0 (1 ns of virtual time per instruction) as
        instructions."""
        return round(ticks * 1e9 / self.systick_hz)


@dataclass(frozen=True)
class Target:
    """One --target: the core's ISA features, compiler flags, emulator and clock."""

    name: str
    dsp: bool = False
    mve: bool = False
    core_flags: tuple[str, ...] = ()
    qemu: QemuBoard | None = None
    clock_mhz: float | None = None
    npu_clock_mhz: float = 500.0
    npu: NpuConfig | None = None

    @property
    def fast_path(self) -> str | None:
        """'mve', 'dsp' or None (portable C): the kernels' choice, MVE first
        (runtime/kernels/mcugen_conv_fast.h)."""
        if self.mve:
            return "mve"
        if self.dsp:
            return "dsp"
        return None

    @property
    def plans_fast_path_scratch(self) -> bool:
        """Whether the memory plan reserves the fast paths' scratch (the portable C needs none)."""
        return self.fast_path is not None

    @property
    def is_cross(self) -> bool:
        """Built with arm-none-eabi-gcc (a Cortex-M core), not with the host compiler."""
        return bool(self.core_flags)

    def __str__(self) -> str:
        return self.name


HOST = Target("host")
CORTEX_M4 = Target(
    "cortex-m4", dsp=True,
    core_flags=("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"),
    qemu=QemuBoard("m4", "mps2-an386", "cortex-m4", 25e6), clock_mhz=100.0)
CORTEX_M7 = Target(
    "cortex-m7", dsp=True,
    core_flags=("-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"),
    clock_mhz=100.0)
CORTEX_M55 = Target(
    "cortex-m55", dsp=True, mve=True,
    core_flags=("-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"),
    qemu=QemuBoard("m55", "mps3-an547", "cortex-m55", 32e6), clock_mhz=100.0)

TARGETS: dict[str, Target] = {t.name: t for t in (HOST, CORTEX_M4, CORTEX_M7, CORTEX_M55)}
TARGET_NAMES = tuple(TARGETS)
QEMU_TARGET_NAMES = tuple(name for name, t in TARGETS.items() if t.qemu is not None)


def target(name: str) -> Target:
    """The Target called `name` (--target)."""
    try:
        return TARGETS[name]
    except KeyError:
        raise McugenError(f"--target '{name}' is not one of {', '.join(TARGET_NAMES)}") from None
