"""The NPU side of a build: figures of Vela-compiled models (figures.py; the op itself is the npu op
family, mcugen/ops/npu/, its reading mcugen/frontend/vela.py); the four Ethos-U55 sizes
(config.py); and mcugen's own compiler's support rules (rules.py, support.py) and NPU segments
(partition.py)."""
