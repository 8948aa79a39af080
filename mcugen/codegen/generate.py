"""Build the plain data the templates render, and render them.

Python computes every value (offsets, multipliers, names); the templates hold only layout.
The output is deterministic: the same graph, plan and options give byte-identical files.
"""

from __future__ import annotations

from dataclasses import field
from functools import cache
from typing import Any

import numpy as np

from .. import __version__
from ..errors import BuildError
from ..ir import DType, Graph, NpuSegmentOptions, Op, OpKind, Tensor
from ..memory.liveness import Buffer
from ..memory.plan import Plan
from ..memory.pools import DEFAULT_POOL_NAME, pool_symbol
from ..ops import registry
from ..quantization import Rounding
from ..records import dataclass
from ..state import state_bytes, state_tensors
from ..targets import HOST, Target
from .cnames import c_array_body, c_float, comment, identifier
from .custom import kernel_files as custom_kernel_files
from .environment import TEMPLATES, environment
from .memory import GUARD_BYTE, GUARD_STATUS, guard_statements, pool_entries
from .npu import GLUE, NpuCode, npu_code
from .stripes import emit_chain_step
from .weights import blob_layout, c_bytes, header_data, pack_blob, structure_hash, unbind_static

RUNTIME = TEMPLATES / "runtime" / "kernels"
# Headers every generated model includes, whatever its ops.
COMMON_RUNTIME = ("mcugen_nn_types.h", "mcugen_fixedpoint.h", "mcugen_platform.h")
# A runtime header that only kernels include (fast-path interfaces and helpers) says so in
# this comment: it is copied beside the model, and model.c does not include it.
INTERNAL_MARK = "/* mcugen: kernel-internal (the generated model does not include this header) */"


@dataclass
class ConstArray:
    name: str
    ctype: str
    values: np.ndarray
    note: str

    @property
    def nbytes(self) -> int:
        return int(self.values.size * self.values.dtype.itemsize)


@dataclass
class Step:
    op: Op | None  # None for invoke's closing copies of constant graph outputs
    title: str
    declarations: list[str]
    calls: list[str]
    guard_before: list[str] = field(default_factory=list)  # guarded builds only (memory.py)
    guard_after: list[str] = field(default_factory=list)
    # (tensor index, pointer expression, bytes) of each output, for the MCUGEN_DUMP hook
    # that `mcugen verify --per-layer` compiles in; compiled out by default.
    dumps: list[tuple[int, str, int]] = field(default_factory=list)
    # --npu-async: calls after the op's timed section (the wait for an NPU segment started
    # earlier), then the profile positions of the segments waited for, whose PMU cycles are read
    waits: list[str] = field(default_factory=list)
    npu_waited: list[int] = field(default_factory=list)


@dataclass
class _Context:
    """The EmitContext the emitters write against, collecting flash constants as they ask."""

    prefix: str
    plan: Plan
    rounding: Rounding
    target: Target = HOST
    sparse_weights: bool = False  # --sparse
    constants: list[ConstArray] = field(default_factory=list)
    _by_tensor: dict[int, str] = field(default_factory=dict)
    step_op: Op | None = None  # the op whose step is being emitted (a tiled chain's last op)
    # constant array -> indices of the ops whose steps read it (flash per op, mcugen report)
    readers: dict[str, set[int]] = field(default_factory=dict)

    def _read_by_step(self, name: str) -> str:
        if self.step_op is not None:
            self.readers.setdefault(name, set()).add(self.step_op.index)
        return name

    def ptr(self, tensor: Tensor) -> str:
        if tensor.is_constant:
            return self._read_by_step(self._weights(tensor))
        return f"(({tensor.dtype.ctype} *)({self.address(tensor)}))"

    def base(self, buffer: Buffer) -> str:
        """The C array of the buffer's memory pool."""
        return pool_symbol(self.prefix, buffer.pool)

    def address(self, tensor: Tensor) -> str:
        """A uint8_t pointer expression to an activation tensor's planned bytes."""
        return f"{self.base(self.plan.buffer_of(tensor))} + {self.plan.offset_of(tensor)}"

    def _weights(self, tensor: Tensor) -> str:
        if tensor.index not in self._by_tensor:
            assert tensor.data is not None
            name = f"{self.prefix}_t{tensor.index}"
            suffix = identifier(tensor.name, 32)
            if suffix:
                name += f"_{suffix}"
            values = np.ascontiguousarray(tensor.data, dtype=tensor.dtype.numpy)
            self.constants.append(ConstArray(name, tensor.dtype.ctype, values, comment(tensor.name)))
            self._by_tensor[tensor.index] = name
        return self._by_tensor[tensor.index]

    def constant(self, hint: str, values: np.ndarray, ctype: str) -> str:
        name = f"{self.prefix}_c{len(self.constants)}_{identifier(hint, 24) or 'data'}"
        self.constants.append(ConstArray(name, ctype, np.ascontiguousarray(values), comment(hint)))
        return self._read_by_step(name)

    def scratch(self, op: Op) -> tuple[str, int]:
        buffer = self.plan.scratch_of(op)
        size = self.plan.kernel_scratch_bytes(op, buffer.size) if buffer is not None else 0
        if buffer is None or size == 0:
            return "NULL", 0
        return f"((void *)({self.base(buffer)} + {buffer.offset}))", size


