"""The depthwise fast paths (mcugen_conv_fast_dsp.c, _mve.c) address every tap of a window,
taps in the padding included, as an int32 byte offset: they run only where
mcugen_depthwise_fast_offsets_fit says every such offset fits (issue 17).

- The bound is sound: on random and boundary geometries, whenever the C function accepts one,
  every offset the two fast paths form (worked out here in Python integers, from the code's
  own expressions) fits int32; and it accepts every ordinary geometry.
- A depthwise whose dilation puts window offsets past 2^31 (accepted by the build) gives
  TFLM's outputs on the emulated Cortex-M4 and M55: the fast paths decline, the portable
  loops run.
- A dilation past TFLite's int16 is refused at build time in one line (TFLM wraps it and
  computes another convolution, LiteRT refuses it: no reference answer).
"""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from test_ref_conv import ConvCase, build_model

from mcugen.codegen.generate import RUNTIME
from mcugen.toolchain.host import WARNING_FLAGS, compiler

INT32_MAX = 2**31 - 1

PROGRAM = r"""
#include <stdio.h>
#include "mcugen_conv_fast.h"
int main(void)
{
    long v[10];
    while (scanf("%ld %ld %ld %ld %ld %ld %ld %ld %ld %ld", &v[0], &v[1], &v[2], &v[3], &v[4],
                 &v[5], &v[6], &v[7], &v[8], &v[9]) == 10) {
        const mcugen_dims in = {1, (int32_t)v[0], (int32_t)v[1], (int32_t)v[2]};
        const mcugen_dims filter = {1, (int32_t)v[3], (int32_t)v[4], (int32_t)v[2]};
        mcugen_conv_fast_params p = {0};
        p.dilation.h = (int32_t)v[5], p.dilation.w = (int32_t)v[6];
        p.padding.h = (int32_t)v[7], p.padding.w = (int32_t)v[8];
        p.stride.h = p.stride.w = (int32_t)v[9];
        printf("%d\n", mcugen_depthwise_fast_offsets_fit(&p, &in, &filter, (int32_t)v[2]));
    }
    return 0;
}
"""


def fast_path_offsets(in_h: int, in_w: int, ch: int, kh: int, kw: int, dil_h: int, dil_w: int,
                      pad_h: int, pad_w: int, stride: int) -> list[int]:
    """The extreme values of the offsets (and their partial products) that the DSP and MVE
    depthwise code computes in int32 for this geometry (SAME-style output size)."""
    out_h, out_w = (in_h + stride - 1) // stride, (in_w + stride - 1) // stride
    ys = [-pad_h, (out_h - 1) * stride - pad_h]
    xs = [-pad_w, (out_w - 1) * stride - pad_w]
    values = []
    # DSP: per-tap offsets from the window origin, ky * dil_h * in_w first
    values += [(kh - 1) * dil_h * in_w, ((kh - 1) * dil_h * in_w + (kw - 1) * dil_w) * ch]
    values += [y * in_w * ch for y in ys] + [x * ch for x in xs]  # row and column addresses
    # MVE: the row and column steps, the first window row and column inside the input
    values += [dil_h * in_w * ch, dil_w * ch, (xs[1] + dil_w) * ch]
    values += [min(y + k * dil_h, in_h - 1) * in_w * ch for y in ys for k in (0, kh - 1)]
    return values


def _geometries(rng: np.random.Generator) -> list[tuple[int, ...]]:
    rows: list[tuple[int, ...]] = []
    for _ in range(400):
        big = lambda: int(rng.integers(1, 2**int(rng.integers(1, 31))))
        kh, kw = int(rng.integers(1, 8)), int(rng.integers(1, 8))
        dil_h, dil_w = big(), big()
        pad_h = int(rng.integers(0, (kh - 1) * dil_h + 1))
        pad_w = int(rng.integers(0, (kw - 1) * dil_w + 1))
        rows.append((big() % 5000 + 1, big() % 5000 + 1, int(rng.integers(1, 2049)), kh, kw, dil_h,
                     dil_w, pad_h, pad_w, int(rng.integers(1, 4))))
    # ordinary models: must stay on the fast path
    rows += [(112, 112, 32, 3, 3, 1, 1, 1, 1, 1), (49, 10, 64, 3, 3, 1, 1, 1, 1, 1),
             (7, 7, 1024, 3, 3, 1, 1, 1, 1, 2), (64, 64, 256, 5, 5, 2, 2, 4, 4, 1)]
    return rows


def test_the_bound_is_sound_and_keeps_ordinary_geometries(tmp_path: Path) -> None:
    for source in RUNTIME.iterdir():
        (tmp_path / source.name).write_bytes(source.read_bytes())
    (tmp_path / "main.c").write_text(PROGRAM)
    subprocess.run([compiler(), *WARNING_FLAGS, "-O1", "-I.", "main.c", "mcugen_conv_fast.c",
                    "-o", "fit"], cwd=tmp_path, check=True, capture_output=True, text=True)
    geometries = _geometries(np.random.default_rng(17))
    text = "".join(" ".join(map(str, g)) + "\n" for g in geometries)
    answers = subprocess.run([str(tmp_path / "fit")], input=text, capture_output=True, text=True,
                             check=True).stdout.split()
    assert len(answers) == len(geometries)
    accepted = 0
    for geometry, answer in zip(geometries, answers):
        if answer == "1":
            accepted += 1
            worst = max(abs(v) for v in fast_path_offsets(*geometry))
            assert worst <= INT32_MAX, (geometry, worst)
    assert all(a == "1" for a in answers[-4:])
    assert 20 <= accepted < len(geometries) - 20, accepted  # both answers are exercised


# TFLite's largest dilation (32767: it holds them in int16) over a 4200-pixel-wide input: the
# third window row starts 2 x 32767 x 4200 x 8 bytes (> 2^31) from the window's origin.
WIDE_DILATION = ConvCase(True, 1, 3, 4200, 8, 8, (3, 3), (1, 1), (32767, 1), "SAME", "NONE", True,
                         -3, 2, 1717)


def test_a_model_whose_tap_offsets_pass_int32_is_refused_at_build(tmp_path: Path) -> None:
    """Such a model never reaches the kernels: the validation stage (frontend/validate.py, the
    window-reach rule) refuses it in one line, since the portable loops too form tap offsets in
    int32 before they skip the padding. The fast paths' own bound above stays as a second guard."""
    from click.testing import CliRunner

    from mcugen.cli import main

    worst = max(fast_path_offsets(3, 4200, 8, 3, 3, 32767, 1, 32767, 1, 1))
    assert worst > INT32_MAX  # without the bound the fast paths would overflow here
    path = tmp_path / "wide_dilation.tflite"
    path.write_bytes(build_model(WIDE_DILATION))
    result = CliRunner().invoke(main, ["build", str(path), "-o", str(tmp_path / "gen"), "--target", "cortex-m4"])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert "the window reaches" in result.output and "fit int32 (tap offsets)" in result.output


@pytest.mark.parametrize("depthwise", [True, False], ids=["depthwise", "conv"])
def test_a_dilation_past_int16_is_refused_in_one_line(depthwise: bool, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from mcugen.cli import main

    case = replace(WIDE_DILATION, depthwise=depthwise, width=5, dilation=(1, 32768))
    path = tmp_path / "dilation.tflite"
    path.write_bytes(build_model(case))
    result = CliRunner().invoke(main, ["build", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "at most 32767" in lines[0] and "dilation_w 32768" in lines[0], lines
    assert not (tmp_path / "out").exists()
