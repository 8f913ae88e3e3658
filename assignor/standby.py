"""Standby replica placement (assignors.md §5): least-loaded, and spread over client tags.

The two algorithms are written once against `StandbyPlacementView`, a small adapter interface, so the legacy
ClientState-based assignors (used by the HA assignor) and the KIP-924 form
(`assignor.task_assignment_utils.default_standby_task_assignment`) share the same code.

Orders (POLICY.md §1, §3):
* tasks given as a sequence are visited in that order (the HA assignor passes ascending TaskIds, as Kafka's
  TreeSet does, so HA stays exact);
* tasks given as an unordered set (where Kafka iterates a Java HashSet) are visited in a fixed order instead:
  ascending TaskId for least-loaded placement, and `client_tag_task_order` (descending TaskId) for
  client-tag placement, an order under which every ported test of assignors.md §11.4 keeps its assertions
  (ascending TaskId and (partition, subtopology) orders each fail some);
* the client-tag fallback (Kafka: HashMap order) visits the pending tasks in ascending TaskId order;
* clients are always visited in signed ProcessId order; the least-loaded picker breaks ties by ProcessId.

Fix (POLICY.md §4): with ``num_standby_replicas == 0`` no standby is placed at all (Kafka's client-tag loop
is a do-while and places one).
"""

from __future__ import annotations

import logging
from bisect import bisect_left, insort
from collections.abc import Callable, Collection, Container, Iterable, Mapping, Sequence
from functools import partial
from operator import attrgetter
from typing import Protocol

from fleet_assignor.assignor.client_state import ClientState
from fleet_assignor.assignor.configs import AssignmentConfigs
from fleet_assignor.assignor.process_id import ProcessId
from fleet_assignor.assignor.task_id import TaskId

log = logging.getLogger(__name__)

TagEntry = tuple[str, str]
"""A (tag key, tag value) pair: ``("zone", "c1")`` and ``("cluster", "c1")`` are different entries."""

RACK_TAG = "rack"


# --- the adapter both forms implement
class StandbyPlacementView(Protocol):
    """What the placement algorithms read and change; clients are listed in signed ProcessId order."""

    def client_ids(self) -> Sequence[ProcessId]: ...

    def tags_of(self, client: ProcessId) -> Mapping[str, str]: ...

    def holds(self, client: ProcessId, task: TaskId) -> bool:
        """The client has the task in any role."""
        ...

    def holds_active(self, client: ProcessId, task: TaskId) -> bool: ...

    def active_tasks_of(self, client: ProcessId) -> Iterable[TaskId]: ...

    def load(self, client: ProcessId) -> float:
        """Tasks (active + standby) per thread: the least-loaded picker's weight."""
        ...

    def assign_standby(self, client: ProcessId, task: TaskId) -> None: ...


class ClientStateView:
    """`StandbyPlacementView` over the legacy ClientStates; ``tags_of`` may be replaced (rack-as-tag form)."""

    def __init__(
        self,
        clients: Mapping[ProcessId, ClientState],
        tags_of: Callable[[ClientState], Mapping[str, str]] | None = None,
    ) -> None:
        self._clients = clients
        self._ids = sorted(clients)
        self._tags_of = tags_of or (lambda state: state.client_tags)

    def client_ids(self) -> Sequence[ProcessId]:
        return self._ids

    def tags_of(self, client: ProcessId) -> Mapping[str, str]:
        return self._tags_of(self._clients[client])

    def holds(self, client: ProcessId, task: TaskId) -> bool:
        return self._clients[client].has_assigned_task(task)

    def holds_active(self, client: ProcessId, task: TaskId) -> bool:
        return self._clients[client].has_active(task)

    def active_tasks_of(self, client: ProcessId) -> Iterable[TaskId]:
        return self._clients[client].active_set()

    def load(self, client: ProcessId) -> float:
        return self._clients[client].assigned_task_load

    def assign_standby(self, client: ProcessId, task: TaskId) -> None:
        self._clients[client].assign_standby(task)

    def client_handles(self, client: ProcessId) -> ClientHandles:
        """`holds`, `assign_standby` and `load` bound to the client's own state (`place_standbys_by_load`
        calls them once per replica: no lookup by process id, which hashes in Python). Its
        `assign_standby` is the client's `add_unheld_standby`: the caller has just asked `holds`."""
        state = self._clients[client]
        return state.has_assigned_task, state.add_unheld_standby, partial(_ASSIGNED_TASK_LOAD, state)