@dataclass
class GeneratedCode:
    files: dict[str, str]  # file name -> content, including the copied runtime
    weights_bytes: int
    runtime: list[str]
    # --weights-file: the blob (<prefix>_weights.bin) and its header's structure hash (hex)
    blobs: dict[str, bytes] = field(default_factory=dict)
    structure_sha256: str | None = None
    # op index -> bytes of the constant arrays its step reads (a shared array counts for each
    # reader; a tiled chain's arrays for its last op): flash per op in mcugen report
    flash_by_op: dict[int, int] = field(default_factory=dict)
    npu_config: str | None = None  # e.g. "ethos-u55-128" when ops run on the NPU


# The mcugen_quantize.c kernel that turns float32 values into an input's dtype, and an
# output's dtype into float32 (TFLite's QUANTIZE and DEQUANTIZE arithmetic); "copy" for float32
# tensors. Other dtypes have no float form: the helpers return MCUGEN_ARG_ERROR for them.
_FROM_FLOAT = {DType.INT8: "mcugen_quantize_f32_s8", DType.INT16: "mcugen_quantize_f32_s16",
               DType.FLOAT32: "copy"}
_TO_FLOAT = {DType.INT8: "mcugen_dequantize_s8_f32", DType.UINT8: "mcugen_dequantize_u8_f32",
             DType.INT16: "mcugen_dequantize_s16_f32", DType.FLOAT32: "copy"}


def _io_entry(tensor: Tensor, index: int, plan: Plan, ctx: _Context,
              converters: dict[DType, str]) -> dict[str, Any]:
    quant = tensor.quant
    converter = converters.get(tensor.dtype)
    if converter != "copy" and (quant is None or quant.per_channel):
        converter = None
    return {
        "index": index,
        "name": comment(tensor.name),
        "offset": plan.offset_of(tensor),
        "address": ctx.address(tensor),
        "bytes": tensor.nbytes,
        "ctype": tensor.dtype.ctype,
        "dtype": tensor.dtype.short,
        "shape": list(tensor.shape) or [1],
        "scale": c_float(quant.single_scale) if quant else "0.0f",
        "zero_point": quant.single_zero_point if quant else 0,
        "count": tensor.num_elements,
        "converter": converter,
    }


def _planned(plan: Plan, tensor: Tensor) -> bool:
    """Whether the tensor has planned bytes (a tiled chain's intermediates have none)."""
    return any(t is tensor for b in plan.buffers for t in b.tensors)


def _step_title(op: Op) -> str:
    return f"op {op.index}: {op.kind.name} '{comment(op.name)}'"


def _constant_output_step(index: int, tensor: Tensor, ctx: _Context) -> Step:
    """A graph output folded into a constant at build time: invoke copies it from flash into
    the output's arena bytes last, after every op (the planner gives the output its own buffer
    for the end of invoke only, so ops may use those bytes before)."""
    arena = f"(({tensor.dtype.ctype} *)({ctx.address(tensor)}))"
    call = f"mcugen_copy({arena}, {ctx.ptr(tensor)}, {tensor.nbytes})"
    return Step(None, f"output {index} '{comment(tensor.name)}': a constant folded at build time", [], [call])


