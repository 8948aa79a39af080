"""What one op kind is to mcugen: the definition each family registers (mcugen/ops/<family>/).

An `OpDef` gathers every fact about an op kind that the pipeline needs, so that adding a kind
is one definition in its family and nothing else in the stages:

- how it is read: the TFLite builtin code and the reader of its options table;
- what its inputs are: which one is the weights, which the bias (`InputRoles`);
- what the memory planner and the tiling may do with it (`Traits`);
- whether mcugen supports it: `rules`, small functions whose docstrings are the rules users
  read, and `prepare`, TFLite's Prepare step, which computes the build-time parameters or
  reports a `RuleViolation` of one of its `PrepareRule`s (every refusal is a rule that
  `mcugen inspect` and docs/supported_ops.md show);
- how it runs: the C emitter, its scratch bytes per target, the numpy reference kernel;
- what it costs: its multiply-accumulate count;
- when it does nothing (`identity`), so that the passes can drop it.

This module depends on the IR only; the stages read definitions through mcugen.ops.registry.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import field
from functools import cache
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from ..errors import UnsupportedError
from ..ir import Op, OpKind, OpOptions
from ..quantization import Rounding
from ..records import dataclass
from ..targets import HOST, Target

if TYPE_CHECKING:
    from .emitting import EmitContext, KernelCall


@dataclass(frozen=True)
class Setting:
    """What a support rule or prepare may depend on besides the op itself."""

    rounding: Rounding = Rounding.TFLM
    target: Target = HOST


DEFAULT_SETTING = Setting()  # TFLM rounding on the host


def setting_of(ctx: EmitContext) -> Setting:
    """The build's Setting as an emitter sees it, for the family's prepare functions."""
    return Setting(rounding=ctx.rounding, target=ctx.target)


@dataclass(frozen=True)
class InputRoles:
    """Positions of the inputs with a role of their own (None: the kind has no such input).

    `weights_channel_axis` is the axis of the weights along which per-channel quantization
    runs (the output channels)."""

    weights: int | None = None
    bias: int | None = None
    weights_channel_axis: int | None = None


@dataclass(frozen=True)
class Traits:
    """What the memory planner and the tiling may do with an op of the kind.

    alias:    the output is the input's bytes under another shape: one buffer, no code.
    in_place: the C kernel may write its output over an input of the same shape and dtype that
              dies at the op. The kernel must guarantee it: output element k is written after
              every read of that input's element k, and no later iteration reads element k.
    window:   a sliding-window op over NHWC rows (convolution, pooling): tiling may run it in
              stripes of output rows.
    """

    alias: bool = False
    in_place: bool = False
    window: bool = False


@dataclass(frozen=True)
class PrepareRule:
    """A rule that only prepare can check, because it needs the computed parameters (a
    multiplier's shift, a table's range). `text` is the rule as users read it."""

    text: str

    def refuse(self, op: Op, value: str) -> NoReturn:
        raise RuleViolation(self, op, value)

    def require(self, holds: bool, op: Op, value: Callable[[], str] | str) -> None:
        """Refuse with `value` (or what calling it returns) unless `holds`."""
        if not holds:
            self.refuse(op, value() if callable(value) else value)


class RuleViolation(UnsupportedError):
    """Prepare found that the op breaks one of its kind's PrepareRules."""

    def __init__(self, rule: PrepareRule, op: Op, value: str) -> None:
        self.rule, self.op, self.value = rule, op, value
        super().__init__(f"{op.where()}: {rule.text} Got: {value}")


# A rule returns None when the op satisfies it, else a short description of the offending
# value; its docstring is the rule. It takes the op, or the op and the build's Setting.
Rule = Callable[..., str | None]
OptionsReader = Callable[[Any, str], OpOptions]  # (flatbuffer Operator, where) -> options
Prepare = Callable[[Op, Setting], Any]
Emitter = Callable[[Op, "EmitContext"], "KernelCall"]
ScratchBytes = Callable[[Op], int]  # bytes of scratch the portable C kernel needs
FastPathScratch = Callable[[Op, Target], int]  # (op, target) -> extra bytes of the target's fast path
ReferenceKernel = Callable[[Op, list[np.ndarray | None], Rounding], list[np.ndarray]]
MacCount = Callable[[Op], int]
Identity = Callable[[Op], bool]


