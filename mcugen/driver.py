"""The pipeline, top to bottom: read, check, rewrite, schedule, plan, generate.

    model.tflite -> reader -> IR -> passes -> support -> scheduler -> planner -> codegen

verify_graph() runs between the stages that change the graph. Everything is computed in memory
first; files are written only when every stage has succeeded, so a failed build never leaves
partial output that looks good.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import field
from pathlib import Path
from typing import Any

from . import __version__
from .codegen.cnames import default_prefix, is_valid_prefix
from .codegen.generate import GeneratedCode, generate
from .codegen.weights import HEADER_BYTES
from .custom_ops import bind_kernels, kernels_key
from .digest import sha256
from .errors import McugenError, PlanningError
from .frontend.tflite import parse_model, read_model
from .frontend.validate import DEFAULT_LIMITS, DEFAULT_MAX_TENSOR_BYTES, Limits
from .ir import CustomKernel, Graph, Op, verify_graph
from .memory.cost import cost_model
from .memory.kernel_variants import without_fast_paths
from .memory.liveness import OP_STEPS, StepView, check_pinned
from .memory.optimize import DEFAULT_MODE, check_mode
from .memory.plan import Plan, plan_model, plan_report, refigured, tiling_report
from .memory.pools import PoolSpec
from .npu.figures import npu_ops, npu_report
from .ops.base import Setting
from .ops.registry import fast_path_scratch_bytes, op_macs, scratch_bytes
from .passes import PassReport, run_passes
from .quantization import Rounding
from .records import dataclass
from .schedule import schedule
from .state import state_bytes
from .support import check_graph
from .targets import HOST, Target, target


@dataclass(frozen=True)
class BuildOptions:
    rounding: Rounding = Rounding.TFLM
    prefix: str | None = None
    target: Target = HOST  # a --target name is looked up (targets.target())
    pools: tuple[PoolSpec, ...] = ()  # --pool; () is the one unlimited arena
    guard: int = 0  # canary bytes after every buffer and around every pool (tests only)
    tiling: bool = True  # stripe memory-peak chains (memory/tiling.py) where that lowers the arena
    # --arena: "static" (the model owns its arena) or "external" (<prefix>_init_arena binds one)
    arena: str = "static"
    max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES  # --max-tensor-bytes (frontend/validate.py)
    # --weights-file: the constant arrays go to <prefix>_weights.bin (codegen/weights.py)
    weights_file: bool = False
    # --sparse: int8 FULLY_CONNECTED weights in mask-and-values form where smaller (ops/matmul/sparse.py)
    sparse_weights: bool = False
    # --custom-op: the user's kernels for CUSTOM ops (custom_ops.py)
    custom_ops: tuple[CustomKernel, ...] = ()
    # --npu-async: CPU ops run while an NPU segment works (npu/concurrency.py); needs --npu
    npu_async: bool = False
    # --optimize: ram, balanced or speed: which plan to keep (memory/optimize.py); NPU striping reads it too
    optimize: str = DEFAULT_MODE
    # --npu-weights: auto, sram or flash, where NPU ops read their weights (npu/weight_buffers.py)
    npu_weights: str = "auto"
    # the memory plan may run an op's portable C instead of its fast path where the fast path's
    # scratch raises the arena (memory/kernel_variants.py; --optimize weighs it); off: the fast
    # kernels everywhere (the firmware benchmarks, which measure their instructions)
    kernel_choice: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.target, str):  # BuildOptions(target="cortex-m4"): the same as target(...)
            object.__setattr__(self, "target", target(self.target))
        check_arena_option(self)
        check_mode(self.optimize)

    def key(self) -> str:
        pools = ",".join(f"{p.name}:{p.capacity}:{p.speed}" for p in self.pools)
        tiling = "" if self.tiling else "-notiling"
        arena = "" if self.arena == "static" else f"-arena-{self.arena}"
        limit = "" if self.max_tensor_bytes == DEFAULT_MAX_TENSOR_BYTES else f"-max{self.max_tensor_bytes}"
        weights = "-weights-file" if self.weights_file else ""
        npu = f"+{self.target.npu.name}" if self.target.npu is not None else ""
        sparse = "-sparse" if self.sparse_weights else ""
        custom = f"-custom-{kernels_key(self.custom_ops)}" if self.custom_ops else ""
        return (f"{self.rounding.value}-{self.prefix or ''}-{self.target.name}{npu}-{pools}-{self.guard}{tiling}"
                f"{arena}{limit}{weights}{sparse}{custom}{'-npu-async' if self.npu_async else ''}"
                + ("" if self.optimize == DEFAULT_MODE else f"-optimize-{self.optimize}")
                + ("" if self.npu_weights == "auto" else f"-npu-weights-{self.npu_weights}")
                + ("" if self.kernel_choice else "-fast-kernels"))


ARENA_KINDS = ("static", "external")


def check_arena_option(options: BuildOptions) -> None:
    """--arena external binds one application buffer to the default arena: not to memory pools,
    and not with the test-only guard bytes, which init() fills in a static arena."""
    if options.arena not in ARENA_KINDS:
        raise McugenError(f"--arena '{options.arena}' is not one of {', '.join(ARENA_KINDS)}")
    if options.arena == "external" and options.pools:
        raise McugenError("--arena external cannot be combined with --pool: the application binds "
                          "one buffer, the default arena; pools stay static arrays")
    if options.arena == "external" and options.guard:
        raise McugenError("--arena external cannot be combined with guard bytes (a test-only build)")


@dataclass
class Compiled:
    graph: Graph
    order: list[Op]
    plan: Plan
    code: GeneratedCode
    prefix: str
    options: BuildOptions
    model_label: str
    # report.json's "code_size" (toolchain/cross.py); only `build` measures it (analysis/measure.py)
    code_size: dict[str, Any] = field(default_factory=lambda: {"measured": False, "reason": "not measured"})
    # report.json's "instructions" (analysis/profile.py, QEMU); only `build --instructions` runs it
    instructions: dict[str, Any] = field(default_factory=lambda: {
        "measured": False, "reason": "not asked: mcugen build --instructions runs the model on QEMU"})
    # report.json's "npu" (npu/figures.py) for a Vela-compiled model; None (no key) without NPU ops.
    # Its "cycles" are filled by `build` (analysis/measure.py), which runs the simulated NPU.
    npu: dict[str, Any] | None = None

    def report(self) -> dict[str, Any]:
        graph, plan = self.graph, self.plan
        return {
            "mcugen_version": __version__,
            "model": self.model_label,
            "model_sha256": graph.sha256,
            "prefix": self.prefix,
            "rounding": self.options.rounding.value,
            "target": self.options.target.name,
            "arena_bytes": plan.arena_size,
            "weights_bytes": self.code.weights_bytes,
            **({"weights_file": self.weights_file_report()} if self.code.blobs else {}),
            "lower_bound_bytes": plan.lower_bound,
            **plan_report(plan),
            "macs": sum(op_macs(op) for op in self.order),
            "tiling": tiling_report(plan.tiling, self.options.tiling),
            "inputs": [_io_report(t) for t in graph.inputs],
            "outputs": [_io_report(t) for t in graph.outputs],
            "ops": [
                {"index": op.index, "kind": op.kind.name, "name": op.name,
                 "macs": op_macs(op), "backend": op.backend}
                for op in self.order
            ],
            "files": sorted([*self.code.files, *self.code.blobs]),
            "code_size": self.code_size,
            "instructions": self.instructions,
            **({"npu": self.npu} if self.npu is not None else {}),
            **({"sparse_weights": _sparse_report(self.order)} if self.options.sparse_weights else {}),
        }


    def weights_file_report(self) -> dict[str, Any]:
        """report.json's "weights_file": the blob <prefix>_init_weights() takes."""
        (name, blob), = self.code.blobs.items()
        return {"file": name, "bytes": len(blob), "payload_bytes": len(blob) - HEADER_BYTES,
                "structure_sha256": self.code.structure_sha256,
                "payload_crc32": f"0x{zlib.crc32(blob[HEADER_BYTES:]):08x}",
                "sha256": sha256(blob).hexdigest()}


