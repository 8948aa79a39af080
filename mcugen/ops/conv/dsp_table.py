"""The DSP conv and depthwise paths' requantization table (mcugen_conv_fast_dsp.c, rq_table),
made at build time for the stripes of a tiled chain, which would otherwise rebuild it on every
call (mcugen_conv_params.rq_table).

Per output channel four int32: bias, multiplier, right, add (the conv's table then ends with
one word, 1 when every channel is fast, else 0: dsp_conv_table). right > 0 selects the kernel's
fast requantization, SMMULR(2 acc, multiplier) then (y + (y >> 31) + add) >> right with
add = 2^(right-1) + zero_point * 2^right; it is chosen exactly where the C chooses it, where it
provably cannot overflow: shift in [-22, -1], |zero_point| <= 128, multiplier >= 0 (so not
INT32_MIN, and the kernel may take the rounding's sign from acc) and
|bias| + max_sum < 2^30 (max_sum bounds the sum of products). right == 0 selects the exact
requantization, add then holding TFLite's shift.

For the depthwise (channel multiplier 1, channels % 4 == 0) the build's table goes on with what
the kernel would otherwise rebuild from the weights on every stripe (dsp_dw_table): per channel
the starting sum bias + input_offset * sum(w), then per quad of four channels and per tap the
two widened weight words, SXTB16 (w0, w2) and SXTB16 ROR 8 (w1, w3), int16 lanes low first,
and last one word, 1 when every channel takes the fast requantization (right > 0), else 0:
the kernel then picks its check-free output loop without scanning the rows on every stripe.
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
        fast = abs(b) < limit and 1 <= right <= 22 and m >= 0
        add = _wrap32((2 * zero_point + 1) << (right - 1)) if fast else -right
        table[c] = (b, m, right if fast else 0, add)
    return table.astype(np.int32)


def dsp_conv_table(rq_table: np.ndarray) -> np.ndarray:
    """The conv's table, int32: rq_table's rows ([channels, 4], dsp_rq_table), then 1 when every
    row is fast, else 0 (the kernel's check-free block loop, chosen without a scan)."""
    all_fast = np.array([int((rq_table[:, 2] != 0).all())], np.int64)
    return np.concatenate([rq_table.reshape(-1).astype(np.int64), all_fast]).astype(np.int32)


def _lanes(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Two int16 lanes per int32 word, low first (as SXTB16 leaves them)."""
    word = (low.astype(np.int64) & 0xFFFF) | (high.astype(np.int64) << 16)
    return ((word + 2**31) % 2**32 - 2**31).astype(np.int64)


def dsp_dw_table(rq_table: np.ndarray, weights: np.ndarray, input_offset: int) -> np.ndarray:
    """The depthwise table, int32: rq_table's rows ([channels, 4], dsp_rq_table), then per
    channel bias + input_offset * sum(w) modulo 2^32, then [quads, taps, 2] widened weights,
    then whether every row is fast (1 or 0). weights: [1, kh, kw, channels] int8,
    channels % 4 == 0."""
    channels = weights.shape[-1]
    taps = weights.reshape(-1, channels).astype(np.int64)  # [taps, channels]
    init = rq_table[:, 0].astype(np.int64) + input_offset * taps.sum(axis=0)
    init = (init + 2**31) % 2**32 - 2**31
    quads = taps.reshape(len(taps), channels // 4, 4).transpose(1, 0, 2)  # [quads, taps, 4]
    wide = np.stack([_lanes(quads[..., 0], quads[..., 2]), _lanes(quads[..., 1], quads[..., 3])],
                    axis=-1)
    all_fast = np.array([int((rq_table[:, 2] != 0).all())], np.int64)
    return np.concatenate([rq_table.reshape(-1).astype(np.int64), init,
                           wide.reshape(-1), all_fast]).astype(np.int32)