@dataclass(frozen=True)
class OpDef:
    """Everything mcugen knows about one op kind; see the module docstring."""

    kind: OpKind
    builtin: int  # TFLite BuiltinOperator code (CUSTOM for a custom op)
    read_options: OptionsReader
    rules: tuple[Rule, ...]
    prepare: Prepare
    emit: Emitter
    scratch: ScratchBytes
    fast_path_scratch: FastPathScratch
    reference: ReferenceKernel
    macs: MacCount
    roles: InputRoles = InputRoles()
    traits: Traits = Traits()
    prepare_rules: tuple[PrepareRule, ...] = ()
    identity: Identity | None = None  # when the op's output equals its input (passes/identity)
    # The emitter of one stripe of a window op (tiling): (op, ctx, pad_top) -> KernelCall.
    emit_rows: Callable[..., KernelCall] | None = None
    notes: tuple[str, ...] = field(default=())  # extra lines for docs/supported_ops.md
    # Conditions that do not refuse the op but that users should know about (the arithmetic
    # wraps as TFLite's does, say): rules in form, printed by `mcugen inspect` as notes.
    notices: tuple[Rule, ...] = ()
    custom_code: str | None = None  # a CUSTOM op's custom_code (Vela's "ethos-u"); None: a builtin
    # Rules that the outputs' shapes follow from the inputs' shapes and the options. The
    # validation stage (frontend/validate.py) runs them on every op as soon as the model is read,
    # before any pass reads a shape, so each must hold up on any op: one whose inputs it cannot
    # judge (a missing input, another rank) it leaves to the kind's plain rules (None).
    shape_rules: tuple[Rule, ...] = ()


@cache
def takes_setting(rule: Rule) -> bool:
    """Whether a rule reads the build's Setting (a second parameter) besides the op."""
    return len(inspect.signature(rule).parameters) >= 2


def broken_rules(definition: OpDef, op: Op, setting: Setting) -> list[tuple[str, str]]:
    """(rule text, offending value) for every rule the op breaks. Prepare runs only when the
    plain rules hold: its rules assume them (a weight's dtype, a tensor's rank)."""
    broken = []
    for rule in definition.rules:
        value = rule(op, setting) if takes_setting(rule) else rule(op)
        if value is not None:
            broken.append(((rule.__doc__ or rule.__name__).strip(), value))
            if getattr(rule, "gate", False):  # the rules after a gate (input_arity) assume it holds
                break
    if broken:
        return broken
    try:
        definition.prepare(op, setting)
    except RuleViolation as violation:
        broken.append((violation.rule.text, violation.value))
    return broken


def no_scratch(op: Op) -> int:
    """Kinds whose portable kernels need no scratch."""
    return 0


def no_fast_path_scratch(op: Op, target: Target) -> int:
    """Kinds without a fast path that asks for scratch of its own."""
    return 0


def no_macs(op: Op) -> int:
    """Kinds that multiply nothing by weights (TFLite-based tools count them 0)."""
    return 0


def rule_texts(definition: OpDef) -> Sequence[str]:
    """Every rule of a kind, as docs/supported_ops.md lists them."""
    shown = [*definition.rules, *(rule for rule in definition.shape_rules if rule not in definition.rules)]
    texts = [rule.__doc__.strip() for rule in shown if rule.__doc__]
    notices = [f"Note: {rule.__doc__.strip()}" for rule in definition.notices if rule.__doc__]
    return texts + [rule.text for rule in definition.prepare_rules] + list(definition.notes) + notices


def raised_notices(definition: OpDef, op: Op, setting: Setting) -> list[tuple[str, str]]:
    """(notice text, value) for every notice that applies to the op."""
    raised = []
    for notice in definition.notices:
        value = notice(op, setting) if takes_setting(notice) else notice(op)
        if value is not None:
            raised.append(((notice.__doc__ or notice.__name__).strip(), value))
    return raised
