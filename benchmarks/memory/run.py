"""RAM of mcugen's generated code next to TensorFlow Lite Micro's arena and the lower bounds.

For each model: build it with mcugen, compile every generated .c to an object for Cortex-M4
(arm-none-eabi-gcc, if installed; else the host compiler) and add up the .data and .bss that
`size` reports (the RAM the code really reserves: the arena and any static state); run the
model once in the tflite-micro interpreter and read its arena total, head and tail from
print_allocations(); and take the whole-tensor lower bounds of TFLite's op order and of
mcugen's order from the plan. Each model is built twice, with tiling (the default: chains of
spatial ops run in stripes, mcugen/memory/tiling.py) and with --no-tiling; the table shows both arenas
and the MACs the tiling adds. Writes a Markdown table to stdout (and --json FILE).

    python3 benchmarks/memory/run.py [MODEL.tflite ...] > benchmarks/memory/results.md
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mcugen.driver import BuildOptions, compile_model, write_files

PUBLIC = ROOT.parent / "shared" / "models"
ARM_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]


def toolchain() -> tuple[str, str, list[str]]:
    if shutil.which("arm-none-eabi-gcc") and shutil.which("arm-none-eabi-size"):
        return "arm-none-eabi-gcc", "arm-none-eabi-size", ARM_FLAGS
    return os.environ.get("CC", "cc"), "size", []


def reserved_ram(model: Path, tiling: bool = True) -> tuple[int, dict[str, Any], str, int]:
    """(.data + .bss of the compiled objects, the plan report, the compiler used, their .text)."""
    # --optimize ram: the least RAM (the default, balanced, gives some back for speed)
    compiled = compile_model(model, BuildOptions(target="cortex-m4", tiling=tiling, optimize="ram"))
    cc, size, flags = toolchain()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        write_files(compiled, out)
        objects = []
        for source in sorted(out.glob("*.c")):
            obj = source.with_suffix(".o")
            subprocess.run([cc, "-std=c99", "-O2", "-ffp-contract=off", *flags, "-I.", "-c", source.name,
                            "-o", obj.name], cwd=out, check=True)
            objects.append(obj.name)
        text = subprocess.run([size, *objects], cwd=out, check=True, capture_output=True, text=True).stdout
    ram = code = 0
    for line in text.splitlines()[1:]:
        fields = line.split()
        ram += int(fields[1]) + int(fields[2])  # data + bss
        code += int(fields[0])  # text: code and the constants in flash
    return ram, compiled.report(), cc, code


def tflm_arena(model: Path) -> dict[str, int]:
    """TensorFlow Lite Micro's arena after one invoke: total, head (tensors), tail (bookkeeping)."""
    import tflite
    from tflite_micro.python.tflite_micro import runtime

    inputs = tflite.Model.GetRootAsModel(model.read_bytes(), 0).Subgraphs(0).InputsLength()
    interpreter = runtime.Interpreter.from_file(str(model), arena_size=4 << 20)
    for index in range(inputs):
        detail = interpreter.get_input_details(index)
        interpreter.set_input(np.zeros(detail["shape"], dtype=detail["dtype"]), index)
    interpreter.invoke()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        sys.stderr.flush()
        os.dup2(capture.fileno(), 2)
        try:
            interpreter.print_allocations()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        text = capture.read().decode(errors="replace")
    found = {k: int(v) for k, v in re.findall(r"Arena allocation (total|head|tail) (\d+) bytes", text)}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    models = args.models or sorted(PUBLIC.glob("*.tflite"))
    rows = []
    for model in models:
        ram, report, cc, flash = reserved_ram(model)
        whole_ram, whole, _, whole_flash = reserved_ram(model, tiling=False)
        tflm = tflm_arena(model)
        chains = report["tiling"]["chains"]
        rows.append({"model": model.stem, "mcugen_ram": ram, "arena": report["arena_bytes"],
                     "mcugen_ram_no_tiling": whole_ram, "arena_no_tiling": whole["arena_bytes"],
                     "flash": flash, "flash_no_tiling": whole_flash, "macs": report["macs"], "tiling_extra_macs": report["tiling"]["extra_macs"],
                     "tiled_ops": [c["ops"] for c in chains], "stripes": [c["stripes"] for c in chains],
                     "bound_tflite_order": report["lower_bound_tflite_order_bytes"],
                     "bound_our_order": report["lower_bound_bytes"], "gap_percent": report["gap_percent"],
                     "tflm_total": tflm["total"], "tflm_head": tflm["head"], "tflm_tail": tflm["tail"],
                     "ratio": round(ram / tflm["total"], 3), "compiler": cc})
    print("| model | mcugen RAM (.data+.bss) | planned arena | without tiling | lower bound, TFLite order | "
          "lower bound, mcugen order | gap | tiled ops (stripes) | extra MACs | flash (.text), without tiling "
          "| TFLM arena total (head + tail) | mcugen / TFLM |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        tiled = ", ".join(f"{ops[0]}..{ops[-1]} ({n})" for ops, n in zip(r["tiled_ops"], r["stripes"])) or "-"
        extra = f"{r['tiling_extra_macs']} of {r['macs']}"
        print(f"| {r['model']} | {r['mcugen_ram']} | {r['arena']} | {r['arena_no_tiling']} | "
              f"{r['bound_tflite_order']} | {r['bound_our_order']} | {r['gap_percent']:+.2f}% | {tiled} | {extra} | "
              f"{r['flash']}, {r['flash_no_tiling']} | "
              f"{r['tflm_total']} ({r['tflm_head']} + {r['tflm_tail']}) | {r['ratio']:.3f} |")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
