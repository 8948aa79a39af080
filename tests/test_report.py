"""`mcugen report`: the HTML report as headless Chromium parses it, against report.json.

The report is opened with `chromium --headless --dump-dom` (the DOM as the browser built it) and
its tables are read back from the cells' data-value attributes and text. Without Chromium the
test skips, except under CI=true, where it fails (.ci/run installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcugen.cli import main

MODEL = Path(__file__).resolve().parent / "fixtures_float" / "small_cnn_int8.tflite"
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def chromium() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    reason = "chromium not on PATH (Debian/Ubuntu: apt-get install chromium)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI=true, so this fails instead of skipping")
    pytest.skip(reason)


def dump_dom(html: Path, profile_dir: Path) -> str:
    command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile_dir}", "--dump-dom", html.resolve().as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-500:]
    return done.stdout


class Tables(HTMLParser):
    """Every table by id: rows of {data-key: (data-value or None, text)}; and a count of tags."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[dict[str, tuple[Any, str]]]] = {}
        self.tags: dict[str, int] = {}
        self.attributes: list[tuple[str, str, str]] = []
        self.texts: dict[str, str] = {}
        self._table: str | None = None
        self._cell: tuple[str, Any] | None = None
        self._text = ""
        self._id_text: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self.attributes += [(tag, k, v) for k, v in found.items()]
        if tag == "table":
            self._table = found.get("id", "")
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append({})
        elif tag == "td" and "data-key" in found:
            value = json.loads(found["data-value"]) if "data-value" in found else None
            self._cell, self._text = (found["data-key"], value), ""
        elif tag == "p" and "id" in found:
            self._id_text, self._text = found["id"], ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None
        elif tag == "td" and self._cell is not None and self._table is not None:
            key, value = self._cell
            self.tables[self._table][-1][key] = (value, self._text.strip())
            self._cell = None
        elif tag == "p" and self._id_text is not None:
            self.texts[self._id_text] = self._text.strip()
            self._id_text = None

    def handle_data(self, data: str) -> None:
        self._text += data

    def rows(self, table: str) -> list[dict[str, tuple[Any, str]]]:
        return [r for r in self.tables[table] if r]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("report")
    runner = CliRunner()
    build = runner.invoke(main, ["build", str(MODEL), "-o", str(tmp / "build")])
    assert build.exit_code == 0, build.output
    report = runner.invoke(main, ["report", str(MODEL), "-o", str(tmp / "report.html"), "--json", "--runs", "2"])
    assert report.exit_code == 0, report.output
    html = tmp / "report.html"
    parsed = Tables()
    parsed.feed(dump_dom(html, tmp / "chromium-profile"))
    return {"report_json": json.loads((tmp / "build" / "report.json").read_text()),
            "data": json.loads(report.stdout), "dom": parsed, "html": html.read_text()}


def test_summary_equals_report_json(built: dict[str, Any]) -> None:
    dom, build = built["dom"], built["report_json"]
    summary = {key: cell[0] for row in dom.rows("summary-table") for key, cell in row.items()}
    for key in ("arena_bytes", "weights_bytes", "lower_bound_bytes", "macs"):
        assert summary[key] == build[key], key
    assert summary["ops"] == len(build["ops"])
    assert summary["invoke_ns"] == built["data"]["summary"]["invoke_ns"] > 0
    inputs = dom.rows("inputs-table")
    assert [r["name"][1] for r in inputs] == [i["name"] for i in build["inputs"]]
    assert [r["bytes"][0] for r in inputs] == [i["bytes"] for i in build["inputs"]]


def test_per_op_table_and_charts(built: dict[str, Any]) -> None:
    dom, build, data = built["dom"], built["report_json"], built["data"]
    ops = dom.rows("ops-table")
    assert [(r["index"][0], r["kind"][1], r["macs"][0]) for r in ops] == \
        [(o["index"], o["kind"], o["macs"]) for o in build["ops"]]
    assert sum(r["params"][0] for r in ops) == data["summary"]["params"]
    assert [r["time_ns"][0] for r in ops] == [o["time_ns"] for o in data["ops"]]
    assert sum(o["time_ns"] for o in data["ops"]) > 0
    svg_text = built["html"]
    for chart in ("chart-macs", "chart-params", "chart-time"):
        assert f'id="{chart}"' in svg_text
    bars = [v for t, k, v in dom.attributes if t == "rect" and k == "data-value"]
    assert len(bars) == 5 * len(ops)  # MACs, parameters, time, flash per op; RAM per step
    assert [json.loads(v) for v in bars[: len(ops)]] == [o["macs"] for o in build["ops"]]


def test_profile_and_memory_tables(built: dict[str, Any]) -> None:
    dom, build, data = built["dom"], built["report_json"], built["data"]
    kinds = dom.rows("profile-table")
    assert [(r["kind"][1], r["calls"][0], r["cpu_ns"][0], r["ratio"][0]) for r in kinds] == \
        [(k["kind"], k["calls"], k["cpu_ns"], k["ratio"]) for k in data["profile"]["by_kind"]]
    assert sum(r["ratio"][0] for r in kinds) == pytest.approx(100.0)
    assert sum(r["macs"][0] for r in kinds) == build["macs"]  # the profile agrees with the build
    (memory,) = dom.rows("memory-table")
    assert memory["internal"][0] == build["arena_bytes"]
    assert memory["weight"][0] == build["weights_bytes"]
    assert memory["total"][0] == build["arena_bytes"] + build["weights_bytes"]


def test_accuracy_table_and_plan_picture(built: dict[str, Any]) -> None:
    dom, data = built["dom"], built["data"]
    layers = dom.rows("accuracy-table")
    assert len(layers) == len(data["accuracy"]["layers"]) == len(built["report_json"]["ops"])
    assert all(r["mismatches"][0] == 0 and r["cosine"][0] == pytest.approx(1.0) for r in layers)
    assert dom.texts["first-divergence"].startswith("No divergence")
    plan_boxes = built["html"].split('id="plan-picture"')[1].count("<rect ")
    assert plan_boxes >= len(data["plan"]["buffers"])


def test_self_contained(built: dict[str, Any]) -> None:
    dom = built["dom"]
    assert "script" not in dom.tags and "link" not in dom.tags and "img" not in dom.tags
    external = [(t, k, v) for t, k, v in dom.attributes
                if k in ("src", "href") and not v.startswith("#")]
    assert not external
    assert dom.tags.get("svg", 0) >= 4  # three charts and the plan
