"""One output directory for one or more models: `mcugen build A.tflite B.tflite -o DIR`.

Each model is compiled on its own (driver.compile_model, with its own prefix); the directory
gets every model's files, the shared runtime once, one mcugen.mk, one CMakeLists.txt and one
report.json. report.json for one model is that model's report (as always) plus "set"; for
several it is {"mcugen_version", "models": [each model's report], "set"}.

A directory that already holds models (its report.json says which) is rebuilt only for the
same prefixes: building other models into it is refused, never a silent loss of the first.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .codegen.bundle import BundleModel, merge_files, runtime_sources, shared_files
from .driver import BuildOptions, Compiled
from .errors import BuildError, McugenError


def model_options(options: BuildOptions, count: int, prefixes: Sequence[str]) -> list[BuildOptions]:
    """The options of each of `count` models: `prefixes` is empty (each from its file name) or
    one per model, in order (--prefix given once per model)."""
    if prefixes and len(prefixes) != count:
        raise McugenError(f"--prefix given {len(prefixes)} times for {count} models: give it once per "
                          "model, in the models' order, or not at all")
    if not prefixes:
        return [options] * count
    return [dataclasses.replace(options, prefix=prefix) for prefix in prefixes]


def check_prefixes(compiled: Sequence[Compiled]) -> None:
    seen: dict[str, str] = {}
    for c in compiled:
        if c.prefix in seen:
            raise McugenError(f"{seen[c.prefix]} and {c.model_label} both get the C prefix '{c.prefix}': "
                              "give --prefix once per model")
        seen[c.prefix] = c.model_label


def check_npu_configs(compiled: Sequence[Compiled]) -> None:
    """Models of one firmware share its one NPU, so their ops must be compiled for one configuration."""
    configs = {c.code.npu_config: c.model_label for c in compiled if c.code.npu_config is not None}
    if len(configs) > 1:
        found = ", ".join(f"{label} for {config}" for config, label in sorted(configs.items()))
        raise McugenError(f"the models' NPU ops were compiled for different NPUs ({found}); "
                          "one firmware has one NPU: compile them for the same configuration")


def _bundle_model(c: Compiled) -> BundleModel:
    return BundleModel(c.prefix, c.model_label, c.graph.sha256, c.plan.arena_size, c.code.files,
                       tuple(c.code.runtime))


def set_report(compiled: Sequence[Compiled]) -> dict[str, Any]:
    """report.json's "set": what the directory's models share."""
    models = [_bundle_model(c) for c in compiled]
    options = compiled[0].options
    return {
        "prefixes": [c.prefix for c in compiled],
        "arena": options.arena,
        # one buffer in which the models can run one after the other: the largest arena
        "shared_arena_bytes": max(c.plan.arena_size for c in compiled),
        "sum_arena_bytes": sum(c.plan.arena_size for c in compiled),
        "weights_bytes": sum(c.code.weights_bytes for c in compiled),
        "runtime_files": sorted({name for m in models for name in m.runtime}),
        "runtime_sources": runtime_sources(models),
    }


def report(compiled: Sequence[Compiled]) -> dict[str, Any]:
    shared = set_report(compiled)
    if len(compiled) == 1:
        return {**compiled[0].report(), "set": shared}
    return {"mcugen_version": __version__, "models": [c.report() for c in compiled], "set": shared}


def set_files(compiled: Sequence[Compiled]) -> dict[str, str]:
    """Every file of the directory: models, runtime once, mcugen.mk, CMakeLists.txt, report.json."""
    if not compiled:
        raise McugenError("no model given")
    check_prefixes(compiled)
    check_npu_configs(compiled)
    models = [_bundle_model(c) for c in compiled]
    files = merge_files(models)
    options = compiled[0].options
    files.update(shared_files(models, options.target, options.arena == "external"))
    files["report.json"] = json.dumps(report(compiled), indent=2, sort_keys=True) + "\n"
    return files


def prefixes_in(out_dir: Path) -> list[str] | None:
    """The prefixes of the models a previous build wrote into out_dir, or None when it holds no
    mcugen build (no report.json, or not one of ours)."""
    path = out_dir / "report.json"
    if not path.is_file():
        return None
    try:
        previous = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(previous, dict):
        return None
    if isinstance(previous.get("set"), dict) and isinstance(previous["set"].get("prefixes"), list):
        return [str(p) for p in previous["set"]["prefixes"]]
    if isinstance(previous.get("prefix"), str):  # a report.json of mcugen before sets
        return [previous["prefix"]]
    return None


def check_output_dir(out_dir: Path, prefixes: Sequence[str]) -> None:
    """Refuse to write other models into a directory that holds a build: the first would lose
    its mcugen.mk, CMakeLists.txt and report.json entries without a word."""
    previous = prefixes_in(out_dir)
    if previous is not None and sorted(previous) != sorted(prefixes):
        raise McugenError(
            f"{out_dir}: already holds the models {', '.join(previous)} (its report.json), not "
            f"{', '.join(prefixes)}: build all models into one directory in one command "
            "(mcugen build A.tflite B.tflite -o DIR), or use another directory")


def write_set(compiled: Sequence[Compiled], out_dir: Path) -> None:
    """Write the directory's files into out_dir, replacing what a build of the same models wrote
    there. Files are written to a temporary directory beside out_dir first and moved into place
    only when all of them are written."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise BuildError(f"{out_dir}: exists and is not a directory")
    files = set_files(compiled)
    check_output_dir(out_dir, [c.prefix for c in compiled])
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".mcugen-", dir=out_dir.parent))
    try:
        for name, text in files.items():
            (staging / name).write_text(text)
        for name, blob in ((n, b) for c in compiled for n, b in c.code.blobs.items()):
            (staging / name).write_bytes(blob)
        out_dir.mkdir(exist_ok=True)
        for entry in sorted(staging.iterdir()):
            os.replace(entry, out_dir / entry.name)
        for stale in (out_dir / f"{c.prefix}_weights.bin" for c in compiled if not c.code.blobs):
            stale.unlink(missing_ok=True)  # a rebuild without --weights-file: no blob the C ignores
    finally:
        shutil.rmtree(staging, ignore_errors=True)
