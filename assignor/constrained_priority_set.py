"""The least-loaded-client picker of Kafka's assignors (assignors.md §3)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable

from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.task_id import TaskId

Constraint = Callable[[ProcessId, TaskId], bool]


class ConstrainedPrioritySet:
    """Clients ordered by (weight, ProcessId); `poll` removes and returns the first that satisfies the
    constraint for a task.

    A heap with lazy deletion: every `offer` pushes a fresh entry and bumps the client's version, so stale
    entries are skipped. Weights are re-read when an entry reaches the top and the entry is pushed back if
    the weight moved, so a poll answers with the minimum over the members' *current* weights, which is what
    Kafka's comparator (reading weights at comparison time) yields under the callers' re-offer discipline.
    """

    __slots__ = ("_constraint", "_heap", "_members", "_version", "_weight")

    def __init__(self, constraint: Constraint, weight: Callable[[ProcessId], float]) -> None:
        self._constraint = constraint
        self._weight = weight
        self._heap: list[tuple[float, tuple[int, int], int, ProcessId]] = []
        self._version: dict[ProcessId, int] = {}
        self._members: set[ProcessId] = set()

    def offer(self, client: ProcessId) -> None:
        version = self._version.get(client, 0) + 1
        self._version[client] = version
        self._members.add(client)
        heapq.heappush(self._heap, (self._weight(client), client.sort_key, version, client))

    def offer_all(self, clients: Iterable[ProcessId]) -> None:
        for client in clients:
            self.offer(client)

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, client: ProcessId) -> bool:
        return client in self._members

    def poll(self, task: TaskId, extra: Callable[[ProcessId], bool] | None = None) -> ProcessId | None:
        rejected: list[tuple[float, tuple[int, int], int, ProcessId]] = []
        found: ProcessId | None = None
        heap = self._heap
        while heap:
            entry = heapq.heappop(heap)
            weight, _, version, client = entry
            if client not in self._members or self._version[client] != version:
                continue
            current = self._weight(client)
            if current != weight:
                heapq.heappush(heap, (current, client.sort_key, version, client))
                continue
            if self._constraint(client, task) and (extra is None or extra(client)):
                found = client
                break
            rejected.append(entry)
        for entry in rejected:
            heapq.heappush(heap, entry)
        if found is not None:
            self._members.discard(found)
        return found
