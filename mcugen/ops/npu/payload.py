"""The driver payload of Vela's `ethos-u` op: what the build reads from it.

The payload is the 'COP1' format of Arm's ethos-u-core-driver, little-endian 32-bit words:
the magic 'COP1', then driver actions, each a word whose low byte is its kind: CONFIG (1) is
followed by the NPU's CONFIG and ID words, COMMAND_STREAM (2) carries its length in words in
bits 15:8 (high) and 31:16 (low) and is followed by the stream, NOP (5) stands alone. The
driver checks the same at invoke (templates/runtime/npu/mcugen_npu_driver.c); the build reads
the CONFIG word to initialise the simulated device and to name the configuration, and refuses a
payload the driver would refuse before the NPU runs.
"""

from __future__ import annotations

import numpy as np

from ...records import dataclass

MAGIC = 0x31504F43  # 'COP1'
ACTION_CONFIG = 1
ACTION_COMMAND_STREAM = 2
ACTION_NOP = 5
PRODUCT_U55 = 0


@dataclass(frozen=True)
class Payload:
    """The words a build needs from a payload, and the command stream's place in it."""

    config: int  # the NPU CONFIG word Vela wrote: MACs log2 3:0, stream version 7:4, SHRAM KiB 15:8, product 31:28
    id_word: int
    stream_offset: int  # bytes from the payload's start
    stream_bytes: int

    @property
    def macs_per_cycle(self) -> int:
        return 1 << (self.config & 0xF)

    @property
    def shram_kb(self) -> int:
        return (self.config >> 8) & 0xFF

    @property
    def product(self) -> int:
        return (self.config >> 28) & 0xF

    @property
    def config_name(self) -> str:
        """Vela's --accelerator-config name, e.g. "ethos-u55-128"."""
        product = "ethos-u55" if self.product == PRODUCT_U55 else f"ethos-u product {self.product}"
        return f"{product}-{self.macs_per_cycle}"


class PayloadError(ValueError):
    """What is wrong with a payload, in words for a one-line message."""


def read_payload(data: bytes) -> Payload:
    """The CONFIG word and the command stream of a 'COP1' payload; PayloadError if the driver
    would refuse it before the NPU runs (the magic, an unknown action, a truncated action, no
    CONFIG or no command stream)."""
    if len(data) < 4 or len(data) % 4:
        raise PayloadError(f"{len(data)} bytes, not whole 32-bit words")
    words = np.frombuffer(data, dtype="<u4")
    if int(words[0]) != MAGIC:
        raise PayloadError(f"magic 0x{int(words[0]):08X}, not 'COP1' (0x{MAGIC:08X})")
    config = id_word = None
    stream: tuple[int, int] | None = None
    i = 1
    while i < len(words):
        word = int(words[i])
        kind = word & 0xFF
        if kind == ACTION_CONFIG:
            if i + 3 > len(words):
                raise PayloadError(f"CONFIG action at word {i} is truncated")
            config, id_word = int(words[i + 1]), int(words[i + 2])
            i += 3
        elif kind == ACTION_COMMAND_STREAM:
            length = (((word >> 8) & 0xFF) << 16) | (word >> 16)
            if stream is not None or length > len(words) - i - 1:
                raise PayloadError(f"command stream at word {i}: {length} words, "
                                   f"{len(words) - i - 1} left" if stream is None else "two command streams")
            stream = (4 * (i + 1), 4 * length)
            i += 1 + length
        elif kind == ACTION_NOP:
            i += 1
        else:
            raise PayloadError(f"unknown driver action {kind} at word {i}")
    if config is None or id_word is None:
        raise PayloadError("no CONFIG action")
    if stream is None:
        raise PayloadError("no command stream")
    return Payload(config=config, id_word=id_word, stream_offset=stream[0], stream_bytes=stream[1])
