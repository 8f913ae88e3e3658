"""Job settings: conf/defaults.toml, run ids, planning instants, versions."""

from __future__ import annotations

import pytest

from fleet_assignor.jobs.config import (
    ConfigError,
    JobConfig,
    check_assignors,
    check_run_id,
    load_conf_file,
    parse_instant_ms,
    parse_versions,
    run_id_for,
)
from fleet_assignor.jobs.grouped import GroupedMapKind
from fleet_assignor.schemas.spark_schemas import INPUT_TABLES, OUTPUT_TABLES


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
    with pytest.raises(ConfigError, match="use epoch milliseconds or ISO-8601"):
        parse_instant_ms("yesterday")


def test_run_ids_cannot_break_the_replace_condition():
    assert check_run_id("nightly-2026.01.01") == "nightly-2026.01.01"
    with pytest.raises(ConfigError, match="use letters, digits"):
        check_run_id("x' OR '1'='1")


def test_versions_for_all_tables_or_one():
    assert parse_versions(["3"]) == dict.fromkeys(INPUT_TABLES, 3)
    assert parse_versions(["3", "tasks=1"])["tasks"] == 1
    with pytest.raises(ConfigError, match="unknown input table 'nope'"):
        parse_versions(["nope=1"])
    with pytest.raises(ConfigError, match="versions start at 0"):
        parse_versions(["-1"])


@pytest.mark.parametrize(
    "text, message",
    [
        ("9223372036854774807", "must be within 0 .. 9223372036854 ms"),
        ("-1", "must be within"),
        ("2262-04-12T00:00:00Z", "must be within"),
    ],
)
def test_planning_instants_outside_the_range_every_reader_holds_are_refused(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_instant_ms(text)


def test_the_last_instant_is_accepted():
    assert parse_instant_ms("2262-04-11T23:47:16.854Z") == 9_223_372_036_854


def test_an_explicit_conf_file_that_does_not_exist_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match=r"conf file .*nope.toml: no such file"):
        load_conf_file(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    "text, message",
    [
        ("[job]\ngrouped_mapp = 'arrow'\n", r"unknown key\(s\) in \[job\]: grouped_mapp"),
        ("[jobs]\n", r"unknown section\(s\) jobs"),
        ("[job\n", "cannot be read"),
        ("[job]\nshuffle_partitions = -3\n", "shuffle_partitions must be an integer from 0"),
        ("[job]\nallowed_assignors = 'a:B'\n", "allowed_assignors must be a list"),
        ("[job]\nallowed_assignors = ['not a name']\n", "'not a name' is not a module:Class name"),
        ("[inputs]\ntasks = 3\n", r"\[inputs\] tasks must be a table name"),
    ],
)
def test_a_conf_file_that_cannot_be_used_names_the_file_and_key(tmp_path, text, message):
    conf = tmp_path / "c.toml"
    conf.write_text(text)
    with pytest.raises(ConfigError, match=message) as raised:
        load_conf_file(conf)
    assert str(conf) in str(raised.value)


def test_allowed_assignors_are_read_and_empty_by_default(tmp_path):
    assert load_conf_file(None).allowed_assignors == frozenset()
    conf = tmp_path / "c.toml"
    conf.write_text("[job]\nallowed_assignors = ['a.b:C', 'd:E']\n")
    assert load_conf_file(conf).allowed_assignors == {"a.b:C", "d:E"}


@pytest.mark.parametrize(
    "config, message",
    [
        (JobConfig(assignor="nosuch"), "--assignor: unknown assignor 'nosuch'"),
        (JobConfig(assignor="no_such_module_here:X"), "--assignor: .*cannot import module"),
        (
            JobConfig(allowed_assignors=frozenset({"no_such_module_here:X"})),
            "allowed_assignors: .*cannot import",
        ),
    ],
)
def test_assignor_settings_that_cannot_plan_are_config_errors(config, message):
    with pytest.raises(ConfigError, match=message):
        check_assignors(config)


def test_built_in_assignor_settings_pass():
    check_assignors(JobConfig(assignor="sticky"))
    check_assignors(JobConfig())
