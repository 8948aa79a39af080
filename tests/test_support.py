"""The support rules as data: every kind's rules are documented, and the document is current."""

from __future__ import annotations

from conftest import REPO

from mcugen.ops import registry
from mcugen.ops.base import rule_texts
from mcugen.support import supported_ops_markdown


def test_supported_ops_doc_is_current() -> None:
    doc = (REPO / "docs" / "supported_ops.md").read_text()
    assert doc == supported_ops_markdown(), "regenerate: python -m mcugen.support > docs/supported_ops.md"


def test_every_rule_reads_as_a_sentence() -> None:
    for definition in registry.definitions():
        assert definition.rules, definition.kind
        assert all(rule.__doc__ and rule.__doc__.strip().endswith(".") for rule in definition.rules), \
            definition.kind
        assert all(text.strip().endswith(".") for text in rule_texts(definition)), definition.kind
