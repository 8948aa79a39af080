"""The DSP conv and depthwise paths' requantization table (mcugen_conv_fast_dsp.c, rq_table),
made at build time for the stripes of a tiled chain, which would otherwise rebuild it on every
call (mcugen_conv_params.rq_table).

Per output channel four int32: bias, multiplier, right, add. right > 0 selects the kernel's
fast requantization, SMMULR(2 acc, multiplier) then (y + (y >> 31) + add) >> right with
add = 2^(right-1) + zero_point * 2^right; it is chosen exactly where the C chooses it, where it
provably cannot overflow: shift in [-22, -1], |zero_point| <= 128, multiplier != INT32_MIN and
|bias| + max_sum < 2^30 (max_sum bounds the sum of products). right == 0 selects the exact
requantization, add then holding TFLite's shift.
"""

from __future__ import annotations

import numpy as np

INT32_MIN = -(2**31)


def max_product(input_offset: int) -> int:
    """The largest |x + input_offset| over int8 x, times 128 (the largest |w|)."""
    return 128 * max(abs(input_offset - 128), abs(input_offset + 127))


def _wrap32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def dsp_rq_table(bias: np.ndarray | None, multipliers: np.ndarray, shifts: np.ndarray,
                 channels: int, zero_point: int, max_sum: int) -> np.ndarray:
    """[channels, 4] int32. multipliers and shifts: one per channel, or one for all."""
    mult = np.broadcast_to(np.asarray(multipliers, dtype=np.int64).reshape(-1), (channels,))
    shift = np.broadcast_to(np.asarray(shifts, dtype=np.int64).reshape(-1), (channels,))
    biases = np.zeros(channels, np.int64) if bias is None else bias.astype(np.int64).reshape(-1)
    fits = max_sum < 2**30 and -128 <= zero_point <= 128
    limit = 2**30 - max_sum if fits else 0  # fast needs |bias| < limit
    table = np.zeros((channels, 4), np.int64)
    for c in range(channels):
        b, m, right = int(biases[c]), int(mult[c]), -int(shift[c])
        fast = abs(b) < limit and 1 <= right <= 22 and m != INT32_MIN
        add = _wrap32((2 * zero_point + 1) << (right - 1)) if fast else -right
        table[c] = (b, m, right if fast else 0, add)
    return table.astype(np.int32)
