"""The fleet's input tables as scenario dicts (scenario.md) and back, so a notebook can replan or what-if
the real fleet without Spark, and a scenario or a what-if fleet can be planned by the real job.

The conversions are the contract's (`schemas.contract`); this module feeds them pandas or Spark frames and
Delta tables.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from fleet_assignor.explore.frames import normalize
from fleet_assignor.schemas.contract import INPUT_TABLE_NAMES, input_rows_to_scenarios, scenario_to_input_rows

# Input table name -> rows (dicts with tables.md's columns) for one scenario or a fleet of them.
scenario_rows = scenario_to_input_rows


def scenarios_from_tables(tables: Mapping[str, Any], *, apps: Iterable[str] | None = None) -> list[dict]:
    """Scenario dicts (scenario.md) of the applications in the input tables (pandas or Spark frames keyed
    by table name), read with tables.md's rules. Rows the job would reject are not checked here: plan
    those applications with the job."""
    records = {
        name: normalize(tables[name]).to_dict("records") for name in INPUT_TABLE_NAMES if name in tables
    }
    return input_rows_to_scenarios(records, apps=apps)


def load_scenarios(
    input_dir: str, *, versions: Mapping[str, int] | None = None, apps: Iterable[str] | None = None
) -> list[dict]:
    """`scenarios_from_tables` of the Delta input tables under `input_dir` (at `versions`, e.g. a run's
    `input_versions`), read with delta-rs."""
    from fleet_assignor.explore.load import _read

    base = Path(input_dir)
    versions = dict(versions or {})
    tables = {
        name: _read(base / name, version=versions.get(name))
        for name in INPUT_TABLE_NAMES
        if (base / name).exists()
    }
    return scenarios_from_tables(tables, apps=apps)
