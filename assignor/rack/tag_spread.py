"""The client-tag rule of standby moves (`standby.tag_spread_allows_move`, assignors.md §5.3.4) for every
destination at once, as the pairwise standby swaps (rack.md §7) ask it.

A move of task t's standby from s to d is allowed when the number of distinct tag entries covering t does
not shrink: with O the entries of t's other holders (d holds none of t when the question is asked), O and
tags(d) together count at least as many as O and tags(s), that is ``|tags(d) - O| >= |tags(s) - O|``. The
left side, per destination, depends on O only: it is computed once per distinct O (there are few: the
entries of one or two clients) and kept.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import numpy as np

TagEntry = tuple[str, str]


class TagSpreadDestinations:
    """Clients are ranks (0..n-1); ``client_entries[c]``: the tag entries of client c."""

    def __init__(self, client_entries: Sequence[Iterable[TagEntry]]) -> None:
        ids: dict[TagEntry, int] = {}
        entries = [{ids.setdefault(e, len(ids)) for e in entries} for entries in client_entries]
        # A set of entries as an int, bit e for entry e: unions and differences per row are int operations.
        self._mask = [sum(1 << entry for entry in client) for client in entries]
        self._size = np.array([len(client) for client in entries], dtype=np.int64)
        members: list[list[int]] = [[] for _ in ids]
        for client, client_ids in enumerate(entries):
            for entry in client_ids:
                members[entry].append(client)
        self._clients_with = [np.array(m, dtype=np.int64) for m in members]
        self._new_entries: dict[int, np.ndarray] = {}
        self._allowed: dict[tuple[int, int], np.ndarray] = {}

    def _new_entries_per_client(self, others: int) -> np.ndarray:
        """``|tags(d) - others|`` for every client d (``others``: a mask of entries)."""
        new = self._new_entries.get(others)
        if new is None:
            new = self._size.copy()
            for entry in range(others.bit_length()):
                if others >> entry & 1:
                    new[self._clients_with[entry]] -= 1
            self._new_entries[others] = new
        return new

    def allowed(self, source: int, holders: Collection[int]) -> np.ndarray:
        """Per client: may a standby on ``source`` of a task held by ``holders`` (source included) move
        there? The answer for a client holding the task is meaningless (no standby moves onto one). The array
        is shared: read it, do not change it."""
        mask = self._mask
        others = 0
        for holder in holders:
            if holder != source:
                others |= mask[holder]
        needed = (mask[source] & ~others).bit_count()
        allowed = self._allowed.get((others, needed))
        if allowed is None:
            allowed = self._new_entries_per_client(others) >= needed
            self._allowed[(others, needed)] = allowed
        return allowed
