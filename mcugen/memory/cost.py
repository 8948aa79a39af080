"""Estimated CPU instructions of a plan: what `--optimize` weighs against RAM.

A plan runs every op once, except that a tiled chain (tiling.py) calls each of its ops once per
stripe on a few rows, and moves the halo rows a slot keeps to the slot's start. So the estimate
is a sum over kernel calls of

    call + channel * output channels + mac * MACs of the call + output * output elements

with one set of four coefficients per kernel class (CONV_2D 1x1 and others, DEPTHWISE_CONV_2D,
the pools, ADD, FULLY_CONNECTED, every other op) and target, plus `moved_byte` per byte of kept rows moved and `stripe` per
stripe. A call on rows [r0, r1) of an op with H output rows does (r1 - r0) / H of its MACs and
output elements; recomputed halo rows count as the rows they are. `call` and `channel` are what
a kernel pays per call whatever its size (argument checks, per-channel requantization set-up):
what stripes multiply. Ops on the NPU cost the CPU nothing here (their striping is chosen by
mcugen/npu with its own cycle model).

Calibration
-----------
`python3 benchmarks/firmware/calibrate_cost.py` fits the coefficients (non-negative least
squares, each equation divided by its measured count) to `mcugen profile --qemu` instruction
counts (-O2, -icount shift=0, exact to one SysTick tick) of kws_dscnn, ic_resnet8,
vww_mobilenet_v1_025, ad_autoencoder and the fixtures model_mobilenet_v2 and
model_se_hard_swish, each built untiled and tiled (RAM-first), on cortex-m4 (mps2-an386) and
cortex-m55 (mps3-an547): one equation per untiled op, and one per tiled chain for its
instructions minus those of its ops untiled (the stripes' overhead). The fitted numbers and
the fit's error are in benchmarks/firmware/cost_calibration.md (run of CALIBRATED), refitted
after the M4 and M55 kernel work of that day. Against the measured counts of those 24 builds,
whole invokes are estimated within -4.9 % .. +6.8 % on cortex-m4 and -11.4 % .. +3.9 % on
cortex-m55; the stripes' overhead of a tiled chain is fitted loosely on cortex-m4 (-57 % for
vww's chain of 50 stripes .. +16 %) and within -10 % .. +8 % on cortex-m55.
`portable_mac` (what an op's portable C costs beyond its fast path, per MAC, for the plans that
leave its fast-path scratch out: kernel_variants.py) is not fitted: it is the difference of
`mcugen profile --qemu --per-op` counts of --optimize ram and speed builds, per MAC: on
cortex-m4, CONV_2D 7.3 (model_audio_conv1d's three) and 7.2 (kws_dscnn's pointwise, with
its depthwise at 14; re-derived from the whole ram/speed count differences after the DSP kernel
work of 2026-12-02), DEPTHWISE_CONV_2D 14.3
(depthwise_same_relu6), FULLY_CONNECTED 7.7-7.9 (ad_autoencoder's first and last); on
cortex-m55, CONV_2D 12.6 on the small conv2d_same_relu, taken as 10 (its depthwise, not measured,
as its conv; its FULLY_CONNECTED fast path needs no scratch).
Coefficients of collinear features can move between fits (3x3 depthwise MACs are 9 times its
outputs): they are a ranking model, not a breakdown of where instructions go.
cortex-m7 takes the cortex-m4 figures (the same DSP fast paths); the host, which runs the
portable C and has no instruction count, takes them too: its estimates only rank plans.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import field

from ..ir import Op, OpKind
from ..ops.registry import op_macs
from ..records import dataclass
from ..targets import Target
from .tiling import Chain, Tiling, row_bytes

CALIBRATED = "2026-12-02"

KERNEL_CLASSES = ("conv_1x1", "conv", "depthwise", "pool", "add", "fully_connected", "other")
_CLASS_OF = {OpKind.CONV_2D: "conv", OpKind.DEPTHWISE_CONV_2D: "depthwise", OpKind.AVERAGE_POOL_2D: "pool",
             OpKind.MAX_POOL_2D: "pool", OpKind.ADD: "add", OpKind.FULLY_CONNECTED: "fully_connected"}


def kernel_class(op: Op) -> str:
    """The op's row of coefficients: pointwise convolutions run another loop than the others."""
    found = _CLASS_OF.get(op.kind, "other")
    weights = op.inputs[1] if found == "conv" and len(op.inputs) > 1 else None
    if weights is not None and len(weights.shape) == 4 and weights.shape[1:3] == (1, 1):
        return "conv_1x1"
    return found


