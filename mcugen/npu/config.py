"""The Ethos-U55 configurations that `--npu` names: one frozen NpuConfig per size.

The figures are the hardware's (Arm's Ethos-U55 TRM, as Vela's architecture_features.py records
them): MACs per cycle, the output and input micro-blocks (the unit a block's width, height and
depth are multiples of), the shared buffer (SHRAM) in 1 KiB banks, the elementwise units, and the
CONFIG word the driver payload carries (MACs log2 in bits 3:0, command-stream version 7:4, SHRAM
KiB 15:8, product 31:28; the device checks it against its own).
"""

from __future__ import annotations

from ..errors import McugenError
from ..records import dataclass

PRODUCT_U55 = 0
COMMAND_STREAM_VERSION = 0
SHRAM_BANK_BYTES = 1024


@dataclass(frozen=True)
class Block:
    """A width x height x depth box of an OFM or IFM."""

    width: int
    height: int
    depth: int


@dataclass(frozen=True)
class NpuConfig:
    """One Ethos-U55 size."""

    name: str  # the --npu name, "u55-128"
    macs: int  # MACs per cycle
    ofm_ublock: Block
    ifm_ublock: Block
    shram_banks: int  # 1 KiB banks of the shared buffer
    elem_units: int  # elementwise units (the output unit's parallelism)

    @property
    def vela_name(self) -> str:
        """Vela's --accelerator-config name for the same configuration."""
        return "ethos-" + self.name

    @property
    def shram_bytes(self) -> int:
        return self.shram_banks * SHRAM_BANK_BYTES

    @property
    def config_word(self) -> int:
        """The NPU CONFIG word of the driver payload's CONFIG action."""
        return ((PRODUCT_U55 << 28) | (self.shram_banks << 8) | (COMMAND_STREAM_VERSION << 4)
                | (self.macs.bit_length() - 1))


CONFIGS: dict[str, NpuConfig] = {
    config.name: config for config in (
        NpuConfig("u55-32", 32, Block(1, 1, 4), Block(1, 1, 8), 16, 1),
        NpuConfig("u55-64", 64, Block(1, 1, 8), Block(1, 1, 8), 16, 2),
        NpuConfig("u55-128", 128, Block(2, 1, 8), Block(2, 1, 8), 24, 4),
        NpuConfig("u55-256", 256, Block(2, 2, 8), Block(2, 2, 8), 48, 8),
    )
}


def npu_config(name: str) -> NpuConfig:
    """The configuration called `name`; an unknown name is an McugenError listing the valid ones."""
    try:
        return CONFIGS[name]
    except KeyError:
        raise McugenError(f"unknown NPU configuration '{name}'; choose one of {', '.join(CONFIGS)}") from None
