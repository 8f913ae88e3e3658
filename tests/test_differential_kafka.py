"""Differential tests: our assignors against Kafka's own (tests/kafka_oracle.py) on random scenarios.

Issue 9 item 3, judged by POLICY.md:
* HA where Kafka's rack optimizer does not run: identical active and standby (warmups included) sets per
  client and the same probing decision. Tolerated (POLICY.md 1): ties between equally good standby
  movements (same actives and standby count per task). Client-tag standby placement iterates a hash set in
  Kafka (POLICY.md 3): there the same probing decision, every task active once, the same standbys per task
  besides warmups, and warmups within max_warmup_replicas on both sides (`_tag_placement_failure`).
* HA where it runs: identical answers, or else ours ties with Kafka at every rack optimizer step on the same
  input (same cost; no more moves, POLICY.md 6; or Kafka's looser double caps, POLICY.md 4) and a replay of
  our HA that puts Kafka's choice in place at each step gives Kafka's answer exactly (see the note above
  `_check_high_availability_with_rack`). Where client-tag standby placement differs (POLICY.md 1, 3), the
  tag criterion above instead.
* Rack optimizers on their own (KIP-924 utilities on the previous assignment): the same minimum total cost
  as Kafka's. Where POLICY.md 4 makes ours solve a smaller problem (no active onto a standby holder, exact
  balance_subtopology capacities), the optimum of that problem, found by linear programming, and never
  below Kafka's; where that problem has no placement at all, ours lets every cap admit the input's count
  and reaches that relaxed problem's optimum. Standbys with client tags: swaps keep the tag spread.
* Fallback: Kafka iterates hash sets (POLICY.md 3), so: the same preserved previous actives, every task
  active once, the same standby count per task, and a follow-up requested.
* KIP-924 sticky: valid; active moves and load spread no worse than Kafka's on at least 99% of seeds; fewer
  active moves in total. The seeds where Kafka wins are listed in the failure message and printed.
* Broker-side streams sticky (Kafka 4.4.0's group coordinator, KIP-1071): identical actives and standbys on
  every member (consumer), hence every client, and the same validation error; on the default draw and on a
  draw where most consumers carry their own history (the broker's stickiness is per member).

`DIFF_SEEDS` (default 500) sets the seed count of `make test`; `make soak` runs `DIFF_SOAK_SEEDS` (default
5000) other seeds. Larger groups (up to 30 clients, `LARGER_GROUPS`): `DIFF_LARGER_SEEDS` (default 150) in
`make test` for the modes judged seed by seed, `DIFF_SOAK_SEEDS` more in `make soak` with KIP-924 sticky too.
Shapes the default draw never or seldom makes (`UNUSUAL_SHAPES`: two-digit subtopology ids, 3-5 standbys,
8-32 threads, other warmup budgets, recovery lags and probing intervals, 1-3 clients): `DIFF_UNUSUAL_SEEDS`
(default 100) each, for the modes judged seed by seed, and `DIFF_SOAK_SEEDS` more each in `make soak`.
Seeds that once failed are kept in `REGRESSION_SEEDS` and always run. Nothing is skipped or expected to fail.
"""

from __future__ import annotations

import math
import os
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest

from tests.kafka_oracle import per_client
from tests.scenario_generator import UNUSUAL_SHAPES, Knobs, generate_scenario, next_round, scale_scenario

pytestmark = pytest.mark.kafka_oracle

NOW_MS = 1_700_000_000_000
DIFF_SEEDS = int(os.environ.get("DIFF_SEEDS", "500"))
SOAK_SEEDS = int(os.environ.get("DIFF_SOAK_SEEDS", "5000"))
SOAK_FIRST_SEED = 1_000_000
# Scenarios for the rack optimizers: racks nearly everywhere, a rack strategy, costs set, a previous
# assignment without conflicting owners (Kafka rejects a task assigned to two clients before optimizing).
RACK_KNOBS = Knobs(
    racks=True,
    partial_racks_share=0.1,
    strategies=("min_traffic", "balance_subtopology"),
    cost_share=0.95,
    conflict_share=0.0,
    history=("stable", "churned", "shuffled"),
)
# HA with Kafka's rack optimizer on: the answers differed by equal-cost optima (first seen 2026-11-22, 41 of
# the 169 rack-enabled seeds of 0..499); judged since by the replay of `_check_high_availability_with_rack`.
# fmt: off
HA_RACK_TIE_SEEDS = (
    3, 21, 28, 44, 49, 58, 65, 67, 73, 75, 80, 101, 112, 120, 121, 122, 123, 130, 138, 149, 155, 162, 166,
    199, 221, 260, 262, 293, 337, 343, 349, 353, 390, 396, 401, 440, 442, 464, 469, 480, 498,
)
# fmt: on
# Seeds that once disagreed stay here as fixed regression tests (mode -> seeds).
REGRESSION_SEEDS: dict[str, tuple[int, ...]] = {
    # 60001571: client-tag placement put one more standby where it had to move towards a caught-up client,
    # so ours left 3 warmups and Kafka 2 (first seen 2026-11-27 on 10,000 seeds from 60,000,000).
    "high_availability": (*HA_RACK_TIE_SEEDS, 60001571),
    "fallback_prior": (),
    # Ours had a wider active spread than Kafka's (first seen 2026-11-22, 8 of 500: over the 1% allowed).
    # Soak seeds Kafka won (first seen 2026-11-24, 93 of 4,113): 1000378 a one-thread client took the extra
    # task (spread 1.0 vs 0.25), 1000001 kept one more previous active at twice the spread, 1000393 the rack
    # optimizer moved a previous active off its owner where an equally cheap swap kept it.
    "sticky": (12, 72, 167, 250, 251, 312, 434, 481, 1000001, 1000378, 1000393),
    # Kafka's balance_subtopology caps admit no placement without the edges onto standby holders: ours
    # lets the caps admit the input and costs 38 against Kafka's 73 (first seen 2026-11-22). 1003122: the
    # test's own LP lost the rows of trailing clients without an edge (first seen 2026-11-25 in the soak).
    "optimize_rack": (271, 1003122),
    "streams_sticky": (),
}
# Most consumers carry their own previous tasks: the broker keeps a task on the member that ran it.
MEMBER_HISTORY_KNOBS = Knobs(consumer_history_share=0.9)
# Larger groups: the size range of the example scenarios (tests/data/scenarios: 2-30 clients of 1-4 threads,
# 1-6 subtopologies, up to 160 tasks), where the default draw stops at 10 clients.
LARGER_GROUPS = {"clients": (2, 30), "threads": (1, 4), "subtopologies": (1, 6), "max_tasks": 400}
LARGER_SEEDS = int(os.environ.get("DIFF_LARGER_SEEDS", "150"))
LARGER_FIRST_SEED = 80_000_000
STICKY_MIN_SHARE_NO_WORSE = 0.99


def _seeds(count: int, first: int, mode: str) -> list[int]:
    return sorted(set(range(first, first + count)) | set(REGRESSION_SEEDS[mode]))


# --- plain readings of a scenario dict (independent of the code under test) -----------------------------


def _signed_key(process_id: str) -> tuple[int, int]:
    """Kafka's ProcessId order: both UUID halves as signed 64-bit numbers."""
    value = uuid.UUID(process_id).int
    halves = (value >> 64, value & ((1 << 64) - 1))
    return tuple(h - (1 << 64) if h >= 1 << 63 else h for h in halves)


def _known_tasks(scenario: dict) -> dict[str, dict]:
    return {t["id"]: t for t in scenario["tasks"]}


def _has_changelog(task: dict) -> bool:
    return any(p["changelog"] for p in task["partitions"])


def _previous(client: dict, role: str, known: dict) -> set[str]:
    consumers = [c for c in client.get("consumers") or [] if isinstance(c, dict)]
    listed = set(client.get(role) or []).union(*(c.get(role) or [] for c in consumers))
    return listed & set(known)


def _prev_active_owners(scenario: dict) -> dict[str, list[str]]:
    known = _known_tasks(scenario)
    owners: dict[str, list[str]] = {}
    for client in scenario["clients"]:
        for task in _previous(client, "prev_active", known):
            owners.setdefault(task, []).append(client["process_id"])
    return owners


def _threads(client: dict) -> int:
    return len(client.get("consumers") or []) or client["threads"]


def _active_moves(scenario: dict, result: dict) -> int:
    owners = _prev_active_owners(scenario)
    now = {t: c["process_id"] for c in result["assignment"] for t in c["active"]}
    return sum(1 for task, previous in owners.items() if now.get(task) not in previous)


def _load_spread(scenario: dict, result: dict) -> float:
    threads = {c["process_id"]: _threads(c) for c in scenario["clients"]}
    loads = [len(c["active"]) / threads[c["process_id"]] for c in result["assignment"]]
    return max(loads) - min(loads) if loads else 0.0


