"""Frozen dataclasses that pickle by their fields, fast (domain; stdlib only).

An import's reader processes send what they parsed to the one writer pickled (messages,
their parts, token usage: hundreds of thousands of objects per 10^5 messages). A frozen
dataclass with slots unpickles through ``dataclasses``' own ``__setstate__``, which asks
``dataclasses.fields()`` again for every object: most of its time (1.2 s of the writer's
~20 s for 10^5 messages, measured with py-spy). :func:`pickled_by_fields` gives a class the
same state (its field values, in field order: pickles either way read the same) with the
field names looked up once.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

__all__ = ["pickled_by_fields"]

T = TypeVar("T", bound=type)


def pickled_by_fields(cls: T) -> T:
    """Decorate a frozen dataclass (above ``@dataclass``) so that it pickles as a list of its
    field values, set back without ``dataclasses.fields()`` per object."""
    names = tuple(f.name for f in fields(cls))
    assign = object.__setattr__

    def __getstate__(self: Any) -> list[Any]:
        return [getattr(self, name) for name in names]

    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=True):
            assign(self, name, value)

    setattr(cls, "__getstate__", __getstate__)  # noqa: B010 (a method of a made class)
    setattr(cls, "__setstate__", __setstate__)  # noqa: B010
    return cls
