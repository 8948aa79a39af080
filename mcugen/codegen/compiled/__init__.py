"""mcugen's templates compiled to Python (codegen/templating.py), one module per template:
written by `python -m mcugen.codegen.precompile`, never edited by hand."""
