"""RAM of stateful (streaming) models: mcugen's state bytes and arena next to TFLM's arena.

The models are the stateful test models (tests/stateful_models.py, written in the TFLite
converter's form: CALL_ONCE of an init subgraph, VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE).
For each: `state_bytes` and `arena_bytes` of report.json (the arena holds the state: the
variables are planned in the pools, kept across invokes), the .data + .bss of the generated
code compiled for Cortex-M4 (run.py's reserved_ram), and TensorFlow Lite Micro's arena after
one invoke (run.py's tflm_arena; TFLM keeps its resource variables' buffers in its arena too).
Writes a Markdown table to stdout (and --json FILE).

    python3 benchmarks/memory/stateful.py --json benchmarks/memory/stateful.json >> benchmarks/memory/results.md
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import reserved_ram, tflm_arena
from stateful_models import spatial_state_model, streaming_model

MODELS = {"streaming (2 ring-buffer states)": streaming_model, "spatial state + tiled convs": lambda: spatial_state_model(False)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in MODELS.items():
            path = Path(tmp) / "model.tflite"
            path.write_bytes(make())
            ram, report, cc, _ = reserved_ram(path)
            tflm = tflm_arena(path)
            rows.append({"model": name, "state_bytes": report["state_bytes"], "arena": report["arena_bytes"],
                         "mcugen_ram": ram, "tflm_total": tflm["total"], "tflm_head": tflm["head"],
                         "tflm_tail": tflm["tail"], "ratio": round(ram / tflm["total"], 3), "compiler": cc})
    print("| stateful model | state bytes | planned arena (with the state) | mcugen RAM (.data+.bss) | "
          "TFLM arena total (head + tail) | mcugen / TFLM |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['state_bytes']} | {r['arena']} | {r['mcugen_ram']} | "
              f"{r['tflm_total']} ({r['tflm_head']} + {r['tflm_tail']}) | {r['ratio']:.3f} |")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
