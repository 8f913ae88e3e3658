"""Input rows as Arrow with the contract's types (what tests, `make run` and the benchmarks write)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from fleet_assignor.jobs.input_writer import arrow_table
from fleet_assignor.schemas import contract


def test_rows_take_the_contract_s_types_and_missing_keys_are_null():
    table = arrow_table("applications", [{"app_id": "a", "num_standby_replicas": 1}, {"app_id": "b"}])
    assert table.schema == contract.arrow_schema(contract.APPLICATIONS)
    assert table.schema.field("num_standby_replicas").type == pa.int32()
    rows = table.to_pylist()
    assert rows[0]["num_standby_replicas"] == 1 and rows[1]["num_standby_replicas"] is None
    assert set(rows[1]) == set(contract.APPLICATIONS.column_names)


def test_nested_partitions_and_a_scenario_s_rows_convert():
    scenario_rows = contract.scenario_to_input_rows(
        {
            "app_id": "a",
            "tasks": [{"id": "0_0", "partitions": [{"topic": "t", "partition": 3, "source": True}]}],
            "clients": [{"process_id": "00000000-0000-0000-0000-000000000001", "threads": 1}],
        }
    )
    tables = {name: arrow_table(name, rows) for name, rows in scenario_rows.items()}
    assert tables["tasks"].to_pylist()[0]["source_partitions"] == [{"topic": "t", "partition": 3}]
    assert tables["client_subscriptions"].num_rows == 1


def test_a_value_out_of_its_column_s_range_is_refused():
    with pytest.raises(pa.ArrowInvalid, match="too large to fit"):
        arrow_table("changelog_end_offsets", [{"app_id": "a", "topic": "t", "partition": 1 << 40}])
