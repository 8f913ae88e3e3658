"""`streams_sticky`'s two sticky steps member by member instead of task by task, where their outcome cannot
depend on the order Kafka visits the tasks in.

Kafka's StickyTaskAssignor gives each task back to the member that ran it (actives) or held its state
(standbys), one task at a time and in a fixed order, each time only if the member is under its quota. On a
group that did not change since the last rebalance (the usual one) every member takes back all it had: the
order then decides nothing, and the same outcome is a few set operations per member. These functions check
that the order cannot matter, and then apply that outcome; otherwise they change nothing and return None, and
`streams_sticky` runs the step task by task.

Why the checks suffice. A quota is ceil(tasks / members) over the members still below it; a member that
reaches it leaves the division with its tasks, and the quota is computed again, never larger than before. So:
- each member takes all its tasks (a member over the quota: the quota's worth, its first ones in the step's
  order) if the quota stays the same until the last member reaching it does. After that one it either stays
  above every other member's final count, or drops by one to the largest of them, where the members left share
  the tasks evenly (a member reaching it then leaves it where it is). Either way no member's outcome depends
  on the order, and the quotas left depend only on which members at that count take their last task after
  that last one: the step's order says which;
- a standby goes to a member only if the member's process lacks the task: if the task's eligible members
  (its previous owner and its holders, on processes without it) are on distinct processes and no more than the
  replicas, every one of them takes a replica, whichever Kafka picks first.
The quotas after the step are computed from the members reaching them (`_Quotas.reached_by`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fleet_assignor.assignor.streams_sticky import Task, _Assignment, _Process, _Quotas


def keep_previous_actives(state: _Assignment) -> list[Task] | None:
    """Step 1 for all members at once: each keeps the tasks it ran, up to the active quota (a member that ran
    more keeps its first ones in (partition, subtopology id) order). Returns the tasks left, in no order, or
    None, having changed nothing, where the outcome could depend on the order (a task claimed by two members,
    or a quota that would change while members still take tasks)."""
    owners = state.owned_actives()
    quotas = state.quotas
    quota = quotas.active_per_member
    if owners is None or quota <= 0:
        return None
    partition_major = state.numbered.partition_major
    places = partition_major.__getitem__

    def place(i: int, k: int) -> int:
        """Where owner i's task number k comes in (partition, subtopology id) order."""
        tasks = owners[i][1]
        return max(map(places, tasks)) if k >= len(tasks) else sorted(map(places, tasks))[k - 1]

    counts = [len(tasks) for _, tasks in owners]
    after = _quotas_after(quotas, counts, quota, True, place)
    if after is None:
        return None
    member_ids, member_process = state.member_ids, state.member_process
    left: list[Task] = []
    for index, tasks in owners:
        if len(tasks) > quota:
            ordered = sorted(tasks, key=partition_major.__getitem__)
            left += ordered[quota:]
            tasks = tuple(ordered[:quota])
        member = member_ids[index]
        _give(member_process[member], member, tasks, active=True)
    state.quotas = after
    claimed = state.claimed_actives()
    if len(claimed) < len(partition_major):
        left += set(range(len(partition_major))) - claimed
    return left


def place_sticky_standbys(state: _Assignment) -> list[tuple[Task, int]] | None:
    """The sticky standby step for all members at once: each stateful task's replica to its previous owner
    and to every member holding its state, on processes without the task. Returns the tasks then short of
    replicas with how many they lack, in no order, or None, having changed nothing, where the outcome could
    depend on the order (two such members on one process, more of them than replicas, or a quota that would
    change while members still take replicas)."""
    if state.owned_actives() is None:
        return None  # a task claimed twice: its owner is the later member, found task by task
    found = _takers(state)
    if found is None:
        return None
    takers, counts = found
    places = state.numbered.partition_major.__getitem__

    def place(i: int, k: int) -> int:
        """Where taker i's last replica comes: tasks go in descending (partition, subtopology id) order."""
        return -min(map(places, takers[i][2]))

    after = _quotas_after(state.quotas, counts, state.quotas.all_per_member, False, place)
    if after is None or not _on_distinct_processes(takers):
        return None
    replicas = state.num_standby_replicas
    taken = _replicas_taken(takers, replicas)
    if taken is None:
        return None
    for member_id, process, held in takers:
        _give(process, member_id, held, active=False)
    state.quotas = after
    union, taking = taken
    remaining = [(task, replicas) for task in state.numbered.stateful_set - union]
    if taking is not None:
        remaining += [(task, replicas - n) for task, n in taking.items() if n < replicas]
    elif replicas > 1:
        remaining += [(task, replicas - 1) for task in union]
    return remaining


