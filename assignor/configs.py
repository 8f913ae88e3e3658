"""The assignment configs every assignor reads (Kafka's ``AssignmentConfigs``)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from fleet_assignor.assignor.errors import ConfigException
from fleet_assignor.assignor.limits import MAX_INT, MAX_LONG

MAX_RACK_AWARE_ASSIGNMENT_TAGS = 5
MIN_PROBING_REBALANCE_INTERVAL_MS = 60_000


class RackAwareStrategy(enum.Enum):
    """``rack.aware.assignment.strategy``."""

    NONE = "none"
    MIN_TRAFFIC = "min_traffic"
    BALANCE_SUBTOPOLOGY = "balance_subtopology"

    @classmethod
    def parse(cls, value: RackAwareStrategy | str) -> RackAwareStrategy:
        if isinstance(value, cls):
            return value
        for strategy in cls:
            if strategy.value == value:
                return strategy
        allowed = ", ".join(s.value for s in cls)
        raise ConfigException("rack_aware_assignment_strategy", value, f"must be one of {allowed}")


def _require_int(name: str, value: object, minimum: int, maximum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigException(name, value, f"must be an integer from {minimum} to {maximum}")
    if not minimum <= value <= maximum:
        raise ConfigException(name, value, f"must be from {minimum} to {maximum}")


@dataclass(frozen=True, slots=True)
class AssignmentConfigs:
    """Validated on construction: an invalid value raises `ConfigException` naming the config.

    Defaults are Kafka's. Beyond Kafka's validators we also reject negative standby counts and negative
    rack costs (POLICY.md: unusable input), which Kafka leaves unchecked, and values beyond the range of
    Kafka's config type (int: 2^31-1, long: 2^63-1; `assignor.limits`).
    """

    acceptable_recovery_lag: int = 10_000
    max_warmup_replicas: int = 2
    num_standby_replicas: int = 0
    probing_rebalance_interval_ms: int = 600_000
    rack_aware_assignment_tags: tuple[str, ...] = ()
    rack_aware_traffic_cost: int | None = None
    rack_aware_non_overlap_cost: int | None = None
    rack_aware_assignment_strategy: RackAwareStrategy = RackAwareStrategy.NONE

    def __post_init__(self) -> None:
        _require_int("acceptable_recovery_lag", self.acceptable_recovery_lag, 0, MAX_LONG)
        _require_int("max_warmup_replicas", self.max_warmup_replicas, 1, MAX_INT)
        _require_int("num_standby_replicas", self.num_standby_replicas, 0, MAX_INT)
        # Deadlines derived from it saturate (assignor.limits.deadline_after): any long is usable.
        _require_int(
            "probing_rebalance_interval_ms",
            self.probing_rebalance_interval_ms,
            MIN_PROBING_REBALANCE_INTERVAL_MS,
            MAX_LONG,
        )
        tags = self.rack_aware_assignment_tags
        if isinstance(tags, str) or not all(isinstance(tag, str) for tag in tags):
            raise ConfigException("rack_aware_assignment_tags", tags, "must be a list of strings")
        object.__setattr__(self, "rack_aware_assignment_tags", tuple(tags))
        if len(tags) > MAX_RACK_AWARE_ASSIGNMENT_TAGS:
            raise ConfigException(
                "rack_aware_assignment_tags",
                list(tags),
                f"at most {MAX_RACK_AWARE_ASSIGNMENT_TAGS} tags allowed",
            )
        for name in ("rack_aware_traffic_cost", "rack_aware_non_overlap_cost"):
            value = getattr(self, name)
            if value is not None:
                _require_int(name, value, 0, MAX_INT)
        object.__setattr__(
            self,
            "rack_aware_assignment_strategy",
            RackAwareStrategy.parse(self.rack_aware_assignment_strategy),
        )