def _standbys_per_task(result: dict) -> Counter:
    return Counter(t for c in result["assignment"] for t in c["standby"])


def _tag_placement_failure(scenario: dict, ours: dict, kafka: dict) -> str | None:
    """HA with client-tag standby placement, which differs from Kafka's where its hash order decides
    (POLICY.md 3): every task active once; every stateful task min(num_standby_replicas, clients - 1)
    standbys besides our warmups; and Kafka's answer those standbys plus at most max_warmup_replicas
    warmups in all. Not the total with warmups: a standby placed on another client may or may not need
    moving towards a caught-up one, which leaves a warmup (seed 60001571: ours 3 warmups, Kafka 2)."""
    configs = scenario["configs"]
    stateful = {t["id"] for t in scenario["tasks"] if _has_changelog(t)}
    wanted = min(configs["num_standby_replicas"], len(scenario["clients"]) - 1)
    budget = configs["max_warmup_replicas"]
    warmups = Counter(t for c in ours["assignment"] for t in c.get("warmup") or ())
    standbys = _standbys_per_task(ours) - warmups
    kafka_counts = _standbys_per_task(kafka)
    problems = []
    if not _actives_once(scenario, ours):
        problems.append("not every task active exactly once")
    if set(standbys) - stateful or any(standbys[t] != wanted for t in stateful):
        problems.append(f"standbys besides warmups {dict(standbys)}, not {wanted} per stateful task")
    if sum(warmups.values()) > budget:
        problems.append(f"{sum(warmups.values())} warmups over max_warmup_replicas {budget}")
    kafka_extra = [kafka_counts[t] - wanted for t in stateful]
    if set(kafka_counts) - stateful or min(kafka_extra, default=0) < 0 or sum(kafka_extra) > budget:
        problems.append(f"Kafka's replicas {dict(kafka_counts)} are not {wanted} standbys per stateful task "
                        f"and at most {budget} warmups")  # fmt: skip
    return "; ".join(problems) or None


def _actives_once(scenario: dict, result: dict) -> bool:
    actives = Counter(t for c in result["assignment"] for t in c["active"])
    return set(actives) == set(_known_tasks(scenario)) and all(n == 1 for n in actives.values())


def _legacy_rack_enabled(scenario: dict) -> bool:
    """RackAwareTaskAssignor.canEnableRackAwareAssignor (rack.md 2.1) on a scenario."""
    configs = scenario["configs"]
    if configs["rack_aware_assignment_strategy"] == "none" or scenario.get("lags_computed") is False:
        return False
    if not all(c.get("rack") for c in scenario["clients"]):
        return False
    partitions = [p for t in scenario["tasks"] for p in t["partitions"]]
    if not all(p["racks"] for p in partitions if p["source"]):
        return False
    return configs["num_standby_replicas"] == 0 or all(p["racks"] for p in partitions if p["changelog"])


def _legacy_cross_rack(scenario: dict, result: dict) -> int:
    """Cross-rack fetches: actives' source partitions and standbys' changelog partitions off-rack."""
    racks = {c["process_id"]: c["rack"] for c in scenario["clients"]}
    tasks = _known_tasks(scenario)
    cost = 0
    for client in result["assignment"]:
        rack = racks[client["process_id"]]
        for task in client["active"]:
            cost += sum(rack not in p["racks"] for p in tasks[task]["partitions"] if p["source"])
        for task in client["standby"]:
            cost += sum(rack not in p["racks"] for p in tasks[task]["partitions"] if p["changelog"])
    return cost


# --- running both sides -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    seed: int
    scenario: dict
    kafka: dict
    ours: dict | None
    ours_error: str | None


_KAFKA_CACHE: dict[tuple[str, tuple[int, ...], str], list[dict]] = {}


def _kafka_answers(oracle, mode: str, seeds: list[int], scenarios: list[dict], knobs: Knobs) -> list[dict]:
    key = (mode, tuple(seeds), repr(knobs))
    if key not in _KAFKA_CACHE:
        _KAFKA_CACHE[key] = oracle.run(scenarios, mode, now_ms=NOW_MS)
    return _KAFKA_CACHE[key]


def _plan_ours(scenario: dict, assignor: str) -> tuple[dict | None, str | None]:
    from fleet_assignor.assignor.planner import plan_scenario

    try:
        return plan_scenario(scenario, assignor=assignor, now_ms=NOW_MS), None
    except Exception as error:  # reported per seed, never hidden
        return None, f"{type(error).__name__}: {error}"


DEFAULT_KNOBS = Knobs()


def _pairs(oracle, mode: str, seeds: list[int], knobs: Knobs = DEFAULT_KNOBS) -> list[Pair]:
    scenarios = [generate_scenario(seed, knobs) for seed in seeds]
    answers = _kafka_answers(oracle, mode, seeds, scenarios, knobs)
    pairs = []
    for seed, scenario, kafka in zip(seeds, scenarios, answers, strict=False):
        assert kafka["status"] == "OK", f"seed {seed}: Kafka failed: {kafka.get('exception')}"
        ours, error = _plan_ours(scenario, mode)
        pairs.append(Pair(seed, scenario, kafka, ours, error))
    return pairs


def _report(title: str, failures: list[str], limit: int = 25) -> str:
    shown = "\n  ".join(failures[:limit])
    more = f"\n  ... and {len(failures) - limit} more" if len(failures) > limit else ""
    return f"{title}: {len(failures)} seed(s)\n  {shown}{more}"


# --- HA -----------------------------------------------------------------------------------------------


def _check_high_availability(oracle, pair: Pair) -> tuple[str, str | None]:
    """(category, failure or None); categories: exact, standby_tie, tags, fallback, error and, where Kafka's
    rack optimizer runs, those of `_check_high_availability_with_rack`."""
    scenario, kafka, ours = pair.scenario, pair.kafka, pair.ours
    if ours is None:
        return "error", f"seed {pair.seed}: ours raised {pair.ours_error}"
    if ours["status"] != "OK" or ours["error"] != "NONE":
        return "error", f"seed {pair.seed}: ours {ours['status']} {ours['error']}: {ours['error_detail']}"
    if scenario.get("lags_computed") is False:
        return "fallback", _fallback_failure(pair)
    theirs_by_client, ours_by_client = per_client(kafka), per_client(ours)
    if _legacy_rack_enabled(scenario):
        return _check_high_availability_with_rack(oracle, pair)
    if ours["probing_rebalance"] != kafka["probing_rebalance"]:
        return (
            "exact",
            f"seed {pair.seed}: probing {ours['probing_rebalance']} != Kafka {kafka['probing_rebalance']}",
        )
    if scenario["configs"]["rack_aware_assignment_tags"] and scenario["configs"]["num_standby_replicas"] > 0:
        # Client-tag standby placement iterates a Java HashSet in Kafka and a fixed order here (POLICY.md 3);
        # movements, and the warmups they leave, then follow the standbys.
        failure = _tag_placement_failure(scenario, ours, kafka)
        return "tags", f"seed {pair.seed}: {failure}" if failure else None
    if ours_by_client == theirs_by_client:
        return "exact", None
    actives = {pid: a for pid, (a, _) in ours_by_client.items()}
    kafka_actives = {pid: a for pid, (a, _) in theirs_by_client.items()}
    tie_possible = kafka["probing_rebalance"] or bool(scenario["configs"]["rack_aware_assignment_tags"])
    if actives == kafka_actives and tie_possible and _standbys_per_task(ours) == _standbys_per_task(kafka):
        return "standby_tie", None
    diff = {
        pid[:8]: (sorted(ours_by_client[pid][0] ^ theirs_by_client[pid][0]),
                  sorted(ours_by_client[pid][1] ^ theirs_by_client[pid][1]))
        for pid in theirs_by_client if ours_by_client.get(pid) != theirs_by_client[pid]
    }  # fmt: skip
    return "exact", f"seed {pair.seed}: per-client (active, standby) symmetric differences {diff}"


def _run_high_availability(
    oracle, seeds: list[int], *, with_rack: bool | None = None, knobs: Knobs = DEFAULT_KNOBS
) -> None:
    """`with_rack` None: every seed; True/False: only seeds where Kafka's rack optimizer runs / does not."""
    categories: Counter = Counter()
    failures = []
    for pair in _pairs(oracle, "high_availability", seeds, knobs):
        if with_rack is not None and _legacy_rack_enabled(pair.scenario) != with_rack:
            continue
        category, failure = _check_high_availability(oracle, pair)
        categories[category] += 1
        if failure:
            failures.append(failure)
    print(f"HA over {len(seeds)} seeds: {dict(categories)}")
    assert not failures, _report("HA disagrees with Kafka", failures)


