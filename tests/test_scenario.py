"""Loading a scenario (scenario.md): every unusable-input rule, the tolerated cases, the lag rules."""

from __future__ import annotations

import copy
import json
import re

import pytest

from fleet_assignor.assignor import ProcessId, TaskId
from fleet_assignor.assignor.scenario import ScenarioError, load_scenario, load_scenario_file

P1 = "00000000-0000-0000-0000-000000000001"
P2 = "00000000-0000-0000-0000-000000000002"
P3 = "00000000-0000-0000-0000-000000000003"


def _partition(topic: str, number: int, *, source: bool = False, changelog: bool = False, racks=("r1",)):
    return {
        "topic": topic,
        "partition": number,
        "source": source,
        "changelog": changelog,
        "racks": list(racks),
    }


def _stateful(task_id: str, partition: int) -> dict:
    return {
        "id": task_id,
        "stateful": True,
        "stores": ["store"],
        "partitions": [
            _partition("in", partition, source=True),
            _partition("app-store-changelog", partition, changelog=True),
        ],
    }


def base() -> dict:
    """Two stateful tasks, one stateless; two clients (consumers given / threads only)."""
    return {
        "app_id": "app",
        "configs": {"rack_aware_assignment_tags": ["zone"], "num_standby_replicas": 1},
        "tasks": [
            _stateful("0_0", 0),
            _stateful("0_1", 1),
            {"id": "1_0", "stateful": False, "stores": [], "partitions": [_partition("in2", 0, source=True)]},
        ],
        "clients": [
            {
                "process_id": P1,
                "threads": 2,
                "consumers": ["c1", "c2"],
                "prev_active": ["0_0"],
                "prev_standby": ["0_1"],
                "lags": {"0_0": -2, "0_1": 40},
                "rack": "r1",
                "tags": {"zone": "a"},
            },
            {
                "process_id": P2,
                "threads": 1,
                "prev_active": ["0_1"],
                "lags": {},
                "rack": "r2",
                "tags": {"zone": "b"},
            },
        ],
    }


def _set(path: list, value):
    def mutate(obj):
        target = obj
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def _delete(path: list):
    def mutate(obj):
        target = obj
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return mutate


def _append_task(task: dict):
    return lambda obj: obj["tasks"].append(task)


