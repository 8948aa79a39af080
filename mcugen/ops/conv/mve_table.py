"""The Helium depthwise path's table of per-channel constants (mcugen_conv_fast_mve.c, dw_table),
made at build time for the stripes of a tiled chain, which would otherwise rebuild it in the
scratch on every call (mcugen_dw_conv_params.mve_table).

Per block of eight channels (the last block overlaps the one before when channels % 8 != 0),
24 int32: the bias of the even channels c, c+2, c+4, c+6 then of the odd ones, the multipliers
likewise, the shifts likewise; after the blocks one int32, how the shifts requantize (the
kernel's dw_shift_mode): 0 every shift negative, 1 none positive, 2 some positive.
"""

from __future__ import annotations

import numpy as np

BLOCK_WORDS = 24
SHIFT_MODES = {"right_all": 0, "right": 1, "left": 2}


def _per_channel(values: np.ndarray, channels: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(values, dtype=np.int64).reshape(-1), (channels,))


def shift_mode(shifts: np.ndarray) -> int:
    """dw_shift_mode: how the largest shift requantizes."""
    most = int(np.max(shifts))
    return SHIFT_MODES["left" if most > 0 else "right" if most == 0 else "right_all"]


def mve_dw_table(bias: np.ndarray | None, multipliers: np.ndarray, shifts: np.ndarray,
                 channels: int) -> np.ndarray:
    """[blocks * 24 + 1] int32 for channels >= 8. multipliers and shifts: one per channel, or
    one for all."""
    if channels < 8:
        raise ValueError(f"the Helium depthwise table needs at least 8 channels, not {channels}")
    mult, shift = _per_channel(multipliers, channels), _per_channel(shifts, channels)
    biases = np.zeros(channels, np.int64) if bias is None else bias.astype(np.int64).reshape(-1)
    blocks = []
    for i in range((channels + 7) // 8):
        c = 8 * i if 8 * i + 8 <= channels else channels - 8
        for values in (biases, mult, shift):
            block = values[c:c + 8]
            blocks.append(np.concatenate([block[0::2], block[1::2]]))
    words = np.concatenate(blocks + [np.array([shift_mode(shift)], np.int64)])
    return words.astype(np.int32)