@dataclass(frozen=True)
class KernelCost:
    """Instructions of one kernel call: per call, per output channel, per MAC, per output element."""

    call: float
    channel: float
    mac: float
    output: float

    def of(self, features: Sequence[float]) -> float:
        calls, channels, macs, outputs = features
        return self.call * calls + self.channel * channels + self.mac * macs + self.output * outputs


@dataclass(frozen=True)
class CostModel:
    """The coefficients of one target (the module docstring)."""

    kernels: dict[str, KernelCost]
    moved_byte: float  # memmove of the rows a stripe slot keeps
    stripe: float  # the stripe loop itself
    # per kernel class, the instructions per MAC an op's portable C costs beyond its fast path,
    # when the plan leaves its fast-path scratch out (kernel_variants.py)
    portable_mac: dict[str, float] = field(default_factory=dict)

    def portable_penalty(self, op: Op) -> float:
        """What running `op`'s portable C instead of its fast path adds to an invoke."""
        if op.backend == "npu":
            return 0.0
        return self.portable_mac.get(kernel_class(op), 0.0) * op_macs(op)


# What add_call reads of an op: (kernel class, output rows, output channels, MACs, output
# elements); the tiling search asks for the same ops' terms for every candidate chain.
OpTerms = tuple[str, int, int, int, int]


def op_terms(op: Op) -> OpTerms:
    out = op.outputs[0] if op.outputs else None
    height = out.shape[1] if out is not None and len(out.shape) == 4 else 1
    channels = out.shape[-1] if out is not None and out.shape else 1
    return kernel_class(op), height, channels, op_macs(op), out.num_elements if out is not None else 0


# Features of the calls of a plan, per kernel class: [calls, channels, MACs, output elements],
# plus bytes moved and stripes. Linear in the coefficients, so the calibration fits on them.
@dataclass
class Features:
    kernels: dict[str, list[float]]
    moved_bytes: float = 0.0
    stripes: float = 0.0

    @staticmethod
    def empty() -> Features:
        return Features({k: [0.0, 0.0, 0.0, 0.0] for k in KERNEL_CLASSES})

    def add_call(self, op: Op, rows: int | None = None, calls: int = 1,
                 terms: OpTerms | None = None) -> None:
        """`calls` calls of `op` on `rows` of its output rows in all (None: one whole op);
        `terms`: op_terms(op), if known."""
        if op.backend == "npu":
            return
        kind, height, channels, macs, elements = terms or op_terms(op)
        share = 1.0 if rows is None else rows / height
        row = self.kernels[kind]
        row[0] += calls
        row[1] += calls * channels
        row[2] += macs * share
        row[3] += elements * share

    def cost(self, model: CostModel) -> float:
        return (sum(model.kernels[k].of(f) for k, f in self.kernels.items())
                + model.moved_byte * self.moved_bytes + model.stripe * self.stripes)


def chain_features(chain: Chain, into: Features | None = None,
                   terms: Mapping[int, OpTerms] | None = None) -> Features:
    """The calls of a tiled chain, stripe by stripe, and the kept rows it moves; `terms`:
    id(op) -> op_terms(op) of its ops, if known."""
    found = into if into is not None else Features.empty()
    if chain.ops[0].backend == "npu":
        return found
    calls = [0] * len(chain.ops)
    rows = [0] * len(chain.ops)
    stripes = chain.stripes
    for j, column in enumerate(zip(*[s.calls for s in stripes])):  # op j's calls, stripe by stripe
        ran = [call for call in column if call is not None]
        calls[j] = len(ran)
        rows[j] = sum([call.out_stop - call.out_start for call in ran])
    for j, column in enumerate(zip(*[s.kept for s in stripes])):  # slot j's kept rows (ints: exact sums)
        # rows already at the slot's start stay
        moved = sum([kept[1] for kept in column if kept is not None and kept[0] > 0])
        if moved:
            found.moved_bytes += moved * row_bytes(chain.ops[j].outputs[0])
    found.stripes += len(stripes)
    for op, n, made in zip(chain.ops, calls, rows):  # the features are linear in the calls: summed per op
        found.add_call(op, made, n, terms.get(id(op)) if terms is not None else None)
    return found