UNUSABLE = [
    # (name, mutation, expected JSON path, a word of the reason)
    ("root not an object", None, "$", "object"),
    ("no clients", _set(["clients"], []), "clients", "no clients"),
    ("clients missing", _delete(["clients"]), "clients", "no clients"),
    ("clients not a list", _set(["clients"], {}), "clients", "list"),
    ("no consumers and no threads", _delete(["clients", 1, "threads"]), "clients[1].threads", "threads >= 1"),
    (
        "no consumers and zero threads",
        _set(["clients", 1, "threads"], 0),
        "clients[1].threads",
        "threads >= 1",
    ),
    (
        "empty consumers and zero threads",
        lambda o: o["clients"][1].update(consumers=[], threads=0),
        "clients[1].threads",
        "threads >= 1",
    ),
    ("negative threads", _set(["clients", 0, "threads"], -1), "clients[0].threads", ">= 0"),
    ("threads not an int", _set(["clients", 1, "threads"], "2"), "clients[1].threads", "integer"),
    # refused before a consumer is made up: 2^31-1 of them would exhaust memory
    (
        "threads beyond the limit",
        _set(["clients", 1, "threads"], 2**31 - 1),
        "clients[1].threads",
        "at most 100,000",
    ),
    ("duplicate task id", _append_task(_stateful("0_1", 5)), "tasks[3].id", "duplicate task id 0_1"),
    (
        "duplicate process id",
        _set(["clients", 1, "process_id"], P1.upper()),
        "clients[1].process_id",
        "duplicate",
    ),
    (
        "duplicate consumer across clients",
        _set(["clients", 1, "consumers"], ["c2"]),
        "clients[1].consumers[0]",
        "duplicate consumer id 'c2'",
    ),
    (
        "duplicate consumer within a client",
        _set(["clients", 0, "consumers"], ["c1", {"id": "c1"}]),
        "clients[0].consumers[1].id",
        "duplicate consumer",
    ),
    (
        "generated consumer ids clash",
        _set(["clients", 0, "consumers"], [f"{P2}-1"]),
        "clients[1].threads",
        "clashes",
    ),
    (
        "process id not a UUID",
        _set(["clients", 0, "process_id"], "client-1"),
        "clients[0].process_id",
        "UUID",
    ),
    ("process id missing", _delete(["clients", 0, "process_id"]), "clients[0].process_id", "UUID"),
    ("task id does not parse", _set(["tasks", 0, "id"], "0-0"), "tasks[0].id", "canonical"),
    ("task id not canonical", _set(["tasks", 0, "id"], "00_1"), "tasks[0].id", "canonical"),
    ("task id not a string", _set(["tasks", 0, "id"], 1), "tasks[0].id", "string"),
    (
        "named and unnamed task ids mixed",
        _append_task({"id": "topo__0_7", "stores": []}),
        "tasks[3].id",
        "named and unnamed",
    ),
    (
        "prev_active id does not parse",
        _set(["clients", 0, "prev_active"], ["x"]),
        "clients[0].prev_active[0]",
        "x",
    ),
    (
        "prev_standby id not canonical",
        _set(["clients", 0, "prev_standby"], ["0_01"]),
        "clients[0].prev_standby[0]",
        "canonical",
    ),
    (
        "consumer history id does not parse",
        _set(["clients", 0, "consumers"], [{"id": "c1", "prev_active": ["0_0", "bad"]}]),
        "clients[0].consumers[0].prev_active[1]",
        "bad",
    ),
    ("lag key does not parse", _set(["clients", 0, "lags", "zz"], 3), 'clients[0].lags["zz"]', "zz"),
    ("lag -1", _set(["clients", 0, "lags", "0_1"], -1), 'clients[0].lags["0_1"]', "-2 (running active)"),
    ("lag below -3", _set(["clients", 0, "lags", "0_1"], -4), 'clients[0].lags["0_1"]', "-3 (unknown)"),
    ("lag not an integer", _set(["clients", 0, "lags", "0_1"], 1.5), 'clients[0].lags["0_1"]', "0..2^63-1"),
    ("lag above a long", _set(["clients", 0, "lags", "0_1"], 1 << 63), 'clients[0].lags["0_1"]', "0..2^63-1"),
    ("lags not an object", _set(["clients", 0, "lags"], [1]), "clients[0].lags", "object"),
    (
        "warmups below 1",
        _set(["configs", "max_warmup_replicas"], 0),
        "configs.max_warmup_replicas",
        "from 1 to 2147483647",
    ),
    (
        "warmups above an int",
        _set(["configs", "max_warmup_replicas"], 1 << 31),
        "configs.max_warmup_replicas",
        "from 1 to 2147483647, got 2147483648",
    ),
    (
        "probing interval above a long",
        _set(["configs", "probing_rebalance_interval_ms"], 1 << 63),
        "configs.probing_rebalance_interval_ms",
        "from 60000 to 9223372036854775807",
    ),
    (
        "traffic cost above an int",
        _set(["configs", "rack_aware_traffic_cost"], 1 << 31),
        "configs.rack_aware_traffic_cost",
        "from 0 to 2147483647",
    ),
    (
        "probing interval below a minute",
        _set(["configs", "probing_rebalance_interval_ms"], 59_999),
        "configs.probing_rebalance_interval_ms",
        "from 60000 to",
    ),
    (
        "more than 5 tags",
        _set(["configs", "rack_aware_assignment_tags"], ["a", "b", "c", "d", "e", "f"]),
        "configs.rack_aware_assignment_tags",
        "at most 5",
    ),
    (
        "unknown strategy",
        _set(["configs", "rack_aware_assignment_strategy"], "fastest"),
        "configs.rack_aware_assignment_strategy",
        "one of none",
    ),
    (
        "negative standbys",
        _set(["configs", "num_standby_replicas"], -1),
        "configs.num_standby_replicas",
        "from 0 to 2147483647",
    ),
    (
        "negative acceptable lag",
        _set(["configs", "acceptable_recovery_lag"], -5),
        "configs.acceptable_recovery_lag",
        "from 0 to 9223372036854775807",
    ),
    (
        "negative traffic cost",
        _set(["configs", "rack_aware_traffic_cost"], -1),
        "configs.rack_aware_traffic_cost",
        "0",
    ),
    (
        "negative non-overlap cost",
        _set(["configs", "rack_aware_non_overlap_cost"], -2),
        "configs.rack_aware_non_overlap_cost",
        "0",
    ),
    (
        "config of the wrong type",
        _set(["configs", "num_standby_replicas"], "1"),
        "configs.num_standby_replicas",
        "integer",
    ),
    (
        "unknown config key",
        _set(["configs", "num_standbys"], 1),
        "configs.num_standbys",
        "unknown config key",
    ),
    ("app_id is not a config", _set(["configs", "app_id"], "x"), "configs.app_id", "unknown config key"),
    ("configs not an object", _set(["configs"], [1]), "configs", "object"),
    ("tag key missing on a client", _set(["clients", 1, "tags"], {"rack": "x"}), "clients[1].tags", "'zone'"),
    ("tag value not a string", _set(["clients", 0, "tags", "zone"], 1), 'clients[0].tags["zone"]', "string"),
    (
        "assignor_configs value not a string",
        _set(["configs", "assignor_configs"], {"k": 1}),
        'configs.assignor_configs["k"]',
        "string",
    ),
    ("assignor not a string", _set(["configs", "assignor"], 3), "configs.assignor", "string"),
    ("stateful without stores", _set(["tasks", 2, "stateful"], True), "tasks[2].stateful", "bool(stores)"),
    ("stores without stateful", _set(["tasks", 0, "stateful"], False), "tasks[0].stateful", "bool(stores)"),
    ("tasks missing", _delete(["tasks"]), "tasks", "missing"),
    ("task not an object", _set(["tasks", 1], "0_1"), "tasks[1]", "object"),
    (
        "negative partition",
        _set(["tasks", 0, "partitions", 0, "partition"], -1),
        "tasks[0].partitions[0].partition",
        ">= 0",
    ),
    (
        "partition topic missing",
        _delete(["tasks", 0, "partitions", 1, "topic"]),
        "tasks[0].partitions[1].topic",
        "string",
    ),
    (
        "changelog flag not a bool",
        _set(["tasks", 0, "partitions", 1, "changelog"], 1),
        "tasks[0].partitions[1].changelog",
        "true or false",
    ),
    ("lags_computed not a bool", _set(["lags_computed"], "no"), "lags_computed", "true or false"),
    (
        "client-level list disagrees with the consumers'",
        _set(["clients", 0, "consumers"], [{"id": "c1", "prev_active": ["0_1"]}, "c2"]),
        "clients[0].prev_active",
        "disagrees",
    ),
]


