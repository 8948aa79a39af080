"""`mcugen profile`: run the generated code with its per-op timing hook and tabulate the time.

The generated invoke reads `mcugen_profile_now()` around every op when compiled with
-DMCUGEN_PROFILE (templates/model.c.j2). Two places run it:

- the host: the test harness (templates/harness_main.c.j2) with CLOCK_MONOTONIC, in
  nanoseconds: wall time of this machine, noisy, for relative shares;
- QEMU (`qemu=True`): firmware/common's test application cross-compiled for the target core
  (toolchain/cross.py: the target's QEMU board, Target.qemu: mps2-an386 for cortex-m4,
  mps3-an547 for cortex-m55) and run with `-icount shift=0` (toolchain/qemu.py), where
  the virtual clock advances 1 ns per instruction and SysTick, clocked by the board's core
  clock, counts it (profile_clock.c). Ticks become instructions exactly (to one tick, 40 or
  31.25 instructions); nanoseconds are then instructions at `cpu_mhz` (default: the target's
  Target.clock_mhz), one instruction a cycle, which no real core achieves: the instruction
  count is the measurement, the time a scale.
  The application also checks the outputs byte for byte against expected outputs (from the
  host build unless given), so a profile run is a bit-exactness run too.

`profile_model()` is the API (the HTML report calls it); `profile_lines()` the text tables.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, field
from pathlib import Path
from typing import Any

import numpy as np

from ..driver import BuildOptions, compile_model
from ..errors import BuildError, McugenError, ModelError
from ..records import dataclass
from ..targets import QemuBoard
from ..toolchain.cross import build_firmware, firmware_dir, require_firmware_tools
from ..toolchain.host import build_program, check_inputs, run_model, run_profiled
from ..toolchain.qemu import qemu_board, run_qemu

Progress = Callable[[str], None]
PROFILE_STEPS = {False: 2, True: 3}  # progress() calls of a host and of a QEMU profile

PROFILE_LINE = re.compile(r"^PROFILE (\d+) (-?\d+) (\w+) (\d+) (\d+)$", re.MULTILINE)
TOTAL_LINE = re.compile(r"^PROFILE_TOTAL (\d+) (\d+)$", re.MULTILINE)
# Vela-compiled models: NPU cycles of an ethos-u op from the simulated device's PMU, summed over the runs
NPU_LINE = re.compile(r"^PROFILE_NPU (\d+) (\d+)$", re.MULTILINE)
NPU_KIND = "ETHOS_U"


@dataclass
class OpProfile:
    """One op's share of an inference (per-inference figures: totals divided by the runs)."""

    index: int  # the op's index in the .tflite file
    kind: str
    name: str
    calls: int  # calls per inference
    cpu_ns: float
    instructions: int | None  # QEMU only
    macs: int
    position: int = 0  # execution order
    # A tiled chain (memory/tiling.py) runs its ops stripe by stripe in the step of its last op: that
    # op's entry holds the time of all of them (their indices here) and the others read 0.
    chain: list[int] = field(default_factory=list)
    # An ethos-u op (Vela): its NPU cycles per inference (the device's PMU) and their ns at the
    # target's npu_clock_mhz. Its cpu_ns is 0: the time the host or the emulated core spends
    # simulating the NPU is not time the application's CPU spends (sim_ns has it).
    npu_cycles: int = 0
    npu_ns: float = 0.0
    sim_ns: float = 0.0

    @property
    def total_ns(self) -> float:
        return self.cpu_ns + self.npu_ns

    @property
    def table_kind(self) -> str:
        """The per-kind table's row: the kind, or the tiled chain this op's time covers."""
        return f"TILED_CHAIN({self.chain[0]}..{self.chain[-1]})" if self.chain else self.kind


@dataclass
class KindRow:
    """One row of the per-kind table: OpType | Call | CPU(ns) | NPU(ns) | Total(ns) | Ratio(%)."""

    kind: str
    calls: int
    cpu_ns: float
    npu_ns: float
    total_ns: float
    ratio: float  # percent of the summed op time
    instructions: int | None
    macs: int


