"""The mutation campaign's list: one-token bugs in the int8 kernels, the requantization
helpers, the DSP/Helium fast paths and the memory planner, each with the tests that claim to
cover the code it breaks.

A mutant is (id, kind, file, original text, replacement, tests): `original` must occur exactly
once in `file` (tests/test_mutation_tool.py checks it, so the list cannot rot); `tests` are
pytest arguments (files and -k selections) run from the mutated copy's root. Killed = a test
fails. Kinds: rounding, clamp, offset, bound (loop bounds and tap ranges), index (broadcast
and channel indices), planner.
"""

from __future__ import annotations

from dataclasses import dataclass

KERNELS = "templates/runtime/kernels/"


@dataclass(frozen=True)
class Mutant:
    id: str
    kind: str
    file: str
    original: str
    replacement: str
    tests: tuple[str, ...]


# The relevant tests of each area: the C kernels against TFLite (host, some sanitized), the
# fast paths on QEMU, the planner's own suites.
CONV = ("tests/test_ref_conv.py", "-k", "c_kernels")
CONV16 = ("tests/test_ref_conv_int16.py", "-k", "c_kernels")
FC = ("tests/test_ref_fully_connected.py", "-k", "c_kernel")
POOL = ("tests/test_ref_pool.py", "-k", "c_kernels or wraps_like")
SOFTMAX = ("tests/test_ref_softmax.py", "-k", "c_kernel or past_512")
ACTIVATION = ("tests/test_ref_activation.py", "-k", "c_int8 or c_int16")
ELEMENTWISE = ("tests/test_ref_binary.py", "tests/test_ref_elementwise.py", "-k", "c_kernel")
QEMU_M4 = ("tests/test_firmware_kernels.py", "-k", "fast_paths_match_portable and m4")
QEMU_M55 = ("tests/test_firmware_kernels.py", "-k", "fast_paths_match_portable and m55")
PLANNER = ("tests/test_planner.py", "tests/test_pools.py")
FIXEDPOINT = (*CONV[:1], *FC[:1], "-k", "c_kernel")  # conv and FC C kernels share the header