def test_high_availability_matches_kafka_where_rack_optimizer_is_off(kafka_oracle):
    _run_high_availability(kafka_oracle, _seeds(DIFF_SEEDS, 0, "high_availability"), with_rack=False)


def test_high_availability_matches_kafka_where_rack_optimizer_runs(kafka_oracle):
    _run_high_availability(kafka_oracle, _seeds(DIFF_SEEDS, 0, "high_availability"), with_rack=True)


# --- HA where Kafka's rack optimizer runs: replaying Kafka's choice at each rack step -------------------
#
# Kafka's legacy rack optimizer cancels cycles until no cheaper flow exists and keeps whichever optimum it
# reaches; ours reaches the same minimum and, among equal-cost optima, keeps the most tasks where they are
# (POLICY.md 6). On many seeds the optimum is not unique: the two assignors then place standbys, warmups and
# stateless tasks after different, equally good active placements, and their final answers differ although
# every phase follows Kafka's (first seen on 41 of the 169 rack-enabled seeds of 0..499: 39 diverged at the
# stateful active step, 2 at the standby step, every time at equal cost; none at a cost difference).
#
# So where the answers differ, our HA runs again with a rack assignor that, at every optimizer step, first
# runs ours (checked against Kafka's choice on the same input: `_rack_step_failure`), then puts Kafka's
# choice for that very input in place. The replay must then give Kafka's final answer exactly: that proves
# the tie-break was the only difference. Kafka's choice comes from the oracle's KIP-924 modes
# (TaskAssignmentUtils), which build the same graph and run the same solver as the legacy path (rack.md 4-7)
# when given the step's input as a scenario with:
# * clients renamed UUID(0, rank) in signed ProcessId order: the oracle keeps states in a HashMap, and these
#   ids hash to their rank, so Kafka's client list is in the legacy (sorted) order;
# * actives: the optimized tasks only, with their source partitions only (the legacy active cost), and the
#   caller's costs (HA: configs or 10/1 for stateful tasks, always 1/0 for stateless ones, rack.md 1);
# * standbys: strategy min_traffic (the legacy standby optimizer always builds MinTraffic graphs), asked one
#   client pair at a time (the legacy loop is greedy over pairs, see `optimize_standby_tasks` below); a
#   standby the movement predicate pins is shown to Kafka as an active, since Kafka's KIP-924 standby
#   optimizer never checks client tags itself (rack.md 9, item 6).
# Classified 2026-11-22 over the rack-enabled seeds of 0..499: 69 identical, 98 identical after the replay
# (every step a tie: POLICY.md 6), 2 (260, 498) where client-tag standby placement differs before any rack
# step (POLICY.md 1, 3); 0 unexplained. Over the 5,000 soak seeds: 893 ties, 36 tag placements, 0 unexplained.

_STATEFUL_DEFAULT_COSTS = (10, 1)  # HA's defaults when the configs leave a cost unset (rack.md 1)
_STATELESS_COSTS = (1, 0)

Holdings = dict[str, tuple[frozenset[str], frozenset[str]]]  # process id -> (actives, standbys)


@dataclass(frozen=True)
class RackStep:
    """One optimizer call during a replay: its input, ours's output and Kafka's output (None: not asked)."""

    kind: str  # "active", "standby" (our whole step), "standby pair" (one pair), "standby loop" (mismatch)
    tasks: frozenset[str]
    before: Holdings
    ours: Holdings
    kafka: Holdings | None
    traffic_cost: int
    non_overlap_cost: int


def _holdings(clients) -> Holdings:
    return {
        str(pid): (frozenset(map(str, state.active_set())), frozenset(map(str, state.standby_set())))
        for pid, state in clients.items()
    }


def _oracle_client_ids(scenario: dict) -> dict[str, str]:
    """Original process id -> UUID(0, rank + 1), rank in Kafka's signed order (see the note above)."""
    ordered = sorted((c["process_id"] for c in scenario["clients"]), key=_signed_key)
    return {pid: str(uuid.UUID(int=rank + 1)) for rank, pid in enumerate(ordered)}


def _step_scenario(scenario: dict, held: Holdings, tasks: list[dict], configs: dict, standbys: bool) -> dict:
    ids = _oracle_client_ids(scenario)
    names = {t["id"] for t in tasks}
    clients = [
        {
            "process_id": ids[c["process_id"]],
            "threads": _threads(c),
            "prev_active": sorted(held[c["process_id"]][0] & names),
            "prev_standby": sorted(held[c["process_id"]][1] & names) if standbys else [],
            "lags": {},
            "rack": c["rack"],
            "tags": {},
        }
        for c in scenario["clients"]
    ]
    return {"app_id": scenario["app_id"], "configs": configs, "tasks": tasks, "clients": clients}


def _kafka_step(oracle, scenario: dict, step_scenario: dict, mode: str) -> dict[str, tuple[list, list]]:
    answer = oracle.run([step_scenario], mode, now_ms=NOW_MS)[0]
    assert answer["status"] == "OK", f"{scenario['app_id']}: Kafka's {mode} failed: {answer.get('exception')}"
    back = {renamed: pid for pid, renamed in _oracle_client_ids(scenario).items()}
    return {back[c["process_id"]]: (c["active"], c["standby"]) for c in answer["assignment"]}


def _kafka_active_step(oracle, scenario: dict, held: Holdings, tasks: frozenset[str], costs) -> Holdings:
    configs = dict(
        scenario["configs"],
        rack_aware_traffic_cost=costs[0],
        rack_aware_non_overlap_cost=costs[1],
        num_standby_replicas=0,
        rack_aware_assignment_tags=[],
    )
    optimized = [
        {
            "id": t["id"],
            "stateful": False,
            "stores": [],
            "partitions": [p for p in t["partitions"] if p["source"]],
        }
        for t in scenario["tasks"]
        if t["id"] in tasks
    ]
    placed = _kafka_step(oracle, scenario, _step_scenario(scenario, held, optimized, configs, False),
                         "optimize_rack_active")  # fmt: skip
    return {pid: ((a - tasks) | frozenset(placed[pid][0]), s) for pid, (a, s) in held.items()}


def _kafka_standby_step(oracle, scenario: dict, held: Holdings, costs) -> Holdings:
    configs = dict(
        scenario["configs"],
        rack_aware_traffic_cost=costs[0],
        rack_aware_non_overlap_cost=costs[1],
        rack_aware_assignment_strategy="min_traffic",
        rack_aware_assignment_tags=[],
    )
    stateful = [t for t in scenario["tasks"] if _has_changelog(t)]
    placed = _kafka_step(oracle, scenario, _step_scenario(scenario, held, stateful, configs, True),
                         "optimize_rack_standby")  # fmt: skip
    return {pid: (a, frozenset(placed[pid][1])) for pid, (a, _) in held.items()}


def _put_in_place(clients, target: Holdings) -> None:
    """Make the ClientStates hold `target` (all removals first, so a task never sits on two clients)."""
    from fleet_assignor.assignor.task_id import TaskId

    states = {str(pid): state for pid, state in clients.items()}
    for pid, state in states.items():
        for task in sorted(_holdings({pid: state})[pid][0] - target[pid][0]):
            state.unassign_active(TaskId.parse(task))
        for task in sorted(_holdings({pid: state})[pid][1] - target[pid][1]):
            state.unassign_standby(TaskId.parse(task))
    for pid, state in states.items():
        for task in sorted(target[pid][0] - _holdings({pid: state})[pid][0]):
            state.assign_active(TaskId.parse(task))
        for task in sorted(target[pid][1] - _holdings({pid: state})[pid][1]):
            state.assign_standby(TaskId.parse(task))


