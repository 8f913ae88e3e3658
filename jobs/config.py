"""The job's settings: conf/defaults.toml (or --conf FILE), then command-line options."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jobs.grouped import GroupedMapKind
from schemas.tables import INPUT_TABLES, OUTPUT_TABLES

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


def load_conf_file(path: str | Path | None) -> JobConfig:
    """JobConfig from a TOML file (conf/defaults.toml when none is given)."""
    source = Path(path) if path else DEFAULT_CONF
    try:
        raw: dict[str, Any] = tomllib.loads(source.read_text(encoding="utf-8")) if source.exists() else {}
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"cannot read conf file {source}: {e}") from None
    job = raw.get("job", {})
    inputs, outputs = raw.get("inputs", {}), raw.get("outputs", {})
    for section, names, known in (("inputs", inputs, INPUT_TABLES), ("outputs", outputs, OUTPUT_TABLES)):
        unknown = sorted(set(names) - set(known))
        if unknown:
            raise ConfigError(f"conf file {source}: unknown table(s) in [{section}]: {', '.join(unknown)}")
    try:
        return JobConfig(
            input_catalog=dict(inputs),
            output_catalog=dict(outputs),
            grouped_map=GroupedMapKind.parse(job.get("grouped_map", GroupedMapKind.ARROW.value)),
            shuffle_partitions=int(job.get("shuffle_partitions", 0)),
        )
    except ValueError as e:
        raise ConfigError(f"conf file {source}: {e}") from None


def check_run_id(run_id: str) -> str:
    if not _RUN_ID.match(run_id):
        raise ConfigError(f"run id {run_id!r}: use letters, digits, '_', '.', ':' or '-' (at most 128)")
    return run_id


def run_id_for(planned_at_ms: int) -> str:
    """A run id derived from the planning instant, e.g. run-20260101T000000.000Z."""
    instant = datetime.fromtimestamp(planned_at_ms / 1000, tz=timezone.utc)
    return "run-" + instant.strftime("%Y%m%dT%H%M%S.") + f"{planned_at_ms % 1000:03d}Z"


def parse_instant_ms(text: str) -> int:
    """Epoch milliseconds, or an ISO-8601 instant (a time without zone is UTC)."""
    if re.fullmatch(r"-?\d+", text.strip()):
        return int(text)
    try:
        instant = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"--planned-at {text!r}: use epoch milliseconds or ISO-8601") from None
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=timezone.utc)
    return int(instant.timestamp() * 1000)


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
    "check_run_id",
    "load_conf_file",
    "parse_instant_ms",
    "parse_versions",
    "replace",
    "run_id_for",
]
