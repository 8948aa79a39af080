"""Code generation: the plain data the templates render (generate.py), the tiled chains' stripe
loops (stripes.py), the memory pools and guards (memory.py) and C names (cnames.py). Each op's
C comes from its definition's emitter (mcugen/ops)."""
