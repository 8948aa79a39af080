"""The files an output directory shares between its models: mcugen.mk and CMakeLists.txt.

One directory holds one or more models (`mcugen build A.tflite B.tflite -o DIR`). Each model's
own files are what codegen wrote for it besides the runtime (`<prefix>_model.c/.h`); the
runtime (kernels and headers, static files of this mcugen version) is shared, each file once.
Models built in separate runs link together through the same two files: mcugen.mk accumulates
across the directories a Makefile includes and lists each runtime file once, and
CMakeLists.txt adds its runtime files to one `mcugen_runtime` library unless a directory added
before already did.
"""

from __future__ import annotations

from .. import __version__
from ..errors import BuildError
from ..records import dataclass
from ..targets import Target
from .cnames import comment
from .environment import environment
from .npu import NPU_SIM_FILES

# Flags for mcugen's own C only (never the application's): the language the generated C is
# written in, and no fused multiply-add, so float kernels round every operation like TFLite.
OWN_FLAGS = ("-std=c99", "-ffp-contract=off")


@dataclass(frozen=True)
class BundleModel:
    """What the shared files say about one model of the directory."""

    prefix: str
    label: str  # the model's file name
    sha256: str
    arena_size: int
    files: dict[str, str]  # every file codegen wrote for it, runtime included
    runtime: tuple[str, ...]  # the names among `files` that are the shared runtime

    @property
    def own_files(self) -> list[str]:
        return sorted(name for name in self.files if name not in self.runtime)


def merge_files(models: list[BundleModel]) -> dict[str, str]:
    """Every model's own files and each runtime file once. Two models cannot write the same
    own file (their prefixes differ), and a runtime file is the same text for all of them."""
    merged: dict[str, str] = {}
    for model in models:
        for name, text in model.files.items():
            if name in merged and (name not in model.runtime or merged[name] != text):
                raise BuildError(f"{name}: written differently for two models of one directory "
                                 f"(the second is '{model.prefix}'); give each model its own --prefix")
            merged[name] = text
    return merged


def runtime_sources(models: list[BundleModel]) -> list[str]:
    """The runtime's C files but the simulated NPU's (npu_sim_sources)."""
    return sorted({name for m in models for name in m.runtime if name.endswith(".c")} - set(npu_sim_sources(models)))


def npu_sim_sources(models: list[BundleModel]) -> list[str]:
    """The simulated Ethos-U55's C files (device, driver, decoder, engine), which a firmware leaves
    out to link Arm's driver for a real NPU (MCUGEN_NPU_EXTERNAL_DRIVER)."""
    return sorted({name for m in models for name in m.runtime if name.endswith(".c") and name in NPU_SIM_FILES})


def shared_files(models: list[BundleModel], target: Target, external_arena: bool) -> dict[str, str]:
    """mcugen.mk and CMakeLists.txt for the directory's models."""
    data = {
        "version": __version__,
        "models": [
            {"prefix": m.prefix, "label": comment(m.label), "sha256": m.sha256,
             "arena_size": m.arena_size,
             "sources": [f for f in m.own_files if f.endswith(".c")]}
            for m in models
        ],
        "runtime_sources": runtime_sources(models),
        "npu_sim_sources": npu_sim_sources(models),
        "shared_arena_size": max(m.arena_size for m in models),
        "external_arena": external_arena,
        "target": target.name,
        "core_flags": list(target.core_flags),
        "own_flags": list(OWN_FLAGS),
    }
    env = environment()
    return {
        "mcugen.mk": env.get_template("mcugen.mk.j2").render(data),
        "CMakeLists.txt": env.get_template("CMakeLists.txt.j2").render(data),
    }
