"""Filling new frozen slotted dataclass objects without their generated ``__init__``.

A frozen dataclass's ``__init__`` writes each field through ``object.__setattr__`` from Python code (the
class's own ``__setattr__`` refuses): half a microsecond for a few fields. The planner builds several such
values per client (its tasks, each consumer's share, its result row), thousands per plan, and spends
about as long on them as on the rest of the client's result. A slot's own descriptor writes the field in
C; an object made with ``object.__new__`` and filled that way before anyone sees it is the same value
the constructor gives: for a class without ``__post_init__`` directly, for one with it when the builder
sets the fields the ``__post_init__`` derives as it would (`builder` with the slots named; tests compare
each builder's value with the constructor's). The loader builds its tasks and partitions this way too.
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


def builder(cls: type, names: list[str] | None = None) -> Callable[..., Any]:
    """A function of the fields' values, in order, that returns a new ``cls`` filled through its slots:
    the fields of a class without ``__post_init__`` (its constructor's value), or the named slots of one
    with it (the caller passes the fields the ``__post_init__`` would derive, as it would).

    The function is written out for the class, as dataclasses write their ``__init__``: a loop over the
    setters costs twice the calls it makes (815 against 350 ns per object measured), which undid the
    point for objects made by the thousand."""
    if names is None:
        names = [f.name for f in fields(cls)]
        setters = field_setters(cls)
    else:
        setters = slot_setters(cls, names)
    # The parameters are the fields' names (callers may name them); the namespace's own names cannot clash.
    sets = "".join(f"    __set{i}(__value, {name})\n" for i, name in enumerate(names))
    source = f"def build({', '.join(names)}):\n    __value = __new(__cls)\n{sets}    return __value\n"
    namespace: dict[str, Any] = {"__new": new_object, "__cls": cls}
    namespace.update({f"__set{i}": setter for i, setter in enumerate(setters)})
    exec(source, namespace)  # our own classes' fields only: no outside text reaches this
    build: Callable[..., Any] = namespace["build"]
    build.__qualname__ = build.__name__ = f"build_{cls.__name__}"
    return build
