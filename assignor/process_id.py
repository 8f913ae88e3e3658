"""KafkaStreams client identifiers, ordered as Java's ``UUID.compareTo`` orders them."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from uuid import UUID


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= (1 << 63) else value


@dataclass(frozen=True, slots=True, order=True)
class ProcessId:
    """One KafkaStreams client. Orders by the UUID's two 64-bit halves read as *signed* numbers.

    Python's own UUID order is unsigned; Kafka's tie-breaks ("smaller process id first") use the signed one,
    so ``8…``-``f…`` ids sort before ``0…``-``7…`` ids.
    """

    sort_key: tuple[int, int] = field(repr=False)
    uuid: uuid.UUID = field(compare=False)
    # The text the id was given as, kept byte for byte so that output rows join back to the input rows
    # (`{...}`, upper case and 32 hex digits are the same UUID, but not the same text); None: canonical.
    # Equality, order and hash are the UUID's: two spellings of one id in one application are duplicates.
    _text: str | None = field(default=None, repr=False, compare=False)
    # Hashed for every dict and set lookup of the assignors: computed once, the same value the generated
    # dataclass hash gives (hash of the compared fields), so set and dict orders do not change.
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.sort_key,)))
        if self._text is None:
            object.__setattr__(self, "_text", str(self.uuid))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple:
        # Rebuilt through __init__ so the cached hash is always this interpreter's (as TaskId).
        return (ProcessId, (self.sort_key, self.uuid, self._text))

    @classmethod
    def of(cls, value: UUID | int | str) -> ProcessId:
        """From a UUID, its text, or an int n meaning ``UUID(msb=0, lsb=n)`` (the test fixtures' ids)."""
        if isinstance(value, int):
            value = uuid.UUID(int=value)
        elif isinstance(value, str):
            return cls.parse(value)
        return cls._of_uuid(value, None)

    @classmethod
    def _of_uuid(cls, value: UUID, text: str | None) -> ProcessId:
        msb, lsb = value.int >> 64, value.int & ((1 << 64) - 1)
        return cls((_signed64(msb), _signed64(lsb)), value, text)

    @classmethod
    def parse(cls, text: str) -> ProcessId:
        """Parse UUID text (any spelling Python's UUID reads); the id keeps `text` as its text. Raise
        ValueError otherwise."""
        if not isinstance(text, str):
            raise ValueError(f"process id must be a UUID string, got {text!r}")
        try:
            parsed = uuid.UUID(text)
        except ValueError:
            raise ValueError(f"process id {text!r} is not a UUID") from None
        return cls._of_uuid(parsed, text)

    @property
    def canonical(self) -> str:
        """The id as Kafka writes it (java.util.UUID#toString)."""
        return str(self.uuid)

    def __str__(self) -> str:
        return self._text  # type: ignore[return-value]  # set by __post_init__

    def __repr__(self) -> str:
        return f"ProcessId({self._text!r})"