def plan_features(order: Iterable[Op], tiling: Tiling | None) -> Features:
    """Every call of the ops of `order`: one per op, or one per stripe of a tiled chain's op."""
    found = Features.empty()
    done: set[int] = set()
    for op in order:
        chain = tiling.chain_of(op) if tiling is not None else None
        if chain is None:
            found.add_call(op)
        elif id(chain) not in done:
            done.add(id(chain))
            chain_features(chain, found)
    return found


# --- calibrated coefficients (benchmarks/firmware/cost_calibration.md) --------------------------

_M4 = CostModel(
    kernels={
        "conv_1x1": KernelCost(call=0.0, channel=0.0, mac=0.9181, output=13.8381),
        "conv": KernelCost(call=675.908, channel=33.1956, mac=0.8559, output=42.2925),
        "depthwise": KernelCost(call=0.0, channel=0.0, mac=3.879, output=0.0),
        "pool": KernelCost(call=938.3607, channel=0.0, mac=1.3627, output=0.0),
        "add": KernelCost(call=2112.8679, channel=0.0, mac=0.0, output=13.4707),
        "fully_connected": KernelCost(call=772.9036, channel=21.0687, mac=0.9337, output=0.0),
        "other": KernelCost(call=0.0, channel=0.0, mac=2.7059, output=74.131),
    },
    moved_byte=0.2778, stripe=0.0,
    portable_mac={"conv_1x1": 7.2, "conv": 7.3, "depthwise": 14.0, "fully_connected": 7.8})
_M55 = CostModel(
    kernels={
        "conv_1x1": KernelCost(call=225.6743, channel=0.0, mac=0.1032, output=8.9012),
        "conv": KernelCost(call=468.0499, channel=0.7687, mac=0.1111, output=14.8118),
        "depthwise": KernelCost(call=775.4779, channel=1.8945, mac=1.3296, output=0.0),
        "pool": KernelCost(call=1168.2951, channel=0.0, mac=0.5922, output=0.0),
        "add": KernelCost(call=574.1734, channel=0.0, mac=0.0, output=3.9853),
        "fully_connected": KernelCost(call=515.8229, channel=16.0297, mac=0.1199, output=0.0),
        "other": KernelCost(call=520.5098, channel=0.0, mac=1.7006, output=70.8108),
    },
    moved_byte=0.0, stripe=0.0,
    portable_mac={"conv_1x1": 10.0, "conv": 10.0, "depthwise": 10.0, "fully_connected": 0.0})

_BY_TARGET = {"cortex-m55": _M55}


def cost_model(target: Target | None) -> CostModel:
    """The coefficients for `target` (M4's for the cores and the host not calibrated apart)."""
    return _BY_TARGET.get(target.name, _M4) if target is not None else _M4


def estimate(order: Sequence[Op], tiling: Tiling | None, model: CostModel,
             portable: frozenset[int] = frozenset()) -> int:
    """Estimated instructions of one invoke of `order` run with `tiling` (None: whole ops), the
    ops in `portable` running their portable C."""
    extra = sum(model.portable_penalty(op) for op in order if op.index in portable)
    return round(plan_features(order, tiling).cost(model) + extra)


Estimator = Callable[..., int]  # (tiling, portable op indices = frozenset()) -> instructions


def estimator(order: Sequence[Op], model: CostModel) -> Estimator:
    """estimate(order, tiling, model) for many tilings of one order (the tiling search asks per
    candidate): the whole ops once, then per chain its stripes' calls minus its ops' whole calls;
    plus, for the ops a plan runs portable (kernel_variants.py), their portable penalty."""
    whole: dict[int, float] = {}
    terms = {id(op): op_terms(op) for op in order if op.backend != "npu"}  # add_call skips NPU ops
    for op in order:
        one = Features.empty()
        one.add_call(op, terms=terms.get(id(op)))
        whole[id(op)] = one.cost(model)
    base = sum(whole.values())
    extras: dict[int, tuple[Chain, float]] = {}  # id(chain) -> (it, its extra): asked per candidate

    def extra_of(chain: Chain) -> float:
        hit = extras.get(id(chain))
        if hit is None or hit[0] is not chain:
            hit = chain, chain_features(chain, terms=terms).cost(model) - sum(whole[id(op)] for op in chain.ops)
            extras[id(chain)] = hit
        return hit[1]

    def of(tiling: Tiling | None, portable: frozenset[int] = frozenset()) -> int:
        extra = 0.0
        for chain in tiling.chains if tiling is not None else []:
            extra += extra_of(chain)
        extra += sum(model.portable_penalty(op) for op in order if op.index in portable)
        return round(base + extra)

    return of
