"""The DSP path's build-time requantization table (mcugen/ops/conv/dsp_table.py, used by the
stripes of tiled chains on Cortex-M4/M7; mcugen_conv_params.rq_table).

Where the table selects the kernel's fast requantization (right > 0), the kernel computes
y = SMMULR(2 acc, m) = floor((2 acc m + 2^31) / 2^32), then (y + (y >> 31) + add) >> right in
int32; modelled here with exact integers, every intermediate checked to fit int32, against
TFLite's MultiplyByQuantizedMultiplier plus the zero point (mcugen.ops.fixedpoint, itself
checked against TFLite by the tests/test_ref_* files) over the accumulators the bound allows:
|acc| <= |bias| + max_sum. That the kernels read the table as built is checked on QEMU
against TFLM's outputs (tests/test_firmware.py, benchmarks/firmware)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import public_model

from mcugen.driver import BuildOptions, compile_model
from mcugen.ops.conv.dsp_table import dsp_conv_table, dsp_dw_table, dsp_rq_table, max_product
from mcugen.ops.fixedpoint import multiply_by_quantized_multiplier

INT32 = (-(2**31), 2**31 - 1)


def _fits(v: int) -> bool:
    return INT32[0] <= v <= INT32[1]


def _kernel_fast(acc: int, mult: int, right: int, add: int) -> int:
    assert _fits(2 * acc)
    y = (2 * acc * mult + 2**31) >> 32  # SMMULR
    total = y + (y >> 31) + add
    assert _fits(y) and _fits(total)
    return total >> right


def _kernel_fast_asm(acc: int, mult: int, right: int, add: int) -> int:
    """The asm loops' form: the rounding's -1 from the sign of acc, not of y (SMMLAR adds y
    to add + (acc >> 31) in one instruction)."""
    assert _fits(2 * acc)
    y = (2 * acc * mult + 2**31) >> 32
    total = y + add + (acc >> 31)
    assert _fits(total)
    return total >> right


@pytest.mark.parametrize("seed", range(6))
def test_fast_entries_equal_tflite_requantization(seed: int) -> None:
    rng = np.random.default_rng(seed)
    channels = 64
    offset = int(rng.integers(-127, 129))
    zero_point = int(rng.integers(-128, 128))
    max_sum = int(rng.integers(1, 300)) * max_product(offset)
    limit = 2**30 - max_sum
    bias = rng.integers(-limit, limit, channels, dtype=np.int64)
    bias[:4] = [limit - 1, -(limit - 1), limit, -limit]  # both sides of the bound
    mult = rng.integers(2**30, 2**31, channels, dtype=np.int64)
    mult[4] = -(2**31)  # INT32_MIN: never fast
    mult[5] = -(2**30)  # negative: never fast (the asm takes the rounding's sign from acc)
    shift = rng.integers(-26, 3, channels, dtype=np.int64)
    table = dsp_rq_table(bias.astype(np.int32), mult.astype(np.int32), shift.astype(np.int32),
                         channels, zero_point, max_sum)
    assert table.shape == (channels, 4) and table.dtype == np.int32
    fast = 0
    for c in range(channels):
        b, m, right, add = (int(v) for v in table[c])
        assert (b, m) == (int(bias[c]), int(mult[c]))
        if right == 0:  # the exact requantization: add carries TFLite's shift
            assert add == int(shift[c])
            continue
        fast += 1
        assert abs(int(bias[c])) < limit and 1 <= right <= 22 and m >= 0
        span = abs(b) + max_sum
        for acc in {-span, span, b - max_sum, b + max_sum, b, 0, -1, 1,
                    *rng.integers(-span, span + 1, 40).tolist(),
                    *rng.integers(-2**right, 1, 20).tolist()}:
            expected = int(multiply_by_quantized_multiplier(np.int64(acc), m, -right)) + zero_point
            assert _kernel_fast(acc, m, right, add) == expected, (c, acc)
            assert _kernel_fast_asm(acc, m, right, add) == expected, (c, acc)
    assert fast > channels // 2  # most channels of a realistic layer take the fast form
    assert table[2, 2] == 0 and table[3, 2] == 0 and table[4, 2] == 0  # |bias| = limit, INT32_MIN
    assert table[5, 2] == 0  # a negative multiplier


def test_out_of_range_zero_point_or_sum_is_never_fast() -> None:
    one = np.ones(8, np.int32)
    for zero_point, max_sum in ((129, 1000), (0, 2**30)):
        table = dsp_rq_table(None, one * 2**30, -one * 5, 8, zero_point, max_sum)
        assert not table[:, 2].any() and (table[:, 3] == -5).all()


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_tiled_stripes_carry_the_table_on_dsp_targets_only(target: str) -> None:
    """kws_dscnn tiles its depthwise/pointwise chain: on Cortex-M4 each distinct conv of the
    chain gets one table, shared by its stripes; the Helium target's calls carry none."""
    compiled = compile_model(public_model("kws_dscnn"), BuildOptions(target=target))
    source = compiled.code.files[f"{compiled.prefix}_model.c"]
    used = set(re.findall(r"\.rq_table = (\w+)", source))
    if target == "cortex-m55":
        assert not used
        return
    chain_convs = {int(i) for i in re.findall(r"int32_t \w+_op(\d+)_dsp_requant\w*\[", source)}
    assert len(used) == len(chain_convs) >= 4


