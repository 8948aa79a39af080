"""quantization.per_channel_multipliers: every channel at once (numpy), the same (multiplier,
shift) as quantize_multiplier (TFLite's QuantizeMultiplier, whose results the conv and FC tests
check against TFLite end to end) gives channel by channel: random scales over 30 decades, the
fractions that round up to 2^31 (the carry into the shift), factors that flush to zero, a zero
scale, and the int32 dtype of both arrays."""

from __future__ import annotations

import numpy as np

from mcugen.quantization import per_channel_multipliers, quantize_multiplier


def _channel_by_channel(input_scale: float, weight_scales: tuple[float, ...],
                        output_scale: float) -> tuple[list[int], list[int]]:
    pairs = [quantize_multiplier(float(input_scale) * float(ws) / float(output_scale)) for ws in weight_scales]
    return [m for m, _ in pairs], [s for _, s in pairs]


def _check(input_scale: float, weight_scales: tuple[float, ...], output_scale: float) -> None:
    multipliers, shifts = per_channel_multipliers(input_scale, weight_scales, output_scale)
    assert multipliers.dtype == np.int32 and shifts.dtype == np.int32
    assert (multipliers.tolist(), shifts.tolist()) == _channel_by_channel(input_scale, weight_scales, output_scale)


def test_random_scales_match_quantize_multiplier() -> None:
    rng = np.random.default_rng(7)
    for _ in range(500):
        x, y = (float(np.float32(10 ** rng.uniform(-12, 3))) for _ in range(2))
        weights = tuple(float(np.float32(v)) for v in 10 ** rng.uniform(-18, 3, size=rng.integers(1, 64)))
        _check(x, weights, y)


def test_carries_flushes_and_zero_match_quantize_multiplier() -> None:
    near_one = (1 - 2**-33, 1 - 2**-32, 1 - 2**-31, 0.75, 0.5)  # the first two round up to 2^31
    tiny = (2.0**-32, 2.0**-31.5, 2.0**-33, 2.0**-40)  # around the flush below 2^-32
    assert quantize_multiplier(1 - 2**-33) == (1 << 30, 1)  # the carry happens
    assert quantize_multiplier(2.0**-40) == (0, 0)  # the flush happens
    _check(1.0, near_one + tiny + (0.0,), 1.0)
    _check(0.5, near_one + tiny, 1.0)
