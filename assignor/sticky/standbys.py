"""Standby placement (assignors.md §7.5): for each replica, the same choice as for actives (previous owner
unless overloaded, else a previous standby holder, else the least-loaded client preferring a new pair of
co-located tasks) among the clients that do not hold the task."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from fleet_assignor.assignor.sticky.state import STANDBY, StickyState


def assign_standbys(state: StickyState) -> None:
    replicas = state.application_state.assignment_configs().num_standby_replicas
    if replicas <= 0 or not state.pids:
        return
    infos = state.application_state.all_tasks()
    n_clients = len(state.pids)
    for j, task in enumerate(state.tasks):
        if not infos[task].has_changelog:
            continue
        placer = _StandbyPlacer(state, j)
        for _ in range(replicas):
            if len(state.holders[j]) >= n_clients:
                break  # every client holds the task: no room for another replica
            client = placer.best_client()
            state.place(j, client, STANDBY)
            placer.placed(client)


class _KeyOrderWalk:
    """Clients in a fixed key order, walked for "the first one still open (not holding the task)" and "the
    first one open and eligible". Both only ever skip further: holders stay holders and, as the task's
    partner set only grows while its replicas are placed, an ineligible client stays ineligible.

    The order is given as the clients' keys (`StickyState.key_of`, the client last), sorted: a walk reads a
    few clients off the front, so the keys are not turned into clients up front (a copy of the state's
    sorted keys is one C-level copy, a list of their clients a Python step per client)."""

    __slots__ = ("_any", "_eligible", "_order")

    def __init__(self, keys: list[tuple]) -> None:
        self._order = keys
        self._any = 0
        self._eligible = 0

    def first_open(self, holding: set[int]) -> int | None:
        order = self._order
        while self._any < len(order) and order[self._any][-1] in holding:
            self._any += 1
        return order[self._any][-1] if self._any < len(order) else None

    def first_eligible(self, holding: set[int], eligible: Callable[[int], bool]) -> int | None:
        order = self._order
        while self._eligible < len(order):
            client = order[self._eligible][-1]
            if client not in holding and eligible(client):
                return client
            self._eligible += 1
        return None

    def least_loaded(self, holding: set[int], eligible: Callable[[int], bool]) -> int | None:
        """findLeastLoadedClient: the first eligible client in key order, else the first open one."""
        found = self.first_eligible(holding, eligible)
        return found if found is not None else self.first_open(holding)


class _StandbyPlacer:
    """findBestClientForTask for the replicas of one task, candidates = clients not holding it.

    Within one task's replicas only the chosen client's key changes, and it then holds the task, so every
    other client keeps its place in a key order taken once per task; walks over that order give each pick
    in amortized constant time (the 1,000 tasks x 100 clients x 50 standbys shape needs it).
    """

    def __init__(self, state: StickyState, j: int) -> None:
        self._state = state
        self._j = j
        self._holding = set(state.holders[j])
        self._partners = state.partners(j)
        key_of, holding = state.key_of, self._holding
        self._previous = _KeyOrderWalk(sorted(key_of[i] for i in state.prev_standby[j] if i not in holding))
        self._overall: _KeyOrderWalk | None = None

    def _eligible(self, client: int) -> bool:
        return self._state.eligible(client, self._partners)

    def _least_loaded_previous(self) -> int | None:
        return self._previous.least_loaded(self._holding, self._eligible)

    def _least_loaded_overall(self) -> int:
        if self._overall is None:
            self._overall = _KeyOrderWalk(self._state.by_key.copy())
        return cast(int, self._overall.least_loaded(self._holding, self._eligible))  # a client is free

    def best_client(self) -> int:
        state = self._state
        if len(state.pids) - len(self._holding) == 1:
            return self._least_loaded_overall()  # the only open client
        owner = state.prev_active[self._j]
        previous = owner if owner >= 0 and owner not in self._holding else self._least_loaded_previous()
        if previous is None:
            return self._least_loaded_overall()
        if state.should_balance_load(previous):
            standby = self._least_loaded_previous()
            if standby is None or state.should_balance_load(standby):
                return self._least_loaded_overall()
            return standby
        return previous

    def placed(self, client: int) -> None:
        self._holding.add(client)
        self._partners |= self._state.mask[client]
