"""Filling new frozen slotted dataclass objects without their generated ``__init__``.

A frozen dataclass's ``__init__`` writes each field through ``object.__setattr__`` from Python code (the
class's own ``__setattr__`` refuses): half a microsecond for a few fields. The planner builds several such
values per client (its tasks, each consumer's share, its result row), thousands per plan, and spends
about as long on them as on the rest of the client's result. A slot's own descriptor writes the field in
C; an object made with ``object.__new__`` and filled that way before anyone sees it is the same value
the constructor gives: for a class without ``__post_init__`` directly, for one with it when the builder
sets the fields the ``__post_init__`` derives as it would (`slot_setters`; tests compare each builder's
value with the constructor's). The loader builds its tasks and partitions this way too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any

new_object = object.__new__


def field_setters(cls: type) -> tuple[Callable[[Any, Any], None], ...]:
    """The slot setters of a frozen slotted dataclass's fields, in field order. Only to fill an object
    just made by `new_object`: a value already handed out stays immutable."""
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} is not a slotted dataclass without __post_init__")
    return slot_setters(cls, [f.name for f in fields(cls)])


def slot_setters(cls: type, names: list[str]) -> tuple[Callable[[Any, Any], None], ...]:
    """The named slots' setters of a frozen slotted dataclass, to fill an object just made, before anyone
    else sees it: a builder of a class with a ``__post_init__`` sets the fields it derives as it does (a
    test says the value equals the constructor's), a function finishing a value it just made sets the rest
    instead of copying it through ``dataclasses.replace``."""
    if not is_dataclass(cls) or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__} is not a slotted dataclass")
    return tuple(cls.__dict__[name].__set__ for name in names)


def filled(cls: type, setters: tuple[Callable[[Any, Any], None], ...], *values: Any) -> Any:
    """A new ``cls`` object with ``values`` set through ``setters`` (`field_setters`), in order: the value
    its constructor gives for a class without ``__post_init__``."""
    value: Any = new_object(cls)
    for setter, field_value in zip(setters, values, strict=True):
        setter(value, field_value)
    return value