@dataclass
class MemoryTable:
    """Core | Command | Internal | Weight | KVCache | Total, in bytes (KiB when printed).

    core: cores used (the CPU; no NPU yet); command: NPU command stream and register bytes
    (0: no NPU yet); internal: the arena, every memory pool summed, less the state; weight:
    constant data in flash; kvcache: persistent state kept across invokes, the variables of a
    stateful model (report.json's state_bytes, planned in the pools; 0: none).
    """

    core: int
    command: int
    internal: int
    weight: int
    kvcache: int

    @property
    def total(self) -> int:
        return self.command + self.internal + self.weight + self.kvcache


@dataclass
class Profile:
    model: str
    target: str
    where: str  # "host" or "qemu mps2-an386" ...
    runs: int
    cpu_mhz: float | None  # QEMU: the clock that turns instructions into ns
    ops: list[OpProfile]
    memory: MemoryTable
    invoke_ns: float  # per inference, measured around invoke
    invoke_instructions: int | None
    report: dict[str, Any] = field(repr=False, default_factory=dict)  # the build's report.json
    npu_clock_mhz: float | None = None  # Vela-compiled models: the clock of the NPU's ns

    @property
    def npu_cycles(self) -> int:
        return sum(op.npu_cycles for op in self.ops)

    def by_kind(self) -> list[KindRow]:
        """Per op kind, in order of total time (largest first); ratios sum to 100."""
        total = sum(op.total_ns for op in self.ops)
        timed_at = self.chain_members()
        rows: dict[str, KindRow] = {}
        for op in self.ops:
            label = timed_at[op.index].table_kind if op.index in timed_at else op.table_kind
            row = rows.setdefault(label, KindRow(label, 0, 0.0, 0.0, 0.0, 0.0,
                                                 0 if op.instructions is not None else None, 0))
            row.calls += op.calls
            row.cpu_ns += op.cpu_ns
            row.npu_ns += op.npu_ns
            row.total_ns += op.total_ns
            row.macs += op.macs
            if row.instructions is not None and op.instructions is not None:
                row.instructions += op.instructions
        for row in rows.values():
            row.ratio = 100.0 * row.total_ns / total if total > 0 else 100.0 / len(rows)
        return sorted(rows.values(), key=lambda r: (-r.total_ns, r.kind))

    def chain_members(self) -> dict[int, OpProfile]:
        """Op index -> the op whose entry holds its time, for every op of a tiled chain (a
        chain's row in by_kind() gathers its ops' calls, time and MACs)."""
        return {index: op for op in self.ops for index in op.chain}

    @property
    def total_instructions(self) -> int | None:
        if any(op.instructions is None for op in self.ops):
            return None
        return sum(op.instructions or 0 for op in self.ops)

    def instructions_report(self) -> dict[str, Any]:
        """report.json's "instructions" (mcugen build --instructions): per inference and per op
        on the emulated core; a tiled chain's ops read 0 but for its last, which holds them all."""
        macs = sum(op.macs for op in self.ops)
        total = self.invoke_instructions
        return {
            "measured": True, "where": self.where, "runs": self.runs,
            "per_inference": total, "per_mac": round(total / macs, 4) if total and macs else None,
            "ops": [{"index": op.index, "kind": op.kind, "instructions": op.instructions, "macs": op.macs,
                     "chain": op.chain} for op in self.ops],
        }

    def to_json(self) -> dict[str, Any]:
        memory = asdict(self.memory) | {"total": self.memory.total}
        return {
            "model": self.model, "target": self.target, "where": self.where, "runs": self.runs,
            "cpu_mhz": self.cpu_mhz, "npu_clock_mhz": self.npu_clock_mhz, "npu_cycles": self.npu_cycles,
            "invoke_ns": self.invoke_ns,
            "invoke_instructions": self.invoke_instructions,
            "total_instructions": self.total_instructions,
            "macs": sum(op.macs for op in self.ops),
            "ops": [asdict(op) for op in self.ops],
            "by_kind": [asdict(row) for row in self.by_kind()],
            "memory": memory,
        }