MUTANTS: list[Mutant] = [
    # --- requantization helpers (mcugen_fixedpoint.h) -----------------------------------
    Mutant("fixedpoint-srdhm-negative-nudge", "rounding", KERNELS + "mcugen_fixedpoint.h",
           "product >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30))",
           "((int64_t)1 << 30)", FIXEDPOINT),
    Mutant("fixedpoint-rdbp-negative-tie", "rounding", KERNELS + "mcugen_fixedpoint.h",
           "(mask >> 1) + (x < 0 ? 1 : 0)", "(mask >> 1)", CONV),
    Mutant("fixedpoint-rdbp-no-rounding", "rounding", KERNELS + "mcugen_fixedpoint.h",
           "return (x >> exponent) + (remainder > threshold ? 1 : 0);",
           "return (x >> exponent) + (remainder > threshold ? 1 : 0) * (exponent > 1);", FIXEDPOINT),
    Mutant("fixedpoint-requantize-left-shift", "offset", KERNELS + "mcugen_fixedpoint.h",
           "const int32_t left = shift > 0 ? shift : 0;", "const int32_t left = shift > 1 ? shift : 0;",
           FIXEDPOINT),
    Mutant("fixedpoint-clamp-high-off-by-one", "clamp", KERNELS + "mcugen_fixedpoint.h",
           "return x < low ? low : (x > high ? high : x);",
           "return x < low ? low : (x > high + 1 ? high : x);", FIXEDPOINT),
    # --- conv and depthwise (portable) --------------------------------------------------
    Mutant("conv-input-offset-sign", "offset", KERNELS + "mcugen_conv.c",
           "acc += (uint32_t)((int32_t)w[i] * ((int32_t)x[i] + x_offset));",
           "acc += (uint32_t)((int32_t)w[i] * ((int32_t)x[i] - x_offset));", CONV),
    Mutant("conv-output-offset-dropped", "offset", KERNELS + "mcugen_conv.c",
           "    y = wrap_add(y, output_offset);\n", "    y = wrap_add(y, 0 * output_offset);\n", CONV),
    Mutant("conv-bias-channel-index", "index", KERNELS + "mcugen_conv.c",
           "acc = wrap_add(acc, bias[channel]);", "acc = wrap_add(acc, bias[0]);", CONV),
    Mutant("conv-first-tap-floor", "bound", KERNELS + "mcugen_conv.c",
           "(-origin + dilation - 1) / dilation", "(-origin) / dilation", CONV),
    Mutant("conv-end-tap-off-by-one", "bound", KERNELS + "mcugen_conv.c",
           "const int32_t inside = (size - 1 - origin) / dilation + 1;",
           "const int32_t inside = (size - 1 - origin) / dilation;", CONV),
    Mutant("conv-filter-taps-transposed", "index", KERNELS + "mcugen_conv.c",
           "const int8_t *taps = kernel + (ky * kw + kx) * depth;\n                            acc = wrap_add(",
           "const int8_t *taps = kernel + (kx * kh + ky) * depth;\n                            acc = wrap_add(",
           CONV),
    Mutant("depthwise-multiplier-channel", "index", KERNELS + "mcugen_conv.c",
           "const int32_t ic = oc / mult;\n                    uint32_t acc = 0;",
           "const int32_t ic = oc % in_c;\n                    uint32_t acc = 0;", CONV),
    Mutant("depthwise-dilation-w", "offset", KERNELS + "mcugen_conv.c",
           "const int32_t x = row[(x0 + kx * dil_w) * in_c + ic];\n                            const int32_t w = taps[kx * out_c];\n                            acc += (uint32_t)",
           "const int32_t x = row[(x0 + kx * dil_h) * in_c + ic];\n                            const int32_t w = taps[kx * out_c];\n                            acc += (uint32_t)",
           CONV),
    Mutant("conv16-bias-dropped", "offset", KERNELS + "mcugen_conv.c",
           "        acc += (uint64_t)bias[channel];\n", "", CONV16),
    # --- fully connected ------------------------------------------------------------------
    Mutant("fc-filter-offset-sign", "offset", KERNELS + "mcugen_fully_connected.c",
           "acc += (uint32_t)(((int32_t)w[i] + w_offset) * ((int32_t)x[i] + x_offset));",
           "acc += (uint32_t)(((int32_t)w[i] - w_offset) * ((int32_t)x[i] + x_offset));", FC),
    Mutant("fc-bias-index", "index", KERNELS + "mcugen_fully_connected.c",
           "acc = wrap_add(acc, bias[u]);", "acc = wrap_add(acc, bias[0]);", FC),
    Mutant("fc-clamp-removed", "clamp", KERNELS + "mcugen_fully_connected.c",
           "out[u] = (int8_t)mcugen_clamp(y, params->activation.min, params->activation.max);",
           "out[u] = (int8_t)mcugen_clamp(y, INT8_MIN, INT8_MAX);", FC),
    Mutant("fc-double-rounding-half", "rounding", KERNELS + "mcugen_rescale.c",
           "    if (fraction >= 0.5) {", "    if (fraction > 0.5) {", FC),
    # --- pooling ---------------------------------------------------------------------------
    Mutant("pool-average-negative-tie", "rounding", KERNELS + "mcugen_pool_fast.h",
           "sum > 0 ? (uint32_t)sum + half : (uint32_t)sum - half", "(uint32_t)sum + half", POOL),
    Mutant("pool-window-start", "bound", KERNELS + "mcugen_pool.c",
           "range.start = origin < 0 ? -origin : 0;", "range.start = 0;", POOL),
    Mutant("pool-window-end", "bound", KERNELS + "mcugen_pool.c",
           "range.end = extent - origin < size ? extent - origin : size;",
           "range.end = extent - origin - 1 < size ? extent - origin - 1 : size;", POOL),
    Mutant("pool-max-upper-clamp", "clamp", KERNELS + "mcugen_pool.c",
           "out[c] = (TYPE)mcugen_clamp(max, act.min, act.max);",
           "out[c] = (TYPE)mcugen_clamp(max, act.min, max);", POOL),
    # --- softmax ---------------------------------------------------------------------------
    Mutant("softmax-diff-min-bound", "bound", KERNELS + "mcugen_softmax.c",
           "        if (diff >= params->diff_min) {", "        if (diff > params->diff_min) {", SOFTMAX),
    Mutant("softmax-max-search", "bound", KERNELS + "mcugen_softmax.c",
           "    for (int32_t c = 0; c < row_size; ++c) {\n        max = row[c] > max ? row[c] : max;",
           "    for (int32_t c = 1; c < row_size; ++c) {\n        max = row[c] > max ? row[c] : max;",
           SOFTMAX),
    Mutant("softmax-output-clamp-off-by-one", "clamp", KERNELS + "mcugen_softmax.c",
           "return mcugen_clamp(unsaturated + out_min, out_min, out_max);",
           "return mcugen_clamp(unsaturated + out_min, out_min, out_max + 1);", SOFTMAX),
    # --- elementwise -----------------------------------------------------------------------
    Mutant("elementwise-rank6-level0-index", "index", KERNELS + "mcugen_elementwise.c",
           "const size_t b0 = (size_t)i0 * (size_t)s2[0];", "const size_t b0 = (size_t)i0 * (size_t)s1[0];",
           ELEMENTWISE),
    Mutant("elementwise-rank5-level1-index", "index", KERNELS + "mcugen_elementwise.c",
           "const size_t a1 = a0 + (size_t)i1 * (size_t)s1[1];",
           "const size_t a1 = a0 + (size_t)i1 * (size_t)s1[0];", ELEMENTWISE),
    Mutant("elementwise-sub-operands-swapped", "offset", KERNELS + "mcugen_elementwise.c",
           "mcugen_requantize(sign > 0 ? scaled1 + scaled2 : scaled1 - scaled2,",
           "mcugen_requantize(sign > 0 ? scaled1 + scaled2 : scaled2 - scaled1,", ELEMENTWISE),
    Mutant("elementwise-add-clamp", "clamp", KERNELS + "mcugen_elementwise.c",
           "    return mcugen_clamp(raw, args->min, args->max);\n}\n\n/* SquaredDifference",
           "    return raw;\n}\n\n/* SquaredDifference", ELEMENTWISE),
    # --- activations -----------------------------------------------------------------------
    Mutant("rsqrt-int8-output-clamp", "clamp", KERNELS + "mcugen_activation.c",
           "output[i] = (int8_t)mcugen_clamp(rsqrt_one(params, input[i], INT8_MAX), INT8_MIN, INT8_MAX);",
           "output[i] = (int8_t)rsqrt_one(params, input[i], INT8_MAX);", ACTIVATION),
    Mutant("rsqrt-zero-input", "bound", KERNELS + "mcugen_activation.c",
           "if (value <= 0) { /* 0 is", "if (value < 0) { /* 0 is", ACTIVATION),
    # --- DSP (Cortex-M4) and Helium (Cortex-M55) fast paths, under QEMU -------------------
    Mutant("dsp-depthwise-tap-offset", "offset", KERNELS + "mcugen_conv_fast_dsp.c",
           "offset[t] = (ky * dil_h * in_w + kx * dil_w) * channels;",
           "offset[t] = (ky * dil_h * in_w + kx) * channels;", QEMU_M4),
    Mutant("dsp-depthwise-border-taps", "bound", KERNELS + "mcugen_conv_fast_dsp.c",
           "for (int32_t t = ky * kw + k2; t < ky * kw + k3; ++t) {",
           "for (int32_t t = ky * kw + k2; t < ky * kw + k3 - 1; ++t) {", QEMU_M4),
    Mutant("dsp-depthwise-zero-point", "offset", KERNELS + "mcugen_conv_fast_dsp.c",
           "init[c + i] = wrap_add(rq[c + i].bias, off * sum[i]);",
           "init[c + i] = wrap_add(rq[c + i].bias, off * sum[i & 2]);", QEMU_M4),
    Mutant("dsp-depthwise-offsets-unbounded", "bound", KERNELS + "mcugen_conv_fast_dsp.c",
           "        !mcugen_depthwise_fast_offsets_fit(params, input_dims, filter_dims, channels) ||\n",
           "", (*QEMU_M4[:1], "tests/test_depthwise_offsets.py", "-k",
                "fast_paths_match_portable and m4 or emulated_core and m4")),
    Mutant("mve-depthwise-offsets-unbounded", "bound", KERNELS + "mcugen_conv_fast_mve.c",
           "        !mcugen_depthwise_fast_offsets_fit(params, input_dims, filter_dims, ch) ||\n",
           "", (*QEMU_M55[:1], "tests/test_depthwise_offsets.py", "-k",
                "fast_paths_match_portable and m55 or emulated_core and m55")),
    Mutant("depthwise-offsets-bound-one-step-short", "bound", KERNELS + "mcugen_conv_fast.c",
           "(int64_t)filter_dims->h * params->dilation.h;",
           "(int64_t)(filter_dims->h - 1) * params->dilation.h;",
           ("tests/test_depthwise_offsets.py", "-k", "sound")),
    Mutant("mve-depthwise-row-step", "offset", KERNELS + "mcugen_conv_fast_mve.c",
           "g.row_step = dh * in_w * ch;", "g.row_step = in_w * ch;", QEMU_M55),
    Mutant("mve-depthwise-column-step", "offset", KERNELS + "mcugen_conv_fast_mve.c",
           "g.col_step = dw * ch;", "g.col_step = ch;", QEMU_M55),
    # --- the memory planner (mcugen/memory) ------------------------------------------------
    Mutant("verify-plan-overlap-size-not-extent", "planner", "mcugen/memory/plan.py",
           "if b.pool != a.pool or b.offset >= a.offset + a.extent:",
           "if b.pool != a.pool or b.offset >= a.offset + a.size:", PLANNER),
    Mutant("verify-plan-alignment", "planner", "mcugen/memory/plan.py",
           "if buffer.offset < 0 or buffer.offset % ALIGNMENT:", "if buffer.offset < 0:", PLANNER),
    Mutant("verify-plan-time-overlap", "planner", "mcugen/memory/plan.py",
           "if a.size and b.size and a.overlaps_in_time(b) and a.overlaps_in_space(b):",
           "if a.size and b.size and a.first == b.first and a.overlaps_in_space(b):", PLANNER),
    Mutant("liveness-time-overlap-bound", "planner", "mcugen/memory/liveness.py",
           "return self.first <= other.last and other.first <= self.last",
           "return self.first < other.last and other.first < self.last", PLANNER),
    Mutant("placement-free-offset-fit", "planner", "mcugen/memory/placement.py",
           "        if offset + extent <= start:", "        if offset + extent <= start + 16:", PLANNER),
]