@pytest.mark.parametrize(
    ("mutation", "path", "reason"), [case[1:] for case in UNUSABLE], ids=[c[0] for c in UNUSABLE]
)
def test_unusable_input_names_the_field(mutation, path, reason):
    obj = base()
    if mutation is None:
        obj = [obj]
    else:
        mutation(obj)
    with pytest.raises(ScenarioError, match=re.escape(reason)) as raised:
        load_scenario(obj)
    assert raised.value.path == path
    assert reason in raised.value.reason
    assert str(raised.value) == f"{path}: {raised.value.reason}"


def test_the_base_scenario_is_usable():
    scenario = load_scenario(base())
    assert scenario.app_id == "app"
    assert scenario.warnings == ()
    assert len(scenario.application_state.clients) == 2


# --- tolerated cases ----------------------------------------------------------------------------------------


def test_unknown_tasks_in_previous_lists_and_lags_are_dropped_with_a_warning():
    obj = base()
    obj["clients"][0]["prev_active"].append("9_9")
    obj["clients"][0]["prev_standby"].append("8_8")
    obj["clients"][1]["lags"]["7_7"] = 12
    scenario = load_scenario(obj)
    client = scenario.client(ProcessId.parse(P1))
    assert client.previous_active_tasks == {TaskId(0, 0)}
    assert client.previous_standby_tasks == {TaskId(0, 1)}
    assert TaskId(7, 7) not in scenario.client(ProcessId.parse(P2)).task_lags
    assert scenario.warnings == (
        "clients[0].prev_active[1]: unknown task 9_9 dropped",
        "clients[0].prev_standby[1]: unknown task 8_8 dropped",
        'clients[1].lags["7_7"]: unknown task 7_7 dropped',
    )
    # an unknown task's lag takes no part in the end-offset sums
    assert scenario.end_offset_sums[TaskId(0, 1)] == 40