def _sparse_report(order: list[Op]) -> dict[str, Any]:
    """report.json's "sparse_weights" (matmul.sparse, imported only for --sparse-weights builds)."""
    from .ops.matmul.sparse import report

    return report(order)


def _io_report(tensor: Any) -> dict[str, Any]:
    quant = tensor.quant
    return {
        "name": tensor.name,
        "shape": list(tensor.shape),
        "dtype": tensor.dtype.short,
        "scale": quant.single_scale if quant else None,
        "zero_point": quant.single_zero_point if quant else None,
        "bytes": tensor.nbytes,
        # Axes the model leaves open (shape_signature -1), fixed at the extents in "shape".
        "dynamic_axes": list(tensor.dynamic_axes),
    }


def prepare_graph(graph: Graph, rounding: Rounding = Rounding.TFLM) -> PassReport:
    """Check the IR, rewrite it (fold, alias, drop ops that do nothing), check it again."""
    verify_graph(graph)
    report = run_passes(graph, rounding)
    verify_graph(graph)
    return report


def load_graph(model: Path | bytes, label: str | None = None,
               rounding: Rounding = Rounding.TFLM, target: Target = HOST, limits: Limits = DEFAULT_LIMITS,
               custom_ops: Sequence[CustomKernel] = ()) -> Graph:
    """Read, rewrite, and check support: the graph every later stage works on.

    Unknown builtins are reported by the reader, all at once; the support rules run after the
    passes, because an op folded into a constant at build time needs no kernel on the device.
    Folding evaluates reference kernels, so it needs the build's rounding mode; some rules
    depend on the mode or the target. CUSTOM ops get the user's kernels (--custom-op) first.
    """
    if isinstance(model, bytes):
        graph = parse_model(model, label or "model.tflite", limits)
    else:
        graph = read_model(model, limits)
    bind_kernels(graph, custom_ops)
    prepare_graph(graph, rounding)
    check_graph(graph, Setting(rounding, target))
    return graph