# Why each mutant that survives its tests is not a gap (results.md quotes these).
SURVIVORS: dict[str, str] = {
    "dsp-depthwise-offsets-unbounded":
        "equivalent on the core: without the bound, offsets past 2^31 wrap, and on a 32-bit "
        "address space the wrapped pointer sum is the same address (undefined behaviour in C, "
        "invisible on QEMU, no sanitizer for the ARM build); the bound itself is checked for "
        "soundness by tests/test_depthwise_offsets.py (mutant depthwise-offsets-bound-one-step-short)",
    "mve-depthwise-offsets-unbounded":
        "equivalent on the core, as dsp-depthwise-offsets-unbounded",
}

# How the list's survivors were closed (results.md quotes this). The campaign runs each mutant
# against its whole selection; "--tests" runs name the one new test that kills it on its own.
HISTORY = """\
- results.json holds 30 mutants from the whole campaign (18:07-18:44 UTC, the tree of commit
  4bbd512 with the tests of 43de8d2) and 14 rerun on the final tree: those added or rewritten
  since (and the three that then did not compile: an unused parameter is a -Werror build
  error, not a test kill) and those whose source file or tests changed since.
- Before this work's tests (the suite of main), the first three mutants run, all in
  mcugen_fixedpoint.h, survived the conv and FULLY_CONNECTED C tests: the doubling high
  multiply's negative nudge, RoundingDivideByPOT's negative tie, and no rounding for a shift
  of 1. The conv C picks now include the power-of-two tie cases and a rescale in [0.5, 1)
  (tests/test_ref_conv.py rounding_cases): all three are killed.
- Issue 17's named survivors, each killed by a new test alone (`run.py --only ID --tests ...`):
  rsqrt-int8-output-clamp by test_c_int8_rsqrt_saturates_like_tflite (TFLM and LiteRT);
  elementwise-rank6-level0-index and elementwise-rank5-level1-index by
  test_c_kernel_rank5_and_rank6_broadcasts_match_oracle (TFLM and LiteRT);
  verify-plan-overlap-size-not-extent by
  test_verify_plan_rejects_exactly_the_plans_whose_extents_clash (a byte-occupancy oracle:
  TFLite has no say in memory plans); fixedpoint-rdbp-negative-tie (negative ties in the conv
  C path) by the power-of-two conv cases of test_c_kernels_match_oracle.
- The first whole campaign left fixedpoint-requantize-left-shift alive (no C case had a
  rescale >= 1, so shift 1 never ran): a conv with a rescale in [1, 2) kills it.
- The per-layer comparison on QEMU (tests/test_per_layer_qemu.py) kills
  dsp-depthwise-zero-point on its own (kws_dscnn, Cortex-M4); it does not kill
  mve-depthwise-column-step (the public models have dilation 1), which the kernel harness
  on QEMU (tests/test_firmware_kernels.py, random dilations) does.
"""