def test_a_task_both_previously_active_and_standby_is_kept_as_active():
    obj = base()
    obj["clients"][0]["prev_standby"] = ["0_0", "0_1"]
    scenario = load_scenario(obj)
    client = scenario.client(ProcessId.parse(P1))
    assert client.previous_active_tasks == {TaskId(0, 0)}
    assert client.previous_standby_tasks == {TaskId(0, 1)}
    assert len(scenario.warnings) == 1
    assert scenario.warnings[0].startswith("clients[0]: task 0_0 is in both prev_active and prev_standby")


def test_unknown_keys_outside_configs_are_ignored():
    obj = base()
    obj["comment"] = "x"
    obj["clients"][0]["note"] = {"anything": 1}
    obj["tasks"][0]["owner"] = "team"
    obj["tasks"][0]["partitions"][0]["leader"] = 3
    scenario = load_scenario(obj)
    assert scenario.warnings == ()


def test_null_configs_take_the_defaults():
    obj = base()
    obj["configs"] = {
        "acceptable_recovery_lag": None,
        "rack_aware_assignment_strategy": None,
        "assignor": None,
    }
    configs = load_scenario(obj).application_state.configs
    assert configs.acceptable_recovery_lag == 10_000
    assert configs.max_warmup_replicas == 2
    assert configs.num_standby_replicas == 0
    assert configs.probing_rebalance_interval_ms == 600_000
    assert configs.rack_aware_assignment_strategy.value == "none"
    assert configs.rack_aware_traffic_cost is None


def test_configs_may_be_absent_and_an_application_may_have_no_tasks():
    scenario = load_scenario({"tasks": [], "clients": [{"process_id": P1, "threads": 1}]})
    assert scenario.application_state.tasks == {}
    assert scenario.assignor == "high_availability"
    assert not scenario.assignor_configured
    assert scenario.end_offset_sums == {}


def test_assignor_and_its_configs_come_from_configs():
    obj = base()
    obj["configs"].update(assignor="sticky", assignor_configs={"b": "2", "a": "1"})
    scenario = load_scenario(obj)
    assert scenario.assignor == "sticky"
    assert scenario.assignor_configured
    assert dict(scenario.assignor_configs) == {"a": "1", "b": "2"}


# --- consumers and threads ----------------------------------------------------------------------------------


def test_capacity_is_the_number_of_consumers_and_threads_only_fill_in_for_absent_ones():
    obj = base()
    obj["clients"][0]["threads"] = 7  # ignored: consumers are given
    obj["clients"][1]["consumers"] = []  # empty: threads name them
    obj["clients"][1]["threads"] = 2
    state = load_scenario(obj).application_state
    first, second = state.clients[ProcessId.parse(P1)], state.clients[ProcessId.parse(P2)]
    assert first.num_processing_threads == 2
    assert first.consumer_client_ids == ("c1", "c2")
    assert second.num_processing_threads == 2
    assert second.consumer_client_ids == (f"{P2}-1", f"{P2}-2")


def test_per_consumer_history_gives_the_client_its_union_and_each_consumer_its_state():
    obj = base()
    obj["clients"][0]["consumers"] = [
        {"id": "c2", "prev_active": ["0_0"], "prev_standby": []},
        {"id": "c1", "prev_active": [], "prev_standby": ["0_1"]},
    ]
    scenario = load_scenario(obj)  # the client-level lists agree with the union
    client = scenario.client(ProcessId.parse(P1))
    assert client.previous_active_tasks == {TaskId(0, 0)}
    assert client.previous_standby_tasks == {TaskId(0, 1)}
    assert client.consumer_client_ids == ("c1", "c2")
    assert client.prev_tasks_by_lag("c2") == (TaskId(0, 0),)
    assert client.prev_tasks_by_lag("c1") == (TaskId(0, 1),)
    histories = scenario.consumers[ProcessId.parse(P1)]
    assert [h.consumer_id for h in histories] == ["c1", "c2"]
    assert all(h.has_history for h in histories)


def test_without_client_level_lists_the_consumers_lists_are_used():
    obj = base()
    del obj["clients"][0]["prev_active"], obj["clients"][0]["prev_standby"]
    obj["clients"][0]["consumers"] = [{"id": "c1", "prev_active": ["0_1"], "prev_standby": ["0_0"]}, "c2"]
    client = load_scenario(obj).client(ProcessId.parse(P1))
    assert client.previous_active_tasks == {TaskId(0, 1)}
    assert client.previous_standby_tasks == {TaskId(0, 0)}