def _lane(word: np.ndarray, high: bool) -> np.ndarray:
    """One signed int16 lane of int32 words."""
    bits = (word.astype(np.int64) >> (16 if high else 0)) & 0xFFFF
    return bits - ((bits & 0x8000) << 1)


@pytest.mark.parametrize(("kh", "kw", "channels", "offset"), [(3, 3, 8, 128), (1, 5, 4, -127),
                                                              (3, 3, 64, 3), (2, 1, 12, 0)])
def test_depthwise_table_gives_the_reference_sums(kh: int, kw: int, channels: int,
                                                   offset: int) -> None:
    """The depthwise part of the table (dsp_dw_table): the kernel starts each channel from its
    starting sum and adds w * x over the taps, w read from the widened words (SXTB16 lanes:
    channels 0 and 2 of a quad in the first word, 1 and 3 in the second); that must equal
    bias + sum(w * (x + input_offset)), TFLite's accumulator, modulo 2^32."""
    rng = np.random.default_rng(kh * 100 + channels)
    weights = rng.integers(-128, 128, (1, kh, kw, channels)).astype(np.int8)
    bias = rng.integers(-2**20, 2**20, channels).astype(np.int32)
    one = np.ones(channels, np.int32)
    rq = dsp_rq_table(bias, one * 2**30, -one * 7, channels, -5, kh * kw * max_product(offset))
    table = dsp_dw_table(rq, weights, offset).astype(np.int64)
    taps = kh * kw
    assert table.shape == (channels * 5 + taps * channels // 2 + 1,)
    assert (table[:4 * channels] == rq.reshape(-1)).all()
    assert table[-1] == 1  # shift -7, small biases: every row fast
    init = table[4 * channels:5 * channels]
    wide = table[5 * channels:-1].reshape(channels // 4, taps, 2)
    x = rng.integers(-128, 128, (taps, channels))
    for c in range(channels):
        q, lane = divmod(c, 4)
        w = _lane(wide[q, :, lane % 2], high=lane >= 2)  # [taps]
        assert (w == weights.reshape(taps, channels)[:, c]).all()
        kernel = (int(init[c]) + int((w * x[:, c]).sum())) % 2**32
        reference = int(bias[c]) + int((weights.reshape(taps, channels)[:, c].astype(np.int64)
                                        * (x[:, c] + offset)).sum())
        assert kernel == reference % 2**32


def test_depthwise_table_ends_with_whether_every_row_is_fast() -> None:
    """The last word lets the kernel skip its per-output checks: 1 only when no row takes the
    exact requantization (right == 0), here a multiplier of INT32_MIN in one channel."""
    weights = np.ones((1, 3, 3, 8), np.int8)
    mult = np.full(8, 2**30, np.int32)
    fast = dsp_rq_table(None, mult, np.full(8, -7), 8, 0, 9 * max_product(0))
    mult[5] = -(2**31)
    mixed = dsp_rq_table(None, mult, np.full(8, -7), 8, 0, 9 * max_product(0))
    assert (fast[:, 2] != 0).all() and (mixed[:, 2] == 0).sum() == 1
    assert dsp_dw_table(fast, weights, 0)[-1] == 1
    assert dsp_dw_table(mixed, weights, 0)[-1] == 0


def test_conv_table_ends_with_whether_every_row_is_fast() -> None:
    """The conv's table (dsp_conv_table): the rows unchanged, then 1 only when every row takes
    the fast requantization, which lets the kernel pick its asm block loops without a scan."""
    mult = np.full(8, 2**30, np.int32)
    fast = dsp_rq_table(None, mult, np.full(8, -7), 8, 0, 9 * max_product(0))
    mult[3] = -(2**31)
    mixed = dsp_rq_table(None, mult, np.full(8, -7), 8, 0, 9 * max_product(0))
    for rows, flag in ((fast, 1), (mixed, 0)):
        table = dsp_conv_table(rows)
        assert table.dtype == np.int32 and table.shape == (8 * 4 + 1,)
        assert (table[:-1] == rows.reshape(-1)).all() and table[-1] == flag
