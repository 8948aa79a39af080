"""Transitional: the parameters of the families not yet moved into mcugen/ops/<family>/prepare.py."""