# `holds`, `assign_standby` (of a task `holds` just denied) and `load` of one client, bound to it.
ClientHandles = tuple[Callable[[TaskId], bool], Callable[[TaskId], None], Callable[[], float]]
_ASSIGNED_TASK_LOAD: Callable[[ClientState], float] = attrgetter("assigned_task_load")


def client_handles(view: StandbyPlacementView, client: ProcessId) -> ClientHandles:
    """The view's own `client_handles` if it has them, else its methods bound to the client."""
    own = getattr(view, "client_handles", None)
    if own is not None:
        handles: ClientHandles = own(client)
        return handles
    return partial(view.holds, client), partial(view.assign_standby, client), partial(view.load, client)


# --- orders
def client_tag_task_order(tasks: Iterable[TaskId]) -> list[TaskId]:
    """The fixed order of client-tag placement over an unordered task set: descending TaskId.

    Why this one: POLICY.md §3 asks for a deterministic order under which every ported test of
    assignors.md §11.4 keeps its assertions. Checked by running those tests: ascending TaskId fails tests 9
    and 11 (a client gets three standbys), (partition, subtopology) fails test 13 (a client gets two while
    another gets none), descending TaskId passes all. On 400 random tagged scenarios the orders place
    equally well (same load spread and tag coverage within 1%), so nothing else is lost.
    """
    return sorted(tasks, reverse=True)


def _visiting_order(
    tasks: Collection[TaskId], unordered_order: Callable[[Iterable[TaskId]], list[TaskId]]
) -> list[TaskId]:
    """A sequence keeps its order; an unordered set gets the fixed order of its algorithm."""
    if isinstance(tasks, (set, frozenset)):
        return unordered_order(tasks)
    return list(tasks)


class LeastLoadedClients:
    """Kafka's ConstrainedPrioritySet as the standby assignors use it (assignors.md §3): members ordered by
    (load, ProcessId); `poll` removes and returns the first member that does not hold the task (and passes
    ``extra``).

    Same answers as `assignor.ConstrainedPrioritySet`, but built for these callers, which re-offer every
    client for every task: there the heap filled with stale entries and dominated big runs (10,000 tasks
    x 100 clients with tags: 7.6 s). Here every client has one entry in a sorted list, moved only when its
    load changed. That relies on the discipline of assignors.md §3, which these callers keep: a client's
    load changes only while it is out of the set (polled, not yet re-offered), so offering a member again
    is a no-op.
    """

    def __init__(self, view: StandbyPlacementView) -> None:
        self._view = view
        self._members: set[ProcessId] = set()
        self._entry: dict[ProcessId, tuple[float, tuple[int, int], ProcessId]] = {}
        self._order: list[tuple[float, tuple[int, int], ProcessId]] = []  # sorted by (load, ProcessId)
        self._polled: list[ProcessId] = []  # taken out by poll since the last offer_every_client

    def offer(self, client: ProcessId) -> None:
        if client in self._members:
            return
        self._members.add(client)
        load = self._view.load(client)
        old = self._entry.get(client)
        if old is not None:
            if old[0] == load:
                return
            del self._order[bisect_left(self._order, old)]
        entry = (load, client.sort_key, client)
        insort(self._order, entry)
        self._entry[client] = entry

    def offer_all(self, clients: Iterable[ProcessId]) -> None:
        for client in clients:
            self.offer(client)

    def offer_every_client(self) -> None:
        """``offer_all(view.client_ids())``, visiting only the clients that can be out of the set: those
        polled since, or all on the first call (offering a member is a no-op, and the set's order does not
        depend on the order of the offers)."""
        clients = self._view.client_ids()
        if len(self._entry) < len(clients):
            self.offer_all(clients)
            self._polled.clear()
            return
        polled, self._polled = self._polled, []
        self.offer_all(polled)

    def poll(
        self,
        task: TaskId,
        extra: Callable[[ProcessId], bool] | None = None,
        excluded: Container[ProcessId] = (),
    ) -> ProcessId | None:
        """``excluded``: clients never taken (the client-tag placement's used tag values), checked first
        as the cheapest test."""
        view, members = self._view, self._members
        for _, _, client in self._order:
            if (
                client not in excluded
                and client in members
                and not view.holds(client, task)
                and (extra is None or extra(client))
            ):
                members.discard(client)
                self._polled.append(client)
                return client
        return None


# --- least-loaded placement (assignors.md §5.2)
def _place_on_least_loaded(
    view: StandbyPlacementView, clients: LeastLoadedClients, task: TaskId, count: int
) -> int:
    """Place up to ``count`` standbys of the task, each on the least-loaded eligible client; return how many
    could not be placed."""
    while count > 0:
        client = clients.poll(task)
        if client is None:
            break
        view.assign_standby(client, task)
        count -= 1
        clients.offer(client)
    return count


