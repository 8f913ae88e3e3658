"""Finding an assignor by name: the built-in ones, or ``module:Class`` for a custom KIP-924 `TaskAssignor`.

Built-in assignors are imported only when asked for, so loading one never depends on the others.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Collection

from fleet_assignor.assignor.task_assignor import TaskAssignor

HIGH_AVAILABILITY = "high_availability"
STICKY = "sticky"
FALLBACK_PRIOR = "fallback_prior"
STREAMS_STICKY = "streams_sticky"

BUILTIN_ASSIGNORS: dict[str, str] = {
    HIGH_AVAILABILITY: "fleet_assignor.assignor.high_availability:HighAvailabilityTaskAssignor",
    STICKY: "fleet_assignor.assignor.sticky:StickyTaskAssignor",
    FALLBACK_PRIOR: "fleet_assignor.assignor.fallback:FallbackPriorTaskAssignor",
    # Kafka 4.4.0's broker-side assignor of the streams rebalance protocol (KIP-1071).
    STREAMS_STICKY: "fleet_assignor.assignor.streams_sticky:StreamsStickyTaskAssignor",
}

_CLASS_REFERENCE = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")


class UnknownAssignorError(ValueError):
    """The assignor name is not a built-in one, or the ``module:Class`` cannot be used (INVALID_INPUT)."""


def is_class_reference(name: str) -> bool:
    """True for a syntactically valid ``module:Class`` (nothing is imported)."""
    return bool(_CLASS_REFERENCE.fullmatch(name))


# Each built-in class once resolved: the fleet job loads an assignor for every plan (and every simulated
# round of the rollout report), and an import lookup per load was ~1% of a small application's plan.
_BUILTIN_CLASSES: dict[str, type] = {}


def load_assignor(name: str, allowed: Collection[str] | None = None) -> TaskAssignor:
    """A fresh instance of the named assignor (built-in name or ``module:Class``).

    `allowed`: the ``module:Class`` names that may be imported (the fleet job's `allowed_assignors`); any
    other custom name is refused before anything is imported. None allows every name (the one-app CLI,
    whose user names the class on their own command line)."""
    if not isinstance(name, str):
        raise UnknownAssignorError(f"assignor name must be a string, got {name!r}")
    reference = BUILTIN_ASSIGNORS.get(name)
    if reference is not None:
        builtin = _BUILTIN_CLASSES.get(name)
        if builtin is None:
            builtin = _BUILTIN_CLASSES[name] = _resolve(name, reference)
        return _instantiate(name, builtin)
    if ":" not in name:
        known = ", ".join(BUILTIN_ASSIGNORS)
        raise UnknownAssignorError(f"unknown assignor {name!r}: use one of {known} or module:Class")
    if not is_class_reference(name):
        raise UnknownAssignorError(f"assignor {name!r} is not a valid module:Class reference")
    if allowed is not None and name not in allowed:
        raise UnknownAssignorError(
            f"assignor {name!r} is not allowed by the job's configuration (allowed_assignors: "
            f"{', '.join(sorted(allowed)) or 'none'}); nothing was imported"
        )
    return _instantiate(name, _resolve(name, name))


def _resolve(name: str, reference: str) -> type:
    module_name, _, qualname = reference.partition(":")
    try:
        target: object = importlib.import_module(module_name)
    except Exception as e:
        raise UnknownAssignorError(f"assignor {name!r}: cannot import module {module_name!r}: {e}") from e
    for part in qualname.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise UnknownAssignorError(
                f"assignor {name!r}: module {module_name!r} has no {qualname!r}"
            ) from None
    if not isinstance(target, type):
        raise UnknownAssignorError(f"assignor {name!r}: {qualname!r} is not a class")
    if not callable(getattr(target, "assign", None)):
        raise UnknownAssignorError(f"assignor {name!r}: class {qualname!r} has no assign() method")
    return target


def _instantiate(name: str, cls: type) -> TaskAssignor:
    try:
        return cls()
    except Exception as e:
        raise UnknownAssignorError(f"assignor {name!r}: cannot create an instance: {e}") from e
