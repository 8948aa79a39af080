"""Flash of dense against sparse weights (`mcugen build --sparse`), for the sparse test models.

The models are those of tests/sparse_models.py (int8 weights with a fraction of exact zeros,
stored by the converter's sparse format behind DENSIFY): each is built twice for cortex-m4,
without and with --sparse. The table gives report.json's sparse_weights (the weighted ops'
weights, dense and as built) and weights_bytes, and the flash of the whole compiled program
(.text + .data of every object from arm-none-eabi-gcc -O2, if installed, else the host cc):
kernels included, so the sparse kernel's own code counts against the saving.

    python3 benchmarks/memory/sparse.py --json benchmarks/memory/sparse_results.json \
        > benchmarks/memory/sparse_results.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from run import toolchain  # benchmarks/memory/run.py
from sparse_models import BLOCK_1X4, CONV_CSR, CSR_ROWS, conv, fully_connected

from mcugen.driver import BuildOptions, compile_model, write_files


def models() -> dict[str, bytes]:
    """name -> model bytes; fixed seeds, so the table is reproducible."""
    def rng(seed: int) -> np.random.Generator:
        return np.random.default_rng(seed)

    return {
        "fc 512->256, 80% zeros, CSR": fully_connected(rng(1), 1, 512, 256, 0.8, CSR_ROWS),
        "fc 512->256, 90% zeros, CSR": fully_connected(rng(2), 1, 512, 256, 0.9, CSR_ROWS),
        "fc 512->256, 50% zeros, CSR": fully_connected(rng(3), 1, 512, 256, 0.5, CSR_ROWS),
        "fc 512->256, 80% zeros, 1x4 blocks": fully_connected(rng(4), 1, 512, 256, 0.8, BLOCK_1X4),
        "fc 512->256, 10% zeros, dense": fully_connected(rng(5), 1, 512, 256, 0.1, None),
        "conv 3x3 8->12, 80% zeros, CSR": conv(rng(6), 0.8, CONV_CSR),
    }


def flash(model: bytes, sparse: bool) -> tuple[int, dict[str, Any]]:
    """(.text + .data of the compiled objects, report.json) of one build."""
    compiled = compile_model(model, BuildOptions(target="cortex-m4", sparse_weights=sparse), "model.tflite")
    cc, size, flags = toolchain()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        write_files(compiled, out)
        objects = []
        for source in sorted(out.glob("*.c")):
            subprocess.run([cc, "-std=c99", "-O2", "-ffp-contract=off", *flags, "-I.", "-c", source.name,
                            "-o", source.with_suffix(".o").name], cwd=out, check=True)
            objects.append(source.with_suffix(".o").name)
        text = subprocess.run([size, *objects], cwd=out, check=True, capture_output=True, text=True).stdout
    total = sum(int(line.split()[0]) + int(line.split()[1]) for line in text.splitlines()[1:])
    return total, compiled.report()


def measure(name: str, model: bytes) -> dict[str, Any]:
    dense_flash, dense_report = flash(model, sparse=False)
    sparse_flash, sparse_report = flash(model, sparse=True)
    weights = sparse_report["sparse_weights"]
    return {
        "model": name,
        "weighted_ops_dense_bytes": weights["dense_bytes"],
        "weighted_ops_built_bytes": weights["built_bytes"],
        "weights_bytes_dense": dense_report["weights_bytes"],
        "weights_bytes_sparse": sparse_report["weights_bytes"],
        "flash_dense": dense_flash,
        "flash_sparse": sparse_flash,
        "ops": weights["ops"],
    }


def table(rows: list[dict[str, Any]], compiler: str) -> str:
    lines = [
        f"Flash in bytes; program flash = .text + .data of every object ({compiler} -O2, cortex-m4).",
        "",
        ("| model | weights, dense | weights, --sparse | all constants, dense / --sparse | program flash, dense / "
         "--sparse | saved | built as |"),
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        saved = r["flash_dense"] - r["flash_sparse"]
        forms = "; ".join(f"{op['kind']}: {op['reason']}" for op in r["ops"])
        lines.append(
            f"| {r['model']} | {r['weighted_ops_dense_bytes']} | {r['weighted_ops_built_bytes']} | "
            f"{r['weights_bytes_dense']} / {r['weights_bytes_sparse']} | {r['flash_dense']} / {r['flash_sparse']} | "
            f"{saved} ({100.0 * saved / r['flash_dense']:.1f}%) | {forms} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args()
    rows = [measure(name, model) for name, model in models().items()]
    compiler = toolchain()[0]
    sys.stdout.write(table(rows, compiler))
    if args.json:
        args.json.write_text(json.dumps({"compiler": compiler, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
