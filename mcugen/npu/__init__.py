"""The NPU side of a build: figures of Vela-compiled models (figures.py). The op itself is the
npu op family (mcugen/ops/npu/), its reading mcugen/frontend/vela.py."""
