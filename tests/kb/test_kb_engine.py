"""The full-text engine's documents: built field by field, equal to the keyword form."""

from __future__ import annotations

import tantivy

from sleuth.kb.engine import Tagged, _document


def test_a_section_document_equals_the_one_the_keyword_constructor_builds() -> None:
    for scope in (Tagged(), Tagged("pg", ("sql", "admin"), 1_700_000_000)):
        expected = tantivy.Document(
            section=7,
            doc=3,
            title="popul a databas disabl autocommit",
            text="use one transact",
            code="",
            source=scope.source,
            modified=scope.modified,
        )
        for tag in scope.tags:
            expected.add_text("tags", tag)
        built = _document(
            7, 3, "popul a databas", "disabl autocommit", "use one transact", "", scope
        )
        assert built == expected
        assert built.to_dict() == expected.to_dict()