def generate(graph: Graph, order: list[Op], plan: Plan, prefix: str, rounding: Rounding,
             model_label: str, target: Target = HOST, external_arena: bool = False,
             weights_file: bool = False, sparse_weights: bool = False) -> GeneratedCode:
    ctx = _Context(prefix=prefix, plan=plan, rounding=rounding, target=target, sparse_weights=sparse_weights)
    steps: list[Step] = []
    functions: list[str] = []  # file-scope C: the stripe loops of tiled chains (stripes.py)
    runtime: set[str] = set()
    for op in order:
        ctx.step_op = op
        chain = plan.tiling.chain_of(op) if plan.tiling is not None else None
        if chain is not None:  # a tiled chain runs whole at its last op (codegen/stripes.py)
            note, call, function = emit_chain_step(op, chain, ctx, plan)
            functions += [function] if function else []
            runtime |= call.runtime
            steps.append(Step(op, _step_title(op) + note, call.declarations, call.calls))
            continue
        if plan.is_elided(op):
            how = "alias of its input" if registry.op_def(op.kind).traits.alias else "inputs written into their slices"
            steps.append(Step(op, _step_title(op) + f" ({how}, no code)", [], []))
            continue
        call = registry.op_def(op.kind).emit(op, ctx)
        runtime |= call.runtime
        steps.append(Step(op, _step_title(op), call.declarations, call.calls))
    ctx.step_op = None
    for position, op in enumerate(order):  # --npu-async: wait for the NPU after its group's CPU ops
        if isinstance(op.options, NpuSegmentOptions) and op.options.concurrent:
            steps[position + op.options.concurrent].waits.append("mcugen_npu_model_wait()")
            steps[position + op.options.concurrent].npu_waited.append(position)
    for index, tensor in enumerate(graph.outputs):
        if tensor.is_constant:
            steps.append(_constant_output_step(index, tensor, ctx))
            runtime.add("mcugen_copy")
    positions = {id(op): number for number, op in enumerate(order)}
    for step in steps:
        where = positions[id(step.op)] if step.op is not None else len(order)
        step.guard_before, step.guard_after = guard_statements(plan, prefix, step.op, where)
        if step.op is not None:
            step.dumps = [(t.index, ctx.address(t), t.nbytes) for t in step.op.outputs
                          if not t.is_constant and _planned(plan, t)]

    inputs = [_io_entry(t, i, plan, ctx, _FROM_FLOAT) for i, t in enumerate(graph.inputs)]
    outputs = [_io_entry(t, i, plan, ctx, _TO_FLOAT) for i, t in enumerate(graph.outputs)]
    if any(io["converter"] not in (None, "copy") for io in inputs + outputs):
        runtime.add("mcugen_quantize")
    kernel_files = sorted(_stem_files(runtime))
    runtime_files = sorted(set(COMMON_RUNTIME) | set(kernel_files))
    npu: NpuCode | None = npu_code([op for op in order if op.kind is OpKind.ETHOS_U])
    # the variables' initial values are flash too
    weights_bytes = sum(c.nbytes for c in ctx.constants) + state_bytes(graph)
    data: dict[str, Any] = {
        "version": __version__,
        "model": comment(model_label),
        "sha256": graph.sha256,
        "prefix": prefix,
        "PREFIX": prefix.upper(),
        "rounding": rounding.value,
        "target": target.name,
        "external_arena": external_arena,  # --arena external: <prefix>_init_arena binds the arena
        "arena_symbol": pool_symbol(prefix, DEFAULT_POOL_NAME),
        "fast_path": target.fast_path,  # isa_check.c.j2: the core the scratch is planned for
        "core_flags": list(target.core_flags),
        "arena_size": plan.arena_size,
        "pools": pool_entries(plan, prefix),
        "guard": plan.guard,
        "guard_byte": f"0x{GUARD_BYTE:02X}",
        "guard_status": GUARD_STATUS,
        "weights_bytes": weights_bytes,
        "constants": [
            {"name": c.name, "ctype": c.ctype, "count": c.values.size, "note": c.note,
             "body": "" if weights_file else c_array_body(c.values)}  # the blob holds the values
            for c in ctx.constants
        ],
        "steps": steps,
        "functions": functions,
        # -DMCUGEN_PROFILE's table: one entry per op step, in the order invoke runs them.
        "profile_ops": [{"index": s.op.index, "kind": s.op.kind.name, "name": comment(s.op.name, 48)}
                        for s in steps if s.op is not None],
        "inputs": inputs,
        "outputs": outputs,
        "kernel_headers": sorted(f for f in kernel_files if f.endswith(".h") and not kernel_internal(f)),
        "npu": npu,
        "weights_file": weights_file,
        "states": _state_entries(graph, ctx),  # stateful models: <prefix>_reset_state()
        "state_bytes": state_bytes(graph),
    }
    env = environment()
    blobs: dict[str, bytes] = {}
    if weights_file:
        blobs[f"{prefix}_weights.bin"] = _bind_weights_file(data, ctx.constants, steps, functions)
    files = {
        f"{prefix}_model.h": env.get_template("model.h.j2").render(data),
        f"{prefix}_model.c": env.get_template("model.c.j2").render(data),
    }
    for name in runtime_files:
        path = RUNTIME / name
        if not path.exists():
            raise BuildError(f"runtime file {name} is missing from {RUNTIME}")
        files[name] = path.read_text()
    if npu is not None:
        files.update(npu.files(env, data))
        # the glue is model-independent (init takes the CONFIG word), so models share it too
        runtime_files = sorted(set(runtime_files) | set(npu.runtime) | set(GLUE))
    flash_by_op = {op.index: sum(c.nbytes for c in ctx.constants if op.index in ctx.readers.get(c.name, ()))
                   for op in order}
    custom = custom_kernel_files(order)  # the user's kernels (--custom-op), shared like the runtime
    files.update(custom)
    runtime_files = sorted(set(runtime_files) | set(custom))
    return GeneratedCode(files=files, weights_bytes=weights_bytes, runtime=runtime_files, blobs=blobs,
                         structure_sha256=data.get("structure_sha256"), flash_by_op=flash_by_op,
                         npu_config=npu.config if npu is not None else None)