def resolve_prefix(graph: Graph, prefix: str | None) -> str:
    if prefix is None:
        return default_prefix(graph.name)
    if not is_valid_prefix(prefix):
        raise McugenError(f"--prefix '{prefix}' is not a C identifier (letters, digits, '_', not a keyword)")
    return prefix


def schedule_and_plan(graph: Graph, options: BuildOptions, label: str) -> tuple[list[Op], Plan]:
    """The op order and the memory plan of a build.

    Vela fixed the NPU's tensors at offsets that hold for the file's order and for whole
    tensors: a Vela-compiled model keeps its order (checked against the offsets) and is not
    tiled."""
    vela = bool(npu_ops(graph.ops))
    scratch = scratch_bytes(options.target)
    if options.target.npu is not None and not vela:
        from .npu.segments import mark_npu_ops, with_npu_scratch

        mark_npu_ops(graph, options.target.npu)
        scratch = with_npu_scratch(scratch)  # an NPU op's scratch is its program's
    chosen = schedule(graph, scratch, optimise=not vela)
    order = chosen.order
    if vela and (overlap := check_pinned(graph, order)) is not None:
        raise PlanningError(f"{label}: Vela's offsets do not hold for the op order: {overlap}")
    steps: StepView = OP_STEPS
    groups: list[Any] = []
    if options.npu_async and options.target.npu is not None:
        from .npu.concurrency import AsyncSteps, async_order

        order, groups = async_order(order, options.target.npu)
        steps = AsyncSteps(order, groups)
    costs = cost_model(options.target)
    fast = fast_path_scratch_bytes(options.target) if options.kernel_choice else None
    plan = plan_model(graph, order, scratch, options.pools, options.guard,
                      # striping (NPU chains in stripes) is not combined with --npu-async yet
                      options.tiling and not vela and not options.npu_async, steps,
                      optimize=options.optimize, costs=costs, fast=fast)
    if fast is not None:  # the later stages keep its kernels
        scratch = without_fast_paths(scratch, fast, plan.portable)
    placed = plan  # then the NPU's choices of stripes and weight buffers
    if options.target.npu is not None and plan.tiling is not None:
        from .npu.stripes import choose_stripes

        placed = choose_stripes(graph, order, placed, scratch, list(options.pools),
                                options.guard, options.target.npu, options.optimize)
    if options.target.npu is not None and not vela and not options.npu_async:
        from .npu.compile import lower_op
        from .npu.weight_plan import plan_npu_weights

        # weight buffers and streams, and NPU outputs over their dying inputs where that is faster
        placed = plan_npu_weights(graph, order, placed, options.npu_weights, options.target.npu,
                                  scratch, list(options.pools), options.guard, lower_op, room=options.tiling)
    plan = refigured(placed, order, plan, costs)
    plan.schedule_exact = chosen.exact
    plan.async_groups = tuple(groups)
    return order, plan