def place_standbys_by_load(
    view: StandbyPlacementView, tasks: Collection[TaskId], num_standby_replicas: int
) -> None:
    """Each task gets min(num_standby_replicas, clients not holding it) standbys, least-loaded first.

    This is `LeastLoadedClients` polled and re-offered once per standby (as `_place_on_least_loaded` does),
    reduced to what that discipline leaves: a client is re-offered right after its pick, so every client is
    a member at every poll, and the priority set is one list sorted by (load, ProcessId) in which a pick is
    the first client not holding the task and only the picked client's entry moves (a third of the calls
    per standby; 1,000 tasks x 100 clients with 50 standbys spent most of the HA assignor here). Two
    clients need no order at all (`_place_on_two_clients`).
    """
    if num_standby_replicas <= 0:
        return
    # (load, ProcessId order, place, the client's handles): the place keeps the handles from being compared.
    order = []
    for place, client in enumerate(view.client_ids()):
        handles = client_handles(view, client)
        order.append((handles[2](), client.sort_key, place, handles))
    order.sort()
    if len(order) == 2:
        _place_on_two_clients(order, _visiting_order(tasks, sorted), num_standby_replicas)
        return
    for task in _visiting_order(tasks, sorted):
        missing = num_standby_replicas
        while missing > 0:
            position = 0  # of the first client not holding it
            for entry in order:
                if not entry[3][0](task):
                    break
                position += 1
            else:
                break  # every client holds the task
            load, key, place, handles = entry
            handles[1](task)
            missing -= 1
            new_load = handles[2]()
            if new_load != load:
                del order[position]
                insort(order, (new_load, key, place, handles))
        if missing:
            _log_unplaced(task, missing, num_standby_replicas)


def _log_unplaced(task: TaskId, missing: int, replicas: int) -> None:
    """The least-loaded placements' warning for a task left short of replicas (every client holds it)."""
    log.warning(
        "unable to assign %d of %d standby replicas of task %s: not enough clients", missing, replicas, task
    )


def _place_on_two_clients(
    order: list[tuple[float, tuple[int, int], int, ClientHandles]], tasks: list[TaskId], replicas: int
) -> None:
    """`place_standbys_by_load` for two clients: a task one of them holds gets its standby on the other
    whatever their loads (the first in load order not holding it is the only one), so the loads are read
    only for a task neither holds (then the lighter takes the first replica, by ProcessId on a tie, and the
    other the second). Two clients are a common group, and 6,000 tasks x 2 clients spent most of its
    standby placement keeping the order for nothing."""
    (_, first_key, _, first), (_, second_key, _, second) = order
    first_holds, first_takes, first_load = first
    second_holds, second_takes, second_load = second
    takers: tuple[Callable[[TaskId], None], ...]
    for task in tasks:
        first_lacks, second_lacks = not first_holds(task), not second_holds(task)
        if first_lacks and second_lacks:
            if (second_load(), second_key) < (first_load(), first_key):
                takers = (second_takes, first_takes)
            else:
                takers = (first_takes, second_takes)
        elif first_lacks:
            takers = (first_takes,)
        elif second_lacks:
            takers = (second_takes,)
        else:
            takers = ()
        for take in takers[:replicas]:
            take(task)
        if replicas > len(takers):
            _log_unplaced(task, replicas - len(takers), replicas)


