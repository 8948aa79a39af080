"""Kernel unit tests of the fast int8 paths (templates/runtime/kernels/mcugen_conv_fast_dsp.c, _mve.c) on
emulated cores: the DSP-extension path on Cortex-M4 (QEMU mps2-an386) and the Helium path on
Cortex-M55 (mps3-an547), each against the portable C on seeded random shapes and parameters
inside one image (firmware_tests/kernel_tests.c, which exits 1 on the first differing byte);
also int8 ADD/SUB (the fast rows of mcugen_elementwise.c) and int8 pooling (mcugen_pool.c).

Needs arm-none-eabi-gcc and qemu-system-arm: without them the QEMU tests skip, except under
CI=true, where a missing tool is a failure (tests/test_firmware.require_tools). The host build
(no fast path) checks that the harness itself builds and that its spread check holds.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import public_model

from mcugen.driver import BuildOptions, compile_model
from mcugen.ir import DType, NoOptions, Op, OpKind, Tensor
from mcugen.ops.conv.emit import conv_scratch_bytes, depthwise_scratch_bytes
from mcugen.ops.matmul.emit import fc_scratch_bytes
from mcugen.targets import target as find_target
from tests.test_firmware import require_tools

REPO = Path(__file__).resolve().parents[1]
FIRMWARE_TESTS = REPO / "firmware_tests"
KERNELS = REPO / "templates" / "runtime" / "kernels"
CASES = 150
PASS_LINE = re.compile(r"^KERNELS PASS (\d+) cases \((\d+) on the fast path\)$", re.MULTILINE)
PATH_LINE = re.compile(r"^path: (.+)$", re.MULTILINE)


def run_make(build: Path, target: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = ["make", "--no-print-directory", "-C", str(FIRMWARE_TESTS), f"BUILD={build}",
               f"CASES={CASES}", target, *args]
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=600, check=False)


@pytest.mark.parametrize(("target", "path"), [("qemu-m4", "DSP"), ("qemu-m55", "MVE")])
@pytest.mark.parametrize("seed", [2654435769, 12345])
def test_fast_paths_match_portable(target: str, path: str, seed: int, tmp_path: Path) -> None:
    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    result = run_make(tmp_path, target, f"SEED={seed}")
    assert result.returncode == 0, result.stdout
    assert PATH_LINE.findall(result.stdout) == [path], result.stdout
    passed = PASS_LINE.findall(result.stdout)
    assert passed, result.stdout
    cases, fast = (int(v) for v in passed[0])
    assert cases % CASES == 0 and cases >= 4 * CASES  # conv, depthwise, fully connected, ...
    # most cases take the fast path (not: depthwise shapes a path lacks, or a multiplier of
    # INT32_MIN on the DSP path)
    assert fast >= 3 * CASES // 2, result.stdout
    assert_scratch_mirrors(result.stdout, {"qemu-m4": "cortex-m4", "qemu-m55": "cortex-m55"}[target])


SCRATCH_LINE = re.compile(r"^scratch (\d+) (\d+) (\d+) (\d+): (\d+) (\d+) (\d+)$", re.MULTILINE)


def _weighted_op(kind: OpKind, weights_shape: tuple[int, ...], out_c: int) -> Op:
    """An int8 op with int8 weights of `weights_shape` and an int32 bias: what the scratch
    mirrors look at."""
    x = Tensor(0, "x", (1, 8, 8, weights_shape[-1]), DType.INT8)
    w = Tensor(1, "w", weights_shape, DType.INT8, data=np.zeros(weights_shape, np.int8))
    b = Tensor(2, "b", (out_c,), DType.INT32, data=np.zeros(out_c, np.int32))
    y = Tensor(3, "y", (1, 8, 8, out_c), DType.INT8)
    return Op(kind, [x, w, b], [y], NoOptions(), 0)


def assert_scratch_mirrors(stdout: str, name: str) -> None:
    """The scratch the C fast paths ask for (kernel_tests.c prints it for fixed filter shapes)
    equals what mcugen plans for them on the target `name` (mcugen/ops/conv/emit.py and
    mcugen/ops/matmul/emit.py): with less, a fast path would decline silently and the
    portable loops run."""
    target = find_target(name)
    lines = SCRATCH_LINE.findall(stdout)
    assert len(lines) >= 6, stdout
    for line in lines:
        h, w, c, n, conv, dw, fc = (int(v) for v in line)
        planned = (conv_scratch_bytes(_weighted_op(OpKind.CONV_2D, (n, h, w, c), n), target),
                   depthwise_scratch_bytes(_weighted_op(OpKind.DEPTHWISE_CONV_2D, (1, h, w, n), n), target),
                   fc_scratch_bytes(_weighted_op(OpKind.FULLY_CONNECTED, (n, c), n), target))
        # a depthwise the fast path declines (tests/test_kernel_scratch.py) is planned none
        dw_runs = n >= 8 if target.fast_path == "mve" else n % 4 == 0
        assert planned == (conv, dw if dw_runs else 0, fc), (line, planned)


# (core, file, correct text, wrong text): rounding ties the wrong way, once on each path
_STRIPE_DW_TAIL = "DEPTHWISE_STRIPE_WORK(ctx, params, quant, input_dims, input, filter_dims, filter,\n                                 bias_dims, bias, output_dims, output);"

MUTATIONS = [
    ("qemu-m55", "mcugen_fast_common.h", "return vrshlq_s32(vqaddq_s32(acc, fix), right);",
     "(void)fix;\n    return vrshlq_s32(acc, right);"),
    ("qemu-m4", "mcugen_fast_common.h", "        y += y >> 31;\n", ""),
    ("qemu-m4", "mcugen_conv_fast_dsp.c", "    return (y + (y >> 31) + add) >> right;\n",
     "    return (y + add) >> right;\n"),
    # int8 ADD: the input rescale of the DSP and Helium rows without its -1 for negatives
    ("qemu-m4", "mcugen_elementwise_fast_dsp.c",
     "(smmlar(A, g_multiplier, g_round) - (int32_t)((uint32_t)A >> 31))",
     "(smmlar(A, g_multiplier, g_round))"),
    ("qemu-m55", "mcugen_elementwise_fast_mve.c", "vqrdmlahq_n_s32(vshrq_n_s32(g, 31), g, g_multiplier)",
     "vqrdmlahq_n_s32(vdupq_n_s32(0), g, g_multiplier)"),
    # the DSP paths of issue 16: the depthwise reading the build's starting sums one channel
    # off, 1x1 columns widened with the wrong offset, the unrolled 3x3 depthwise taps reading
    # the middle column twice (interior) and dropping the last tap (border), the fifth column
    # of the LDRD pair loop summed into the fourth, a window's last row staged from one byte
    # on, and FULLY_CONNECTED's check-free requantization without its rounding half
    ("qemu-m4", "mcugen_conv_fast_dsp.c", "            d.init = built + 4 * channels + c0;\n",
     "            d.init = built + 4 * channels + c0 + 1;\n"),
    ("qemu-m4", "mcugen_conv_fast_dsp.c",
     "    const int32_t offset2 = pack2(offset), step = 4 * n;\n",
     "    const int32_t offset2 = pack2(offset + 1), step = 4 * n;\n"),
    ("qemu-m4", "mcugen_conv_fast_dsp.c", 'DW_TAP3("[%[p], %[d1], lsl #1]")',
     'DW_TAP3("[%[p], %[d1]]")'),
    ("qemu-m4", "mcugen_conv_fast_dsp.c",
     '                DW_TAPO("20") DW_TAPO("24") DW_TAPO("28") DW_TAPO("32")\n',
     '                DW_TAPO("20") DW_TAPO("24") DW_TAPO("28") DW_TAPO("28")\n'),
    ("qemu-m4", "mcugen_conv_fast_dsp.c",
     '#define DSP_HALF_5(word) DSP_HALF_4(word) DSP_COL("a4", word)\n',
     '#define DSP_HALF_5(word) DSP_HALF_4(word) DSP_COL("a3", word)\n'),
    ("qemu-m4", "mcugen_conv_fast_dsp.c", "    return copy_s8(dst, row, len);\n",
     "    return copy_s8(dst, row + 1, len);\n"),
    ("qemu-m4", "mcugen_conv_fast_dsp.c", "        const int32_t odd = 2 * p.zp + 1;\n",
     "        const int32_t odd = 2 * p.zp;\n"),
    # FULLY_CONNECTED over the weights in pairs of units: the LDM loop's last word against
    # the wrong column word, the second unit recovered with 128 A instead of 256 A, the
    # column sum's correction halved, and the portable loop reading the second unit's bytes
    # without undoing their +128
    ("qemu-m4", "mcugen_conv_fast_dsp.c", 'DSP_FCP_WORD("k3", "xb", "p1", "a2")',
     'DSP_FCP_WORD("k3", "xa", "p1", "a2")'),
    ("qemu-m4", "mcugen_conv_fast_dsp.c", "(uint32_t)raw - ((uint32_t)a << 8)",
     "(uint32_t)raw - ((uint32_t)a << 7)"),
    ("qemu-m4", "mcugen_conv_fast_dsp.c", "column_sum(x, depth >> 1) << 7", "column_sum(x, depth >> 1) << 6"),
    ("qemu-m4", "mcugen_fully_connected.c", "const int32_t mask = (u & 1) ? -128 : 0;",
     "const int32_t mask = (u & 1) ? 0 : 0;"),
    # the quick 3x3 depthwise loop (a naked asm function): the rounding's sign not folded
    # into add, the third row's last tap read from the middle column (inside the input) and the
    # last tap's offset taken from the one before (border), a run of pixels stepping by one
    # pixel whatever the stride
    ("qemu-m4", "mcugen_conv_fast_dsp.c", '"add    r11, r11, " acc ", asr #31\\n\\t"',
     '"add    r11, r11, #0\\n\\t"'),
    ("qemu-m4", "mcugen_conv_fast_dsp.c", '    DWQ_ROW "sub    r1, r1, lr, lsl #1',
     '    DWQ_TAP("[r1]") DWQ_TAP("[r1, r12]") DWQ_TAP("[r1, r12]") "sub    r1, r1, lr, lsl #1'),
    ("qemu-m4", "mcugen_conv_fast_dsp.c", 'DWQ_TAPO("24") DWQ_TAPO("28") DWQ_TAPO("32")',
     'DWQ_TAPO("24") DWQ_TAPO("28") DWQ_TAPO("28")'),
    ("qemu-m4", "mcugen_conv_fast_dsp.c", "d->stride_w * depth - 4 * quads, depth - 4 * quads};",
     "depth - 4 * quads, depth - 4 * quads};"),
    # the quick five-column conv block (a naked asm function): the rounding's sign not folded
    # into add, the fifth column summed into the fourth, the four-group pass's second weight
    # pair skipped, the four-column pair's second word replaced by its first, the one-group
    # pass not stepping back to the next row; and the build's all-fast word ignored
    ("qemu-m4", "mcugen_conv_fast_dsp.c", '"add    r12, r11, " acc ", asr #31\\n\\t"',
     '"add    r12, r11, #0\\n\\t"'),
    ("qemu-m4", "mcugen_conv_fast_dsp.c", '    CQ_COL("r8", word)\n', '    CQ_COL("r7", word)\n'),
    ("qemu-m4", "mcugen_conv_fast_dsp.c", '"3:\\n\\t" PAIR PAIR', '"3:\\n\\t" PAIR'),
    ("qemu-m4", "mcugen_conv_fast_dsp.c", 'CQ_HALF4("r3") CQ_HALF4("r9")', 'CQ_HALF4("r3") CQ_HALF4("r3")'),
    ("qemu-m4", "mcugen_conv_fast_dsp.c", '    "sub    r0, r0, r3\\n\\t"\n', '    "sub    r0, r0, #0\\n\\t"\n'),
    ("qemu-m4", "mcugen_conv_fast_dsp.c", "params->rq_table[4 * out_c] != 0;",
     "params->rq_table[4 * out_c] != 7;"),
    # the Helium conv's assembly: the pair requantization without the second pixel's -1 for
    # negatives, and the three-row pass reading the second pixel's later window rows from
    # the wrong place (in-place windows: the segment step forgotten)
    ("qemu-m55", "mcugen_conv_fast_mve.c", '"vand    %q[m], %q[b], %q[s]\\n\\t"',
     '"vmov.i32 %q[m], #0\\n\\t"'),
    # and its variant for every shift negative (gather_pairs: KWS's first layer) likewise
    ("qemu-m55", "mcugen_conv_fast_mve.c", '"vshr.s32 %q[m], %q[b], #31\\n\\t"',
     '"vmov.i32 %q[m], #0\\n\\t"'),
    ("qemu-m55", "mcugen_conv_fast_mve.c", '"add     %[p1], %[p1], lr\\n\\t"', '""'),
    # the Helium FULLY_CONNECTED's block loop without its -1 for negatives
    ("qemu-m55", "mcugen_conv_fast_mve.c", '"vand    %q[m], %q[a], %q[sh]\\n\\t"',
     '"vmov.i32 %q[m], #0\\n\\t"'),
    # the Helium conv's gathered columns: the taps outside the input one off the padding value
    ("qemu-m55", "mcugen_conv_fast_mve.c", "vstrbq_p_s8(col, vpselq_s8(x, pad, p),",
     "vstrbq_p_s8(col, vpselq_s8(x, vaddq_n_s8(pad, 1), p),"),
    # rows_40x2 (40-byte columns, two pixels): the second pixel's last block against the
    # first pixel's, and that block's lanes of bytes 24 .. 31 not all zeroed
    ("qemu-m55", "mcugen_conv_fast_mve.c", '"vmladava.s8 %[c], %q[b2], %q[v]\\n\\t"',
     '"vmladava.s8 %[c], %q[a2], %q[v]\\n\\t"'),
    ("qemu-m55", "mcugen_conv_fast_mve.c", "const mve_pred16_t tail = 0xFF00;",
     "const mve_pred16_t tail = 0xFF80;"),
    # gather_pairs stepping into a batch's second image by one row instead of one image
    ("qemu-m55", "mcugen_conv_fast_mve.c", "    win->image += in->h * in->w * in->c;\n",
     "    win->image += in->w * in->c;\n"),
    # the Helium depthwise ignoring the shift mode at the end of the build's table
    ("qemu-m55", "mcugen_conv_fast_mve.c", "k.mode = params->mve_table != NULL ? table[",
     "k.mode = params->mve_table != NULL ? DW_RIGHT_ALL + 0 * table["),
    # the Helium depthwise's runs of pixel pairs: the second pixel's last tap with the middle
    # weights (stride 1), and with the first (stride 2)
    ("qemu-m55", "mcugen_conv_fast_mve.c",
     '"add     %[xr], %[xr], %[ch]\\n\\t" DW_LDX DW_MAC("a1", "wp")',
     '"add     %[xr], %[xr], %[ch]\\n\\t" DW_LDX DW_MAC("a1", "wn")'),
    ("qemu-m55", "mcugen_conv_fast_mve.c",
     '"add     %[xr], %[xr], %[ch]\\n\\t" DW_LDX DW_MAC("a1", "wn")',
     '"add     %[xr], %[xr], %[ch]\\n\\t" DW_LDX DW_MAC("a1", "wp")'),
    # the Helium conv of round three: the three-pixel pass summing the third pixel's second
    # row over the second pixel, its contiguous requantization one channel off, the two-row
    # pass given the sums one row off, and a strided 1x1 window read at the next pixel's place
    ("qemu-m55", "mcugen_conv_fast_mve.c", '"vmladava.s8 r10, q2, q3', '"vmladava.s8 r10, q1, q3'),
    ("qemu-m55", "mcugen_conv_fast_mve.c", "vldrwq_z_s32(acc + c, lanes)",
     "vldrwq_z_s32(acc + c + 1, lanes)"),
    ("qemu-m55", "mcugen_conv_fast_mve.c", "sums + row, accs + 2 * row", "sums + row + 1, accs + 2 * row"),
    ("qemu-m55", "mcugen_conv_fast_mve.c",
     "its pixel, in place */\n                x0 = w0.image + (w0.y0",
     "its pixel, in place */\n                x0 = w1.image + (w1.y0"),
    # the Helium conv's small depths: the last block's lanes zeroed one too many, and a 3x3
    # window of short rows copied with its third row from the second's place
    ("qemu-m55", "mcugen_conv_fast_mve.c", "(0xFFFFu << (16 * nb - size))",
     "(0xFFFFu << (16 * nb - size + 1))"),
    ("qemu-m55", "mcugen_conv_fast_mve.c", "vldrbq_z_s8(x + 2 * stride, p), p);",
     "vldrbq_z_s8(x + stride, p), p);"),
    # the 1x1 over 64 channels (pw64_4x2, pw64_4x1): the second pixel's fourth row against the
    # first pixel, the one-pixel pass's last block against the block before's weights, and
    # the requantization's right shift truncating instead of rounding
    ("qemu-m55", "mcugen_conv_fast_mve.c", '"vmladava.s8 lr, q1, q2\\n\\t"', '"vmladava.s8 lr, q0, q2\\n\\t"'),
    ("qemu-m55", "mcugen_conv_fast_mve.c", 'PW64_BLOCK1_(("48", PW64_W_B3))',
     'PW64_BLOCK1_(("48", PW64_W_B2))'),
    ("qemu-m55", "mcugen_conv_fast_mve.c", '"vrshl.s32 " a ", " a ", q3\\n\\t"', '"vshl.s32 " a ", " a ", q3\\n\\t"'),
    # the Helium depthwise's row pass for stripes (dw3_rows_lean): the last pixel (odd width,
    # channels a multiple of 8, of 16) and the last pair (even width) without the first column
    # of their windows
    ("qemu-m55", "mcugen_conv_fast_mve.c", "dw_single3(last, xl + ch, w, 1, 0, &g, &k);",
     "dw_single3(last, xl + ch, w, 0, 0, &g, &k);"),
    ("qemu-m55", "mcugen_conv_fast_mve.c", "dw_single3_fast(last, xl + ch, w, 1, 0, &g, k.zp);",
     "dw_single3_fast(last, xl + ch, w, 0, 0, &g, k.zp);"),
    # and dw_single3_fast's second block requantized with the first block's shifts
    ("qemu-m55", "mcugen_conv_fast_mve.c", 'DW_REQ1("a1e", "128", "160")', 'DW_REQ1("a1e", "128", "64")'),
    ("qemu-m55", "mcugen_conv_fast_mve.c", "dw_pair3_fast(last, xl + ch, w, 1, 0, &g, k.zp);",
     "dw_pair3_fast(last, xl + ch, w, 0, 0, &g, k.zp);"),
    # the 3x3 row passes over 16/32/64 channels (win3): at stride 1 the fourth pixel's middle
    # tap read from the third's column, at stride 2 the third pixel's last tap likewise, the
    # padding columns one off the zero point, the group's kernel sums left out of the
    # assembly requantization
    ("qemu-m55", "mcugen_conv_fast_mve.c", '"vmladava.s8 r6, %q[x5], %q[v]\\n\\t" LAST',
     '"vmladava.s8 r6, %q[x4], %q[v]\\n\\t" LAST'),
    ("qemu-m55", "mcugen_conv_fast_mve.c", '"vmladava.s8 r4, %q[x6], %q[v]\\n\\t" LAST',
     '"vmladava.s8 r4, %q[x5], %q[v]\\n\\t" LAST'),
    ("qemu-m55", "mcugen_conv_fast_mve.c", "vdupq_n_s8((int8_t)(-params->input_offset))",
     "vdupq_n_s8((int8_t)(1 - params->input_offset))"),
    ("qemu-m55", "mcugen_conv_fast_mve.c", '"vadd.i32 %q[t], %q[t], %q[u]\\n\\t"', '""'),
    # the entry point of a tiled chain's later stripes (mcugen_conv.c) dropping the depthwise's
    # bias
    *[(target, "mcugen_conv.c", _STRIPE_DW_TAIL,
       _STRIPE_DW_TAIL.replace("bias, output_dims", "bias == NULL ? NULL : NULL, output_dims"))
      for target in ("qemu-m4", "qemu-m55")],
    # the Helium move of a tiled chain's kept rows reading each block sixteen bytes on
    ("qemu-m55", "mcugen_stripe_fast_mve.c", '"vldrb.8  q0, [%[in]], #16\\n\\t"',
     '"vldrb.8  q0, [%[in], #16]!\\n\\t"'),
]


@pytest.mark.parametrize(("target", "name", "right", "wrong"), MUTATIONS)
def test_a_wrong_fast_path_fails(target: str, name: str, right: str, wrong: str,
                                 tmp_path: Path) -> None:
    """The harness catches a one-off rounding error: a requantization that rounds negative
    ties toward +infinity (no -1 before the rounding shift) instead of away from zero."""
    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    for source in KERNELS.iterdir():
        text = source.read_text()
        if source.name == name:
            assert text.count(right) == 1
            text = text.replace(right, wrong)
        (kernels / source.name).write_text(text)
    result = run_make(tmp_path / "build", target, f"KERNELS={kernels}")
    assert result.returncode != 0, result.stdout
    assert re.search(r"^FAIL (conv|depthwise|fully_connected|add|sub|avgpool|maxpool|move)(_stripe)? case "
                     r"\d+: byte \d+ got "
                     r"-?\d+ want -?\d+$", result.stdout, re.MULTILINE), result.stdout


def test_host_build_has_no_fast_path(tmp_path: Path) -> None:
    require_tools("make", "cc")
    result = run_make(tmp_path, "host", f"CC={'cc' if sys.platform != 'win32' else 'gcc'}")
    assert result.returncode == 0, result.stdout
    assert PATH_LINE.findall(result.stdout) == ["portable only"], result.stdout
    passed = PASS_LINE.findall(result.stdout)
    assert len(passed) == 1 and passed[0][1] == "0", result.stdout
    assert int(passed[0][0]) % CASES == 0 and int(passed[0][0]) >= 4 * CASES, result.stdout


def test_host_harness_is_clean_under_sanitizers(tmp_path: Path) -> None:
    """The harness itself is free of undefined behaviour: its random draws once overflowed
    int32 (uniform() over a span of 2^31) and UBSan stopped the run."""
    require_tools("make", "cc")
    result = run_make(tmp_path, "host", f"CC={'cc' if sys.platform != 'win32' else 'gcc'}",
                      "OPT=-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all")
    assert result.returncode == 0 and "runtime error" not in result.stdout, result.stdout[-2000:]
    assert len(PASS_LINE.findall(result.stdout)) == 1, result.stdout[-2000:]


@pytest.mark.parametrize("target", ["host", "cortex-m4", "cortex-m55"])
def test_kernel_sums_are_built_for_the_helium_conv_only(target: str) -> None:
    """--target cortex-m55 passes every int8 CONV_2D its kernel sums (bias + input_offset *
    sum(w) per output channel, modulo 2^32) from flash; the other targets' kernels never read
    them. The values are checked here against the model's weights; that the Helium path
    computes with them bit-exactly is the QEMU model tests' job (tests/test_firmware.py)."""
    compiled = compile_model(public_model("kws_dscnn"), BuildOptions(target=target))
    source = compiled.code.files[f"{compiled.prefix}_model.c"]
    used = set(re.findall(r"\.kernel_sums = (\w+)", source))
    arrays = {int(index): name for name, index in re.findall(r"int32_t (\w+_op(\d+)_conv_2d_kernel_sums)\[", source)}
    used -= set(re.findall(r"int32_t (\w+_op\d+_fully_connected_k\w*)\[", source))
    convs = [op for op in compiled.order if op.kind is OpKind.CONV_2D]
    if target != "cortex-m55":
        assert not used and not arrays
        return
    assert sorted(arrays) == sorted(op.index for op in convs) and used == set(arrays.values())
    for op in convs:
        x, w, bias = op.inputs[0], op.inputs[1], op.inputs[2]
        sums = w.data.reshape(w.shape[0], -1).astype(np.int64).sum(axis=1) * -x.quant.single_zero_point
        expected = (sums + bias.data.astype(np.int64) + 2**31) % 2**32 - 2**31
        body = re.search(rf"{arrays[op.index]}\[\d+\][^=]*= \{{([^}}]*)\}}", source)
        assert body is not None
        assert [int(v) for v in body.group(1).split(",")] == expected.tolist()


