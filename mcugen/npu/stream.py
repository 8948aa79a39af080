"""A command stream being written, and the 'COP1' driver payload that carries it.

The payload is Arm's ethos-u-core-driver format, little-endian 32-bit words: the magic 'COP1',
a CONFIG action (tag 1, then the NPU's CONFIG word and the ID word of the architecture the
stream is written for; the driver refuses another product, MAC count, SHRAM size, architecture
major or a newer minor), NOPs (tag 5) so that the stream starts 16-byte aligned, and a
COMMAND_STREAM action (tag 2, length in words: bits 23:16 in the tag's bits 15:8, bits 15:0 in
31:16) followed by the stream. mcugen/ops/npu/payload.read_payload reads it back.
"""

from __future__ import annotations

import struct

from ..ops.npu.payload import ACTION_COMMAND_STREAM, ACTION_CONFIG, ACTION_NOP, MAGIC
from .config import NpuConfig
from .registers import CMD1_FLAG, Cmd0, Cmd1, cmd0_word, cmd1_words

# The ID word Vela 5.2 writes: arch 1.0.6 (31:28, 27:20, 19:16) and the id register's reset
# fields (product major 6 in 15:12, version status 1 in 3:0).
ARCH_MAJOR, ARCH_MINOR, ARCH_PATCH = 1, 0, 6
ID_WORD = ARCH_MAJOR << 28 | ARCH_MINOR << 20 | ARCH_PATCH << 16 | 6 << 12 | 1
CONFIG_TAG_PARAM = 1 << 4  # the CONFIG action's tag parameter as Vela writes it (patch 1, release 0)
MAX_STREAM_WORDS = (1 << 24) - 1
FIRST_PARAMETER_CMD0 = 0x100  # cmd0 opcodes below are operations (run, wait, stop), above register writes


class CommandStream:
    """Words of one command stream, appended in order. `lut_slot`: while set, the operation
    being lowered applies that SHRAM LUT slot in its output stage (a LUT op fused into it).
    `pad_top`: while set, the operation being lowered is one stripe of its op (mcugen/npu/stripes.py):
    its IFM is the stripe's input rows, with this many padding rows above them. `scratch`: where
    the scratch the planner gave the op being lowered starts (a SOFTMAX's intermediates).
    `weight_buffer`: while set, (region, address) of the SRAM buffer the operation being lowered
    reads its weights and scales from (--npu-weights); its lowering then sets `weight_copy`:
    (flash address, bytes) of the one blob (weights, then scales) a DMA copies there.
    `lut_reserved`: while set, the operation being lowered leaves the LUT's SHRAM banks alone (a
    table's DMA into them may run beside it, mcugen/npu/lut_prefetch.py); `table_started`: the
    table whose DMA into LUT slot 0 started earlier and that the next table load only waits for.

    The NPU keeps its registers from one operation to the next, so a register write that repeats
    the value the stream last wrote there is left out (as Vela's emitter does): lowerings write
    every register an operation reads, the stream keeps the ones that change."""

    def __init__(self) -> None:
        self.words: list[int] = []
        self.lut_slot: int | None = None
        self.pad_top: int | None = None
        self.scratch: tuple[int, int] | None = None  # (region, byte address)
        self.weight_buffer: tuple[int, int] | None = None
        self.weight_copy: tuple[int, int] | None = None
        self.lut_reserved = False
        self.table_started: bytes | None = None
        self.ofm_slice: tuple[int, int] | None = None  # while set: only these OFM channels (weight_stream.py)
        self._registers: dict[int, tuple[int, ...]] = {}  # command word's opcode bits -> the words last written

    @property
    def lut_busy(self) -> bool:
        """Whether the operation being lowered must leave the LUT's banks out of its block."""
        return self.lut_slot is not None or self.lut_reserved

    def cmd0(self, opcode: Cmd0, param: int = 0) -> None:
        word = cmd0_word(opcode, param)
        if opcode < FIRST_PARAMETER_CMD0 or self._changes(opcode, (word,)):
            self.words.append(word)

    def cmd1(self, opcode: Cmd1, data: int, param: int = 0) -> None:
        words = cmd1_words(opcode, data, param)
        if self._changes(CMD1_FLAG | opcode, words):
            self.words.extend(words)

    def _changes(self, key: int, words: tuple[int, ...]) -> bool:
        """Whether writing `words` changes the register (and remember them)."""
        if self._registers.get(key) == words:
            return False
        self._registers[key] = words
        return True

    def stop(self) -> None:
        """NPU_OP_STOP with the IRQ mask 0xFFFF, as the stream's last command."""
        self.cmd0(Cmd0.OP_STOP, 0xFFFF)

    @property
    def nbytes(self) -> int:
        return 4 * len(self.words)


def write_payload(stream: CommandStream, config: NpuConfig) -> bytes:
    """The 'COP1' payload of `stream` for the NPU `config` (the stream must end with STOP)."""
    if len(stream.words) > MAX_STREAM_WORDS:
        raise ValueError(f"command stream of {len(stream.words)} words exceeds the driver's 2^24 - 1")
    words = [MAGIC, ACTION_CONFIG | CONFIG_TAG_PARAM << 16, config.config_word, ID_WORD]
    while (len(words) + 1) % 4:
        words.append(ACTION_NOP)
    length = len(stream.words)
    words.append(ACTION_COMMAND_STREAM | ((length >> 16) & 0xFF) << 8 | (length & 0xFFFF) << 16)
    words.extend(stream.words)
    return struct.pack(f"<{len(words)}I", *words)
