"""Shared test fixtures: where the public models are, and a per-session harness cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PUBLIC_MODELS = REPO.parent / "shared" / "models"
PUBLIC_NAMES = ("ad_autoencoder", "ic_resnet8", "kws_dscnn", "vww_mobilenet_v1_025")


def public_model(name: str) -> Path:
    """A public benchmark model; skipped locally when shared/ is absent, never in CI."""
    path = PUBLIC_MODELS / f"{name}.tflite"
    if not path.exists():
        if os.environ.get("CI") == "true":
            raise FileNotFoundError(f"{path}: the public models must be beside the repo in CI")
        pytest.skip(f"public models not found at {PUBLIC_MODELS}")
    return path


@pytest.fixture(scope="session", autouse=True)
def _harness_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Compile harnesses into a cache private to this test session unless one is configured."""
    if "MCUGEN_CACHE_DIR" not in os.environ:
        os.environ["MCUGEN_CACHE_DIR"] = str(tmp_path_factory.mktemp("mcugen-cache"))