@pytest.mark.parametrize("target", ["host", "cortex-m4", "cortex-m55"])
def test_fully_connected_kernel_sums_are_built_for_helium(target: str) -> None:
    """--target cortex-m55 passes every int8 FULLY_CONNECTED (fixed-point rescale, constant
    weights) its kernel sums, bias + input_offset * sum(w) per unit modulo 2^32, from flash; the
    other targets' calls carry none. Checked against the model's weights; the Helium path's
    use of them is checked on QEMU by test_fast_paths_match_portable (kernel_tests.c passes
    them in half the cases) and by the public-model runs against TFLM's outputs."""
    compiled = compile_model(public_model("ad_autoencoder"), BuildOptions(target=target))
    source = compiled.code.files[f"{compiled.prefix}_model.c"]
    fcs = [op for op in compiled.order if op.kind is OpKind.FULLY_CONNECTED]
    used = dict(re.findall(r"fc_params_(\d+) = \{[^;]*\.kernel_sums = (\w+)", source))
    if target != "cortex-m55":
        assert not used
        return
    assert sorted(int(i) for i in used) == sorted(op.index for op in fcs)
    for op in fcs:
        x, w, bias = op.inputs[0], op.inputs[1], op.inputs[2]
        sums = w.data.astype(np.int64).sum(axis=1) * -x.quant.single_zero_point
        expected = (sums + bias.data.astype(np.int64) + 2**31) % 2**32 - 2**31
        body = re.search(rf"{used[str(op.index)]}\[\d+\][^=]*= \{{([^}}]*)\}}", source)
        assert body is not None
        assert [int(v) for v in body.group(1).split(",")] == expected.tolist()