class _FollowKafkaAtRackSteps:
    """The rack assignor our HA gets during a replay: ours runs and is recorded, then Kafka's choice for the
    same input replaces it (see the note above)."""

    def __init__(self, ours, oracle, scenario: dict) -> None:
        self._ours, self._oracle, self._scenario = ours, oracle, scenario
        self.steps: list[RackStep] = []

    def can_enable_rack_awareness(self) -> bool:
        return self._ours.can_enable_rack_awareness()

    def optimize_active_tasks(self, tasks, clients, traffic_cost: int, non_overlap_cost: int) -> int:
        if not tasks:
            return 0
        before = _holdings(clients)
        cost = self._ours.optimize_active_tasks(tasks, clients, traffic_cost, non_overlap_cost)
        names = frozenset(map(str, tasks))
        kafka = _kafka_active_step(
            self._oracle, self._scenario, before, names, (traffic_cost, non_overlap_cost)
        )
        self.steps.append(
            RackStep("active", names, before, _holdings(clients), kafka, traffic_cost, non_overlap_cost)
        )
        _put_in_place(clients, kafka)
        return cost

    def optimize_standby_tasks(
        self, clients, traffic_cost: int, non_overlap_cost: int, move_predicate
    ) -> int:
        costs = (traffic_cost, non_overlap_cost)
        before = _holdings(clients)
        cost = self._ours.optimize_standby_tasks(clients, traffic_cost, non_overlap_cost, move_predicate)
        names = frozenset(t for _, standbys in before.values() for t in standbys)
        ours = _holdings(clients)
        self.steps.append(RackStep("standby", names, before, ours, None, *costs))
        # Kafka's legacy loop is greedy over pairs, and a tie inside one pair changes what later pairs see
        # (first seen on seeds 122, 130, 162, 199, 396: totals above and below Kafka's). So the loop of
        # rack.md 7 runs here, pair by pair: first with our pair choices, which must rebuild ours's whole
        # step (the same loop); then with ours and Kafka solving each pair on the same input, ours checked
        # (`_rack_step_failure`) and Kafka's choice put in place.
        _put_in_place(clients, before)
        self._pairwise(clients, costs, move_predicate, follow_kafka=False)
        if _holdings(clients) != ours:
            self.steps.append(RackStep("standby loop", names, before, ours, _holdings(clients), *costs))
        _put_in_place(clients, before)
        self._pairwise(clients, costs, move_predicate, follow_kafka=True)
        return cost

    def _pairwise(self, clients, costs: tuple[int, int], move_predicate, *, follow_kafka: bool) -> None:
        """rack.md 7: up to 4 rounds while anything moves, over client pairs i < j in ProcessId order on
        different racks with movable standbys both ways, each pair solved on its own (ours: our optimizer
        on the two clients alone, with the movement predicate over all clients)."""
        from fleet_assignor.assignor.task_id import TaskId

        racks = {c["process_id"]: c["rack"] for c in self._scenario["clients"]}
        order = sorted(clients)

        def allowed(source, destination, task, _pair) -> bool:
            return move_predicate(source, destination, task, clients)

        moved, rounds = True, 0
        while moved and rounds < 4:
            moved, rounds = False, rounds + 1
            for i, first in enumerate(order):
                for second in order[i + 1 :]:
                    pair = {first: clients[first], second: clients[second]}
                    held = _holdings(pair)
                    movable = {
                        str(x): frozenset(
                            t
                            for t in held[str(x)][1] - held[str(y)][0] - held[str(y)][1]
                            if allowed(clients[x], clients[y], TaskId.parse(t), pair)
                        )
                        for x, y in ((first, second), (second, first))
                    }
                    a, b = held
                    if racks[a] == racks[b] or not movable[a] or not movable[b]:
                        continue  # neither side builds a graph for this pair
                    self._ours.optimize_standby_tasks(pair, *costs, allowed)
                    if follow_kafka:
                        kafka = self._kafka_pair(held, movable, costs)
                        tasks = frozenset(held[a][1] | held[b][1])
                        self.steps.append(
                            RackStep("standby pair", tasks, held, _holdings(pair), kafka, *costs)
                        )
                        _put_in_place(pair, kafka)
                    moved |= _holdings(pair) != held

    def _kafka_pair(self, held: Holdings, movable: dict[str, frozenset[str]], costs) -> Holdings:
        """Kafka's choice for one pair: the two clients alone, where a standby the movement predicate pins
        (the other client does not hold it) is shown as an active, which Kafka's swaps never touch (its
        KIP-924 optimizer would otherwise ignore the client tags, rack.md 9 item 6)."""
        a, b = held
        pinned = {x: held[x][1] - held[y][0] - held[y][1] - movable[x] for x, y in ((a, b), (b, a))}
        shown = {x: (held[x][0] | pinned[x], held[x][1] - pinned[x]) for x in held}
        sub = dict(self._scenario, clients=[c for c in self._scenario["clients"] if c["process_id"] in held])
        kafka = _kafka_standby_step(self._oracle, sub, shown, costs)
        return {x: (held[x][0], kafka[x][1] | pinned[x]) for x in held}


