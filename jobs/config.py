"""The job's settings: conf/defaults.toml (or --conf FILE), then command-line options."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from fleet_assignor.assignor.limits import instant_range_text, is_instant
from fleet_assignor.assignor.registry import UnknownAssignorError, is_class_reference, load_assignor
from fleet_assignor.assignor.rollout import RolloutSettings
from fleet_assignor.jobs.grouped import GroupedMapKind
from fleet_assignor.schemas.contract import INPUT_TABLES, OUTPUT_TABLES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEFAULT_CONF = Path(__file__).resolve().parents[1] / "conf" / "defaults.toml"
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")


class ConfigError(ValueError):
    """A setting that cannot be used; reported before Spark starts."""


@dataclass(frozen=True)
class TableLocation:
    """A Delta table by path, or by catalog name when no path is given."""

    name: str  # the contract name (tables.md)
    path: str | None = None
    catalog_name: str | None = None

    def __str__(self) -> str:
        return self.path or self.catalog_name or self.name


@dataclass(frozen=True)
class JobConfig:
    input_path: str | None = None
    output_path: str | None = None
    input_catalog: dict[str, str] = field(default_factory=dict)
    output_catalog: dict[str, str] = field(default_factory=dict)
    run_id: str | None = None
    assignor: str | None = None
    # Delta version per input table; tables not listed are read at their latest version.
    as_of_versions: dict[str, int] = field(default_factory=dict)
    planned_at_ms: int | None = None
    grouped_map: GroupedMapKind = GroupedMapKind.ARROW
    shuffle_partitions: int = 0
    master: str | None = None
    # Custom `module:Class` assignors that `applications.assignor` may name (the trust model: README).
    allowed_assignors: frozenset[str] = frozenset()
    # The rollout report's simulation bounds, restore speed and risk thresholds (conf `[rollout]`).
    rollout: RolloutSettings = field(default_factory=RolloutSettings)
    # Exit non-zero (3) after a completed run when any application's rollout raised a risk flag.
    fail_on_risk: bool = False

    def input_location(self, table: str) -> TableLocation:
        if self.input_path:
            return TableLocation(table, path=_join(self.input_path, table))
        return TableLocation(table, catalog_name=self.input_catalog.get(table, table))

    def output_location(self, table: str) -> TableLocation:
        if self.output_path:
            return TableLocation(table, path=_join(self.output_path, table))
        return TableLocation(table, catalog_name=self.output_catalog.get(table, table))


def _join(base: str, table: str) -> str:
    """DIR/<table>; works for local paths and URIs (s3://..., dbfs:/...) alike."""
    return f"{base.rstrip('/')}/{table}"


JOB_KEYS = ("grouped_map", "shuffle_partitions", "allowed_assignors")


def load_conf_file(path: str | Path | None) -> JobConfig:
    """JobConfig from a TOML file (conf/defaults.toml when none is given).

    A file named explicitly must exist and parse, and every section and key must be known: a typo must
    not quietly fall back to defaults (ConfigError names the file and the key)."""
    source = Path(path) if path else DEFAULT_CONF
    if not source.is_file():
        if path:
            raise ConfigError(f"conf file {source}: no such file")
        raw: dict[str, Any] = {}
    else:
        try:
            raw = tomllib.loads(source.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"conf file {source}: cannot be read: {e}") from None
    unknown_sections = sorted(set(raw) - {"job", "inputs", "outputs", "rollout"})
    if unknown_sections:
        raise ConfigError(f"conf file {source}: unknown section(s) {', '.join(unknown_sections)}")
    job, inputs, outputs = raw.get("job", {}), raw.get("inputs", {}), raw.get("outputs", {})
    for section, names, known in (
        ("job", job, JOB_KEYS),
        ("inputs", inputs, INPUT_TABLES),
        ("outputs", outputs, OUTPUT_TABLES),
    ):
        if not isinstance(names, dict):
            raise ConfigError(f"conf file {source}: [{section}] must be a table")
        unknown = sorted(set(names) - set(known))
        if unknown:
            raise ConfigError(f"conf file {source}: unknown key(s) in [{section}]: {', '.join(unknown)}")
        for key, value in names.items():
            if section != "job" and not (isinstance(value, str) and value):
                raise ConfigError(f"conf file {source}: [{section}] {key} must be a table name")
    try:
        shuffle = job.get("shuffle_partitions", 0)
        if isinstance(shuffle, bool) or not isinstance(shuffle, int) or not 0 <= shuffle <= 100_000:
            raise ValueError(f"shuffle_partitions must be an integer from 0 to 100000, got {shuffle!r}")
        rollout = _rollout_settings(source, raw.get("rollout", {}))
        return JobConfig(
            rollout=rollout,
            input_catalog=dict(inputs),
            output_catalog=dict(outputs),
            grouped_map=GroupedMapKind.parse(job.get("grouped_map", GroupedMapKind.ARROW.value)),
            shuffle_partitions=shuffle,
            allowed_assignors=_allowed_assignors(job.get("allowed_assignors", [])),
        )
    except ValueError as e:
        raise ConfigError(f"conf file {source}: [job] {e}") from None


def _rollout_settings(source: Path, raw: object) -> RolloutSettings:
    if not isinstance(raw, dict):
        raise ConfigError(f"conf file {source}: [rollout] must be a table")
    try:
        return RolloutSettings.from_mapping(raw)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"conf file {source}: [rollout] {e}") from None


