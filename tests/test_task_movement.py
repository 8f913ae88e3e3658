"""Phases D/E of HA called directly: Kafka's TaskMovementTest (assignors.md §11.3), plus the standby phase,
the budget and the Java heap order the port relies on."""

from __future__ import annotations

from fleet_assignor.assignor import ProcessId, TaskId
from fleet_assignor.assignor.task_movement import (
    LagTable,
    WarmupBudget,
    _JavaPriorityQueue,
    assign_active_task_movements,
    assign_standby_task_movements,
)
from tests.fixtures import PID_1, PID_2, PID_3, TASK_0_0, TASK_0_1, TASK_0_2, client_state, clients_map, pid

TASKS = [TASK_0_0, TASK_0_1, TASK_0_2]
SIX = [TaskId(0, p) for p in range(3)] + [TaskId(1, p) for p in range(3)]
LONG_MAX = (1 << 63) - 1


def everyone(tasks, *clients: ProcessId) -> dict[TaskId, list[ProcessId]]:
    return {t: list(clients) for t in tasks}


def test_zero_movements_when_all_clients_caught_up():
    c1 = client_state(1, active=[SIX[0], SIX[3]], lags={t: 0 for t in SIX})
    c2 = client_state(2, active=[SIX[1], SIX[4]], lags={t: 0 for t in SIX})
    c3 = client_state(3, active=[SIX[2], SIX[5]], lags={t: 0 for t in SIX})
    clients = clients_map(c1, c2, c3)
    caught = everyone(SIX, PID_1, PID_2, PID_3)
    moves = assign_active_task_movements(caught, caught, clients, {}, WarmupBudget(LONG_MAX))
    assert moves == 0
    assert [c.active_tasks for c in (c1, c2, c3)] == [[SIX[0], SIX[3]], [SIX[1], SIX[4]], [SIX[2], SIX[5]]]


def test_zero_movements_when_no_client_caught_up_and_lags_equal():
    c1 = client_state(1, active=[SIX[0], SIX[3]], lags={t: 10_000 for t in SIX})
    c2 = client_state(2, active=[SIX[1], SIX[4]], lags={t: 10_000 for t in SIX})
    c3 = client_state(3, active=[SIX[2], SIX[5]], lags={t: 10_000 for t in SIX})
    clients = clients_map(c1, c2, c3)
    by_lag = everyone(SIX, PID_1, PID_2, PID_3)
    moves = assign_active_task_movements({t: [] for t in SIX}, by_lag, clients, {}, WarmupBudget(LONG_MAX))
    assert moves == 0
    assert all(c.standby_tasks == [] for c in (c1, c2, c3))


def _three_clients_crossed():
    """c1 holds 0_0 (caught up); c2 holds 0_1 but is caught up on 0_2; c3 holds 0_2 but is caught up on
    0_1."""
    c1 = client_state(1, active=[TASK_0_0], lags={TASK_0_0: 0, TASK_0_1: 50, TASK_0_2: 50})
    c2 = client_state(2, active=[TASK_0_1], lags={TASK_0_0: 50, TASK_0_1: 50, TASK_0_2: 0})
    c3 = client_state(3, active=[TASK_0_2], lags={TASK_0_0: 50, TASK_0_1: 0, TASK_0_2: 50})
    caught = {TASK_0_0: [PID_1], TASK_0_1: [PID_3], TASK_0_2: [PID_2]}
    by_lag = {
        TASK_0_0: [PID_1, PID_2, PID_3],
        TASK_0_1: [PID_3, PID_1, PID_2],
        TASK_0_2: [PID_2, PID_1, PID_3],
    }
    return (c1, c2, c3), caught, by_lag


def test_move_to_caught_up_clients_and_warm_up_in_their_place():
    (c1, c2, c3), caught, by_lag = _three_clients_crossed()
    warmups: dict[ProcessId, set[TaskId]] = {}
    moves = assign_active_task_movements(
        caught, by_lag, clients_map(c1, c2, c3), warmups, WarmupBudget(LONG_MAX)
    )
    assert moves == 2
    assert (c1.active_tasks, c2.active_tasks, c3.active_tasks) == ([TASK_0_0], [TASK_0_2], [TASK_0_1])
    assert (c1.standby_tasks, c2.standby_tasks, c3.standby_tasks) == ([], [TASK_0_1], [TASK_0_2])
    assert warmups == {PID_2: {TASK_0_1}, PID_3: {TASK_0_2}}
    assert c2.warmup_tasks == [TASK_0_1]