def memory_table(report: dict[str, Any]) -> MemoryTable:
    """The memory table from a build's report.json."""
    pools = report.get("pools") or []
    state = int(report.get("state_bytes", 0))  # in the pools: counted once, as KVCache
    internal = (sum(int(p["bytes"]) for p in pools) if pools else int(report["arena_bytes"])) - state
    npu = report.get("npu")
    if npu is None:
        return MemoryTable(core=1, command=0, internal=internal, weight=int(report["weights_bytes"]), kvcache=state)
    # A Vela-compiled model: the CPU and the NPU; its payloads are command bytes, not weights.
    command = int(npu["command_stream_bytes"])
    return MemoryTable(core=2, command=command, internal=internal, weight=int(report["weights_bytes"]) - command,
                       kvcache=state)


def _parse_profile(text: str, report: dict[str, Any], runs: int, ticks_to_ns: float,
                   board: QemuBoard | None, npu_mhz: float = 500.0) -> tuple[list[OpProfile], float, int | None]:
    """Per-op records from the PROFILE lines, matched with report.json's ops (same order)."""
    lines = PROFILE_LINE.findall(text)
    total = TOTAL_LINE.search(text)
    if total is None or (not lines and report["ops"]):
        raise BuildError(f"the profiled program printed no PROFILE lines: {' '.join(text.split())[:300]}")
    report_ops = report["ops"]
    by_index = {op["index"]: op for op in report_ops}
    ops = []
    for position, op_index, kind, calls, ticks in lines:
        pos, index = int(position), int(op_index)
        entry = report_ops[pos] if pos < len(report_ops) and report_ops[pos]["index"] == index else by_index[index]
        instructions = board.instructions(int(ticks)) // runs if board else None
        ops.append(OpProfile(index=index, kind=kind, name=entry["name"], calls=int(calls) // runs,
                             cpu_ns=int(ticks) * ticks_to_ns / runs, instructions=instructions,
                             macs=int(entry["macs"]), position=pos))
    npu_cycles = {int(position): int(cycles) for position, cycles in NPU_LINE.findall(text)}
    for op in ops:
        if op.kind == NPU_KIND:
            op.npu_cycles = npu_cycles.get(op.position, 0) // runs
            op.npu_ns = op.npu_cycles * 1000.0 / npu_mhz
            op.sim_ns, op.cpu_ns = op.cpu_ns, 0.0
    for chain in (report.get("tiling") or {}).get("chains", []):
        for op in ops:
            if op.index == chain["ops"][-1]:
                op.chain = list(chain["ops"])
    invokes, invoke_ticks = int(total.group(1)), int(total.group(2))
    invoke_instructions = board.instructions(invoke_ticks) // invokes if board else None
    return ops, invoke_ticks * ticks_to_ns / invokes, invoke_instructions


def random_inputs(report: dict[str, Any], seed: int = 0) -> list[np.ndarray]:
    """One reproducible random case: integers over their whole range, floats around 0."""
    rng = np.random.default_rng(seed)
    cases = []
    for io in report["inputs"]:
        dtype = np.dtype(io["dtype"])
        shape = tuple(io["shape"])
        if dtype.kind == "b":
            cases.append(rng.integers(0, 2, size=shape).astype(bool))
        elif dtype.kind == "f":
            cases.append(rng.standard_normal(size=shape).astype(dtype))
        else:
            info = np.iinfo(dtype)
            cases.append(rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype))
    return cases


def _host_profile(model: Path, options: BuildOptions, runs: int,
                  inputs: Sequence[np.ndarray] | None, progress: Progress) -> Profile:
    program = build_program(model.read_bytes(), options, model.name, profile=True)
    progress("compiled with the timing hook")
    report = json.loads((program.path.parent / "report.json").read_text())
    case = check_inputs(program, inputs if inputs is not None else random_inputs(report), "profile")
    text = run_profiled(program, case, runs)
    progress("ran")
    npu_mhz = options.target.npu_clock_mhz
    ops, invoke_ns, _ = _parse_profile(text, report, runs, 1.0, None, npu_mhz)
    return Profile(model.name, options.target.name, "host", runs, None, ops, memory_table(report),
                   invoke_ns, None, report, npu_mhz if "npu" in report else None)


