"""Task identifiers: ``"<subtopology>_<partition>"`` or ``"<topology>__<subtopology>_<partition>"``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

_NAMED_DELIMITER = "__"
_CANONICAL_INT = re.compile(r"0|[1-9][0-9]*")


class TaskIdFormatError(ValueError):
    """A task id text that does not parse, or is not in canonical form."""


@dataclass(frozen=True, slots=True)
class TaskId:
    """A task of a Kafka Streams topology: one partition of one subtopology.

    Ordering follows Kafka: by topology name (when both have one), then subtopology, then partition,
    numerically. Comparing a named id with an unnamed one raises, as Kafka does.
    """

    subtopology: int
    partition: int
    topology_name: str | None = None
    # Task ids are hashed and sorted millions of times per fleet run: key and hash are computed once.
    # The key puts unnamed ids first, so that `sort_key` orders even a mix (only comparisons refuse one).
    sort_key: tuple[bool, str, int, int] = field(init=False, repr=False, compare=False)
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        name = self.topology_name
        object.__setattr__(self, "sort_key", (name is not None, name or "", self.subtopology, self.partition))
        object.__setattr__(self, "_hash", hash((self.subtopology, self.partition, self.topology_name)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple:
        # Rebuilt through __init__: the cached hash of the topology name differs between interpreters
        # (PYTHONHASHSEED), so a pickled one would break set and dict lookups in a Spark or pool worker.
        return (TaskId, (self.subtopology, self.partition, self.topology_name))

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
        base = f"{self.subtopology}_{self.partition}"
        return base if self.topology_name is None else f"{self.topology_name}{_NAMED_DELIMITER}{base}"

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
