"""Job settings: conf/defaults.toml, run ids, planning instants, versions."""

from __future__ import annotations

import pytest

from jobs.config import (
    ConfigError,
    JobConfig,
    check_run_id,
    load_conf_file,
    parse_instant_ms,
    parse_versions,
    run_id_for,
)
from jobs.grouped import GroupedMapKind
from schemas.tables import INPUT_TABLES, OUTPUT_TABLES


def test_defaults_file_names_every_table_and_arrow():
    config = load_conf_file(None)
    assert config.grouped_map is GroupedMapKind.ARROW
    assert set(config.input_catalog) == set(INPUT_TABLES)
    assert set(config.output_catalog) == set(OUTPUT_TABLES)


def test_paths_win_over_catalog_names():
    config = JobConfig(input_path="s3://b/in/", output_catalog={"runs": "fleet.runs"})
    assert config.input_location("tasks").path == "s3://b/in/tasks"
    assert config.output_location("runs").catalog_name == "fleet.runs"


def test_unknown_table_in_conf_is_refused(tmp_path):
    conf = tmp_path / "c.toml"
    conf.write_text('[inputs]\ntaskz = "x.y"\n')
    with pytest.raises(ConfigError, match="taskz"):
        load_conf_file(conf)


def test_planning_instant_and_derived_run_id():
    assert parse_instant_ms("2026-01-01T00:00:00Z") == 1_767_225_600_000
    assert parse_instant_ms("1767225600123") == 1_767_225_600_123
    assert run_id_for(1_767_225_600_123) == "run-20260101T000000.123Z"
    with pytest.raises(ConfigError):
        parse_instant_ms("yesterday")


def test_run_ids_cannot_break_the_replace_condition():
    assert check_run_id("nightly-2026.01.01") == "nightly-2026.01.01"
    with pytest.raises(ConfigError):
        check_run_id("x' OR '1'='1")


def test_versions_for_all_tables_or_one():
    assert parse_versions(["3"]) == dict.fromkeys(INPUT_TABLES, 3)
    assert parse_versions(["3", "tasks=1"])["tasks"] == 1
    with pytest.raises(ConfigError):
        parse_versions(["nope=1"])
    with pytest.raises(ConfigError):
        parse_versions(["-1"])
