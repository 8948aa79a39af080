"""The Helium depthwise path's build-time table (mcugen/ops/conv/mve_table.py, used by the
stripes of tiled chains on Cortex-M55; mcugen_dw_conv_params.mve_table): the layout the kernel
reads (mcugen_conv_fast_mve.c, dw_table and dw_shift_mode). That the kernel reads the table as
built is checked on QEMU against TFLM's outputs (tests/test_firmware.py, benchmarks/firmware)
and, for a table written again in C from the same description, against the portable kernel
(firmware_tests/kernel_tests.c)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import public_model

from mcugen.driver import BuildOptions, compile_model
from mcugen.ops.conv.mve_table import BLOCK_WORDS, mve_dw_table


@pytest.mark.parametrize("channels", [8, 12, 20, 64, 67])
def test_every_channel_is_in_its_block_lane(channels: int) -> None:
    """Channel c of the block starting at c0 (the last block starts at channels - 8) sits in
    lane (c - c0) // 2 of the even (c - c0 even) or the odd vector of bias, multiplier, shift."""
    rng = np.random.default_rng(channels)
    bias = rng.integers(-2**31, 2**31, channels).astype(np.int32)
    mult = rng.integers(2**30, 2**31, channels).astype(np.int32)
    shift = rng.integers(-20, -1, channels).astype(np.int32)
    table = mve_dw_table(bias, mult, shift, channels)
    blocks = (channels + 7) // 8
    assert table.shape == (blocks * BLOCK_WORDS + 1,) and table.dtype == np.int32
    for i in range(blocks):
        c0 = min(8 * i, channels - 8)
        block = table[i * BLOCK_WORDS:(i + 1) * BLOCK_WORDS].reshape(3, 2, 4)  # what, parity, lane
        for c in range(c0, c0 + 8):
            parity, lane = (c - c0) % 2, (c - c0) // 2
            assert [block[k, parity, lane] for k in range(3)] == [bias[c], mult[c], shift[c]]


def test_no_bias_is_zero_and_one_rescale_serves_every_channel() -> None:
    table = mve_dw_table(None, np.array([2**30]), np.array([-7]), 16)
    blocks = table[:-1].reshape(2, 3, 8)
    assert (blocks[:, 0] == 0).all() and (blocks[:, 1] == 2**30).all()
    assert (blocks[:, 2] == -7).all()


@pytest.mark.parametrize(("largest", "mode"), [(-1, 0), (0, 1), (3, 2)])
def test_the_last_word_is_the_kernels_shift_mode(largest: int, mode: int) -> None:
    """dw_shift_mode: DW_RIGHT_ALL (0) when every shift is negative, DW_RIGHT (1) when the
    largest is 0, DW_LEFT (2) when some shift is positive."""
    shifts = np.full(24, -9)
    shifts[13] = largest
    assert mve_dw_table(None, np.full(24, 2**30), shifts, 24)[-1] == mode


def test_fewer_than_eight_channels_is_refused() -> None:
    with pytest.raises(ValueError, match="8 channels"):
        mve_dw_table(None, np.array([1]), np.array([-1]), 4)


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_tiled_depthwise_stripes_carry_the_table_on_helium_only(target: str) -> None:
    """kws_dscnn tiles its depthwise/pointwise chain (--optimize ram): on Cortex-M55 each
    distinct depthwise of the chain gets one table, shared by its stripes; the DSP target's
    calls carry none."""
    compiled = compile_model(public_model("kws_dscnn"), BuildOptions(target=target, optimize="ram"))
    source = compiled.code.files[f"{compiled.prefix}_model.c"]
    used = set(re.findall(r"\.mve_table = (\w+)", source))
    if target == "cortex-m4":
        assert not used
        return
    chain_dws = {int(i) for i in re.findall(r"int32_t \w+_op(\d+)_mve_dw_table\w*\[", source)}
    assert len(used) == len(chain_dws) == 4