# --- client-tag placement (assignors.md §5.3)
class ClientTagStandbyPlacement:
    """One run of client-tag-aware standby placement: tag statistics, per-task loop and fallback.

    ``remaining[t]`` is the number of standbys of t still to place (absent once all are placed),
    ``pending[t]`` the client holding t's active when some of its standbys could not be spread over the tags.
    """

    def __init__(
        self, view: StandbyPlacementView, tag_keys: Iterable[str], num_standby_replicas: int
    ) -> None:
        self.view = view
        self.tag_keys = frozenset(tag_keys)
        self.num_standby_replicas = num_standby_replicas
        self.remaining: dict[TaskId, int] = {}
        self.pending: dict[TaskId, ProcessId] = {}
        self.tag_values: dict[str, set[str]] = {}
        self.clients_by_entry: dict[TagEntry, set[ProcessId]] = {}
        self._fill_tag_statistics()
        self.clients = LeastLoadedClients(view)

    def _fill_tag_statistics(self) -> None:
        # All tags count here, configured or not (as in Kafka); only configured keys constrain later.
        for client in self.view.client_ids():
            for key, value in self.view.tags_of(client).items():
                self.tag_values.setdefault(key, set()).add(value)
                self.clients_by_entry.setdefault((key, value), set()).add(client)

    def run(self, tasks: Collection[TaskId]) -> None:
        if self.num_standby_replicas <= 0:  # POLICY.md §4: Kafka's do-while would still place one
            return
        ordered = _visiting_order(tasks, client_tag_task_order)
        for task in ordered:
            self.remaining[task] = self.num_standby_replicas
        # Each task's active holders in client order (placing standbys leaves the actives as they are).
        active_holders: dict[TaskId, list[ProcessId]] = {}
        for client in self.view.client_ids():
            for task in self.view.active_tasks_of(client):
                active_holders.setdefault(task, []).append(client)
        for task in ordered:
            for client in active_holders.get(task, ()):
                # normally one active holder; after a second one, only what the first could not place
                if task in self.remaining:
                    self.place_for_task(task, client)
        if self.remaining:
            self.place_pending_on_least_loaded()

    def _update_used_entries(
        self, last_used: ProcessId, used_clients: int, used_entries: dict[TagEntry, set[ProcessId]]
    ) -> None:
        """Constrain by the last used client's configured tag entries; a key with no more unused values than
        clients used so far is exhausted and stops constraining."""
        for key, value in self.view.tags_of(last_used).items():
            if key not in self.tag_keys:
                continue
            values = self.tag_values[key]
            if len(values) <= used_clients:
                for exhausted in values:
                    used_entries.pop((key, exhausted), None)
            else:
                used_entries[(key, value)] = self.clients_by_entry[(key, value)]

    def place_for_task(self, task: TaskId, active_client: ProcessId) -> None:
        """Place the task's remaining standbys on clients whose configured tag values are all unused yet."""
        self.clients.offer_every_client()
        used_clients = 1  # the active's client counts as used
        remaining = self.remaining.get(task, self.num_standby_replicas)
        used_entries: dict[TagEntry, set[ProcessId]] = {}
        last_used = active_client
        while remaining > 0:
            self._update_used_entries(last_used, used_clients, used_entries)
            client = self.clients.poll(task, excluded=set().union(*used_entries.values()))
            if client is None:
                break
            self.view.assign_standby(client, task)
            used_clients += 1
            remaining -= 1
            last_used = client
        if remaining > 0:
            self.pending[task] = active_client
            self.remaining[task] = remaining
        else:
            self.remaining.pop(task, None)

    def place_pending_on_least_loaded(self) -> None:
        """Fallback: what the tags could not place goes to the least-loaded clients, tasks in TaskId order."""
        self.clients.offer_every_client()
        for task in sorted(self.remaining):
            missing = _place_on_least_loaded(self.view, self.clients, task, self.remaining[task])
            self.remaining[task] = missing
            if missing:
                log.warning(
                    "unable to assign %d of %d standby replicas of task %s: not enough clients on "
                    "different tag values",
                    missing,
                    self.num_standby_replicas,
                    task,
                )


def place_standbys_by_client_tags(
    view: StandbyPlacementView, tasks: Collection[TaskId], num_standby_replicas: int, tag_keys: Iterable[str]
) -> ClientTagStandbyPlacement:
    placement = ClientTagStandbyPlacement(view, tag_keys, num_standby_replicas)
    placement.run(tasks)
    return placement


def tag_spread_allows_move(
    view: StandbyPlacementView, source: ProcessId, destination: ProcessId, task: TaskId
) -> bool:
    """Moving the task's replica from source to destination keeps at least as many distinct tag entries
    covering the task (assignors.md §5.3.4, four-argument form)."""
    others: set[TagEntry] = set()
    for client in view.client_ids():
        if client not in (source, destination) and view.holds(client, task):
            others.update(view.tags_of(client).items())
    with_source = others | set(view.tags_of(source).items())
    with_destination = others | set(view.tags_of(destination).items())
    return len(with_destination) >= len(with_source)


class AnyStandbyMove:
    """The standby movement predicate of least-loaded placement: every move is allowed. An object rather
    than a function so that the rack optimizer can recognize it and skip asking (rack/swaps.py)."""

    def __call__(
        self,
        source: ClientState,
        destination: ClientState,
        task: TaskId,
        clients: Mapping[ProcessId, ClientState],
    ) -> bool:
        return True