def test_move_to_most_caught_up_clients_when_none_is_caught_up():
    c1 = client_state(1, active=[TASK_0_0], lags={TASK_0_0: 10_000, TASK_0_1: 20_000, TASK_0_2: 30_000})
    c2 = client_state(2, active=[TASK_0_1], lags={TASK_0_2: 10_000, TASK_0_0: 20_000, TASK_0_1: 30_000})
    c3 = client_state(
        3, active=[TASK_0_2], standby=[TASK_0_1], lags={TASK_0_1: 10_000, TASK_0_2: 20_000, TASK_0_0: 30_000}
    )
    by_lag = {
        TASK_0_0: [PID_1, PID_2, PID_3],
        TASK_0_1: [PID_3, PID_1, PID_2],
        TASK_0_2: [PID_2, PID_3, PID_1],
    }
    caught = {t: [] for t in TASKS}
    moves = assign_active_task_movements(caught, by_lag, clients_map(c1, c2, c3), {}, WarmupBudget(LONG_MAX))
    assert moves == 2
    assert (c1.active_tasks, c2.active_tasks, c3.active_tasks) == ([TASK_0_0], [TASK_0_2], [TASK_0_1])
    assert (c1.standby_tasks, c2.standby_tasks, c3.standby_tasks) == ([], [TASK_0_1], [TASK_0_2])
    # 0_1 moved by a swap with c3's standby: c2's copy is a plain standby, not a warmup
    assert c2.warmup_tasks == []
    assert c3.warmup_tasks == [TASK_0_2]


def test_only_up_to_max_warmup_replicas():
    (c1, c2, c3), caught, by_lag = _three_clients_crossed()
    budget = WarmupBudget(1)
    moves = assign_active_task_movements(caught, by_lag, clients_map(c1, c2, c3), {}, budget)
    assert moves == 2
    assert (c1.active_tasks, c2.active_tasks, c3.active_tasks) == ([TASK_0_0], [TASK_0_2], [TASK_0_1])
    # the first movement in TaskId order (0_1, off c2) gets the only warmup; c3 keeps nothing
    assert (c1.standby_tasks, c2.standby_tasks, c3.standby_tasks) == ([], [TASK_0_1], [])
    assert budget.remaining == -1  # the second move spent budget it did not have


def test_previous_standbys_do_not_count_towards_max_warmup_replicas():
    c1 = client_state(1, standby=[TASK_0_0], lags={TASK_0_0: 0})
    c2 = client_state(2, active=[TASK_0_0], lags={TASK_0_0: 50})
    budget = WarmupBudget(0)
    moves = assign_active_task_movements(
        {TASK_0_0: [PID_1]}, {TASK_0_0: [PID_1, PID_2]}, clients_map(c1, c2), {}, budget
    )
    assert moves == 1
    assert c1.active_tasks == [TASK_0_0] and c1.standby_tasks == []
    assert c2.standby_tasks == [TASK_0_0] and c2.active_tasks == []
    assert budget.remaining == 0  # a swap is free


def test_movement_order_is_fewest_caught_up_clients_first():
    """With one warmup to give, the task with fewer caught-up clients moves first and gets it, although
    its TaskId is larger."""
    c1 = client_state(1, active=[TASK_0_0, TASK_0_1], lags={TASK_0_0: 50, TASK_0_1: 50})
    c2 = client_state(2, lags={TASK_0_0: 0, TASK_0_1: 0})
    c3 = client_state(3, lags={TASK_0_0: 0, TASK_0_1: 50})
    caught = {TASK_0_0: [PID_2, PID_3], TASK_0_1: [PID_2]}
    by_lag = {TASK_0_0: [PID_2, PID_3, PID_1], TASK_0_1: [PID_2, PID_1, PID_3]}
    warmups: dict[ProcessId, set[TaskId]] = {}
    moves = assign_active_task_movements(caught, by_lag, clients_map(c1, c2, c3), warmups, WarmupBudget(1))
    assert moves == 2
    assert warmups == {PID_1: {TASK_0_1}}
    # 0_1 went to c2 first; 0_0 then went to the less loaded caught-up client, c3
    assert c2.active_tasks == [TASK_0_1] and c3.active_tasks == [TASK_0_0]