def _qemu_profile(model: Path, options: BuildOptions, runs: int, cpu_mhz: float | None,
                  inputs: Sequence[np.ndarray] | None, expected: Sequence[np.ndarray] | None,
                  extra_cflags: str, progress: Progress) -> Profile:
    board = qemu_board(options.target)
    require_firmware_tools()
    mhz = cpu_mhz if cpu_mhz is not None else options.target.clock_mhz
    assert mhz is not None  # every target with a QEMU board has a clock
    if inputs is None:
        inputs = random_inputs(compile_model(model, options).report())
    if expected is None:  # the host build of the same C, bit-exact with TFLite by contract
        expected = run_model(model, [inputs], options)[0]
    progress("expected outputs from the host build")
    case = {f"input{i}": np.asarray(v) for i, v in enumerate(inputs)}
    case |= {f"output{i}": np.asarray(v) for i, v in enumerate(expected)}
    with tempfile.TemporaryDirectory(prefix="mcugen-qemu-") as tmp:
        build = Path(tmp)
        elf = build_firmware(model, options, case, build, f"-DMCUGEN_PROFILE -DAPP_PROFILE_RUNS={runs} {extra_cflags}".strip())
        progress("firmware built")
        report = json.loads((firmware_dir(build, options.target) / "gen" / "report.json").read_text())
        text = run_qemu(elf, options.target)
        progress("ran on QEMU")
    ns_per_tick = 1e9 / board.systick_hz * 1000.0 / mhz  # ticks -> instructions -> ns at mhz
    npu_mhz = options.target.npu_clock_mhz
    ops, invoke_ns, invoke_instructions = _parse_profile(text, report, runs, ns_per_tick, board, npu_mhz)
    return Profile(model.name, options.target.name, f"qemu {board.machine}", runs, mhz, ops,
                   memory_table(report), invoke_ns, invoke_instructions, report, npu_mhz if "npu" in report else None)


def profile_model(model: Path, options: BuildOptions, qemu: bool = False, runs: int = 1, *,
                  cpu_mhz: float | None = None, inputs: Sequence[np.ndarray] | None = None,
                  expected: Sequence[np.ndarray] | None = None, extra_cflags: str = "",
                  progress: Progress | None = None) -> Profile:
    """Build and run `model` with the per-op timing hook; `runs` inferences, averaged.

    inputs: one case (default: random, seed 0). expected (QEMU only): the outputs the firmware
    must reproduce byte for byte (default: the host build's outputs for the same inputs).
    cpu_mhz (QEMU only): the clock that turns instructions into ns (None: Target.clock_mhz).
    extra_cflags (QEMU only): more compile flags, e.g. -DMCUGEN_PORTABLE for the portable C.
    progress: called after each of the PROFILE_STEPS[qemu] steps with what finished.
    """
    model = Path(model)
    if not model.is_file():
        raise ModelError(f"{model}: no such file")
    if runs < 1:
        raise McugenError(f"--runs must be at least 1, not {runs}")
    advance = progress or (lambda _what: None)
    if qemu:
        return _qemu_profile(model, options, runs, cpu_mhz, inputs, expected, extra_cflags, advance)
    return _host_profile(model, options, runs, inputs, advance)


# ---- text tables ---------------------------------------------------------------------------------


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return [line(header), "-+-".join("-" * w for w in widths), *(line(r) for r in rows)]


def _ns(value: float) -> str:
    return f"{value:,.0f}"