def test_plain_string_consumers_have_no_history():
    scenario = load_scenario(base())
    client = scenario.client(ProcessId.parse(P1))
    assert client.prev_tasks_by_lag("c1") == ()
    assert client.prev_tasks_by_lag("c2") == ()
    assert not any(h.has_history for h in scenario.consumers[ProcessId.parse(P1)])


# --- lags ---------------------------------------------------------------------------------------------------


def _lags(obj: dict) -> dict[str, dict[str, int]]:
    state = load_scenario(obj).application_state
    return {
        str(pid): {str(t): lag for t, lag in client.task_lags.items()}
        for pid, client in state.clients.items()
    }


def test_missing_lags_are_minus_two_for_previous_actives_else_the_end_offset_sum():
    obj = base()
    obj["clients"].append(
        {"process_id": P3, "threads": 1, "lags": {"0_1": 25, "0_0": -3}, "tags": {"zone": "c"}}
    )
    lags = _lags(obj)
    # P2 ran 0_1 (missing -> -2) and has no state for 0_0 (end sum: the largest non-negative lag, none -> 0)
    assert lags[P2] == {"0_0": 0, "0_1": -2}
    # P1 reported both; P3 reported an unknown offset for 0_0, which stays -3
    assert lags[P1] == {"0_0": -2, "0_1": 40}
    assert lags[P3] == {"0_0": -3, "0_1": 25}
    # stateless 1_0 has no lag anywhere
    scenario = load_scenario(obj)
    assert dict(scenario.end_offset_sums) == {TaskId(0, 0): 0, TaskId(0, 1): 40}


def test_end_offset_sum_is_the_largest_non_negative_lag_reported():
    obj = base()
    obj["clients"][0]["lags"] = {"0_0": 7, "0_1": 15}
    obj["clients"][1]["prev_active"] = []
    obj["clients"][1]["lags"] = {"0_0": 300, "0_1": -2}
    obj["clients"].append({"process_id": P3, "threads": 1, "tags": {"zone": "c"}})
    lags = _lags(obj)
    assert lags[P3] == {"0_0": 300, "0_1": 15}  # -2 reported by P2 is not a size


def test_empty_lag_maps_everywhere_mean_every_client_is_caught_up():
    obj = base()
    for client in obj["clients"]:
        client["lags"] = {}
        client["prev_active"] = []
        client["prev_standby"] = []
    assert _lags(obj) == {P1: {"0_0": 0, "0_1": 0}, P2: {"0_0": 0, "0_1": 0}}


def test_lags_of_tasks_without_a_changelog_are_ignored_and_a_store_without_changelog_has_no_lag():
    obj = base()
    obj["tasks"].append(
        {"id": "2_0", "stores": ["in-memory"], "partitions": [_partition("in3", 0, source=True)]}
    )
    obj["clients"][0]["lags"].update({"1_0": 5, "2_0": 6})
    scenario = load_scenario(obj)
    info = scenario.application_state.tasks[TaskId(2, 0)]
    assert info.is_stateful and not info.has_changelog  # `stateful` omitted: it follows the stores
    assert set(scenario.client(ProcessId.parse(P1)).task_lags) == {TaskId(0, 0), TaskId(0, 1)}
    assert scenario.warnings == ()


def test_lags_not_computed_are_unknown_except_running_actives():
    obj = base()
    obj["lags_computed"] = False
    obj["clients"].append({"process_id": P3, "threads": 1, "lags": {"0_0": 3}, "tags": {"zone": "c"}})
    scenario = load_scenario(obj)
    assert not scenario.lags_computed
    lags = _lags(obj)
    assert lags[P1] == {"0_0": -2, "0_1": -3}  # reported -2 stays; reported 40 becomes unknown
    assert lags[P2] == {"0_0": -3, "0_1": -2}  # missing and previously active: running
    assert lags[P3] == {"0_0": -3, "0_1": -3}


@pytest.mark.parametrize(
    ("racks", "path"),
    [
        ("r1", "tasks[0].partitions[0].racks"),
        (0, "tasks[0].partitions[0].racks"),
        ({"r": 1}, "tasks[0].partitions[0].racks"),
        (["r1", 2], "tasks[0].partitions[0].racks[1]"),
        ([["r1"]], "tasks[0].partitions[0].racks[0]"),
    ],
)
def test_partition_racks_must_be_a_list_of_strings(racks, path):
    obj = base()
    obj["tasks"][0]["partitions"][0]["racks"] = racks
    with pytest.raises(ScenarioError, match=re.escape(f"{path}: ")) as raised:
        load_scenario(obj)
    assert raised.value.path == path


