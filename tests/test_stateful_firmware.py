"""A stateful streaming model in firmware: 24 invokes of one instance on the host (ASan, UBSan)
and on a QEMU-emulated Cortex-M4, every step's output equal to TensorFlow Lite Micro's for the
same sequence; then <prefix>_reset_state() starts the sequence again.

The application is written here (main.c below) and built with the Makefile of deploy_apps.py,
which uses the model only through its mcugen.mk.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from deploy_apps import COMMON, MAIN_HEAD, MAKEFILE
from oracles import run_tflm_sequence
from stateful_models import frames, streaming_model
from test_model_sets import QEMU_M4, require

REPO = Path(__file__).resolve().parents[1]
STEPS = 24
RESTART_STEPS = 6

MAIN = r"""
#define STEPS {steps}

/* Runs steps [first, first + count) of the sequence on the one instance, comparing each. */
static int run_steps(int first, int count)
{{
    int t;
    for (t = first; t < first + count; ++t) {{
        if (stream_input(0) == NULL || stream_output(0) == NULL) {{
            return 0;
        }}
        memcpy(stream_input(0), frame + t * STREAM_INPUT0_BYTES, STREAM_INPUT0_BYTES);
        if (stream_invoke() != MCUGEN_OK || !same(stream_output(0), expected + t * STREAM_OUTPUT0_BYTES,
                                                   STREAM_OUTPUT0_BYTES)) {{
            return 0;
        }}
    }}
    return 1;
}}

int main(void)
{{
    check(stream_init() == MCUGEN_OK, "stream init");
    check(run_steps(0, STEPS), "stream {steps} invokes bit-exact with TFLM");
    /* after the sequence the state is not the initial one: step 0's frame gives another output */
    memcpy(stream_input(0), frame, STREAM_INPUT0_BYTES);
    check(stream_invoke() == MCUGEN_OK && !same(stream_output(0), expected, STREAM_OUTPUT0_BYTES),
          "stream state kept across invokes");
    check(stream_reset_state() == MCUGEN_OK && run_steps(0, {restart}), "stream reset_state restarts the sequence");
    say(failures == 0 ? "ALL PASS\n" : "SOME FAIL\n");
    return failures == 0 ? 0 : 1;
}}
"""


def _array(name: str, values: np.ndarray) -> str:
    body = ", ".join(str(int(v)) for v in np.ascontiguousarray(values).ravel())
    return f"static const int8_t {name}[{values.size}] = {{ {body} }};\n"


def write_app(app: Path, model: bytes) -> None:
    xs = frames(STEPS, seed=11)
    want = np.stack([step[0] for step in run_tflm_sequence(model, [[x] for x in xs])])
    assert len(np.unique(want)) >= 20
    app.mkdir(parents=True, exist_ok=True)
    (app / "cases.h").write_text("#include <stdint.h>\n" + _array("frame", xs) + _array("expected", want))
    main = MAIN_HEAD.format(includes='#include "stream_model.h"\n') + MAIN.format(steps=STEPS, restart=RESTART_STEPS)
    (app / "main.c").write_text(main)
    (app / "Makefile").write_text(MAKEFILE.replace("$(COMMON)", str(COMMON)))


@pytest.mark.parametrize("core", ["host", "m4"])
def test_streaming_firmware(core: str, tmp_path: Path) -> None:
    require("make", "cc") if core == "host" else require("make", "arm-none-eabi-gcc", "qemu-system-arm")
    model = streaming_model()
    (tmp_path / "stream.tflite").write_bytes(model)
    gen = tmp_path / "gen"
    target = "host" if core == "host" else "cortex-m4"
    built = subprocess.run([sys.executable, "-m", "mcugen", "build", str(tmp_path / "stream.tflite"), "-o", str(gen),
                            "--no-size", "--target", target], capture_output=True, text=True, timeout=600,
                           env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    assert built.returncode == 0, built.stderr
    app = tmp_path / "app"
    write_app(app, model)
    made = subprocess.run(["make", "--no-print-directory", "-C", str(app), f"DIRS={gen}", f"CORE={core}"],
                          capture_output=True, text=True, timeout=900, check=False)
    assert made.returncode == 0, made.stdout + made.stderr
    command = [*QEMU_M4, "-kernel", str(app / "app.elf")] if core == "m4" else [str(app / "app")]
    ran = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                         check=False)
    assert ran.returncode == 0 and "ALL PASS" in ran.stdout and "FAIL" not in ran.stdout, ran.stdout
    assert ran.stdout.count("PASS stream") == 4, ran.stdout