def test_least_loaded_caught_up_client_wins_not_the_smallest_process_id():
    c1 = client_state(1, active=[TASK_0_0], lags={TASK_0_0: 50, TASK_0_1: 0})
    c2 = client_state(2, active=[TASK_0_1], standby=[TaskId(1, 0)], lags={TASK_0_0: 0, TASK_0_1: 0})
    c3 = client_state(3, lags={TASK_0_0: 0, TASK_0_1: 0})
    caught = {TASK_0_0: [PID_2, PID_3], TASK_0_1: [PID_1, PID_2, PID_3]}
    by_lag = {TASK_0_0: [PID_2, PID_3, PID_1], TASK_0_1: [PID_1, PID_2, PID_3]}
    moves = assign_active_task_movements(caught, by_lag, clients_map(c1, c2, c3), {}, WarmupBudget(2))
    assert moves == 1
    assert c3.active_tasks == [TASK_0_0]


def test_standby_moves_to_caught_up_client_and_leaves_warmup():
    c1 = client_state(1, active=[TASK_0_0], lags={TASK_0_0: -2})
    c2 = client_state(2, standby=[TASK_0_0], lags={TASK_0_0: 900})
    c3 = client_state(3, lags={TASK_0_0: 0})
    caught = {TASK_0_0: [PID_1, PID_3]}
    by_lag = {TASK_0_0: [PID_1, PID_3, PID_2]}
    budget = WarmupBudget(1)
    moved = assign_standby_task_movements(caught, by_lag, clients_map(c1, c2, c3), budget, {})
    assert moved == 1
    assert c3.standby_tasks == [TASK_0_0] and c3.warmup_tasks == []
    assert c2.standby_tasks == [TASK_0_0] and c2.warmup_tasks == [TASK_0_0]
    assert budget.remaining == 0


def test_standby_warmups_of_phase_d_do_not_move_and_no_budget_drops_the_copy():
    c1 = client_state(1, active=[TASK_0_0], lags={TASK_0_0: -2, TASK_0_1: 900})
    c2 = client_state(2, standby=[TASK_0_0, TASK_0_1], lags={TASK_0_0: 900, TASK_0_1: 900})
    c3 = client_state(3, active=[TASK_0_1], lags={TASK_0_0: 0, TASK_0_1: -2})
    caught = {TASK_0_0: [PID_1, PID_3], TASK_0_1: [PID_3]}
    by_lag = {TASK_0_0: [PID_1, PID_3, PID_2], TASK_0_1: [PID_3, PID_1, PID_2]}
    budget = WarmupBudget(0)
    moved = assign_standby_task_movements(
        caught, by_lag, clients_map(c1, c2, c3), budget, {PID_2: {TASK_0_1}}
    )
    assert moved == 1
    assert c3.standby_tasks == [TASK_0_0]
    assert c2.standby_tasks == [TASK_0_1]  # 0_0 dropped (no budget); the 0_1 warmup is left alone


def test_standby_not_moved_when_every_better_client_holds_the_task():
    c1 = client_state(1, active=[TASK_0_0], lags={TASK_0_0: -2})
    c2 = client_state(2, standby=[TASK_0_0], lags={TASK_0_0: 900})
    moved = assign_standby_task_movements(
        {TASK_0_0: [PID_1]}, {TASK_0_0: [PID_1, PID_2]}, clients_map(c1, c2), WarmupBudget(5), {}
    )
    assert moved == 0
    assert c2.standby_tasks == [TASK_0_0]