def test_empty_rack_ids_of_a_partition_mean_unknown_and_are_dropped():
    obj = base()
    obj["tasks"][0]["partitions"][0]["racks"] = ["", "r2", "r1", "r2"]
    obj["tasks"][0]["partitions"][1]["racks"] = [""]
    info = load_scenario(obj).application_state.tasks[TaskId(0, 0)]
    assert [p.rack_ids for p in info.topic_partitions] == [frozenset({"r1", "r2"}), frozenset()]


# --- other fields -------------------------------------------------------------------------------------------


def test_tasks_partitions_racks_and_client_metadata():
    obj = base()
    obj["tasks"][0]["partitions"][0]["racks"] = []
    obj["tasks"][0]["partitions"][1].pop("racks")
    obj["clients"][0]["rack"] = ""
    obj["clients"][0]["host_info"] = "host:1"
    scenario = load_scenario(obj)
    info = scenario.application_state.tasks[TaskId(0, 0)]
    assert [
        (p.topic, p.partition, p.is_source, p.is_changelog, p.rack_ids) for p in info.topic_partitions
    ] == [
        ("in", 0, True, False, frozenset()),
        ("app-store-changelog", 0, False, True, frozenset()),
    ]
    assert info.state_store_names == {"store"}
    client = scenario.client(ProcessId.parse(P1))
    assert client.rack_id is None  # empty = unknown
    assert client.host_info == "host:1"
    assert dict(client.client_tags) == {"zone": "a"}
    assert scenario.client(ProcessId.parse(P2)).rack_id == "r2"


def test_clients_are_in_signed_process_id_order_and_ids_keep_their_text():
    obj = base()
    high = "F0000000-0000-0000-0000-000000000009"  # sorts first: its top bit makes it negative
    obj["clients"].append({"process_id": high, "threads": 1, "tags": {"zone": "c"}})
    clients = list(load_scenario(obj).application_state.clients)
    assert [str(c) for c in clients] == [high, P1, P2]
    assert clients[0].canonical == high.lower()


@pytest.mark.parametrize(
    "spelling",
    [f"{{{P1}}}", P1.replace("-", ""), P1.upper(), "urn:uuid:" + P1],
)
def test_two_spellings_of_one_process_id_are_duplicates(spelling):
    obj = base()
    obj["clients"].append({"process_id": spelling, "threads": 1, "tags": {"zone": "c"}})
    with pytest.raises(ScenarioError, match="duplicate process id") as raised:
        load_scenario(obj)
    assert raised.value.path == f"clients[{len(obj['clients']) - 1}].process_id"


@pytest.mark.parametrize("now_ms", [-1, 9_223_372_036_855, 1 << 63, True, 1.5])
def test_planning_instant_outside_the_instant_range_is_refused(now_ms):
    with pytest.raises(ScenarioError, match=r"planning instant must be within 0 \.\. 9223372036854 ms"):
        load_scenario(base(), now_ms=now_ms)


def test_now_ms_is_the_planning_instant_and_can_be_replaced():
    scenario = load_scenario(base(), now_ms=1234)
    assert scenario.now_ms == scenario.application_state.now_ms == 1234
    later = scenario.with_now_ms(99)
    assert later.application_state.now_ms == 99
    assert later.application_state.clients is scenario.application_state.clients
    assert scenario.now_ms == 1234


def test_loading_does_not_modify_the_input():
    obj = base()
    before = copy.deepcopy(obj)
    load_scenario(obj)
    assert obj == before


def test_scenario_files(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(base()))
    assert load_scenario_file(good).source == str(good)
    bad = tmp_path / "bad.json"
    bad.write_text('{"tasks": [}')
    with pytest.raises(ScenarioError, match="invalid JSON at line 1") as raised:
        load_scenario_file(bad)
    assert raised.value.path == "$"
    assert "invalid JSON at line 1" in raised.value.reason
    with pytest.raises(ScenarioError, match="cannot read") as raised:
        load_scenario_file(tmp_path / "missing.json")
    assert raised.value.path == "$"
    assert "cannot read" in raised.value.reason


