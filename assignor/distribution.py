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
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from fleet_assignor.assignor.frozen import builder
from fleet_assignor.assignor.state import KafkaStreamsState
from fleet_assignor.assignor.task_id import TaskId, sorted_task_ids


@dataclass(frozen=True, slots=True)
class ConsumerTasks:
    """One consumer's share of its client's assignment, each list in TaskId order (standbys with warmups)."""

    active: tuple[TaskId, ...] = ()
    standby: tuple[TaskId, ...] = ()


# ``ConsumerTasks(active, standby)`` built through its slots (`frozen`): one per consumer given tasks.
consumer_tasks: Callable[[tuple[TaskId, ...], tuple[TaskId, ...]], ConsumerTasks] = builder(ConsumerTasks)


def assign_tasks_to_threads(
    tasks: Iterable[TaskId],
    is_stateful: bool,
    consumers: Sequence[str],
    prev_tasks_by_lag: Callable[[str], Sequence[TaskId]],
    thread_load: MutableMapping[str, int],
) -> dict[str, list[TaskId]]:
    """Spread ``tasks`` over ``consumers`` (sorted by id), updating ``thread_load`` (assignors.md §9.2)."""
    consumers = sorted(consumers)
    previous = _previous_by_consumer(consumers, prev_tasks_by_lag) if is_stateful else {}
    held = {c: thread_load.get(c, 0) for c in consumers}
    given = _spread_over_consumers(tasks, consumers, previous, held)
    thread_load.update(held)
    return {c: given.get(c, []) for c in consumers}


def _previous_by_consumer(
    consumers: Sequence[str], prev_tasks_by_lag: Callable[[str], Sequence[TaskId]]
) -> dict[str, Sequence[TaskId]]:
    """The consumers that have previous stateful tasks, with them by lag (most consumers have none)."""
    previous = {}
    for consumer in consumers:
        tasks = prev_tasks_by_lag(consumer)
        if tasks:
            previous[consumer] = tasks
    return previous


def _spread_over_consumers(
    tasks: Iterable[TaskId],
    consumers: Sequence[str],
    previous: Mapping[str, Sequence[TaskId]],
    held: dict[str, int],
) -> dict[str, list[TaskId]]:
    """`assign_tasks_to_threads` on consumers already sorted, with each one's previous tasks by lag
    (stateless calls pass none), keyed in the consumers' order. ``held``: the tasks each consumer has so far
    (absent: none), keyed by these consumers only, and updated. Returns the consumers given tasks; a client
    with a thousand threads and a few tasks touches few of them."""
    if not consumers:
        raise ValueError("a client needs at least one consumer to receive tasks")
    unassigned = sorted_task_ids(set(tasks))
    assigned: dict[str, list[TaskId]] = {}
    if not unassigned:
        return assigned
    minimum = (len(unassigned) + sum(held.values())) // len(consumers)
    ordered = deque(unassigned)  # smallest first; tasks taken by stickiness are skipped when met
    remaining = set(unassigned)

    skipped: dict[TaskId, str] = {}  # a task some consumer owned but had no room for; a later one overwrites
    to_fill = _take_previous(consumers, minimum, previous, remaining, assigned, held, skipped)

    # Fill every consumer up to the minimum with the smallest tasks left.
    while to_fill:
        consumer = to_fill.popleft()
        _give(consumer, _pop_smallest(ordered, remaining), assigned, held)
        if held[consumer] < minimum:
            to_fill.append(consumer)

    if remaining:
        _place_leftovers(consumers, minimum, remaining, assigned, held, skipped)
    return assigned


def _take_previous(
    consumers: Sequence[str],
    minimum: int,
    previous: Mapping[str, Sequence[TaskId]],
    remaining: set[TaskId],
    assigned: dict[str, list[TaskId]],
    held: dict[str, int],
    skipped: dict[TaskId, str],
) -> deque[str]:
    """Each consumer in turn takes back its previous tasks (`_take_previous_tasks`); returns the consumers
    then still below ``minimum``, in order."""
    to_fill: deque[str] = deque()
    if previous and not minimum:  # no consumer is filled up to a minimum: only the owners matter
        for consumer, owned in previous.items():
            _take_previous_tasks(consumer, minimum, owned, remaining, assigned, held, skipped)
    elif previous:
        for consumer in consumers:
            held_before = previous.get(consumer)
            if held_before:
                _take_previous_tasks(consumer, minimum, held_before, remaining, assigned, held, skipped)
            if held.get(consumer, 0) < minimum:
                to_fill.append(consumer)
    elif minimum:  # with fewer tasks than consumers (a client with many threads) no consumer is filled
        count = held.get
        to_fill.extend(c for c in consumers if count(c, 0) < minimum)
    return to_fill


def _give(consumer: str, task: TaskId, assigned: dict[str, list[TaskId]], held: dict[str, int]) -> None:
    tasks = assigned.get(consumer)
    if tasks is None:
        assigned[consumer] = [task]
    else:
        tasks.append(task)
    held[consumer] = held.get(consumer, 0) + 1