def compile_model(model: Path | bytes, options: BuildOptions, label: str | None = None) -> Compiled:
    graph = load_graph(model, label, options.rounding, options.target, Limits(options.max_tensor_bytes),
                       options.custom_ops)
    model_label = label or (model.name if isinstance(model, Path) else "model.tflite")
    prefix = resolve_prefix(graph, options.prefix)
    if options.arena == "external" and npu_ops(graph.ops):
        raise McugenError(f"{model_label}: --arena external is not supported for Vela-compiled models "
                          "(their init sets up the NPU); build it with the default static arena")
    if options.arena == "external" and state_bytes(graph):
        raise McugenError(f"{model_label}: --arena external is not supported for stateful models (their "
                          "variables must keep their values between invokes); build it with the default static arena")
    if options.weights_file and npu_ops(graph.ops):
        raise McugenError(f"{model_label}: --weights-file is not supported for Vela-compiled models "
                          "(their command streams and weights are one payload); build it without it")
    if options.npu_async and options.target.npu is None:
        raise McugenError(f"{model_label}: --npu-async needs --npu (the NPU the CPU runs beside)")
    check_npu_weights(options, model_label)
    with _npu_memo(options):
        order, plan = schedule_and_plan(graph, options, model_label)
        if options.target.npu is not None:
            order = npu_segments(graph, order, plan, options, model_label)
        code = generate(graph, order, plan, prefix, options.rounding, model_label, options.target,
                        external_arena=options.arena == "external", weights_file=options.weights_file,
                        sparse_weights=options.sparse_weights)
        compiled = Compiled(graph, order, plan, code, prefix, options, model_label)
        compiled.npu = npu_report(order, plan)
    return compiled


def _npu_memo(options: BuildOptions) -> AbstractContextManager[None]:
    """--npu: the estimates and trial lowerings each choice repeats are kept for the build (npu/memo.py)."""
    if options.target.npu is None:
        return nullcontext()
    from .npu.memo import build_scope

    return build_scope()


NPU_WEIGHTS = ("auto", "sram", "flash")  # npu/weight_buffers.py's POLICIES


def check_npu_weights(options: BuildOptions, label: str) -> None:
    """--npu-weights: one of NPU_WEIGHTS; sram needs --npu and is not combined with --npu-async
    (auto keeps the weights in flash there)."""
    if options.npu_weights not in NPU_WEIGHTS:
        raise McugenError(f"{label}: --npu-weights '{options.npu_weights}' is not one of {', '.join(NPU_WEIGHTS)}")
    if options.npu_weights != "auto" and options.target.npu is None:
        raise McugenError(f"{label}: --npu-weights {options.npu_weights} needs --npu (it places NPU weights)")
    if options.npu_weights == "sram" and options.npu_async:
        raise McugenError(f"{label}: --npu-weights sram with --npu-async is not supported; drop one of them")


def npu_segments(graph: Graph, order: list[Op], plan: Plan, options: BuildOptions, label: str) -> list[Op]:
    """--npu: the ops the NPU takes, in runs, as ETHOS_U ops with mcugen's own command streams
    (npu/segments.py), written for the plan's offsets."""
    from .npu.segments import lower_segments

    assert options.target.npu is not None
    if npu_ops(graph.ops):
        raise McugenError(f"{label}: --npu with a Vela-compiled model; give the original model, or drop --npu")
    if options.guard:
        raise McugenError(f"{label}: --npu with guard bytes (a test option) is not supported")
    if not options.npu_async:
        return lower_segments(graph, order, plan, options.target.npu)
    from .npu.concurrency import check_concurrency, mark_concurrent, segment_starts

    groups = list(plan.async_groups)
    order = lower_segments(graph, order, plan, options.target.npu, segment_starts(groups))
    mark_concurrent(order, groups)
    check_concurrency(order, plan)
    return order


def write_files(compiled: Compiled, directory: Path) -> None:
    """One model's generated C and report.json, into an existing directory (the host harness's
    build; `mcugen build` writes a whole directory with modelset.write_set)."""
    for name, text in compiled.code.files.items():
        (directory / name).write_text(text)
    for name, blob in compiled.code.blobs.items():
        (directory / name).write_bytes(blob)
    report = json.dumps(compiled.report(), indent=2, sort_keys=True) + "\n"
    (directory / "report.json").write_text(report)
