"""The Kafka oracle reproduces Kafka's own answers to the example scenarios (tests/data/scenarios/kafka/).

Those answers came from Kafka's source of late October 2024; the oracle runs the pinned release's jars.
The broker-side streams sticky answers were written by this oracle from kafka-group-coordinator 4.4.0
(`tests/write_streams_sticky_answers.py`) and are matched per member. HA, the rack optimizers and the
fallback match exactly (the fallback's legacy sticky iterates hash sets, and
the oracle builds them as the answers' harness did). The KIP-924 sticky assignor iterates a HashSet of
TaskInfo objects, whose identity hashes differ from JVM to JVM (POLICY.md 3): its actives match exactly and
its standbys are compared by how many replicas each task got.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import SCENARIOS_DIR
from tests.kafka_oracle import MODES, per_client, request_line

pytestmark = pytest.mark.kafka_oracle

NOW_MS = 1_700_000_000_000


def _examples(scenarios: Path) -> list[tuple[str, str]]:
    pairs = []
    for answer in sorted((scenarios / "kafka").glob("example-*.json")):
        name, mode, _ = answer.name.split(".")
        pairs.append((name, mode))
    return pairs


EXAMPLES = _examples(SCENARIOS_DIR)


@pytest.fixture(scope="module")
def oracle_answers(kafka_oracle, scenarios_dir):
    """Every example run through the oracle in one batch: (name, mode) -> (scenario, kafka file, oracle)."""
    lines, keys = [], []
    for name, mode in EXAMPLES:
        scenario = json.loads((scenarios_dir / f"{name}.json").read_text())
        lines.append(request_line(scenario, mode, now_ms=NOW_MS))
        keys.append((name, mode, scenario))
    results = kafka_oracle.run_lines(lines)
    answers = {}
    for (name, mode, scenario), result in zip(keys, results, strict=False):
        kafka = json.loads((scenarios_dir / "kafka" / f"{name}.{mode}.json").read_text())
        answers[(name, mode)] = (scenario, kafka, result)
    return answers


def _standbys_per_task(result: dict) -> Counter:
    return Counter(task for client in result["assignment"] for task in client["standby"])


def test_every_example_answer_is_covered():
    assert len(EXAMPLES) >= 30
    assert {mode for _, mode in EXAMPLES} == set(MODES)


@pytest.mark.parametrize(("name", "mode"), EXAMPLES, ids=[f"{n}.{m}" for n, m in EXAMPLES])
def test_oracle_runs_and_validates_like_kafka(oracle_answers, name, mode):
    _, kafka, result = oracle_answers[(name, mode)]
    assert result["status"] == "OK", result.get("exception")
    assert result["error"] == kafka["validation_error"]
    assert result["probing_rebalance"] == kafka["probing_rebalance"]
    assert {c["process_id"] for c in result["assignment"]} == {c["process_id"] for c in kafka["assignment"]}


@pytest.mark.parametrize("name", [n for n, m in EXAMPLES if m == "high_availability"], ids=lambda n: n)
def test_high_availability_matches_kafka_exactly(oracle_answers, name):
    _, kafka, result = oracle_answers[(name, "high_availability")]
    assert per_client(result) == per_client(kafka)


@pytest.mark.parametrize(
    ("name", "mode"),
    [(n, m) for n, m in EXAMPLES if m.startswith("optimize_rack")],
    ids=[f"{n}.{m}" for n, m in EXAMPLES if m.startswith("optimize_rack")],
)
def test_rack_optimizers_match_kafka_counts_and_assignment(oracle_answers, name, mode):
    _, kafka, result = oracle_answers[(name, mode)]
    for key, value in kafka["rack_cost"].items():
        assert result["rack_cost"][key] == value, key
    assert per_client(result) == per_client(kafka)


@pytest.mark.parametrize(
    ("name", "mode"),
    [(n, m) for n, m in EXAMPLES if m in ("sticky", "fallback_prior")],
    ids=[f"{n}.{m}" for n, m in EXAMPLES if m in ("sticky", "fallback_prior")],
)
def test_hash_order_assignors_match_kafka_actives_and_standby_counts(oracle_answers, name, mode):
    _, kafka, result = oracle_answers[(name, mode)]
    ours = {pid: active for pid, (active, _) in per_client(result).items()}
    theirs = {pid: active for pid, (active, _) in per_client(kafka).items()}
    assert ours == theirs
    assert _standbys_per_task(result) == _standbys_per_task(kafka)


@pytest.mark.parametrize(
    "name",
    [n for n, m in EXAMPLES if m == "fallback_prior"],
    ids=lambda n: n,
)
def test_fallback_prior_matches_kafka_exactly(oracle_answers, name):
    _, kafka, result = oracle_answers[(name, "fallback_prior")]
    assert per_client(result) == per_client(kafka)


@pytest.mark.parametrize("name", [n for n, m in EXAMPLES if m == "streams_sticky"], ids=lambda n: n)
def test_streams_sticky_matches_kafka_exactly_per_member(oracle_answers, name):
    _, kafka, result = oracle_answers[(name, "streams_sticky")]
    assert per_client(result) == per_client(kafka)
    assert {c["process_id"]: c["consumers"] for c in result["assignment"]} == {
        c["process_id"]: c["consumers"] for c in kafka["assignment"]
    }


def test_fallback_requests_probing_on_smallest_process_id(oracle_answers):
    scenario, _, result = oracle_answers[("example-001", "fallback_prior")]
    with_deadline = [c for c in result["assignment"] if c["followup_rebalance_deadline_ms"] is not None]
    assert len(with_deadline) == 1
    interval = scenario["configs"]["probing_rebalance_interval_ms"]
    assert with_deadline[0]["followup_rebalance_deadline_ms"] == NOW_MS + interval


def test_high_availability_without_end_offsets_runs_the_fallback(kafka_oracle, scenarios_dir):
    scenario = json.loads((scenarios_dir / "example-004.json").read_text())
    scenario["lags_computed"] = False
    (ha,) = kafka_oracle.run([scenario], "high_availability")
    (fallback,) = kafka_oracle.run([scenario], "fallback_prior")
    assert ha["assignor"] == "fallback_prior"
    assert ha["probing_rebalance"] is True
    assert per_client(ha) == per_client(fallback)


def test_repeat_reports_warm_median_and_same_answer(kafka_oracle, scenarios_dir):
    scenario = json.loads((scenarios_dir / "example-003.json").read_text())
    (cold,) = kafka_oracle.run([scenario], "high_availability")
    (warm,) = kafka_oracle.run([scenario], "high_availability", repeat=3)
    assert cold["timing"]["warm_median_ms"] is None
    assert warm["timing"]["repeat"] == 3 and isinstance(warm["timing"]["warm_median_ms"], float)
    assert per_client(warm) == per_client(cold)


def test_warmup_runs_untimed_calls_up_to_its_count_within_its_budget(kafka_oracle, scenarios_dir):
    scenario = json.loads((scenarios_dir / "example-003.json").read_text())
    (counted,) = kafka_oracle.run([scenario], "streams_sticky", repeat=2, warmup=7)
    (stopped,) = kafka_oracle.run([scenario], "streams_sticky", repeat=2, warmup=1_000_000, warmup_ms=50)
    (none,) = kafka_oracle.run([scenario], "streams_sticky", repeat=2)
    assert counted["timing"]["warmup_calls"] == 7
    assert 0 < stopped["timing"]["warmup_calls"] < 1_000_000  # the 50 ms budget ended it
    assert none["timing"]["warmup_calls"] == 0
    assert per_client(counted) == per_client(none)


def test_bad_request_reports_an_exception_and_keeps_serving(kafka_oracle, scenarios_dir):
    broken = {"clients": [{"process_id": "not-a-uuid", "threads": 1}], "tasks": [], "mode": "sticky"}
    scenario = json.loads((scenarios_dir / "example-008.json").read_text())
    bad, good = kafka_oracle.run_lines([json.dumps(broken), request_line(scenario, "high_availability")])
    assert bad["status"] == "EXCEPTION" and "UUID" in bad["exception"]
    assert good["status"] == "OK"
