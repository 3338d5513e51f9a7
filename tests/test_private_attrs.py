from __future__ import annotations

from typing import Any

from pydantic import BaseModel, PrivateAttr

from sleuth.private_attrs import private


class Tables(BaseModel):
    words: list[str] = []
    _compiled: frozenset[str] = PrivateAttr()
    _unset: int = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        self._compiled = frozenset(self.words)


def test_a_private_attribute_reads_as_pydantic_gives_it() -> None:
    tables = Tables(words=["cache", "index"])
    assert private(tables, "_compiled") == tables._compiled == frozenset({"cache", "index"})


def test_a_private_attribute_never_set_reads_as_none() -> None:
    assert private(Tables(), "_unset") is None