def _allowed_assignors(raw: object) -> frozenset[str]:
    if not isinstance(raw, list) or not all(isinstance(name, str) for name in raw):
        raise ValueError(f"allowed_assignors must be a list of module:Class names, got {raw!r}")
    for name in raw:
        if not is_class_reference(name):
            raise ValueError(f"allowed_assignors: {name!r} is not a module:Class name")
    return frozenset(raw)


def check_assignors(config: JobConfig) -> None:
    """Fail before anything is read or written when the job's own assignor settings cannot plan: an
    unknown --assignor, or a custom one (given or allowlisted) that does not import or instantiate."""
    names = ([config.assignor] if config.assignor is not None else []) + sorted(config.allowed_assignors)
    for name in names:
        try:
            load_assignor(name)
        except UnknownAssignorError as e:
            where = "--assignor" if name == config.assignor else "allowed_assignors"
            raise ConfigError(f"{where}: {e}") from None


def check_run_id(run_id: str) -> str:
    if not _RUN_ID.match(run_id):
        raise ConfigError(f"run id {run_id!r}: use letters, digits, '_', '.', ':' or '-' (at most 128)")
    return run_id


def run_id_for(planned_at_ms: int) -> str:
    """A run id derived from the planning instant, e.g. run-20260101T000000.000Z."""
    instant = datetime.fromtimestamp(planned_at_ms / 1000, tz=timezone.utc)
    return "run-" + instant.strftime("%Y%m%dT%H%M%S.") + f"{planned_at_ms % 1000:03d}Z"


def parse_instant_ms(text: str) -> int:
    """Epoch milliseconds, or an ISO-8601 instant (a time without zone is UTC), within the instants every
    output reader can hold (assignor.limits)."""
    if re.fullmatch(r"-?\d+", text.strip()):
        ms = int(text)
    else:
        try:
            instant = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ConfigError(f"--planned-at {text!r}: use epoch milliseconds or ISO-8601") from None
        if instant.tzinfo is None:
            instant = instant.replace(tzinfo=timezone.utc)
        ms = round(instant.timestamp() * 1000)
    if not is_instant(ms):
        raise ConfigError(f"--planned-at {text!r}: must be within {instant_range_text()}")
    return ms


def parse_versions(values: list[str]) -> dict[str, int]:
    """--as-of-version N (every input table) or TABLE=N (one table), repeatable."""
    versions: dict[str, int] = {}
    for value in values:
        table, _, number = value.rpartition("=")
        try:
            version = int(number)
        except ValueError:
            raise ConfigError(f"--as-of-version {value!r}: use N or TABLE=N") from None
        if version < 0:
            raise ConfigError(f"--as-of-version {value!r}: versions start at 0")
        if table:
            if table not in INPUT_TABLES:
                raise ConfigError(f"--as-of-version {value!r}: unknown input table {table!r}")
            versions[table] = version
        else:
            versions.update(dict.fromkeys(INPUT_TABLES, version))
    return versions


__all__ = [
    "ConfigError",
    "JobConfig",
    "TableLocation",
    "check_assignors",
    "check_run_id",
    "load_conf_file",
    "parse_instant_ms",
    "parse_versions",
    "replace",
    "run_id_for",
]