@pytest.mark.parametrize("target", ["host", "cortex-m4", "cortex-m55"])
def test_fully_connected_weights_in_pairs4_for_dsp(target: str) -> None:
    """--target cortex-m4 stores every int8 FULLY_CONNECTED's weights in pairs of units
    (MCUGEN_FC_LAYOUT_PAIRS4: in block u // 4, group i // 4, unit u's value i in word
    2 (u % 4 // 2) + i % 2, halfword i % 4 // 2, its upper byte for an even unit, its lower byte
    plus 128 for an odd one) instead of TFLite's rows, in as many bytes of flash; the other
    targets keep the rows. That the DSP path and the portable loop compute the same outputs
    from them is checked on QEMU (kernel_tests.c's pairs4 cases, the public models against
    TFLM's outputs)."""
    compiled = compile_model(public_model("ad_autoencoder"), BuildOptions(target=target))
    source = compiled.code.files[f"{compiled.prefix}_model.c"]
    fcs = [op for op in compiled.order if op.kind is OpKind.FULLY_CONNECTED]
    layouts = dict(re.findall(r"fc_params_(\d+) = \{[^;]*\.filter_layout = (\d+)", source))
    if target != "cortex-m4":
        assert not layouts
        return
    host = compile_model(public_model("ad_autoencoder"), BuildOptions(target="host"))
    assert compiled.code.weights_bytes == host.code.weights_bytes
    assert layouts == {str(op.index): "2" for op in fcs}
    for op in fcs:
        w = op.inputs[1].data
        units, depth = w.shape
        call = re.search(rf"mcugen_fully_connected_s8\(&fc_ctx_{op.index}, [^;]*?&fc_filter_dims_"
                         rf"{op.index}, (\w+),", source)
        assert call is not None
        body = re.search(rf"{call.group(1)}\[\d+\][^=]*= \{{([^}}]*)\}}", source)
        assert body is not None
        stored = np.array([int(v) for v in body.group(1).split(",")], dtype=np.int8)
        expected = np.empty(units * depth, dtype=np.int8)
        for u in range(units):
            for i in range(depth):
                if u < units - units % 4:
                    position = ((u // 4) * 4 * depth + (i // 4) * 16 + 4 * (2 * (u % 4 // 2) + i % 2)
                                + 2 * (i % 4 // 2) + (1 - u % 2))
                    flipped = (int(w[u, i]) & 0xFF) ^ 0x80  # an odd unit's byte: + 128
                    expected[position] = w[u, i] if u % 2 == 0 else flipped - 256 * (flipped > 127)
                else:
                    expected[u * depth + i] = w[u, i]
        assert np.array_equal(stored, expected)


def test_fully_connected_rq_checked_is_fc_quick_at_build_time() -> None:
    """mcugen_fc_params.rq_checked lets the DSP path skip its per-call fc_quick check, so it
    must be 0 as soon as one condition misses: each boundary of the kernel's check (shift in
    [-22, -1], no negative multiplier, zero point in [-128, 128], the int8 clamp,
    |bias| < 2^30 - depth * 128 * the largest |x + input_offset|) on both sides. That outputs
    are exact when it is 1 is checked on QEMU (kernel_tests.c, the public models vs TFLM)."""
    from mcugen.ops.conv.prepare import Rescale, RescaleKind
    from mcugen.ops.matmul.emit import rq_checked
    from mcugen.ops.matmul.prepare import FullyConnectedParams

    def params(mult: int = 1 << 30, shift: int = -8, zp: int = -128,
               clamp: tuple[int, int] = (-128, 127)) -> FullyConnectedParams:
        rescale = Rescale(RescaleKind.Q31, 32, np.array([mult, 1 << 30], np.int32),
                          np.array([shift, -1], np.int32), np.zeros(2), True)
        return FullyConnectedParams(False, rescale, 1, 128, 2, 128, 0, zp, clamp, True)

    limit = 2**30 - 128 * 128 * 255  # input_offset 128: |x + 128| <= 255
    bias = np.array([limit - 1, -(limit - 1)], np.int32)
    assert rq_checked(params(), bias) and rq_checked(params(), None)
    assert not rq_checked(params(), np.array([limit, 0], np.int32))
    assert not rq_checked(params(), np.array([0, -limit], np.int32))
    assert rq_checked(params(shift=-22), bias) and not rq_checked(params(shift=-23), bias)
    assert not rq_checked(params(shift=0), bias)
    assert not rq_checked(params(mult=-2**31), bias)
    assert not rq_checked(params(mult=-5), bias) and rq_checked(params(mult=0), bias)
    assert rq_checked(params(zp=128), bias) and not rq_checked(params(zp=129), bias)
    assert not rq_checked(params(clamp=(-128, 100)), bias)
