"""The commands that copy an NPU op's weights and scales from flash into its SRAM buffer.

`--npu-weights` (mcugen/npu/weight_buffers.py) gives some weighted ops a buffer in a memory pool;
the lowering (mcugen/npu/lower.py, `CommandStream.weight_buffer`) then points the op's
WEIGHT/SCALE registers at the buffer and names the flash blob to copy. Per Vela's stream
(register_command_stream_generator.py): DMA0 source region 0 (flash) and address, destination
region and address, length, NPU_OP_DMA_START; the kernel that reads the buffer follows an
NPU_OP_DMA_WAIT 0 (no DMA outstanding). A DMA may start while earlier kernels still run, so each
is preceded by NPU_OP_KERNEL_WAIT 0: the planner keeps a buffer off every tensor live from its
DMA's step on, not off those an earlier kernel still reads. The DMA of op i + 1 goes before op i's
kernel where the plan made its buffer live from op i's step on (`prefetch`): it runs beside that
kernel (double buffering), as Vela's weight DMAs do. `addressable`: the rule every plan with weight
buffers or stream slots (weight_stream.py) keeps, a buffer in a region its op's segment can address.
"""

from __future__ import annotations

from ..ir import Op
from ..memory.plan import Plan
from ..records import dataclass
from .registers import Cmd0, Cmd1
from .stream import CommandStream

FLASH_REGION = 0


@dataclass(frozen=True)
class WeightBuffer:
    """Where one op's weights and scales sit in SRAM (its NPU region and address); `prefetch`: the
    buffer is free from the previous op's step on, so the DMA may run beside that op's kernel."""

    region: int
    address: int
    prefetch: bool


def emit_weight_dma(stream: CommandStream, source: tuple[int, int], buffer: WeightBuffer) -> None:
    """Wait for the kernels issued so far, then start copying `source` (flash address, bytes)
    into `buffer`."""
    address, length = source
    stream.cmd0(Cmd0.OP_KERNEL_WAIT, 0)
    stream.cmd0(Cmd0.DMA0_SRC_REGION, FLASH_REGION)
    stream.cmd1(Cmd1.DMA0_SRC, address)
    stream.cmd0(Cmd0.DMA0_DST_REGION, buffer.region)
    stream.cmd1(Cmd1.DMA0_DST, buffer.address)
    stream.cmd1(Cmd1.DMA0_LEN, length)
    stream.cmd0(Cmd0.OP_DMA_START)


def emit_dma_wait(stream: CommandStream) -> None:
    """Hold the next kernel until every DMA started so far has ended."""
    stream.cmd0(Cmd0.OP_DMA_WAIT, 0)


def addressable(plan: Plan) -> bool:
    """Every weight buffer is in a pool that holds a feature map of its op (its segment's NPU
    regions are the pools of its feature maps)."""
    for buffer in plan.buffers:
        op = buffer.weights_of
        if op is not None and buffer.pool not in _pools_of(op, plan):
            return False
    return True


def _pools_of(op: Op, plan: Plan) -> set[str]:
    """The pools of `op`'s planned feature maps."""
    pools = set()
    for tensor in [*op.inputs, *op.outputs]:
        if tensor is not None and not tensor.is_constant:
            try:
                pools.add(plan.buffer_of(tensor).pool)
            except KeyError:  # a tiled chain's intermediate: no buffer of its own
                continue
    return pools


__all__ = ["WeightBuffer", "addressable", "emit_dma_wait", "emit_weight_dma"]