def test_lag_table_orders_sentinels_first_then_process_id_and_tests_caught_up():
    # rows = clients (P1, P2, P3), columns = tasks (0_0, 0_1)
    table = LagTable([PID_1, PID_2, PID_3], [TASK_0_0, TASK_0_1], [[5, 7], [-3, 7], [-2, 1]], 5)
    assert table.by_lag()[TASK_0_0] == [PID_2, PID_3, PID_1]
    assert table.by_lag()[TASK_0_1] == [PID_3, PID_1, PID_2]
    assert table.caught_up()[TASK_0_0] == (PID_1, PID_3)  # -3 is never caught up, 5 <= 5 is
    assert table.caught_up()[TASK_0_1] == (PID_3,)
    assert table.min_lags == [-3, 1]
    unbounded = LagTable([PID_1, PID_2], [TASK_0_0], [[-3], [LONG_MAX]], LONG_MAX)
    assert unbounded.caught_up()[TASK_0_0] == (PID_1, PID_2)


def test_java_priority_queue_serves_equal_keys_in_heap_order():
    """Equal keys come out in java.util.PriorityQueue's order, not insertion order: after polling the root,
    the last element is sifted down and the right child is taken only when strictly smaller."""
    queue = _JavaPriorityQueue()
    for key, item in [((1,), "a"), ((1,), "b"), ((1,), "c"), ((1,), "d")]:
        queue.add(key, item)
    assert [queue.poll() for _ in range(4)] == ["a", "d", "c", "b"]  # what a JDK 17 prints
    queue = _JavaPriorityQueue()
    for item in "abcdefg":
        queue.add((1,), item)
    assert "".join(queue.poll() for _ in range(7)) == "agfedcb"
    queue = _JavaPriorityQueue()
    for key in [5, 3, 8, 1, 9, 2]:
        queue.add((key,), key)
    assert [queue.poll() for _ in range(6)] == [1, 2, 3, 5, 8, 9]


def test_budget_check_before_decrement():
    budget = WarmupBudget(1)
    assert budget.take() is True
    assert budget.take() is False
    assert budget.remaining == -1


def test_least_loaded_caught_up_client_among_many():
    """Sixty caught-up clients (past the direct-scan size): the active goes to the least loaded one, and a
    caught-up standby holder wins over it (swap first)."""
    filler = [TaskId(9, p) for p in range(10)]
    states = []
    for n in range(1, 61):
        load = 0 if n == 37 else (n * 7) % 5 + 1
        states.append(client_state(n, standby=filler[:load], lags={TASK_0_0: 0}))
    destination = client_state(61, active=[TASK_0_0], lags={TASK_0_0: 900})
    clients = clients_map(*states, destination)
    caught = {TASK_0_0: [pid(n) for n in range(1, 61)]}
    by_lag = {TASK_0_0: [pid(n) for n in range(1, 62)]}
    assert assign_active_task_movements(caught, by_lag, clients, {}, WarmupBudget(1)) == 1
    assert clients[pid(37)].active_tasks == [TASK_0_0]

    states = [client_state(n, standby=filler[: (n % 3) + 1], lags={TASK_0_0: 0}) for n in range(1, 61)]
    states[9].assign_standby(TASK_0_0)  # client 10: 3 tasks with this one
    states[49].assign_standby(TASK_0_0)  # client 50: 4 tasks with this one
    destination = client_state(61, active=[TASK_0_0], lags={TASK_0_0: 900})
    clients = clients_map(*states, destination)
    assert assign_active_task_movements(caught, by_lag, clients, {}, WarmupBudget(0)) == 1
    assert clients[pid(10)].active_tasks == [TASK_0_0]
    assert destination.standby_tasks == [TASK_0_0]


def test_heap_and_scan_pickers_agree(monkeypatch):
    """The caught-up picker scans small candidate sets and uses a heap for large ones; forcing either
    path gives the same HA assignments."""
    from fleet_assignor.assignor import task_movement
    from fleet_assignor.assignor.high_availability import HighAvailabilityTaskAssignor
    from fleet_assignor.assignor.scenario import load_scenario
    from tests.scenario_generator import Knobs, generate_scenario

    def run_all() -> list:
        out = []
        for seed in range(25):
            state = load_scenario(generate_scenario(seed, Knobs(strategies=("none",)))).application_state
            result = HighAvailabilityTaskAssignor().assign(state)
            out.append([(a.process_id(), a.active_tasks(), a.standby_tasks()) for a in result])
        return out

    monkeypatch.setattr(task_movement, "_SCAN_LIMIT", 10_000)
    scanned = run_all()
    monkeypatch.setattr(task_movement, "_SCAN_LIMIT", 0)
    assert run_all() == scanned
