"""The support table and its generated documentation."""

from __future__ import annotations

from conftest import REPO

from mcugen.ir import OpKind
from mcugen.support import RULES, supported_ops_markdown


def test_supported_ops_doc_is_current() -> None:
    doc = (REPO / "docs" / "supported_ops.md").read_text()
    assert doc == supported_ops_markdown(), "regenerate: python -m mcugen.support > docs/supported_ops.md"


def test_every_op_kind_has_rules_with_docstrings() -> None:
    assert set(RULES) == set(OpKind)
    for kind, rules in RULES.items():
        assert rules, kind
        assert all(rule.__doc__ and rule.__doc__.strip().endswith(".") for rule in rules), kind