class TagSpreadStandbyMove:
    """The standby movement predicate of client-tag placement: `tag_spread_allows_move` over the clients'
    ``tags_of``. The rack optimizer recognizes it and asks the same rule for all clients at once
    (rack/tag_spread.py)."""

    def __init__(self, tags_of: Callable[[ClientState], Mapping[str, str]]) -> None:
        self.tags_of = tags_of

    def __call__(
        self,
        source: ClientState,
        destination: ClientState,
        task: TaskId,
        clients: Mapping[ProcessId, ClientState],
    ) -> bool:
        return tag_spread_allows_move(
            ClientStateView(clients, self.tags_of), source.process_id, destination.process_id, task
        )


# --- the legacy assignors and their factory (assignors.md §5.1)
class DefaultStandbyTaskAssignor:
    """Least-loaded standby placement; every movement is allowed."""

    def assign(
        self,
        clients: Mapping[ProcessId, ClientState],
        stateful_tasks: Collection[TaskId],
        configs: AssignmentConfigs,
    ) -> bool:
        place_standbys_by_load(ClientStateView(clients), stateful_tasks, configs.num_standby_replicas)
        return False  # standby placement never needs a probing rebalance

    def is_allowed_task_movement(self, source: ClientState, destination: ClientState) -> bool:
        return True

    # Kafka's isAllowedStandbyMovement(source, destination, task, clients): every movement is allowed.
    is_allowed_standby_movement = AnyStandbyMove()


class ClientTagAwareStandbyTaskAssignor:
    """Spreads each task's replicas over distinct values of the configured tag keys, best effort.

    ``tags_of`` gives a client's tags (its own client tags by default; ``{"rack": rack}`` in the rack form).
    """

    def __init__(
        self,
        tag_keys: Iterable[str] | None = None,
        tags_of: Callable[[ClientState], Mapping[str, str]] | None = None,
    ) -> None:
        self._tag_keys = None if tag_keys is None else tuple(tag_keys)
        self._tags_of = tags_of or (lambda state: state.client_tags)
        # Kafka's isAllowedStandbyMovement(source, destination, task, clients).
        self.is_allowed_standby_movement = TagSpreadStandbyMove(self._tags_of)

    def tags_of(self, client: ClientState) -> Mapping[str, str]:
        return self._tags_of(client)

    def placement(
        self, clients: Mapping[ProcessId, ClientState], configs: AssignmentConfigs
    ) -> ClientTagStandbyPlacement:
        tag_keys = self._tag_keys if self._tag_keys is not None else configs.rack_aware_assignment_tags
        return ClientTagStandbyPlacement(
            ClientStateView(clients, self._tags_of), tag_keys, configs.num_standby_replicas
        )

    def assign(
        self,
        clients: Mapping[ProcessId, ClientState],
        stateful_tasks: Collection[TaskId],
        configs: AssignmentConfigs,
    ) -> bool:
        self.placement(clients, configs).run(stateful_tasks)
        return False

    def is_allowed_task_movement(self, source: ClientState, destination: ClientState) -> bool:
        """Thread balancing may move a task only to a client with every tag of the source, same value."""
        destination_tags = self._tags_of(destination)
        return all(destination_tags.get(key) == value for key, value in self._tags_of(source).items())


StandbyTaskAssignor = DefaultStandbyTaskAssignor | ClientTagAwareStandbyTaskAssignor


class ClientRackSource(Protocol):
    """The part of a rack-aware assignor the factory reads (Kafka: validClientRack / racksForProcess)."""

    def valid_client_rack(self) -> bool: ...

    def racks_for_process(self) -> Mapping[ProcessId, str]: ...


def create_standby_task_assignor(
    configs: AssignmentConfigs, rack_source: ClientRackSource | None = None
) -> StandbyTaskAssignor:
    """Configured tags -> tag-aware on the clients' tags; else valid client racks -> tag-aware on the rack as
    the only tag; else least-loaded."""
    if configs.rack_aware_assignment_tags:
        return ClientTagAwareStandbyTaskAssignor()
    if rack_source is not None and rack_source.valid_client_rack():
        racks = dict(rack_source.racks_for_process())  # read once
        return ClientTagAwareStandbyTaskAssignor(
            (RACK_TAG,), lambda state: {RACK_TAG: racks[state.process_id]}
        )
    return DefaultStandbyTaskAssignor()


def assign_standby_replicas(
    clients: Mapping[ProcessId, ClientState], stateful_tasks: Sequence[TaskId], configs: AssignmentConfigs
) -> None:
    """The HA assignor's standby phase: picks the algorithm (assignors.md §5.1, no rack source, as in HA) and
    places standbys on the ClientStates in place, visiting ``stateful_tasks`` in the order given."""
    if configs.num_standby_replicas <= 0:
        return
    create_standby_task_assignor(configs).assign(clients, stateful_tasks, configs)
