"""The C of a Vela-compiled model's NPU side: the driver glue and the simulated NPU's files.

A model with `ethos-u` ops gets, beside its own C, templates/npu/mcugen_npu_model.c/.h (init
and invoke through the Ethos-U driver API, rendered: the engine is attached when
templates/runtime/npu has one) and every file of templates/runtime/npu (the simulated
Ethos-U55, our driver, the weight decoder, the engine). mcugen.mk lists the simulated NPU's
sources apart (MCUGEN_NPU_SIM_SRCS), so a firmware can link Arm's driver and a real NPU
instead. A model without NPU ops gets none of this.
"""

from __future__ import annotations

from typing import Any

from ..errors import BuildError
from ..ir import Op
from ..ops.base import DEFAULT_SETTING
from ..records import dataclass
from .environment import TEMPLATES, Templates

NPU_RUNTIME = TEMPLATES / "runtime" / "npu"
ENGINE_HEADER = "mcugen_npu_engine.h"
GLUE = ("mcugen_npu_model.h", "mcugen_npu_model.c")
# The simulated NPU's C files: what a firmware leaves out to link Arm's driver instead.
NPU_SIM_FILES = frozenset(p.name for p in NPU_RUNTIME.glob("*.c"))


@dataclass
class NpuCode:
    """What the templates need to know of the model's NPU ops."""

    config: str  # e.g. "ethos-u55-128"
    config_word: str  # C literals of the payload's CONFIG and ID words
    id_word: str
    engine: bool  # the runtime has a compute engine to attach
    runtime: list[str]  # templates/runtime/npu files copied beside the model
    sim_sources: list[str]  # their .c files: the simulated device, driver, decoder, engine

    @property
    def sources(self) -> list[str]:
        """The glue, in MCUGEN_SRCS whatever the driver."""
        return ["mcugen_npu_model.c"]

    def files(self, env: Templates, data: dict[str, Any]) -> dict[str, str]:
        found = {name: env.get_template(f"npu/{name}.j2").render(data) for name in GLUE}
        for name in self.runtime:
            found[name] = (NPU_RUNTIME / name).read_text()
        return found


def npu_code(ops: list[Op]) -> NpuCode | None:
    """The NPU part of the build, or None when no op runs on the NPU."""
    if not ops:
        return None
    from ..ops.npu import prepare_ethos_u  # the npu family only for models with NPU ops

    payloads = {prepare_ethos_u(op, DEFAULT_SETTING) for op in ops}
    configs = {(p.config, p.id_word) for p in payloads}
    if len(configs) != 1:
        raise BuildError(f"the model's ethos-u ops were compiled for {len(configs)} NPU configurations; one NPU runs them all")
    (config, id_word), = configs
    runtime = sorted(p.name for p in NPU_RUNTIME.iterdir() if p.suffix in (".c", ".h"))
    if not runtime:
        raise BuildError(f"the simulated NPU's files are missing from {NPU_RUNTIME}")
    return NpuCode(config=next(iter(payloads)).config_name, config_word=f"0x{config:08X}u", id_word=f"0x{id_word:08X}u",
                   engine=ENGINE_HEADER in runtime, runtime=runtime,
                   sim_sources=[name for name in runtime if name.endswith(".c")])
