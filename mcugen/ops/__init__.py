"""Op kinds: one definition per kind (an OpDef, base.py), grouped by family in the packages
below and gathered by registry.py, which the pipeline's stages read."""
