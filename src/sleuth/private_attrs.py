"""Reading a pydantic model's private attribute without pydantic's slow path.

`model._name` on a pydantic model goes through its `__getattr__`, which raises and
catches two AttributeErrors before it finds a private attribute: 3-5 µs a read, and
the settings of the guard, the result screen, the content policy and the claims are
read so many times a search. The attributes live in `__pydantic_private__`; reading
them from there costs a dict lookup.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

__all__ = ["private"]


def private(model: BaseModel, name: str) -> Any:
    """The private attribute `name` of `model` (None when it is not set)."""
    return (model.__pydantic_private__ or {}).get(name)