def profile_lines(profile: Profile, per_op: bool = False) -> list[str]:
    """The time table (per kind, or per op) and the memory table, as printed by the CLI."""
    with_insns = profile.total_instructions is not None
    if profile.cpu_mhz is not None:
        clock = (f"instructions counted by QEMU (-icount shift=0); ns = instructions at {profile.cpu_mhz:g} MHz, "
                 "one instruction a cycle")
    else:
        clock = "ns of host wall time (CLOCK_MONOTONIC)"
    if profile.npu_clock_mhz is not None:
        clock += (f"; NPU(ns) = the simulated Ethos-U's PMU cycles at an NPU clock of {profile.npu_clock_mhz:g} MHz "
                  f"({profile.npu_cycles:,} cycles; the time spent simulating it is not counted as CPU time)")
    lines = [f"{profile.model} on {profile.where} ({profile.target}), {profile.runs} run(s) averaged; {clock}"]
    total_ns = sum(op.total_ns for op in profile.ops)
    header = ["Op" if per_op else "OpType", "Call", "CPU(ns)", "NPU(ns)", "Total(ns)", "Ratio(%)"]
    header += ["Instructions", "Instr/MAC"] if with_insns else []
    rows: list[list[str]] = []
    if per_op:
        timed_at = profile.chain_members()
        macs_of = {op.index: op.macs for op in profile.ops}
        for op in profile.ops:
            ratio = 100.0 * op.total_ns / total_ns if total_ns > 0 else 0.0
            label = f"{op.index} {op.kind}"
            if op.chain:
                label += f" (tiled chain {op.chain[0]}..{op.chain[-1]})"
            elif op.index in timed_at:
                label += f" (timed in op {timed_at[op.index].index})"
            row = [label, str(op.calls), _ns(op.cpu_ns), _ns(op.npu_ns), _ns(op.total_ns), f"{ratio:.2f}"]
            if with_insns:
                insns = op.instructions or 0
                # a chain's last op holds the instructions of all its ops: per MAC of them all
                op_macs = sum(macs_of[i] for i in op.chain) if op.chain else op.macs
                row += [f"{insns:,}", f"{insns / op_macs:.2f}" if op_macs else "-"]
            rows.append(row)
    else:
        for kind in profile.by_kind():
            row = [kind.kind, str(kind.calls), _ns(kind.cpu_ns), _ns(kind.npu_ns), _ns(kind.total_ns), f"{kind.ratio:.2f}"]
            if with_insns:
                insns = kind.instructions or 0
                row += [f"{insns:,}", f"{insns / kind.macs:.2f}" if kind.macs else "-"]
            rows.append(row)
    macs = sum(op.macs for op in profile.ops)
    cpu_ns = sum(op.cpu_ns for op in profile.ops)
    npu_ns = sum(op.npu_ns for op in profile.ops)
    total_row = ["Total", str(sum(op.calls for op in profile.ops)), _ns(cpu_ns), _ns(npu_ns), _ns(total_ns), "100.00"]
    if with_insns:
        insns = profile.total_instructions or 0
        total_row += [f"{insns:,}", f"{insns / macs:.2f}" if macs else "-"]
    rows.append(total_row)
    lines += _table(header, rows)
    invoke = f"invoke: {_ns(profile.invoke_ns)} ns"
    if profile.invoke_instructions is not None:
        invoke += f", {profile.invoke_instructions:,} instructions"
    lines += [invoke + f" per inference; {macs:,} MACs"]
    if profile.npu_clock_mhz is not None and total_ns > 0:
        sim_ns = sum(op.sim_ns for op in profile.ops)
        lines += [(f"CPU {100.0 * cpu_ns / total_ns:.2f}% / NPU {100.0 * npu_ns / total_ns:.2f}% of the op time; "
                   f"invoke includes {_ns(sim_ns)} ns spent simulating the NPU")]
    lines += [""]
    memory = profile.memory

    def kib(value: int) -> str:
        return f"{value / 1024:.2f}"

    lines += _table(["Core", "Command(KiB)", "Internal(KiB)", "Weight(KiB)", "KVCache(KiB)", "Total(KiB)"],
                    [[str(memory.core), kib(memory.command), kib(memory.internal), kib(memory.weight),
                      kib(memory.kvcache), kib(memory.total)]])
    return lines
