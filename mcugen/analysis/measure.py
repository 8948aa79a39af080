"""`mcugen build`: the pipeline's output plus the figures only a toolchain can measure.

build() compiles the model (driver.compile_model), fills report.json's measured sections and
writes the files (modelset.write_set), for one model or several into one directory:

- "code_size": the generated C built with arm-none-eabi-gcc -Os for the target's core
  (toolchain/cross.py). By default for cross targets only (Target.is_cross), where it costs
  about a second and a failure to measure is recorded in report.json rather than failing the
  build; `size=True` (--size) makes a failure the build's failure; `size=False` skips it.
- "instructions" (`instructions=True`, --instructions): the model run on the emulated core of
  the target (mcugen profile --qemu, random input, outputs checked against the host build),
  instructions per inference and per op.
- "npu" "cycles" (Vela-compiled models): the build run once on the host with the simulated
  NPU and zero inputs (an Ethos-U's cycles depend on the command stream, not on the data),
  the cycles read from the device's PMU cycle counter, summed over the ethos-u ops. A run
  that fails leaves "cycles" null and says why in "cycles_source".

It sits here, above the toolchain, because the instruction count is read from a profile run
(analysis/profile.py); the driver below measures nothing and imports no toolchain.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..driver import BuildOptions, Compiled, compile_model
from ..errors import BuildError
from ..gcpause import collector_paused
from ..modelset import model_options, write_set

NPU_CYCLES_SOURCE = ("simulated: one run on the host with zero inputs (the cycles do not depend on the data), "
                     "read from the simulated Ethos-U's PMU cycle counter, summed over the ethos-u ops")


def code_size_report(compiled: Compiled, size: bool | None) -> dict[str, Any]:
    """report.json's "code_size" for `compiled` under the `size` policy of build()."""
    target = compiled.options.target
    if size is False or not (size or target.is_cross):
        return {"measured": False,
                "reason": "not asked: mcugen build measures it for Cortex-M targets or with --size"}
    from ..toolchain.cross import measure_code_size  # here: a host build runs no toolchain

    try:
        return measure_code_size(compiled.code.files, compiled.prefix, target)
    except BuildError as error:
        if size:  # asked for with --size: a failure is the build's failure
            raise
        return {"measured": False, "reason": str(error)}


def npu_cycles_report(model: Path, compiled: Compiled) -> dict[str, Any]:
    """report.json's "npu" "cycles" and "cycles_source" for a Vela-compiled model."""
    from .profile import profile_model  # here: only a Vela-compiled model runs the simulated NPU

    zeros = [np.zeros(t.shape, dtype=t.dtype.numpy) for t in compiled.graph.inputs]
    try:
        profile = profile_model(model, compiled.options, inputs=zeros)
    except BuildError as error:
        return {"cycles": None, "cycles_source": f"the simulated run failed: {error}"}
    return {"cycles": profile.npu_cycles, "cycles_source": NPU_CYCLES_SOURCE}


def build(model: Path, out_dir: Path, options: BuildOptions, size: bool | None = None,
          instructions: bool = False) -> Compiled:
    """build_models for one model."""
    return build_models([model], out_dir, options, size=size, instructions=instructions)[0]


def build_models(models: Sequence[Path], out_dir: Path, options: BuildOptions, prefixes: Sequence[str] = (),
                 size: bool | None = None, instructions: bool = False) -> list[Compiled]:
    """compile_model for each model (prefixes: none, or one per model), then each one's code size
    and (when asked) instruction count into report.json, then write_set; nothing is written
    when any step fails."""
    compiled = []
    for model, own in zip(models, model_options(options, len(models), prefixes)):
        with collector_paused():  # gcpause.py
            one = compile_model(model, own)
        if instructions:  # the firmware that counts them owns a static arena; the count is the same
            from .profile import profile_model  # here: only --instructions runs the emulator

            static = dataclasses.replace(own, arena="static", weights_file=False)
            one.instructions = profile_model(model, static, qemu=True).instructions_report()
        one.code_size = code_size_report(one, size)
        if one.npu is not None:
            one.npu.update(npu_cycles_report(model, one))
        compiled.append(one)
    write_set(compiled, out_dir)
    return compiled