def _bind_weights_file(data: dict[str, Any], constants: list[ConstArray], steps: list[Step],
                       functions: list[str]) -> bytes:
    """--weights-file: lay the constants out in a blob, point the template data at it, and
    return the blob. The structure hash is the SHA-256 of the C rendered with a blank stamp and
    hash, so it covers exactly what the code depends on (weights.py)."""
    names = [c.name for c in constants]
    for step in steps:
        step.declarations = [unbind_static(d, names) for d in step.declarations]
    functions[:] = [unbind_static(f, names) for f in functions]
    layout = blob_layout([c.nbytes for c in constants])
    for entry, offset in zip(data["constants"], layout.offsets):
        entry["offset"] = offset
    data["weights"] = header_data(layout)
    env = environment()
    blank = {**data, "version": "", "model": "", "structure_sha256": ""}
    structure = structure_hash([env.get_template(name).render(blank) for name in ("model.h.j2", "model.c.j2")])
    data["structure_sha256"] = structure.hex()
    data["weights"]["structure_bytes"] = c_bytes(structure)
    return pack_blob([c.values for c in constants], layout, structure)


def _state_entries(graph: Graph, ctx: _Context) -> list[dict[str, Any]]:
    """Template data of each variable: its state's address and its initial value in flash."""
    entries = []
    for number, tensor in enumerate(state_tensors(graph)):
        assert tensor.variable is not None
        values = np.ascontiguousarray(tensor.variable.initial, dtype=tensor.dtype.numpy)
        entries.append({"name": comment(tensor.name), "address": ctx.address(tensor), "bytes": tensor.nbytes,
                        "ctype": tensor.dtype.ctype, "count": values.size, "body": c_array_body(values),
                        "initial": f"{ctx.prefix}_state{number}_initial"})
    return entries


def _stem_files(stems: set[str]) -> list[str]:
    """The .c and .h files of each runtime stem: a stem may be header-only (shared inline
    helpers) or source-only (one instruction set's paths behind another stem's header)."""
    files = [f"{stem}{ext}" for stem in stems for ext in (".c", ".h") if (RUNTIME / f"{stem}{ext}").exists()]
    missing = sorted(stem for stem in stems if not any(f.startswith(f"{stem}.") for f in files))
    if missing:
        raise BuildError(f"runtime files for {', '.join(missing)} are missing from {RUNTIME}")
    return files


@cache
def kernel_internal(header: str) -> bool:
    """Whether runtime `header` carries INTERNAL_MARK: only kernels include it, not model.c."""
    path = RUNTIME / header
    return path.exists() and INTERNAL_MARK in path.read_text()


def render_harness(prefix: str, model_label: str, graph: Graph) -> str:
    """The host test program: reads input cases from a file, writes outputs to another."""
    data = {"version": __version__, "model": comment(model_label), "sha256": graph.sha256,
            "prefix": prefix, "PREFIX": prefix.upper(),
            "npu": any(op.kind is OpKind.ETHOS_U for op in graph.ops)}
    return environment().get_template("harness_main.c.j2").render(data)
