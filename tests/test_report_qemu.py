"""`mcugen report --target cortex-m4 --qemu`: instructions per op on the emulated core, flash and
RAM per op, RAM over the schedule with op labels, and a page that long tensor names do not blow up.

One small model written here (FULLY_CONNECTED, FULLY_CONNECTED, SOFTMAX: every op a step of its
own with code, no tiled chain and no alias) whose tensors have 300+ character names. The numbers
are checked against the build's report.json and the model's own tensors, the page as headless
Chromium parses it (test_report.Tables). Without the cross toolchain, QEMU or Chromium the test
skips (fails under CI=true), as the other QEMU and report tests do.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from modelbuilder import ModelBuilder
from test_firmware import require_tools
from test_report import Tables, chromium, dump_dom

from mcugen.analysis.report_html import NAME_CHARS
from mcugen.cli import main


def long_name(what: str) -> str:
    name = f"model/{what}/" + "/".join(f"very_long_scope_{i:02d}" for i in range(20)) + f"/{what}:0"
    assert len(name) > 300
    return name


def long_name_model() -> bytes:
    """64 -> FULLY_CONNECTED(32, relu) -> FULLY_CONNECTED(10) -> SOFTMAX, int8."""
    rng = np.random.default_rng(7)
    b = ModelBuilder()
    x = b.add_tensor(long_name("input"), [1, 64], "int8", scale=0.05, zero_point=-3)
    w1 = b.add_tensor(long_name("dense_1/kernel"), [32, 64], "int8", scale=0.02,
                      data=rng.integers(-127, 128, size=(32, 64)))
    b1 = b.add_tensor(long_name("dense_1/bias"), [32], "int32", scale=0.001,
                      data=rng.integers(-500, 500, size=32))
    h = b.add_tensor(long_name("dense_1/relu"), [1, 32], "int8", scale=0.1, zero_point=-128)
    w2 = b.add_tensor(long_name("dense_2/kernel"), [10, 32], "int8", scale=0.03,
                      data=rng.integers(-127, 128, size=(10, 32)))
    b2 = b.add_tensor(long_name("dense_2/bias"), [10], "int32", scale=0.003,
                      data=rng.integers(-300, 300, size=10))
    logits = b.add_tensor(long_name("dense_2/logits"), [1, 10], "int8", scale=0.2, zero_point=5)
    probs = b.add_tensor(long_name("softmax"), [1, 10], "int8", scale=1 / 256, zero_point=-128)
    b.add_op("FULLY_CONNECTED", [x, w1, b1], [h], {"fused_activation_function": "RELU"})
    b.add_op("FULLY_CONNECTED", [h, w2, b2], [logits])
    b.add_op("SOFTMAX", [logits], [probs])
    b.set_io([x], [probs])
    return b.build()


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    require_tools("make", "arm-none-eabi-gcc", "qemu-system-arm")
    chromium()
    tmp = tmp_path_factory.mktemp("report_qemu")
    model = tmp / "long_names.tflite"
    model.write_bytes(long_name_model())
    runner = CliRunner()
    build = runner.invoke(main, ["build", str(model), "-o", str(tmp / "build"), "--target", "cortex-m4",
                                 "--no-size"])
    assert build.exit_code == 0, build.output
    report = runner.invoke(main, ["report", str(model), "-o", str(tmp / "r.html"), "--target", "cortex-m4",
                                  "--qemu", "--json", "--runs", "1"])
    assert report.exit_code == 0, report.output
    parsed = Tables()
    parsed.feed(dump_dom(tmp / "r.html", tmp / "chromium-profile"))
    return {"build": json.loads((tmp / "build" / "report.json").read_text()), "data": json.loads(report.stdout),
            "dom": parsed, "html": (tmp / "r.html").read_text()}


def test_instructions_per_op_on_the_core(reported: dict[str, Any]) -> None:
    data, build = reported["data"], reported["build"]
    ops = data["ops"]
    assert [(o["index"], o["kind"]) for o in ops] == [(o["index"], o["kind"]) for o in build["ops"]]
    assert all(o["instructions"] > 0 for o in ops), [o["instructions"] for o in ops]
    assert data["summary"]["where"] == "qemu mps2-an386" and data["summary"]["target"] == "cortex-m4"
    # the ops' counts are parts of the whole invoke's (which adds the calls between them)
    assert sum(o["instructions"] for o in ops) <= data["summary"]["invoke_instructions"]
    # the first FULLY_CONNECTED has 2048 MACs, the second 320: the count follows the work
    assert ops[0]["instructions"] > ops[1]["instructions"]
    rows = reported["dom"].rows("ops-table")
    assert [r["instructions"][0] for r in rows] == [o["instructions"] for o in ops]
    assert 'id="chart-instructions"' in reported["html"]


def test_flash_and_ram_per_op_agree_with_the_build(reported: dict[str, Any]) -> None:
    data, build = reported["data"], reported["build"]
    ops = data["ops"]
    flash = [o["flash_bytes"] for o in ops]
    # each FULLY_CONNECTED reads at least its weights and bias; SOFTMAX's tables are its own
    assert flash[0] >= 32 * 64 + 32 * 4 and flash[1] >= 10 * 32 + 10 * 4, flash
    assert sum(flash) >= build["weights_bytes"] > 0  # every constant array is read by some op
    arena = build["arena_bytes"]
    own = [64 + 32, 32 + 10, 10 + 10]  # the bytes of each op's input and output (int8)
    for op, needed in zip(ops, own):
        assert needed <= op["ram_bytes"] <= arena, (op, arena)
        assert 0 <= op["scratch_bytes"] <= op["ram_bytes"]
    assert max(o["ram_bytes"] for o in ops) <= arena
    rows = reported["dom"].rows("ops-table")
    assert [(r["flash_bytes"][0], r["ram_bytes"][0]) for r in rows] == [(o["flash_bytes"], o["ram_bytes"]) for o in ops]


def test_ram_over_the_schedule_has_one_labelled_point_per_step(reported: dict[str, Any]) -> None:
    data = reported["data"]
    steps = data["ram_steps"]
    assert [s["step"] for s in steps] == list(range(len(data["ops"])))
    assert [s["label"] for s in steps] == [f'{n}: op {o["index"]} {o["kind"]}' for n, o in enumerate(data["ops"])]
    assert [s["ram_bytes"] for s in steps] == [o["ram_bytes"] for o in data["ops"]]
    rows = reported["dom"].rows("ram-table")
    assert [(r["step"][0], r["index"][0], r["kind"][1], r["ram_bytes"][0]) for r in rows] == \
        [(s["step"], s["index"], s["kind"], s["ram_bytes"]) for s in steps]
    chart = reported["html"].split('id="chart-ram"')[1].split("</svg>")[0]
    assert chart.count("<rect ") == len(steps)
    assert all(f">{s['label']}<" in chart for s in steps)


def test_long_names_are_cut_with_the_whole_name_in_a_title(reported: dict[str, Any]) -> None:
    dom, data = reported["dom"], reported["data"]
    cells = [r["name"][1] for r in dom.rows("ops-table")] + [r["tensor"][1] for r in dom.rows("accuracy-table")]
    cells += [r["name"][1] for r in dom.rows("inputs-table") + dom.rows("outputs-table")]
    assert len(cells) == 3 + 3 + 2
    assert all(len(text) == NAME_CHARS and text.endswith("\u2026") for text in cells), cells
    titles = {v for t, k, v in dom.attributes if t == "td" and k == "title"}
    assert {o["name"] for o in data["ops"]} <= titles and all(len(t) > 300 for t in titles)
    html = reported["html"]
    assert "text-overflow: ellipsis" in html and "td.name" in html
    # no long name is visible text anywhere on the page: only in title attributes and SVG tooltips
    visible = re.sub(r"<title>.*?</title>", "", re.sub(r'title="[^"]*"', "", html), flags=re.DOTALL)
    assert "very_long_scope_19" not in visible
