"""`mcugen plan`: the table, the JSON (the same numbers as report.json) and the SVG picture."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner
from conftest import public_model

from mcugen.cli import main

SVG = "{http://www.w3.org/2000/svg}"


def _plan(*args: str) -> str:
    result = CliRunner().invoke(main, ["plan", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_plan_json_matches_the_build_report(tmp_path: Path) -> None:
    model = public_model("ic_resnet8")
    data = json.loads(_plan(str(model), "--json"))
    built = CliRunner().invoke(main, ["build", str(model), "-o", str(tmp_path / "out")])
    assert built.exit_code == 0, built.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    for key in ("arena_bytes", "lower_bound_bytes", "lower_bound_tflite_order_bytes", "gap_percent", "pools",
                "buffers", "schedule_exact"):
        assert data[key] == report[key], key
    assert data["lower_bound_tflite_order_bytes"] == 49152  # the anchor: TFLite's order, whole tensors
    assert data["arena_bytes"] <= data["lower_bound_tflite_order_bytes"]
    expected_gap = round(100 * (data["arena_bytes"] - data["lower_bound_bytes"]) / data["lower_bound_bytes"], 2)
    assert data["gap_percent"] == expected_gap
    assert sum(p["bytes"] for p in data["pools"]) == data["arena_bytes"]
    assert sorted(data["order"]) == list(range(data["steps"]))
    for buffer in data["buffers"]:
        assert buffer["offset"] % 16 == 0 and buffer["first"] <= buffer["last"]
    # The residual ADDs run in place over their dead convolution input.
    assert any(b["in_place_ops"] for b in data["buffers"])


def test_plan_table_lists_pools_bounds_and_every_buffer(tmp_path: Path) -> None:
    model = public_model("kws_dscnn")
    text = _plan(str(model), "--pool", "DTCM:8K:fast", "--pool", "SRAM:64K")
    data = json.loads(_plan(str(model), "--json", "--pool", "DTCM:8K:fast", "--pool", "SRAM:64K"))
    lines = text.splitlines()
    assert lines[0].startswith(f"kws_dscnn.tflite: {data['steps']} ops, {len(data['buffers'])} buffers, "
                               f"{data['arena_bytes']} bytes")
    for pool in data["pools"]:
        assert any(line.startswith(f"  pool {pool['name']} ({pool['speed']}): {pool['bytes']} bytes used of "
                                   f"{pool['capacity']}") for line in lines)
    assert f"{data['lower_bound_tflite_order_bytes']} for TFLite's order" in text
    assert f"gap of the plan {data['gap_percent']:+.2f}%" in text
    table = lines[lines.index(next(line for line in lines if line.lstrip().startswith("buffer "))) + 1 :]
    assert len(table) == len(data["buffers"])


def test_plan_picture_is_an_svg_with_one_box_per_buffer(tmp_path: Path) -> None:
    model = public_model("vww_mobilenet_v1_025")
    picture = tmp_path / "plan.svg"
    _plan(str(model), "--picture", str(picture), "--pool", "DTCM:32K:fast", "--pool", "SRAM:64K")
    data = json.loads(_plan(str(model), "--json", "--pool", "DTCM:32K:fast", "--pool", "SRAM:64K"))
    root = ET.parse(picture).getroot()
    assert root.tag == f"{SVG}svg"
    boxes = [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    assert len(boxes) == len(data["buffers"])
    titles = {r.find(f"{SVG}title").text for r in boxes}  # type: ignore[union-attr]
    for buffer in data["buffers"]:
        assert (f"{buffer['name']}: {buffer['bytes']} bytes at {buffer['offset']}, "
                f"steps {buffer['first']}..{buffer['last']}") in titles