def _takers(state: _Assignment) -> tuple[list[tuple[str, _Process, set[Task]]], list[int]] | None:
    """The members that would take replicas (previous owners and holders of stateful tasks their process
    lacks), each with its process and those tasks, and each one's task count after taking them; None if one
    would go over the total quota (which replicas it refuses depends on the order)."""
    numbered = state.numbered
    stateful = numbered.stateful_set
    only_stateful = len(stateful) == len(numbered.partition_major)
    member_ids, member_process = state.member_ids, state.member_process
    quota = state.quotas.all_per_member
    takers: list[tuple[str, _Process, set[Task]]] = []
    counts = []
    for index, member in enumerate(numbered.members):
        if not (member.task_offsets or member.prev_standby or member.prev_active):
            continue
        held = set(member.task_offsets)
        held |= member.prev_standby
        held.update(member.prev_active)
        if not only_stateful:
            held &= stateful
        member_id = member_ids[index]
        process = member_process[member_id]
        held -= process.tasks
        if held:
            count = process.member_counts[member_id] + len(held)
            if count > quota:
                return None
            takers.append((member_id, process, held))
            counts.append(count)
    return takers, counts


def _quotas_after(
    quotas: _Quotas, counts: Sequence[int], quota: int, active: bool, place: Callable[[int, int], int]
) -> _Quotas | None:
    """The quotas after the members reach these final counts in the step (a count over `quota` stops at
    it), if each member's count is fixed whatever the order; else None. `place(i, k)`: where in the step's
    order member i's task number k (from 1) comes.

    Only members that reach a quota change it: each recomputes it. It must stay `quota` for all but the last
    of them; after that one it must stay above the other members' counts, or equal their largest. It can only
    drop there by one, to where the members left share the tasks evenly (while it stayed, tasks were over
    (quota - 1) per member): a member at it then reaches it too if its last task comes after that last one
    (`place` says which do), and recomputes it to the same value."""
    if not counts:
        return quotas
    if quota <= 0:
        return None
    reaching = [i for i, count in enumerate(counts) if count >= quota]
    below = max((count for count in counts if count < quota), default=None)
    after = quotas.reached_by(len(reaching), quota, active)
    if after is None or below is None:  # no member stays below the quota: none can meet a lower one
        return after
    final = after.active_per_member if active else after.all_per_member
    if below < final and (not active or below < after.all_per_member):
        return after
    if below > final or (active and after.all_per_member <= final):
        return None
    last = max(place(i, quota) for i in reaching)
    late = 0
    for i, count in enumerate(counts):
        if count == below:
            where = place(i, count)
            if where == last:  # one task gives both their last replicas: the order among them decides
                return None
            late += where > last
    return after.reached_by(late, final, active)


def _on_distinct_processes(takers: Iterable[tuple[str, _Process, set[Task]]]) -> bool:
    """Whether no two members of one process would take the same task (one process takes a task once: which
    member gets it would depend on the order)."""
    by_process: dict[int, list[set[Task]]] = {}
    for _, process, held in takers:
        if process.sole_member is None:
            by_process.setdefault(id(process), []).append(held)
    for sets in by_process.values():
        if len(sets) > 1 and sum(map(len, sets)) != len(set().union(*sets)):
            return False
    return True


def _replicas_taken(
    takers: Sequence[tuple[str, _Process, set[Task]]], replicas: int
) -> tuple[set[Task], Counter[Task] | None] | None:
    """The tasks some member takes a replica of, with how many take each (None: one each, the usual), if
    none has more takers than replicas; else None."""
    sets = [held for _, _, held in takers]
    union: set[Task] = set().union(*sets)
    if sum(map(len, sets)) == len(union):
        return union, None
    if replicas == 1:
        return None
    counts = Counter(chain.from_iterable(sets))
    return None if max(counts.values()) > replicas else (union, counts)


def _give(process: _Process, member: str, tasks: Iterable[Task] | set[Task], active: bool) -> None:
    """The tasks to the member, as `_Process.add_task` one by one would leave the process (a one-member
    process's member sets are made by the settle steps, as in the task-by-task steps)."""
    before = len(process.tasks)
    process.tasks.update(tasks)
    added = len(process.tasks) - before
    process.task_count += added
    process.member_counts[member] += added
    if process.sole_member is None:
        by_member = process.active_by_member if active else process.standby_by_member
        by_member[member] = set(tasks)
    process.load = process.task_count / process.capacity
    process._members_by_load = None