def _replay_following_kafka(oracle, scenario: dict) -> tuple[dict, list[RackStep]]:
    """Our HA on `scenario` with Kafka's choice put in place at every rack optimizer step."""
    import fleet_assignor.assignor.high_availability as high_availability
    from fleet_assignor.assignor.planner import plan_scenario

    replays: list[_FollowKafkaAtRackSteps] = []
    ours_factory = high_availability._rack_assignor_for

    def following(application_state):
        ours = ours_factory(application_state)
        replays.append(_FollowKafkaAtRackSteps(ours, oracle, scenario))
        return replays[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(high_availability, "_rack_assignor_for", following)
        result = plan_scenario(scenario, assignor="high_availability", now_ms=NOW_MS)
    assert len(replays) == 1, "the HA assignor asked for one rack assignor per assignment"
    return result, replays[0].steps


def _rack_step_cost(scenario: dict, step: RackStep, after: Holdings) -> tuple[int, int]:
    """(cost, moves) of a step's placement in Kafka's terms (rack.md 3): traffic cost per partition off the
    client's rack (actives: source partitions; standbys: changelog partitions) plus the non-overlap cost per
    task placed on a client that did not hold it before the step."""
    role, scope = (0, "source") if step.kind == "active" else (1, "changelog")
    racks = {c["process_id"]: c["rack"] for c in scenario["clients"]}
    known = _known_tasks(scenario)
    remote = sum(
        racks[pid] not in p["racks"]
        for pid, held in after.items()
        for task in held[role] & step.tasks
        for p in known[task]["partitions"]
        if p[scope]
    )
    moves = sum(len((held[role] - step.before[pid][role]) & step.tasks) for pid, held in after.items())
    return step.traffic_cost * remote + step.non_overlap_cost * moves, moves


def _over_exact_caps(step: RackStep, after: Holdings) -> list[tuple[str, str]]:
    """(subtopology, client) pairs where `after` holds more of the subtopology's optimized actives than the
    exact balance_subtopology cap ceil(orig * v / T) allows (POLICY.md 4)."""
    total = len(step.tasks)
    sizes = Counter(task.rsplit("_", 1)[0] for task in step.tasks)
    over = []
    for pid, (actives, _) in after.items():
        orig = len(step.before[pid][0] & step.tasks)
        held = Counter(task.rsplit("_", 1)[0] for task in actives & step.tasks)
        over += [
            (group, pid[:8]) for group, n in sorted(held.items()) if n > -(-orig * sizes[group] // total)
        ]
    return over


def _expected_costs(scenario: dict, step: RackStep) -> tuple[int, int]:
    """HA's costs (rack.md 1): stateless actives (no changelog) always 1/0; else the configs, or 10/1."""
    known = _known_tasks(scenario)
    if step.kind == "active" and not any(_has_changelog(known[t]) for t in step.tasks):
        return _STATELESS_COSTS
    configs = scenario["configs"]
    traffic, non_overlap = configs["rack_aware_traffic_cost"], configs["rack_aware_non_overlap_cost"]
    return (
        _STATEFUL_DEFAULT_COSTS[0] if traffic is None else traffic,
        _STATEFUL_DEFAULT_COSTS[1] if non_overlap is None else non_overlap,
    )


def _rack_step_failure(scenario: dict, step: RackStep) -> str | None:
    """What POLICY.md says of our choice at one optimizer step, against Kafka's on the same input."""
    costs = (step.traffic_cost, step.non_overlap_cost)
    if costs != _expected_costs(scenario, step):
        return f"{step.kind} step ran with costs {costs}, rack.md 1 says {_expected_costs(scenario, step)}"
    role = 0 if step.kind == "active" else 1
    counts = {pid: len(held[role] & step.tasks) for pid, held in step.ours.items()}
    if counts != {pid: len(held[role] & step.tasks) for pid, held in step.before.items()}:
        return f"{step.kind} step changed per-client counts"
    balance = scenario["configs"]["rack_aware_assignment_strategy"] == "balance_subtopology"
    if step.kind == "active" and balance and _over_exact_caps(step, step.ours):
        return f"active step over the exact balance_subtopology caps at {_over_exact_caps(step, step.ours)}"
    if step.kind == "standby loop":
        return "our standby step is not the pairwise loop of rack.md 7 over our own pair choices"
    if step.kafka is None:
        # Our whole standby step: judged pair by pair below, and with client tags each swap must keep the
        # tag spread (POLICY.md 4: Kafka's movement predicate, which ours really checks).
        return None if _tag_spread_kept(scenario, step.before, step.ours) else "standby step lost tag spread"
    (ours_cost, ours_moves), (kafka_cost, kafka_moves) = (
        _rack_step_cost(scenario, step, step.ours),
        _rack_step_cost(scenario, step, step.kafka),
    )
    if ours_cost == kafka_cost and ours_moves <= kafka_moves:
        return None  # the same optimum, or an equally cheap one with no more moves (POLICY.md 6)
    if step.kind == "active" and ours_cost > kafka_cost and balance and _over_exact_caps(step, step.kafka):
        return None  # Kafka's double caps admitted a placement our exact caps forbid (POLICY.md 4)
    return (
        f"{step.kind} step cost {ours_cost} with {ours_moves} moves, Kafka {kafka_cost} with {kafka_moves} "
        f"on the same input"
    )


def _check_high_availability_with_rack(oracle, pair: Pair) -> tuple[str, str | None]:
    """Categories: exact; rack_tie (the answers differ, and the replay following Kafka's choice at every rack
    step gives Kafka's answer exactly); rack_tags (client tags with standbys: see below)."""
    scenario, kafka, ours = pair.scenario, pair.kafka, pair.ours
    if per_client(ours) == per_client(kafka) and ours["probing_rebalance"] == kafka["probing_rebalance"]:
        return "exact", None
    replayed, steps = _replay_following_kafka(oracle, scenario)
    problems = [
        f"{problem} (step {k})"
        for k, step in enumerate(steps)
        if (problem := _rack_step_failure(scenario, step))
    ]
    if problems:
        return "rack", f"seed {pair.seed}: " + "; ".join(problems)
    if (
        per_client(replayed) == per_client(kafka)
        and replayed["probing_rebalance"] == kafka["probing_rebalance"]
    ):
        return "rack_tie", None
    configs = scenario["configs"]
    if configs["rack_aware_assignment_tags"] and configs["num_standby_replicas"] > 0:
        # Client-tag standby placement is not a rack step, so the replay cannot follow Kafka's, which is
        # hash-ordered where it falls back (POLICY.md 1, 3): as where the rack optimizer is off, plus the
        # same probing decision.
        failure = _tag_placement_failure(scenario, ours, kafka)
        probing = (ours["probing_rebalance"], kafka["probing_rebalance"])
        if probing[0] != probing[1]:
            failure = f"{failure}; " if failure else ""
            failure += f"probing {probing[0]} != Kafka {probing[1]}"
        return "rack_tags", f"seed {pair.seed}: {failure}" if failure else None
    return "rack", f"seed {pair.seed}: following Kafka's rack choices, {_difference(replayed, kafka)}"


def _difference(ours: dict, kafka: dict) -> str:
    mine, theirs = per_client(ours), per_client(kafka)
    diff = {
        pid[:8]: (sorted(mine[pid][0] ^ theirs[pid][0]), sorted(mine[pid][1] ^ theirs[pid][1]))
        for pid in theirs
        if mine.get(pid) != theirs[pid]
    }
    probing = (ours["probing_rebalance"], kafka["probing_rebalance"])
    return f"per-client (active, standby) symmetric differences {diff}, probing ours/Kafka {probing}"


# --- fallback -----------------------------------------------------------------------------------------


def _fallback_failure(pair: Pair) -> str | None:
    scenario, kafka, ours = pair.scenario, pair.kafka, pair.ours
    problems = []
    if not ours["probing_rebalance"]:
        problems.append("no follow-up requested")
    if not _actives_once(scenario, ours):
        problems.append("not every task active exactly once")
    where = {t: c["process_id"] for c in ours["assignment"] for t in c["active"]}
    kafka_where = {t: c["process_id"] for c in kafka["assignment"] for t in c["active"]}
    for task, owners in sorted(_prev_active_owners(scenario).items()):
        keeper = max(owners, key=_signed_key)  # the later in ProcessId order keeps a contested task
        if where.get(task) != keeper:
            problems.append(
                f"{task} previous active on {keeper[:8]} not kept (ours {str(where.get(task))[:8]})"
            )
        if len(owners) == 1 and kafka_where.get(task) != keeper:
            problems.append(f"Kafka itself moved preserved {task}")  # the oracle's input would be wrong
    if _standbys_per_task(ours) != _standbys_per_task(kafka):
        problems.append(
            f"standbys per task {dict(_standbys_per_task(ours))} != Kafka {dict(_standbys_per_task(kafka))}"
        )
    return f"seed {pair.seed}: " + "; ".join(problems) if problems else None


def _run_fallback(oracle, seeds: list[int], knobs: Knobs = DEFAULT_KNOBS) -> None:
    failures, identical = [], 0
    for pair in _pairs(oracle, "fallback_prior", seeds, knobs):
        if pair.ours is None:
            failures.append(f"seed {pair.seed}: ours raised {pair.ours_error}")
            continue
        failure = _fallback_failure(pair)
        if failure:
            failures.append(failure)
        identical += per_client(pair.ours) == per_client(pair.kafka)
    print(f"fallback over {len(seeds)} seeds: {identical} identical to Kafka's hash-ordered answer")
    assert not failures, _report("fallback_prior disagrees with Kafka", failures)


def test_fallback_prior_matches_kafka(kafka_oracle):
    _run_fallback(kafka_oracle, _seeds(DIFF_SEEDS, 0, "fallback_prior"))


# --- KIP-924 sticky -----------------------------------------------------------------------------------


def _run_sticky(oracle, seeds: list[int], knobs: Knobs = DEFAULT_KNOBS) -> None:
    invalid, kafka_wins, rack_only_ours = [], [], []
    ours_moves_total = kafka_moves_total = compared = 0
    for pair in _pairs(oracle, "sticky", seeds, knobs):
        ours, kafka, scenario = pair.ours, pair.kafka, pair.scenario
        if ours is None or ours["status"] != "OK" or ours["error"] != "NONE":
            detail = (
                pair.ours_error
                if ours is None
                else f"{ours['status']} {ours['error']} {ours['error_detail']}"
            )
            invalid.append(f"seed {pair.seed}: {detail}")
            continue
        if set(ours["unassigned"]) - set(kafka["unassigned"]):
            invalid.append(
                f"seed {pair.seed}: leaves {sorted(set(ours['unassigned']) - set(kafka['unassigned']))}"
            )
        if _sticky_rack_only_ours(scenario):
            # POLICY.md 4: ours optimizes racks with its default costs where the configs set only one cost;
            # Kafka's gate stays closed. Ours trades moves for traffic there: compared by traffic instead.
            rack_only_ours.append(
                (pair.seed, _active_cross_rack(scenario, ours), _active_cross_rack(scenario, kafka))
            )
            continue
        ours_moves, kafka_moves = _active_moves(scenario, ours), _active_moves(scenario, kafka)
        ours_spread, kafka_spread = _load_spread(scenario, ours), _load_spread(scenario, kafka)
        compared += 1
        ours_moves_total += ours_moves
        kafka_moves_total += kafka_moves
        if ours_moves > kafka_moves or ours_spread > kafka_spread + 1e-9:
            kafka_wins.append(
                f"seed {pair.seed}: moves {ours_moves} vs Kafka {kafka_moves}, "
                f"spread {ours_spread:.3f} vs {kafka_spread:.3f}"
            )
    ours_traffic = sum(o for _, o, _ in rack_only_ours)
    kafka_traffic = sum(k for _, _, k in rack_only_ours)
    print(
        f"sticky over {compared} comparable seeds: active moves ours {ours_moves_total} vs Kafka "
        f"{kafka_moves_total}; Kafka better on {len(kafka_wins)} seed(s): " + "; ".join(kafka_wins)
    )
    print(
        f"sticky rack-optimized only by ours on {len(rack_only_ours)} seeds: cross-rack partitions ours "
        f"{ours_traffic} vs Kafka {kafka_traffic}; ours higher on "
        + ", ".join(str(seed) for seed, o, k in rack_only_ours if o > k)
    )
    assert not invalid, _report("sticky gives an invalid or incomplete assignment", invalid)
    assert ours_traffic < kafka_traffic or not kafka_traffic, "rack-optimized sticky carries no less traffic"
    allowed = math.floor(compared * (1 - STICKY_MIN_SHARE_NO_WORSE))
    assert len(kafka_wins) <= allowed, _report(f"Kafka's sticky is better (allowed {allowed})", kafka_wins)
    assert ours_moves_total < kafka_moves_total or kafka_moves_total == 0, (
        f"ours moves {ours_moves_total} actives in total, Kafka {kafka_moves_total}"
    )


def _sticky_rack_only_ours(scenario: dict) -> bool:
    """Our sticky optimizes racks (its defaults fill an unset cost) while Kafka's gate stays closed."""
    configs = scenario["configs"]
    costs = (configs["rack_aware_traffic_cost"], configs["rack_aware_non_overlap_cost"])
    racks = all(c.get("rack") for c in scenario["clients"]) and all(
        p["racks"] for t in scenario["tasks"] for p in t["partitions"]
    )
    return configs["rack_aware_assignment_strategy"] != "none" and racks and None in costs


def _active_cross_rack(scenario: dict, result: dict) -> int:
    """KIP-924 active cost set: every partition of each active off the client's rack."""
    held = {pid: (tuple(a), tuple(s)) for pid, (a, s) in per_client(result).items()}
    return _kip924_rack_cost(scenario, held, held, True)["after"]


def test_sticky_is_no_worse_than_kafka(kafka_oracle):
    _run_sticky(kafka_oracle, _seeds(DIFF_SEEDS, 0, "sticky"))


# A previous active two clients claim, counted for the one running it when the active counts are chosen
# (sticky.active_counts): that claimant had no room for it, so ours moved it or kept a wider spread where
# Kafka's answer shows neither was needed (found 2026-11-26 on seeds outside the usual ranges).
SHARED_CLAIM_SEEDS = [882, 1_000_300, 1_001_541, 7_300_086, 7_300_835, 7_302_145]


def test_sticky_counts_a_shared_previous_active_for_the_claimant_with_room(kafka_oracle):
    worse = []
    for pair in _pairs(kafka_oracle, "sticky", SHARED_CLAIM_SEEDS):
        assert pair.ours is not None and pair.ours["status"] == "OK", (pair.seed, pair.ours_error)
        moves = (_active_moves(pair.scenario, pair.ours), _active_moves(pair.scenario, pair.kafka))
        spreads = (_load_spread(pair.scenario, pair.ours), _load_spread(pair.scenario, pair.kafka))
        if moves[0] > moves[1] or spreads[0] > spreads[1] + 1e-9:
            worse.append(f"seed {pair.seed}: moves {moves} spread {spreads} (ours, Kafka)")
    assert not worse, worse


# --- rack optimizers on their own ---------------------------------------------------------------------


def _kip924_rack_cost(
    scenario: dict, before: dict[str, tuple], after: dict[str, tuple], active: bool
) -> dict:
    """scenario.md's optimize-rack figures: cross-rack partitions (actives: all partitions; standbys:
    changelog partitions) before and after, and the tasks moved (new (client, task) placements)."""
    racks = {c["process_id"]: c["rack"] for c in scenario["clients"]}
    tasks = _known_tasks(scenario)
    role = 0 if active else 1

    def cross(held: dict[str, tuple]) -> int:
        return sum(
            racks[pid] not in p["racks"]
            for pid, roles in held.items()
            for task in roles[role]
            for p in tasks[task]["partitions"]
            if active or p["changelog"]
        )

    moved = sum(len(set(after[pid][role]) - set(before.get(pid, ((), ()))[role])) for pid in after)
    return {"before": cross(before), "after": cross(after), "moved": moved}


def _kip924_gate(scenario: dict, active: bool) -> bool:
    """canPerformRackAwareOptimization (rack.md 2.2)."""
    configs = scenario["configs"]
    if configs["rack_aware_assignment_strategy"] == "none":
        return False
    if configs["rack_aware_traffic_cost"] is None or configs["rack_aware_non_overlap_cost"] is None:
        return False
    if not all(c.get("rack") for c in scenario["clients"]):
        return False
    return all(p["racks"] for t in scenario["tasks"] for p in t["partitions"] if active or p["changelog"])


def _float_caps_differ(scenario: dict, before: dict[str, tuple]) -> bool:
    """Would Kafka's double-precision balance_subtopology caps exceed the exact ones (POLICY.md 4)?"""
    counts = {pid: len(roles[0]) for pid, roles in before.items()}
    total = sum(counts.values())
    groups = Counter(t.split("_")[0] for roles in before.values() for t in roles[0])
    return any(
        math.ceil((orig * 1.0 / total) * v) != -(-orig * v // total)
        for orig in counts.values()
        for v in groups.values()
        if total
    )


def _our_optimized(scenario: dict, active: bool) -> tuple[dict[str, tuple], dict[str, tuple]]:
    from fleet_assignor.assignor.rack import (
        optimize_rack_aware_active_tasks,
        optimize_rack_aware_standby_tasks,
    )
    from fleet_assignor.assignor.scenario import load_scenario
    from fleet_assignor.assignor.task_assignment_utils import RackAwareOptimizationParams, identity_assignment

    state = load_scenario(scenario, now_ms=NOW_MS).application_state
    assignments = identity_assignment(state)

    def shape(items) -> dict[str, tuple]:
        return {str(pid): (tuple(map(str, a.active_tasks())), tuple(map(str, a.standby_tasks())))
                for pid, a in items}  # fmt: skip

    before = shape(assignments.items())
    optimize = optimize_rack_aware_active_tasks if active else optimize_rack_aware_standby_tasks
    optimize(RackAwareOptimizationParams.of(state), assignments)
    return before, shape(assignments.items())


def _tag_spread_kept(scenario: dict, before: dict[str, tuple], after: dict[str, tuple]) -> bool:
    """No task's holders (active and standbys) cover fewer distinct (tag key, value) pairs than before: the
    movement predicate of assignors.md 5.3.4 (all of a client's tags), which Kafka's optimizer forgets."""
    tags = {c["process_id"]: c["tags"] for c in scenario["clients"]}

    def spread(held: dict[str, tuple]) -> Counter:
        pairs: dict[str, set] = {}
        for pid, (actives, standbys) in held.items():
            for task in (*actives, *standbys):
                pairs.setdefault(task, set()).update(tags[pid].items())
        return Counter({task: len(values) for task, values in pairs.items()})

    old, new = spread(before), spread(after)
    return all(new[task] >= old[task] for task in old)


def _check_optimizer(seed: int, scenario: dict, kafka: dict, active: bool) -> str | None:
    before, after = _our_optimized(scenario, active)
    kafka_after = {pid: (tuple(a), tuple(s)) for pid, (a, s) in per_client(kafka).items()}
    ours_cost = _kip924_rack_cost(scenario, before, after, active)
    if not _kip924_gate(scenario, active):
        return None if after == before else f"seed {seed}: optimizer ran although Kafka's gate is closed"
    kafka_cost = _kip924_rack_cost(scenario, before, kafka_after, active)
    figures = (
        ("before", "cross_rack_partitions_before"),
        ("after", "cross_rack_partitions_after"),
        ("moved", "tasks_moved"),
    )
    for key, reported in figures:
        assert kafka_cost[key] == kafka["rack_cost"][reported], (
            f"seed {seed}: harness counts {key} differently"
        )
    configs = scenario["configs"]
    tc, nc = configs["rack_aware_traffic_cost"], configs["rack_aware_non_overlap_cost"]
    ours_total = tc * ours_cost["after"] + nc * ours_cost["moved"]
    kafka_total = tc * kafka_cost["after"] + nc * kafka_cost["moved"]
    counts = {pid: len(roles[0 if active else 1]) for pid, roles in after.items()}
    if counts != {pid: len(roles[0 if active else 1]) for pid, roles in before.items()}:
        return f"seed {seed}: per-client counts changed"
    if active:
        ours_onto_standby = [
            (pid, t) for pid, (actives, _) in after.items() for t in actives if t in before[pid][1]
        ]
        if ours_onto_standby:
            return f"seed {seed}: ours moved actives onto standby holders {ours_onto_standby}"
        balance = configs["rack_aware_assignment_strategy"] == "balance_subtopology"
        pinned = any(t in roles[1] for roles in before.values() for t in _active_tasks(before))
        if pinned or (balance and _float_caps_differ(scenario, before)):
            # POLICY.md 4: ours solves a smaller problem than Kafka's (no edge onto a standby holder, exact
            # capacities): judged against that problem's own optimum, found by linear programming.
            return _own_problem_failure(seed, scenario, before, after, ours_total, kafka_total)
        return (
            None
            if ours_total == kafka_total
            else f"seed {seed}: total cost {ours_total} != Kafka {kafka_total}"
        )
    if configs["rack_aware_assignment_tags"]:
        # POLICY.md 4: our swaps keep the client-tag spread; Kafka's do not check it.
        return None if _tag_spread_kept(scenario, before, after) else f"seed {seed}: a swap lost tag spread"
    return (
        None if ours_total <= kafka_total else f"seed {seed}: standby cost {ours_total} > Kafka {kafka_total}"
    )


def _active_tasks(held: dict[str, tuple]) -> set[str]:
    return {t for roles in held.values() for t in roles[0]}


def _subtopology_caps(before: dict[str, tuple], *, admit_input: bool) -> dict[tuple[str, str], int]:
    """KIP-924 balance_subtopology caps per (subtopology number, client): ceil(orig * v / T) exactly
    (POLICY.md 4); with `admit_input`, raised to the input's own count wherever it is higher."""
    total = len(_active_tasks(before))
    sizes = Counter(t.split("_")[-2] for t in _active_tasks(before))
    caps = {}
    for pid, (actives, _) in before.items():
        held = Counter(t.split("_")[-2] for t in actives)
        for group, size in sizes.items():
            cap = -(-len(actives) * size // total)
            caps[group, pid] = max(cap, held[group]) if admit_input else cap
    return caps


def _caps_exceeded(after: dict[str, tuple], caps: dict[tuple[str, str], int]) -> list[tuple[str, str]]:
    counts = Counter((t.split("_")[-2], pid) for pid, (actives, _) in after.items() for t in actives)
    return [(group, pid[:8]) for (group, pid), n in sorted(counts.items()) if n > caps[group, pid]]


def _lp_optimum(
    scenario: dict, before: dict[str, tuple], caps: dict[tuple[str, str], int] | None
) -> int | None:
    """Minimum total cost (traffic x partitions off the client's rack + non-overlap x moved tasks) of placing
    the actives with per-client counts kept, never onto a client holding the task's standby, within `caps`
    (None: min_traffic); None if no placement fits. The constraint matrix is a flow network's, so the LP
    optimum is integral: an optimizer independent of ours and of Kafka's."""
    import numpy as np
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    configs = scenario["configs"]
    tc, nc = configs["rack_aware_traffic_cost"], configs["rack_aware_non_overlap_cost"]
    racks = {c["process_id"]: c["rack"] for c in scenario["clients"]}
    known = _known_tasks(scenario)
    tasks, clients = sorted(_active_tasks(before)), sorted(before)
    holder = {t: pid for pid, (actives, _) in before.items() for t in actives}
    edges = [(i, j) for i, t in enumerate(tasks) for j, pid in enumerate(clients) if t not in before[pid][1]]
    costs = [
        tc * sum(racks[clients[j]] not in p["racks"] for p in known[tasks[i]]["partitions"])
        + (0 if holder[tasks[i]] == clients[j] else nc)
        for i, j in edges
    ]
    columns = np.arange(len(edges))
    rows = [i for i, _ in edges] + [len(tasks) + j for _, j in edges]
    targets = [1] * len(tasks) + [len(before[pid][0]) for pid in clients]
    if not edges:
        return 0 if not any(targets) else None
    # The shape is explicit: trailing clients without an edge (they hold a standby of every task) still
    # have their row, so the count they must keep is checked (seed 1003122 of the soak).
    equalities = coo_matrix(
        (np.ones(2 * len(edges)), (rows, np.concatenate([columns, columns]))),
        shape=(len(targets), len(edges)),
    )
    bounded: dict = {}
    if caps is not None:
        cells = sorted(caps)
        index = {cell: k for k, cell in enumerate(cells)}
        rows = [index[tasks[i].split("_")[-2], clients[j]] for i, j in edges]
        bounded = {
            "A_ub": coo_matrix((np.ones(len(edges)), (rows, columns)), shape=(len(cells), len(edges))),
            "b_ub": [caps[cell] for cell in cells],
        }
    solution = linprog(costs, A_eq=equalities, b_eq=targets, bounds=(0, 1), method="highs", **bounded)
    if solution.status == 2:
        return None
    assert solution.status == 0, solution.message
    return round(solution.fun)


def _own_problem_failure(
    seed: int, scenario: dict, before: dict, after: dict, ours_total: int, kafka_total: int
) -> str | None:
    """Ours against the optimum of the problem POLICY.md 4 gives it. Where Kafka's balance_subtopology caps
    admit no placement once the edges onto standby holders are left out (first seen on seed 271), ours
    lets every cap admit the input's own count, so that keeping the input stays possible ("the current
    assignment stays feasible"): there its cost may be below Kafka's, whose caps force moves."""
    balance = scenario["configs"]["rack_aware_assignment_strategy"] == "balance_subtopology"
    caps = _subtopology_caps(before, admit_input=False) if balance else None
    optimum = _lp_optimum(scenario, before, caps)
    relaxed = optimum is None
    if relaxed:
        caps = _subtopology_caps(before, admit_input=True)
        optimum = _lp_optimum(scenario, before, caps)
    print(f"optimize_rack_active seed {seed}: ours {ours_total}, own optimum {optimum} "
          f"({'caps admitting the input' if relaxed else 'exact caps'}), Kafka {kafka_total}")  # fmt: skip
    if caps is not None and _caps_exceeded(after, caps):
        return f"seed {seed}: ours over its caps at {_caps_exceeded(after, caps)}"
    if ours_total != optimum:
        return f"seed {seed}: ours {ours_total} != the optimum {optimum} of its own problem"
    if not relaxed and ours_total < kafka_total:
        return f"seed {seed}: ours {ours_total} below Kafka's {kafka_total} on a smaller problem"
    return None


def _optimizer_failure(seed: int, scenario: dict, kafka: dict, mode: str) -> str | None:
    try:
        return _check_optimizer(seed, scenario, kafka, mode == "optimize_rack_active")
    except AssertionError:
        raise
    except Exception as error:
        return f"seed {seed}: ours raised {type(error).__name__}: {error}"


def _run_optimizers(oracle, seeds: list[int], knobs: Knobs = RACK_KNOBS) -> None:
    scenarios = [generate_scenario(seed, knobs) for seed in seeds]
    failures, ran = [], Counter()
    for mode, active in (("optimize_rack_active", True), ("optimize_rack_standby", False)):
        answers = _kafka_answers(oracle, mode, seeds, scenarios, knobs)
        for seed, scenario, kafka in zip(seeds, scenarios, answers, strict=True):
            assert kafka["status"] == "OK", f"seed {seed}: Kafka failed: {kafka.get('exception')}"
            ran[mode] += _kip924_gate(scenario, active) and kafka["rack_cost"]["tasks_moved"] > 0
            failure = _optimizer_failure(seed, scenario, kafka, mode)
            if failure:
                failures.append(f"{mode} {failure}")
    print(f"rack optimizers over {len(seeds)} seeds; seeds where Kafka moved something: {dict(ran)}")
    assert not failures, _report("rack optimizers disagree with Kafka", failures)


def test_rack_optimizers_reach_kafkas_cost(kafka_oracle):
    _run_optimizers(kafka_oracle, _seeds(DIFF_SEEDS, 0, "optimize_rack"))


# --- streams protocol (broker-side sticky) -------------------------------------------------------------


def _members(result: dict) -> dict[tuple[str, str], tuple[list[str], list[str]]]:
    """(canonical process id, consumer) -> (actives, standbys): what the broker assigns per member."""
    return {
        (str(uuid.UUID(client["process_id"])), consumer): (tasks["active"], tasks["standby"])
        for client in result["assignment"]
        for consumer, tasks in client["consumers"].items()
    }


def _streams_sticky_failure(pair: Pair) -> str | None:
    if pair.ours is None:
        return f"seed {pair.seed}: {pair.ours_error}"
    if pair.ours["error"] != pair.kafka["error"]:
        return f"seed {pair.seed}: error {pair.ours['error']} vs Kafka {pair.kafka['error']}"
    ours, kafka = _members(pair.ours), _members(pair.kafka)
    differing = sorted(m for m in ours.keys() | kafka.keys() if ours.get(m) != kafka.get(m))
    if differing:
        first = differing[0]
        return (
            f"seed {pair.seed}: {len(differing)} member(s) differ, e.g. {first[1]}: ours {ours.get(first)} "
            f"vs Kafka {kafka.get(first)}"
        )
    return None


def _run_streams_sticky(oracle, seeds: list[int], knobs: Knobs = DEFAULT_KNOBS) -> None:
    pairs = _pairs(oracle, "streams_sticky", seeds, knobs)
    failures = [f for f in map(_streams_sticky_failure, pairs) if f is not None]
    with_standbys = sum(1 for p in pairs if p.scenario["configs"]["num_standby_replicas"] > 0)
    exact = len(pairs) - len(failures)
    print(f"streams_sticky: {exact} of {len(pairs)} seeds exact ({with_standbys} with standbys)")
    assert not failures, _report("streams_sticky differs from Kafka's broker assignor", failures)


def test_streams_sticky_matches_kafka_exactly(kafka_oracle):
    _run_streams_sticky(kafka_oracle, _seeds(DIFF_SEEDS, 0, "streams_sticky"))


def test_streams_sticky_matches_kafka_exactly_with_member_history(kafka_oracle):
    _run_streams_sticky(kafka_oracle, _seeds(DIFF_SEEDS, 0, "streams_sticky"), MEMBER_HISTORY_KNOBS)


def test_streams_sticky_matches_kafka_on_scale_shapes_with_long_holder_lists(kafka_oracle):
    """The benchmark's shapes, small: many standbys make long lists of previous holders in the second
    round, where ours ends the holder search early (the load floor); many threads on few clients (a hundred
    members per process: their HashMap order sorted at once, their tasks read off in levels process by
    process); many standbys on one-thread clients, where a task's holder keeps coming back to the queue's
    head while the replicas go past it (`TwoLevelQueue.around_head`)."""
    firsts = [
        scale_scenario(200, 20, standbys=10),
        scale_scenario(300, 10, threads=30, standbys=3),
        scale_scenario(700, 4, threads=100, standbys=1),
        scale_scenario(300, 50, standbys=20),
    ]
    scenarios = []
    for first in firsts:
        ours_first, error = _plan_ours(first, "streams_sticky")
        assert ours_first is not None, error
        scenarios += [first, next_round(first, ours_first)]
    answers = kafka_oracle.run(scenarios, "streams_sticky", now_ms=NOW_MS)
    for index, (scenario, kafka) in enumerate(zip(scenarios, answers, strict=False)):
        ours, error = _plan_ours(scenario, "streams_sticky")
        failure = _streams_sticky_failure(Pair(index, scenario, kafka, ours, error))
        assert failure is None, failure


def test_streams_sticky_matches_kafka_on_next_rounds(kafka_oracle):
    """The group after our plan was rolled out, each member holding what it was given: the usual rebalance,
    where every member takes back what it has (`streams_sticky_in_bulk` does that step for all members at
    once); and the same with a client gone or new, where some cannot."""
    scenarios, names = [], []
    for seed in range(DIFF_SEEDS // 2):
        scenario = generate_scenario(seed, MEMBER_HISTORY_KNOBS if seed % 2 else DEFAULT_KNOBS)
        ours, error = _plan_ours(scenario, "streams_sticky")
        if ours is None or ours["status"] != "OK":
            continue
        following = next_round(scenario, ours)
        clients = following["clients"]
        changed = clients[:-1] if seed % 3 == 0 and len(clients) > 1 else clients
        if seed % 3 == 1:  # a client like the first (racks, tags) with nothing yet
            history = ("process_id", "consumers", "threads", "lags", "prev_active", "prev_standby")
            new = {k: v for k, v in clients[0].items() if k not in history}
            changed = [*clients, {**new, "process_id": f"00000000-0000-4000-8000-{seed:012d}", "threads": 2}]
        scenarios += [following, {**following, "clients": changed}]
        names += [(seed, "next round"), (seed, "next round, a client gone or new")]
    answers = kafka_oracle.run(scenarios, "streams_sticky", now_ms=NOW_MS)
    failures = []
    for (seed, variant), scenario, kafka in zip(names, scenarios, answers, strict=True):
        ours, error = _plan_ours(scenario, "streams_sticky")
        failure = _streams_sticky_failure(Pair(seed, scenario, kafka, ours, error))
        if failure is not None:
            failures.append(f"{variant}: {failure}")
    assert len(scenarios) > DIFF_SEEDS // 2
    assert not failures, _report("streams_sticky differs from Kafka on next rounds", failures)


# --- larger groups ------------------------------------------------------------------------------------


def _larger(knobs: Knobs) -> Knobs:
    return replace(knobs, **LARGER_GROUPS)


# The modes judged seed by seed. KIP-924 sticky is judged over many seeds (at most 1% where Kafka's is
# better), which these few cannot tell apart from noise: its larger groups run in `make soak`.
_LARGER_RUNS: dict[str, Callable[[Any, list[int]], None]] = {
    "high_availability": lambda oracle, seeds: _run_high_availability(
        oracle, seeds, knobs=_larger(DEFAULT_KNOBS)
    ),
    "fallback_prior": lambda oracle, seeds: _run_fallback(oracle, seeds, _larger(DEFAULT_KNOBS)),
    "optimize_rack": lambda oracle, seeds: _run_optimizers(oracle, seeds, _larger(RACK_KNOBS)),
    "streams_sticky": lambda oracle, seeds: _run_streams_sticky(oracle, seeds, _larger(DEFAULT_KNOBS)),
    "streams_sticky_member_history": lambda oracle, seeds: _run_streams_sticky(
        oracle, seeds, _larger(MEMBER_HISTORY_KNOBS)
    ),
}


@pytest.mark.parametrize("mode", sorted(_LARGER_RUNS))
def test_larger_groups_against_kafka(kafka_oracle, mode):
    """The same checks on groups of up to 30 clients and 400 tasks."""
    seeds = list(range(LARGER_FIRST_SEED, LARGER_FIRST_SEED + LARGER_SEEDS))
    over_ten = sum(len(generate_scenario(seed, _larger(DEFAULT_KNOBS))["clients"]) > 10 for seed in seeds)
    assert over_ten >= len(seeds) // 3, f"only {over_ten} of {len(seeds)} groups have more than 10 clients"
    _LARGER_RUNS[mode](kafka_oracle, seeds)


# --- unusual shapes -----------------------------------------------------------------------------------

UNUSUAL_SEEDS = int(os.environ.get("DIFF_UNUSUAL_SEEDS", "100"))
UNUSUAL_FIRST_SEED = 90_000_000
# KIP-924 sticky is judged over many seeds (see `_LARGER_RUNS`); on 400 seeds of these shapes Kafka's was
# better on 0-5 (2026-11-27, the known trade-offs of docs/kafka-oracle.md), so it is not run here.
_UNUSUAL_MODES: dict[str, Callable[[Any, list[int], Knobs, Knobs], None]] = {
    "high_availability": lambda oracle, seeds, plain, rack: _run_high_availability(
        oracle, seeds, knobs=plain
    ),
    "fallback_prior": lambda oracle, seeds, plain, rack: _run_fallback(oracle, seeds, plain),
    "optimize_rack": lambda oracle, seeds, plain, rack: _run_optimizers(oracle, seeds, rack),
    "streams_sticky": lambda oracle, seeds, plain, rack: _run_streams_sticky(oracle, seeds, plain),
}


def _unusual_knobs(shape: str) -> tuple[Knobs, Knobs]:
    """The shape's draw on the default knobs and on the rack optimizers' knobs."""
    overrides = UNUSUAL_SHAPES[shape][0]
    return replace(DEFAULT_KNOBS, **overrides), replace(RACK_KNOBS, **overrides)


@pytest.mark.parametrize("mode", sorted(_UNUSUAL_MODES))
@pytest.mark.parametrize("shape", sorted(UNUSUAL_SHAPES))
def test_unusual_shapes_against_kafka(kafka_oracle, shape, mode):
    """The seed-by-seed checks on shapes outside the default draw."""
    seeds = list(range(UNUSUAL_FIRST_SEED, UNUSUAL_FIRST_SEED + UNUSUAL_SEEDS))
    plain, _ = _unusual_knobs(shape)
    shown = sum(UNUSUAL_SHAPES[shape][1](generate_scenario(seed, plain)) for seed in seeds)
    assert shown >= len(seeds) // 2, f"{shape}: only {shown} of {len(seeds)} scenarios have the shape"
    _UNUSUAL_MODES[mode](kafka_oracle, seeds, *_unusual_knobs(shape))


# --- soak (make soak) ---------------------------------------------------------------------------------


@pytest.mark.soak
@pytest.mark.parametrize(
    "mode", ["high_availability", "fallback_prior", "sticky", "optimize_rack", "streams_sticky"]
)
def test_soak_against_kafka(kafka_oracle, mode):
    seeds = list(range(SOAK_FIRST_SEED, SOAK_FIRST_SEED + SOAK_SEEDS))
    run: Any = {
        "high_availability": _run_high_availability,
        "fallback_prior": _run_fallback,
        "sticky": _run_sticky,
        "optimize_rack": _run_optimizers,
        "streams_sticky": _run_streams_sticky,
    }[mode]
    run(kafka_oracle, seeds)
    if mode == "streams_sticky":
        _run_streams_sticky(kafka_oracle, seeds, MEMBER_HISTORY_KNOBS)


@pytest.mark.soak
@pytest.mark.parametrize("mode", ["sticky", *sorted(_LARGER_RUNS)])
def test_soak_larger_groups_against_kafka(kafka_oracle, mode):
    seeds = list(range(LARGER_FIRST_SEED + LARGER_SEEDS, LARGER_FIRST_SEED + LARGER_SEEDS + SOAK_SEEDS))
    if mode == "sticky":
        _run_sticky(kafka_oracle, seeds, _larger(DEFAULT_KNOBS))
    else:
        _LARGER_RUNS[mode](kafka_oracle, seeds)


@pytest.mark.soak
@pytest.mark.parametrize("mode", sorted(_UNUSUAL_MODES))
@pytest.mark.parametrize("shape", sorted(UNUSUAL_SHAPES))
def test_soak_unusual_shapes_against_kafka(kafka_oracle, shape, mode):
    first = UNUSUAL_FIRST_SEED + UNUSUAL_SEEDS
    _UNUSUAL_MODES[mode](kafka_oracle, list(range(first, first + SOAK_SEEDS)), *_unusual_knobs(shape))