def test_every_shared_example_loads_without_warnings(scenarios_dir):
    files = sorted((scenarios_dir).glob("example-*.json"))
    assert files
    for file in files:
        scenario = load_scenario_file(file)
        assert scenario.warnings == ()
        assert scenario.application_state.clients


def test_a_scenario_built_in_python_may_use_tuples_and_non_json_values_are_named():
    obj = base()
    obj["tasks"] = tuple(obj["tasks"])
    obj["clients"][0]["prev_active"] = ("0_0",)
    assert load_scenario(obj).client(ProcessId.parse(P1)).previous_active_tasks == {TaskId(0, 0)}
    obj["clients"][1]["threads"] = object()
    with pytest.raises(ScenarioError, match="object object") as raised:
        load_scenario(obj)
    assert raised.value.path == "clients[1].threads"
    assert "object object" in raised.value.reason


_PARTITION_VALUES = {
    "topic": ["t", "", 0, None, ["t"]],
    "partition": [0, 7, -1, True, 1.0, "1", None],
    "source": [True, False, 0, 1, None, "true"],
    "changelog": [True, False, 0, None],
    "racks": [None, [], ["r1", "r2"], ["", "r1"], [""], ["r1", 2], "r1", 0, False, (), ("r1",), {}],
}


def test_the_inline_partition_check_builds_what_the_full_one_does_and_passes_on_anything_else():
    import itertools

    from fleet_assignor.assignor.scenario import _Loader, _plain_partition

    keys = list(_PARTITION_VALUES)
    for values in itertools.product(*_PARTITION_VALUES.values()):
        for missing in (None, *keys):
            raw = {k: v for k, v in zip(keys, values, strict=True) if k != missing}
            fast = _plain_partition(raw)
            try:
                full = _Loader("<test>").partition(raw, "tasks[0].partitions[0]")
            except ScenarioError:
                assert fast is None, raw  # the inline check passes only entries the full one accepts
                continue
            if fast is not None:
                assert (fast.topic_partition, fast.is_source, fast.is_changelog, fast.rack_ids) == (
                    full.topic_partition, full.is_source, full.is_changelog, full.rack_ids,
                ), raw  # fmt: skip
    assert _plain_partition(["t"]) is None
    job_form = {"topic": "t", "partition": 0, "source": True, "changelog": False, "racks": ["r1"]}
    assert _plain_partition(job_form) is not None


def test_lags_and_previous_lists_name_tasks_by_the_tasks_text_or_any_other_canonical_text():
    scenario = base()
    scenario["clients"][0]["lags"] = {"0_1": 5, "9_9": 3}
    scenario["clients"][0]["prev_standby"] = ["0_1", "8_8"]
    loaded = load_scenario(scenario)
    client = loaded.client(ProcessId.parse(P1))
    assert client is not None and client.lag_for(TaskId.parse("0_1")) == 5
    assert client.previous_standby_tasks == {TaskId.parse("0_1")}
    assert any("9_9" in w for w in loaded.warnings) and any("8_8" in w for w in loaded.warnings)
    scenario["clients"][0]["lags"] = {"00_1": 5}
    with pytest.raises(ScenarioError, match=re.escape('clients[0].lags["00_1"]')):
        load_scenario(scenario)


@pytest.mark.parametrize("lags_computed", [True, False])
def test_clients_without_history_lag_by_every_whole_changelog(lags_computed):
    """Clients that ran nothing and reported nothing (one table of lags serves them all) lag by each
    stateful task's end offset sum, or "unknown" without end offsets; the others keep their own."""
    obj = base()
    obj["lags_computed"] = lags_computed
    obj["clients"][0]["lags"] = {"0_0": 7, "0_1": 15}
    for n, pid in enumerate((P3, "00000000-0000-0000-0000-000000000004")):
        obj["clients"].append({"process_id": pid, "threads": 1, "tags": {"zone": f"z{n}"}})
    lags = _lags(obj)
    fresh = {"0_0": 7, "0_1": 15} if lags_computed else {"0_0": -3, "0_1": -3}
    assert lags[P3] == lags["00000000-0000-0000-0000-000000000004"] == fresh
    assert lags[P1] == ({"0_0": 7, "0_1": 15} if lags_computed else {"0_0": -3, "0_1": -3})
    assert lags[P2] == ({"0_0": 7, "0_1": -2} if lags_computed else {"0_0": -3, "0_1": -2})
