"""Task identifiers: ``"<subtopology>_<partition>"`` or ``"<topology>__<subtopology>_<partition>"``."""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable, Iterable
from functools import lru_cache
from operator import attrgetter
from typing import Any, TypeVar

_NAMED_DELIMITER = "__"
_CANONICAL_INT = re.compile(r"0|[1-9][0-9]*")


class TaskIdFormatError(ValueError):
    """A task id text that does not parse, or is not in canonical form."""


# One object per id: equality is identity and the hash is the object's own, both answered in C. A planning
# run hashes task ids hundreds of thousands of times per application, and a hash written in Python was a
# fifth of a plan's time. The table holds the ids alive now, weakly: a long-lived worker planning many
# applications with their own topology names does not keep every id it ever saw (`TaskId.parse` keeps the
# most recent 65,536 alive).
_INTERNED: weakref.WeakValueDictionary[tuple[int, int, str | None], TaskId] = weakref.WeakValueDictionary()
_INTERNING = threading.Lock()  # two threads making the same new id must end with one object


class TaskId:
    """A task of a Kafka Streams topology: one partition of one subtopology.

    Ordering follows Kafka: by topology name (when both have one), then subtopology, then partition,
    numerically. Comparing a named id with an unnamed one raises, as Kafka does. Immutable; equal ids are
    the same object.
    """

    __slots__ = ("__weakref__", "order_key", "partition", "sort_key", "subtopology", "text", "topology_name")

    subtopology: int
    partition: int
    topology_name: str | None
    # Sorted millions of times per fleet run: the key is built once. It puts unnamed ids first, so that
    # `sort_key` orders even a mix (only comparisons refuse one).
    sort_key: tuple[bool, str, int, int]
    # The same order as one int for an unnamed id (subtopology and partition are below 2^31), compared
    # several times faster than the tuple; a named id's is its `sort_key`. Ints and tuples do not compare,
    # so a sort by it refuses a mix (`sorted_task_ids` then falls back).
    order_key: int | tuple[bool, str, int, int]
    # The text form, made once: every output row names its task by it (tens of rows per application).
    text: str

    def __new__(cls, subtopology: int, partition: int, topology_name: str | None = None) -> TaskId:
        key = (subtopology, partition, topology_name)
        found = _INTERNED.get(key)
        if found is not None:
            return found
        with _INTERNING:
            found = _INTERNED.get(key)
            if found is None:
                found = object.__new__(cls)
                init = object.__setattr__
                init(found, "subtopology", subtopology)
                init(found, "partition", partition)
                init(found, "topology_name", topology_name)
                name = topology_name
                init(found, "sort_key", (name is not None, name or "", subtopology, partition))
                init(
                    found, "order_key", found.sort_key if name is not None else subtopology << 32 | partition
                )
                base = f"{subtopology}_{partition}"
                init(found, "text", base if name is None else f"{name}{_NAMED_DELIMITER}{base}")
                _INTERNED[key] = found
            return found

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"TaskId is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"TaskId is immutable: cannot delete {name!r}")

    def __reduce__(self) -> tuple:
        # Rebuilt through the constructor, so that an unpickled id is the receiving interpreter's object.
        return (TaskId, (self.subtopology, self.partition, self.topology_name))

    def __copy__(self) -> TaskId:
        return self

    def __deepcopy__(self, memo: dict) -> TaskId:
        return self

    @classmethod
    def parse(cls, text: str) -> TaskId:
        """Parse the text form; raise `TaskIdFormatError` unless canonical (``"0_1"``, not ``"00_1"``)."""
        if not isinstance(text, str):
            raise TaskIdFormatError(f"task id must be a string, got {text!r}")
        return _parse_text(text)

    @classmethod
    def _from_text(cls, text: str) -> TaskId:
        name: str | None = None
        rest = text
        if _NAMED_DELIMITER in text:
            name, rest = text.split(_NAMED_DELIMITER, 1)
            if not name:
                raise TaskIdFormatError(f"task id {text!r} has an empty topology name")
        sub, sep, part = rest.partition("_")
        if not sep or not _CANONICAL_INT.fullmatch(sub) or not _CANONICAL_INT.fullmatch(part):
            raise TaskIdFormatError(f"task id {text!r} is not '<subtopology>_<partition>' in canonical form")
        return cls(int(sub), int(part), name)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"TaskId({str(self)!r})"

    def _check_comparable(self, other: TaskId) -> None:
        if (self.topology_name is None) != (other.topology_name is None):
            raise TypeError("can't compare a TaskId with a topology name to one without")

    def __lt__(self, other: TaskId) -> bool:
        self._check_comparable(other)
        return self.sort_key < other.sort_key

    def __le__(self, other: TaskId) -> bool:
        self._check_comparable(other)
        return self.sort_key <= other.sort_key

    def __gt__(self, other: TaskId) -> bool:
        self._check_comparable(other)
        return self.sort_key > other.sort_key

    def __ge__(self, other: TaskId) -> bool:
        self._check_comparable(other)
        return self.sort_key >= other.sort_key


# A fleet run parses the same few thousand ids over and over (every app has "0_0"); ids are immutable.
@lru_cache(maxsize=1 << 16)
def _parse_text(text: str) -> TaskId:
    return TaskId._from_text(text)


_T = TypeVar("_T")
_ORDER_KEY: Callable[[TaskId], int | tuple[bool, str, int, int]] = attrgetter("order_key")
# TaskId order that also copes with a named id among unnamed ones (only an invalid assignment from outside
# can mix them; Kafka's comparison would raise).
_SORT_KEY: Callable[[TaskId], tuple[bool, str, int, int]] = attrgetter("sort_key")


def in_task_order(tasks: Iterable[TaskId]) -> list[TaskId]:
    """``sorted(tasks)``, sorted by `order_key` (one int per unnamed id, compared in C, instead of a Python
    ``__lt__`` per comparison). Where the keys do not sort (named among unnamed ids, or something other
    than a TaskId that a custom assignor put in), the items are sorted as ``sorted`` does, with its result
    or its error."""
    return sorted_task_ids(tasks, None)


def sorted_task_ids(
    tasks: Iterable[TaskId], fallback: Callable[[TaskId], Any] | None = _SORT_KEY
) -> list[TaskId]:
    """``sorted(tasks, key=fallback)`` for the keys of TaskId order (`sort_key`, or Kafka's comparison's
    (name, subtopology, partition), which refuses a mix of named and unnamed ids; None: TaskId's own
    comparison): sorted by `order_key`, and by ``fallback`` only where `order_key` cannot order them (a mix
    of named and unnamed ids, or items without the key). Ids are distinct, so the order does not depend on
    the input's."""
    return sorted_by_order_key(tasks, _ORDER_KEY, fallback)


def sorted_by_order_key(
    items: Iterable[_T], order_key: Callable[[_T], Any], fallback: Callable[[_T], Any] | None
) -> list[_T]:
    """``items`` sorted by the `order_key` of their task ids (``order_key(item)``), or where those keys do
    not sort (a mix of named and unnamed ids, or an item without one) by ``fallback`` as ``sorted`` does,
    with its result or its error."""
    listed = list(items)
    try:
        listed.sort(key=order_key)
    except (TypeError, AttributeError):
        listed.sort(key=fallback)
    return listed