def _take_previous_tasks(
    consumer: str,
    minimum: int,
    previous: Sequence[TaskId],
    remaining: set[TaskId],
    assigned: dict[str, list[TaskId]],
    held: dict[str, int],
    skipped: dict[TaskId, str],
) -> None:
    """Stickiness: a consumer first takes back the stateful tasks it has state for, lowest lag first."""
    for task in previous:
        if task not in remaining:
            continue
        if held.get(consumer, 0) < minimum:
            _give(consumer, task, assigned, held)
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
    remaining: set[TaskId],
    assigned: dict[str, list[TaskId]],
    held: dict[str, int],
    skipped: dict[TaskId, str],
) -> None:
    """The tasks beyond ``minimum`` per consumer go one each to consumers still at exactly the minimum:
    first to a consumer that owned the task before, then in TaskId order to the queue in order."""
    if not minimum:
        _place_one_each(consumers, remaining, assigned, held, skipped)
        return
    # An ordered set: membership and removal are O(1) for a client with thousands of consumers.
    queue = _at_minimum(consumers, minimum, held)
    for task in sorted_task_ids(skipped):
        consumer = skipped[task]
        if consumer in queue and task in remaining:
            _give(consumer, task, assigned, held)
            remaining.discard(task)
            del queue[consumer]
    leftovers = sorted_task_ids(remaining)
    if len(leftovers) > len(queue):
        raise RuntimeError("more leftover tasks than consumers at the minimum")
    for task, consumer in zip(leftovers, queue, strict=False):
        _give(consumer, task, assigned, held)
        remaining.discard(task)


def _at_minimum(consumers: Sequence[str], minimum: int, held: Mapping[str, int]) -> dict[str, None]:
    """The consumers holding ``minimum`` tasks (above 0), in order."""
    count = held.get
    return dict.fromkeys([c for c in consumers if count(c, 0) == minimum])


def _place_one_each(
    consumers: Sequence[str],
    remaining: set[TaskId],
    assigned: dict[str, list[TaskId]],
    held: dict[str, int],
    skipped: dict[TaskId, str],
) -> None:
    """`_place_leftovers` at a minimum of 0 (fewer tasks than consumers: a client with a thousand threads).
    The queue is then the consumers holding nothing, and a consumer leaves it exactly when it is given a
    task, so it is read from ``held`` as the tasks go, not built: most consumers are never visited."""
    for task in sorted_task_ids(skipped):
        consumer = skipped[task]
        if not held.get(consumer) and task in remaining:
            _give(consumer, task, assigned, held)
            remaining.discard(task)
    leftovers = sorted_task_ids(remaining)
    free = (c for c in consumers if not held.get(c))
    given = 0
    for task, consumer in zip(leftovers, free, strict=False):  # each zip step takes the next task first
        assigned[consumer] = [task]  # `_give` to a consumer holding nothing
        held[consumer] = 1
        given += 1
    if given < len(leftovers):
        raise RuntimeError("more leftover tasks than consumers at the minimum")
    remaining.clear()


def distribute_client_tasks(
    client: KafkaStreamsState, active: Iterable[TaskId], standby: Iterable[TaskId]
) -> dict[str, ConsumerTasks]:
    """A client's actives and standbys (warmups included) per consumer, keyed in consumer-id order.

    Order of calls (assignors.md §9.1): stateful actives, then standbys, then stateless actives, sharing
    one thread-load count, so stateless tasks even out what the stateful ones left uneven.
    """
    consumers = sorted(client.consumer_client_ids)
    if len(consumers) == 1:
        # Every task goes to the one consumer, whatever the order of the calls.
        share = lone_consumer_share(_in_task_order(_distinct(active)), _in_task_order(_distinct(standby)))
        return {consumers[0]: share}
    lags = client.task_lags or {}
    active = sorted_task_ids(set(active))
    held: dict[str, int] = {}  # tasks per consumer so far, shared by the three calls
    # Both stateful calls take each consumer's previous tasks by lag: found once, for the consumers with any.
    previous = _client_previous_by_lag(client, consumers)
    stateful_active = _spread_over_consumers([t for t in active if t in lags], consumers, previous, held)
    standbys = _spread_over_consumers(standby, consumers, previous, held)
    stateless_active = _spread_over_consumers([t for t in active if t not in lags], consumers, {}, held)
    # Most consumers of a client with many threads get nothing: they keep the one shared empty value.
    shares = dict.fromkeys(consumers, _NO_TASKS)
    for c, tasks in stateless_active.items():
        stateful_active[c] = stateful_active.get(c, []) + tasks
    for c, tasks in stateful_active.items():
        shares[c] = consumer_tasks(_in_task_order(tasks), _in_task_order(standbys.pop(c, [])))
    for c, tasks in standbys.items():  # the consumers given standbys only
        shares[c] = consumer_tasks((), _in_task_order(tasks))
    return shares


def _distinct(tasks: Iterable[TaskId]) -> list[TaskId]:
    """The tasks once each (the planner passes sets: listed as they are, not copied into a set first)."""
    return list(tasks) if isinstance(tasks, AbstractSet) else list(set(tasks))


def _client_previous_by_lag(
    client: KafkaStreamsState, consumers: Sequence[str]
) -> dict[str, Sequence[TaskId]]:
    history = client.consumer_previous_stateful_tasks
    if client.task_lags is None or not history or not any(history.values()):
        return {}
    # Most consumers of a client with many threads have no history: passed over at C speed.
    return _previous_by_consumer(list(filter(history.get, consumers)), client.prev_tasks_by_lag)


_NO_TASKS = ConsumerTasks()


def lone_consumer_share(active: Sequence[TaskId], standby: Sequence[TaskId]) -> ConsumerTasks:
    """The share of a client's only consumer: every task of the client, each role given in TaskId order
    (`high_availability` has them so; `distribute_client_tasks` sorts them first)."""
    # Most consumers of a client with many threads get nothing: they share one empty value.
    if not active and not standby:
        return _NO_TASKS
    return consumer_tasks(tuple(active), tuple(standby))


def _in_task_order(tasks: list[TaskId]) -> tuple[TaskId, ...]:
    # A consumer of a client with many threads gets one task or none per role: nothing to sort.
    return tuple(tasks) if len(tasks) < 2 else tuple(sorted_task_ids(tasks))
