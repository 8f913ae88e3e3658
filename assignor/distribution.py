"""Within-client distribution: which consumer (stream thread) of a client runs each of its tasks.

assignors.md §9.1-9.2 with the adaptations of POLICY.md §3: candidate tasks are taken in ascending TaskId
order, and the leftovers go in ascending TaskId order to the queued consumers in queue order (Kafka walks a
heap's internal array there). The cooperative revocation of §9.3 is not applied: the planner outputs the
target assignment, and `task_transitions` says how a client gets there.

Per call, every consumer ends with ``min`` or ``min + 1`` tasks, counting the tasks earlier calls gave it
(``thread_load``), and a stateful task stays on the consumer that reported state for it (lowest lag first)
as long as that consumer's quota allows.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from operator import attrgetter

from fleet_assignor.assignor.state import KafkaStreamsState
from fleet_assignor.assignor.task_id import TaskId

# TaskId order that also copes with a named id among unnamed ones (only an invalid assignment from outside
# can mix them; Kafka's comparison would raise). A sort key millions of sorts use: read in C, no call.
task_order: Callable[[TaskId], tuple[bool, str, int, int]] = attrgetter("sort_key")


@dataclass(frozen=True, slots=True)
class ConsumerTasks:
    """One consumer's share of its client's assignment, each list in TaskId order (standbys with warmups)."""

    active: tuple[TaskId, ...] = ()
    standby: tuple[TaskId, ...] = ()


def assign_tasks_to_threads(
    tasks: Iterable[TaskId],
    is_stateful: bool,
    consumers: Sequence[str],
    prev_tasks_by_lag: Callable[[str], Sequence[TaskId]],
    thread_load: MutableMapping[str, int],
) -> dict[str, list[TaskId]]:
    """Spread ``tasks`` over ``consumers`` (sorted by id), updating ``thread_load`` (assignors.md §9.2)."""
    consumers = sorted(consumers)
    if not consumers:
        raise ValueError("a client needs at least one consumer to receive tasks")
    unassigned = sorted(set(tasks), key=task_order)
    assigned: dict[str, list[TaskId]] = {c: [] for c in consumers}
    load = {c: thread_load.get(c, 0) for c in consumers}
    if not unassigned:
        thread_load.update(load)
        return assigned
    minimum = (len(unassigned) + sum(load.values())) // len(consumers)
    ordered = deque(unassigned)  # smallest first; tasks taken by stickiness are skipped when met
    remaining = set(unassigned)

    to_fill: deque[str] = deque()
    skipped: dict[TaskId, str] = {}  # a task some consumer owned but had no room for; a later one overwrites
    for consumer in consumers:
        target = minimum - load[consumer]
        if is_stateful:
            _take_previous_tasks(consumer, target, prev_tasks_by_lag(consumer), remaining, assigned, skipped)
        if len(assigned[consumer]) < target:
            to_fill.append(consumer)

    # Fill every consumer up to the minimum with the smallest tasks left.
    while to_fill:
        task = _pop_smallest(ordered, remaining)
        consumer = to_fill.popleft()
        assigned[consumer].append(task)
        if len(assigned[consumer]) + load[consumer] < minimum:
            to_fill.append(consumer)

    if remaining:
        _place_leftovers(consumers, minimum, load, remaining, assigned, skipped)

    for consumer in consumers:
        thread_load[consumer] = load[consumer] + len(assigned[consumer])
    return assigned


def _take_previous_tasks(
    consumer: str,
    target: int,
    previous: Sequence[TaskId],
    remaining: set[TaskId],
    assigned: dict[str, list[TaskId]],
    skipped: dict[TaskId, str],
) -> None:
    """Stickiness: a consumer first takes back the stateful tasks it has state for, lowest lag first."""
    for task in previous:
        if task not in remaining:
            continue
        if len(assigned[consumer]) < target:
            assigned[consumer].append(task)
            remaining.discard(task)
        else:
            skipped[task] = consumer


def _pop_smallest(ordered: deque[TaskId], remaining: set[TaskId]) -> TaskId:
    while ordered:
        task = ordered.popleft()
        if task in remaining:
            remaining.discard(task)
            return task
    # Unreachable while the min/min+1 invariant holds (loads of earlier calls differ by at most one).
    raise RuntimeError("ran out of unassigned tasks while filling consumers up to the minimum")


def _place_leftovers(
    consumers: Sequence[str],
    minimum: int,
    load: Mapping[str, int],
    remaining: set[TaskId],
    assigned: dict[str, list[TaskId]],
    skipped: dict[TaskId, str],
) -> None:
    """The tasks beyond ``minimum`` per consumer go one each to consumers still at exactly the minimum:
    first to a consumer that owned the task before, then in TaskId order to the queue in order."""
    # An ordered set: membership and removal are O(1) for a client with thousands of consumers.
    queue = dict.fromkeys(c for c in consumers if len(assigned[c]) + load[c] == minimum)
    for task in sorted(skipped, key=task_order):
        consumer = skipped[task]
        if consumer in queue and task in remaining:
            assigned[consumer].append(task)
            remaining.discard(task)
            del queue[consumer]
    leftovers = sorted(remaining, key=task_order)
    if len(leftovers) > len(queue):
        raise RuntimeError("more leftover tasks than consumers at the minimum")
    for task, consumer in zip(leftovers, queue, strict=False):
        assigned[consumer].append(task)
        remaining.discard(task)


def distribute_client_tasks(
    client: KafkaStreamsState, active: Iterable[TaskId], standby: Iterable[TaskId]
) -> dict[str, ConsumerTasks]:
    """A client's actives and standbys (warmups included) per consumer, keyed in consumer-id order.

    Order of calls (assignors.md §9.1): stateful actives, then standbys, then stateless actives, sharing
    one thread-load count, so stateless tasks even out what the stateful ones left uneven.
    """
    consumers = sorted(client.consumer_client_ids)
    lags = client.task_lags or {}
    active = sorted(set(active), key=task_order)
    thread_load: dict[str, int] = {}
    # Both stateful calls ask each consumer for its previous tasks by lag: sorted once per consumer.
    previous_by_lag: dict[str, Sequence[TaskId]] = {}

    def by_lag(consumer: str) -> Sequence[TaskId]:
        if client.task_lags is None:
            return ()
        found = previous_by_lag.get(consumer)
        if found is None:
            found = previous_by_lag[consumer] = client.prev_tasks_by_lag(consumer)
        return found

    stateful_active = assign_tasks_to_threads(
        [t for t in active if t in lags], True, consumers, by_lag, thread_load
    )
    standbys = assign_tasks_to_threads(standby, True, consumers, by_lag, thread_load)
    stateless_active = assign_tasks_to_threads(
        [t for t in active if t not in lags], False, consumers, by_lag, thread_load
    )
    return {c: _consumer_tasks(stateful_active[c] + stateless_active[c], standbys[c]) for c in consumers}


_NO_TASKS = ConsumerTasks()


def _consumer_tasks(active: list[TaskId], standby: list[TaskId]) -> ConsumerTasks:
    # Most consumers of a client with many threads get nothing: they share one empty value.
    if not active and not standby:
        return _NO_TASKS
    return ConsumerTasks(tuple(sorted(active, key=task_order)), tuple(sorted(standby, key=task_order)))
