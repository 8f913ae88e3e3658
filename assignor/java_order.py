"""The iteration orders of Java's HashMap and PriorityQueue, for assignors whose answer depends on them.

Kafka's broker-side StickyTaskAssignor (`streams_sticky.py`) breaks ties by the order a `HashMap` of
strings iterates and by the internal array of a `PriorityQueue`. Neither order is random: a `String`'s
hash is fixed by its characters, and a HashMap iterates its buckets in index order, so the order follows
from the keys, the table size and the order of insertion. These classes compute that order (our own code,
written from the documented behaviour of `java.util.HashMap` and `java.util.PriorityQueue` in Java 17):

* `JavaHashOrder` records the keys a map received through `put` or `computeIfAbsent` and gives the order
  `keySet()` / `values()` would iterate them in. The two calls differ: `put` appends a new key to its
  bucket and grows the table after the insertion that passes the threshold; `computeIfAbsent` grows it
  *before* an insertion when the size already passed the threshold, and puts a new key at the head of its
  bucket. A bucket of eight or more colliding keys becomes a tree in Java (tables of 64 buckets or more),
  whose order is not emulated: `treeified` says when that happened.
* `JavaPriorityQueue` is a binary heap with Java's `offer` / `poll` sift steps, so equal keys come out in
  the same order as in Java (Python's `heapq` sifts differently).
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import compress
from operator import le
from typing import Generic, TypeVar

import numpy as np

_DEFAULT_CAPACITY = 16
_TREEIFY_THRESHOLD = 8
_MIN_TREEIFY_CAPACITY = 64

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


def _to_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= (1 << 31) else value


# Java caches a String's hash in the String; the same ids are hashed on every planning call.
@lru_cache(maxsize=1 << 16)
def java_string_hash(text: str) -> int:
    """`String.hashCode()`: 31-polynomial over the UTF-16 code units, in 32-bit signed arithmetic."""
    h = 0
    if text.isascii():  # one UTF-16 code unit per byte
        for unit in text.encode("ascii"):
            h = (31 * h + unit) & 0xFFFFFFFF
        return _to_int32(h)
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] | (data[i + 1] << 8))) & 0xFFFFFFFF
    return _to_int32(h)


def _spread(h: int) -> int:
    """`HashMap.hash`: the high half folded into the low one (bucket index = spread & (size - 1))."""
    unsigned = h & 0xFFFFFFFF
    return unsigned ^ (unsigned >> 16)


def table_size_for(capacity: int) -> int:
    """`HashMap.tableSizeFor`: the smallest power of two >= capacity, at least 1."""
    size = 1
    while size < capacity:
        size <<= 1
    return size


class JavaHashOrder:
    """Which order a `java.util.HashMap<String, ?>` iterates its keys in, given how they were inserted.

    `initial_capacity` None is `new HashMap<>()`; a number is `new HashMap<>(n)`. Keys are strings, hashed as
    Java hashes them; removals are not needed by any caller and not supported, nor is mixing `put` and
    `compute_if_absent` on one map.

    The order follows from the final table size: buckets in index order, and inside a bucket the keys in
    insertion order (`put` appends) or its reverse (`computeIfAbsent` prepends), because a resize splits
    each bucket keeping the keys' relative order and keys sharing a bucket at the final size shared it at
    every smaller size. So only the table size is simulated, with the per-bucket counts that decide when a
    crowded bucket doubles a small table.
    """

    __slots__ = ("_capacity", "_counts", "_hashes", "_keys", "_order", "_prepend", "_threshold", "treeified")

    def __init__(self, initial_capacity: int | None = None) -> None:
        self._keys: list[str] = []
        self._hashes: dict[str, int] = {}
        self._capacity = 0  # no table yet: Java allocates it on the first insertion
        # Before the table exists Java keeps the requested table size in the threshold field.
        self._threshold = 0 if initial_capacity is None else table_size_for(initial_capacity)
        self._counts: dict[int, int] = {}  # keys per bucket at the current table size
        self._prepend: bool | None = None  # how new keys enter their bucket (None: no key yet)
        self._order: list[str] | None = None
        self.treeified = False

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._hashes

    def _resize(self) -> None:
        if self._capacity == 0:
            capacity = self._threshold if self._threshold > 0 else _DEFAULT_CAPACITY
        else:
            capacity = self._capacity * 2
        self._capacity = capacity
        self._threshold = capacity * 3 // 4  # (int) (capacity * 0.75f) for every power of two
        mask = capacity - 1
        counts: dict[int, int] = {}
        for h in self._hashes.values():
            counts[h & mask] = counts.get(h & mask, 0) + 1
        self._counts = counts

    def _insert(self, key: str, prepend: bool) -> int:
        """Record a new key; the size of its bucket afterwards."""
        if self._prepend is not None and self._prepend != prepend:
            raise ValueError("a map filled by both put and computeIfAbsent is not supported")
        self._prepend = prepend
        h = _spread(java_string_hash(key))
        self._hashes[key] = h
        self._keys.append(key)
        self._order = None
        bucket = h & (self._capacity - 1)
        size = self._counts.get(bucket, 0) + 1
        self._counts[bucket] = size
        return size

    def _grow_crowded_bucket(self, bucket_size: int, limit: int) -> None:
        """`treeifyBin`: a crowded bucket doubles a small table instead of becoming a tree."""
        if bucket_size >= limit:
            if self._capacity < _MIN_TREEIFY_CAPACITY:
                self._resize()
            else:
                self.treeified = True

    def put(self, key: str) -> None:
        """`HashMap.put(key, ...)`."""
        if key in self._hashes:
            return
        if self._capacity == 0:
            self._resize()
        # putVal treeifies when the bucket already held TREEIFY_THRESHOLD keys before this one.
        self._grow_crowded_bucket(self._insert(key, prepend=False), _TREEIFY_THRESHOLD + 1)
        if len(self._keys) > self._threshold:
            self._resize()

    def compute_if_absent(self, key: str) -> None:
        """`HashMap.computeIfAbsent(key, ...)` with a function that never returns null."""
        if self._capacity == 0 or len(self._keys) > self._threshold:
            self._resize()  # before the lookup, even when the key is present
        if key in self._hashes:
            return
        self._grow_crowded_bucket(self._insert(key, prepend=True), _TREEIFY_THRESHOLD)

    def compute_if_absent_all(self, keys: Iterable[str]) -> None:
        """`compute_if_absent` of each key in turn, in one call: a present key only resizes a table whose
        size passed the threshold, so the calls for the others are skipped (thousands of members share
        a handful of process ids)."""
        if self._capacity == 0 and self._threshold >= _MIN_TREEIFY_CAPACITY:
            self._fill_large_table(list(keys))
            return
        hashes = self._hashes
        resize_pending = True  # the table may not exist yet; else only an insertion can make one pending
        for key in keys:
            if resize_pending or key not in hashes:
                self.compute_if_absent(key)
                resize_pending = self._capacity == 0 or len(self._keys) > self._threshold

    def _fill_large_table(self, keys: list[str]) -> None:
        """`compute_if_absent_all` into an empty map whose first table has 64 buckets or more (a thousand
        processes: one call per key cost most of a millisecond). From that size on a crowded bucket
        becomes a tree and never doubles the table, so the final size follows from the key counts alone:
        each call first doubles a table whose key count passed three quarters of it, and the counts the
        calls see rise one at a time, up to the number of distinct keys, or one less when the last call is
        the one that inserts the last new key."""
        if not keys:
            return
        distinct = list(dict.fromkeys(keys))
        last_inserted_last = keys.index(distinct[-1]) == len(keys) - 1
        most_seen = len(distinct) - 1 if last_inserted_last else len(distinct)
        capacity = self._threshold  # the requested table size, kept there until the table exists
        while most_seen > capacity * 3 // 4:
            capacity *= 2
        self._prepend = True
        self._keys = distinct
        # `_spread` of every key at once (an array step each instead of a Python call per key).
        spread = _spread_all(distinct)
        self._hashes = dict(zip(distinct, spread.tolist(), strict=True))
        self.treeified = _crowds_a_bucket(spread, self._threshold, capacity)
        self._capacity = capacity // 2
        self._resize()  # doubles it to the final size, with its threshold and bucket counts
        # `keys()`, sorted in arrays: buckets in index order, each newest key first (computeIfAbsent).
        newest_first = distinct[::-1]
        buckets = spread[::-1] & (capacity - 1)
        self._order = [newest_first[i] for i in np.argsort(buckets, kind="stable").tolist()]

    def keys(self) -> list[str]:
        """The keys in the order `keySet()` iterates them."""
        if self._order is None:
            mask = self._capacity - 1
            hashes = self._hashes
            keys = self._keys[::-1] if self._prepend else self._keys
            self._order = sorted(keys, key=lambda k: hashes[k] & mask)  # stable: bucket order kept
        return list(self._order)


def _spread_all(keys: list[str]) -> np.ndarray:
    """`_spread` of every key's String hash, as one array step each instead of a Python call per key."""
    unsigned = np.fromiter(map(java_string_hash, keys), np.int64, len(keys)) & 0xFFFFFFFF
    return unsigned ^ (unsigned >> 16)


def _crowds_a_bucket(spread: np.ndarray, first_capacity: int, last_capacity: int) -> bool:
    """Whether keys with these spread hashes, inserted in this order into a table of `first_capacity`
    buckets (64 or more) doubled up to `last_capacity` when the count passes three quarters of it, ever
    fill a bucket to the treeify threshold. At each size the buckets only fill, so it is enough to look
    at the keys inserted by the end of each size: those at a count up to three quarters of it."""
    capacity = first_capacity
    while True:
        inserted = spread[: capacity * 3 // 4 + 1]
        if int(np.bincount(inserted & (capacity - 1)).max()) >= _TREEIFY_THRESHOLD:
            return True
        if capacity >= last_capacity:
            return False
        capacity *= 2


# From this many distinct keys, `hash_map_put_order` sorts them all at once (below it, put by put is as fast).
_ALL_AT_ONCE_MIN_KEYS = 64
# Up to this many keys a default-sized map keeps its 16 buckets: no resize (the 13th key), and no bucket can
# reach the 9 keys that double a small table.
_SMALL_TABLE_MAX_KEYS = 8


def hash_map_put_order(
    keys: list[str], initial_capacity: int | None = None, *, distinct: bool = False
) -> list[str]:
    """Iteration order of a HashMap filled by `put` in the order of `keys` (`distinct`: the caller knows no
    key repeats, which lets a default-sized map of many keys be ordered without a put per key)."""
    if distinct and initial_capacity is None:
        if len(keys) <= _SMALL_TABLE_MAX_KEYS:  # a process's few members: by bucket, ties in put order
            return sorted(keys, key=_default_table_bucket)
        if len(keys) >= _ALL_AT_ONCE_MIN_KEYS:
            return _distinct_keys_put_order(keys)
    order = JavaHashOrder(initial_capacity)
    for index, key in enumerate(keys):
        if order._capacity >= _MIN_TREEIFY_CAPACITY:
            return _large_table_put_order(order, keys[index:])
        order.put(key)
    return order.keys()


def _default_table_bucket(key: str) -> int:
    """The key's bucket in a 16-bucket table."""
    return _spread(java_string_hash(key)) & (_DEFAULT_CAPACITY - 1)


def _distinct_keys_put_order(keys: list[str]) -> list[str]:
    """`hash_map_put_order` of distinct keys into `new HashMap<>()`, sorted at once (a thousand members of a
    process: a `put` call per key for the small tables cost as much as the sort). From 25 keys on the key
    count alone sizes the table: a crowded bucket doubles a table of 16 or 32 buckets early, but the 25th
    key makes it 64 buckets either way, and from there a crowded bucket becomes a tree (not emulated, as
    in `JavaHashOrder`) and each insertion past three quarters of the table doubles it."""
    return _grown_table_order(keys, _DEFAULT_CAPACITY)


def _large_table_put_order(order: JavaHashOrder, rest: list[str]) -> list[str]:
    """The order after `rest` is put into a map that already has 64 buckets or more (thousands of members
    in a process: one `put` call per key cost more than the rest of the assignment). From that size on a
    crowded bucket becomes a tree and never doubles the table, so the key count alone decides the final
    size: doubled while the keys pass three quarters of it. Trees are not emulated, as in `JavaHashOrder`."""
    keys = list(dict.fromkeys(order._keys + rest))  # `put` of a present key changes nothing
    return _grown_table_order(keys, order._capacity)


def _grown_table_order(keys: list[str], capacity: int) -> list[str]:
    """Distinct keys in the order a table of `capacity` buckets iterates them once doubled while the keys
    pass three quarters of it: the bucket index of every key at once, and a stable sort keeping each bucket
    in insertion order."""
    while len(keys) > capacity * 3 // 4:
        capacity *= 2
    buckets = _spread_all(keys) & (capacity - 1)
    return [keys[i] for i in np.argsort(buckets, kind="stable").tolist()]


def _no_key(_: object) -> float:
    return 0.0


# `RequeueLevel` keeps the array every this many steps: the array at any step is then at most this many
# steps away.
_LEVEL_SNAPSHOT_STEPS = 16


class RequeueLevel:
    """A `JavaPriorityQueue` of `size` elements with one key, whose head is polled and offered back with
    one larger key `size` times: which place of the starting array each poll takes, and the array after
    any number of steps. The sift steps compare keys only, so this is the same for any elements and any
    two keys; after the `size` steps all have the larger key, and the next level starts from that array.

    A caller whose queue goes through such levels (processes or members at one task count, each taking
    one task more in turn) reads the element to take from here instead of sifting, and the array when it
    leaves the level early. Worked out step by step as far as asked, once per size (`requeue_level`),
    under a lock (plans may run in threads)."""

    __slots__ = ("_final", "_lock", "_queue", "_snapshots", "polled", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self._queue: JavaPriorityQueue[int] = JavaPriorityQueue(key=_no_key)
        self._queue.offer_all(range(size))
        self.polled: list[int] = []  # only ever appended to: read without the lock
        # The (key, place) array before step 0, _LEVEL_SNAPSHOT_STEPS, ... and after the last step.
        self._snapshots: list[list[tuple[float, int]]] = [list(self._queue.array)]
        self._final: list[int] | None = None
        self._lock = threading.Lock()

    def place(self, step: int) -> int:
        """The place (in the level's starting array) of the element the poll at `step` takes."""
        polled = self.polled
        if step >= len(polled):
            with self._lock:
                queue, snapshots = self._queue, self._snapshots
                while len(polled) <= step:
                    polled.append(queue.array[0][1])
                    queue.requeue_head_as(1.0)
                    if len(polled) % _LEVEL_SNAPSHOT_STEPS == 0 or len(polled) == self.size:
                        snapshots.append(list(queue.array))
        return polled[step]

    def final(self) -> list[int]:
        """The array after all `size` steps, as places in the starting array (read once per level)."""
        if self._final is None:
            self._final = self.places_after(self.size)
        return self._final

    def places_after(self, steps: int) -> list[int]:
        """The array after `steps` steps (0 to `size`), as places in the starting array."""
        if steps:
            self.place(steps - 1)  # makes the snapshots up to there
        index = steps // _LEVEL_SNAPSHOT_STEPS
        from_step = index * _LEVEL_SNAPSHOT_STEPS
        if steps == self.size:
            index, from_step = len(self._snapshots) - 1, steps
        queue: JavaPriorityQueue[int] = JavaPriorityQueue(key=_no_key)
        queue._heap = list(self._snapshots[index])
        for _ in range(steps - from_step):
            queue.requeue_head_as(1.0)
        return [place for _, place in queue.array]


@lru_cache(maxsize=64)
def requeue_level(size: int) -> RequeueLevel:
    return RequeueLevel(size)


def java_heap_poll(heap: list) -> None:
    """Java's `poll` without the result, on a non-empty heap: the last element goes to the head and sifts
    down (`siftDownUsingComparator`)."""
    last = heap.pop()
    n = len(heap)
    if n:
        key = last[0]
        k, half = 0, n >> 1
        while k < half:
            child = 2 * k + 1
            smaller = heap[child]
            right = child + 1
            if right < n:
                other = heap[right]
                if smaller[0] > other[0]:  # compare(left, right) > 0 takes the right
                    child, smaller = right, other
            if key <= smaller[0]:  # compare(x, child) <= 0 stops the descent
                break
            heap[k] = smaller
            k = child
        heap[k] = last


def java_heap_offer(heap: list, entry: tuple) -> None:
    """Java's `offer`: ``entry`` (key, item) appended, then moved up while its key is below its parent's
    (an equal key stays below, as `compare(x, parent) >= 0` stops the climb)."""
    k = len(heap)
    heap.append(entry)
    while k > 0:
        parent = (k - 1) >> 1
        above = heap[parent]
        if not entry[0] < above[0]:
            break
        heap[k] = above
        k = parent
    heap[k] = entry


def _places_of(values: Sequence, value: object, count: int) -> list[int]:
    """The places of the ``count`` elements equal to ``value``, each found in C (a big process has few
    members at the upper count among thousands)."""
    places, place = [], -1
    for _ in range(count):
        place = values.index(value, place + 1)
        places.append(place)
    return places


def _offered_in_two_keys(keys: Sequence[float], items: Sequence, low: float) -> tuple[list[tuple], bytearray]:
    """Java's array after offering the (key, item) pairs in turn into an empty queue, when the keys take two
    values: a step for every offer only where one moves (a big process's members are offered ~10 times per
    plan, nearly all at one count).

    An offer at the upper key never climbs (no key is larger). An offer at the lower key climbs only when
    its place's parent holds the upper key, and then past every upper parent on its way up. So only the
    children of places holding the upper key can see a climb: those places are visited in order (a heap of
    them), and the offers between them land where they are offered, added in one step. Also returns
    which places hold the upper key."""
    size = len(keys)
    array: list[tuple] = []
    upper = bytearray(size)  # by place: holds the upper key now
    uppers = _places_of(keys, max(keys), size - keys.count(low))
    watched: list[int] = []  # places whose parent held the upper key when they were added
    next_upper, offered = 0, 0
    while offered < size:
        upper_at = uppers[next_upper] if next_upper < len(uppers) else size
        stop = min(upper_at, watched[0] if watched else size)
        if stop > offered:
            array.extend(zip(keys[offered:stop], items[offered:stop], strict=True))
            offered = stop
            continue
        place = offered
        if place == upper_at:
            array.append((keys[place], items[place]))
            upper[place] = 1
            next_upper += 1
        else:
            entry = (keys[place], items[place])
            array.append(entry)
            if upper[(place - 1) >> 1]:
                while place and upper[(place - 1) >> 1]:
                    parent = (place - 1) >> 1
                    array[place] = array[parent]
                    upper[place] = 1
                    place = parent
                array[place] = entry
                upper[place] = 0
                place = offered  # now holds an upper element
            else:
                place = -1
        while watched and watched[0] <= offered:
            heapq.heappop(watched)
        if place >= 0:
            for child in (2 * place + 1, 2 * place + 2):
                if child < size:
                    heapq.heappush(watched, child)
        offered += 1
    return array, upper


class JavaPriorityQueue(Generic[T]):
    """`java.util.PriorityQueue` with a comparator reading a number from each element at insertion.

    The sift steps are Java's (`siftUpUsingComparator`, `siftDownUsingComparator`), so elements with equal
    keys leave in Java's order. An element's key must not change while it is in the queue, which every
    caller guarantees by polling an element before changing it.
    """

    __slots__ = ("_heap", "_key")

    def __init__(self, key: Callable[[T], float]) -> None:
        self._heap: list[tuple[float, T]] = []
        self._key = key

    def __len__(self) -> int:
        return len(self._heap)

    def __iter__(self) -> Iterator[T]:
        return (item for _, item in self._heap)

    def offer_all(self, items: Iterable[T]) -> None:
        """`offer` of each item in turn, in one call (queues of thousands of members are built this way)."""
        added = list(items)
        self.offer_all_keyed(list(map(self._key, added)), added)

    def offer_all_keyed(self, keys: Sequence[float], added: Sequence[T]) -> None:
        """`offer_all` of ``added`` whose keys the caller has at hand (``keys[i]`` the key of ``added[i]``
        now), without reading them one by one."""
        heap = self._heap
        if not heap:
            if all(map(le, keys, keys[1:])):
                # Keys in ascending order (all equal, on a first assignment) into an empty queue: each lands
                # below a parent offered before it, whose key is not larger, so no `offer` moves anything.
                heap.extend(zip(keys, added, strict=True))
                return
            distinct = set(keys)
            if len(distinct) == 2:
                heap.extend(_offered_in_two_keys(keys, added, min(distinct))[0])
                return
        for entry in zip(keys, added, strict=True):
            java_heap_offer(heap, entry)

    def offer(self, item: T) -> None:
        java_heap_offer(self._heap, (self._key(item), item))

    def poll(self) -> T | None:
        heap = self._heap
        if not heap:
            return None
        result = heap[0][1]
        java_heap_poll(heap)
        return result

    def peek(self) -> T | None:
        """The element `poll` would return, left in the queue."""
        return self._heap[0][1] if self._heap else None

    def requeue_head(self) -> None:
        """`offer(poll())` on a non-empty queue, the head's key read after the caller changed it (the
        assignors' hot loops poll, update and offer back)."""
        heap = self._heap
        item = heap[0][1]
        java_heap_poll(heap)
        java_heap_offer(heap, (self._key(item), item))

    @property
    def array(self) -> list[tuple[float, T]]:
        """The heap array, head first, as (key, element) pairs: read it (never change it) to peek without a
        call in a loop that runs once per task."""
        return self._heap

    def requeue_head_as(self, key: float) -> None:
        """`requeue_head` with the head's new key given (the caller just computed it): Java's poll and offer
        in one call, for the loops that run once per task and replica."""
        heap = self._heap
        item = heap[0][1]
        java_heap_poll(heap)
        java_heap_offer(heap, (key, item))


# --- a queue whose keys take two neighbouring values -------------------------------------------------------


@lru_cache(maxsize=16)
def _tree_orders(size: int) -> tuple[list[int], list[int], list[int]]:
    """For the places 0..size-1 of a heap array (place k's children at 2k+1 and 2k+2): each place's rank in
    the tree's preorder and in its postorder, and the places by postorder rank. The ranks order any subset
    of places that is closed upwards (a parent's place is in it with its child's) as that subset's own tree
    would: a subtree's order is its part of the whole tree's."""
    pre_rank, post_rank = [0] * size, [0] * size
    by_post_rank: list[int] = []
    stack: list[tuple[int, bool]] = [(0, False)] if size else []
    pre = 0
    while stack:
        place, children_done = stack.pop()
        if children_done:
            post_rank[place] = len(by_post_rank)
            by_post_rank.append(place)
            continue
        pre_rank[place] = pre
        pre += 1
        stack.append((place, True))
        for child in (2 * place + 2, 2 * place + 1):  # the left child is popped (visited) first
            if child < size:
                stack.append((child, False))
    return pre_rank, post_rank, by_post_rank


def _lower_layout(tree_size: int, places: Iterable[int]) -> tuple[list[int], bytearray, bytearray]:
    """`TwoLevelQueue`'s layout of these lower places: the places in descending preorder (the next to leave
    last), and marks of the lower ones by preorder and by postorder rank (a count or a find over them is
    one C call)."""
    pre_rank, post_rank, _ = _tree_orders(tree_size)
    ordered = sorted(places, key=pre_rank.__getitem__, reverse=True)
    by_pre, by_post = bytearray(tree_size), bytearray(tree_size)
    for place in ordered:
        by_pre[pre_rank[place]] = 1
        by_post[post_rank[place]] = 1
    return ordered, by_pre, by_post


@lru_cache(maxsize=64)
def _all_lower(tree_size: int, size: int) -> tuple[list[int], bytes, bytes]:
    """`_lower_layout` when all of the first `size` places are lower (a level starts once per `size`
    steps), kept: the marks as bytes, copied by each level."""
    places, by_pre, by_post = _lower_layout(tree_size, range(size))
    return places, bytes(by_pre), bytes(by_post)


class TwoLevelQueue(Generic[T]):
    """A `JavaPriorityQueue` whose elements have one of two keys, a lower and an upper one, where elements
    leave at the lower key and come back at either: Java's array is not kept, yet every poll returns the
    element Java's would, in O(1) for the usual step and O(log n) otherwise.

    Why that holds (Java's sift steps compare keys only): the places holding a lower key are closed
    upwards (a heap's parent is not larger than its child). When the last element has the upper key, a
    poll sinks it along the lower places, taking the left child when it is lower, else the right one. That
    path is the start of the lower places' preorder, its elements each move up one, and the sunk element
    stops at the path's end, the first lower place in postorder. So the lower elements leave in the
    preorder of their places and keep that order among themselves, and the upper ones move only when one
    is sunk (into the place the poll freed) or climbed past (by an offer at the lower key). The queue keeps
    the lower elements in that order, the set of lower places with its postorder, and the upper elements'
    places; the other cases (the last element lower: it goes to the head and stays) are a few list edits.

    When no element is lower, the upper key becomes the lower one and the next upper key is one larger:
    `level` counts that. One element may be offered a level below the lower key (`offer_below`: a polled
    element offered back after the level moved on): it climbs to the head, and until it is polled it sorts
    as a lower element would there (nothing else is below the others). Other keys are not supported:
    callers go on with Java's array then (`array`).
    """

    __slots__ = (
        "_by_post_rank",
        "_lower",
        "_lower_by_post",
        "_lower_by_pre",
        "_post_rank",
        "_pre_rank",
        "_size",
        "_upper",
        "below",
        "level",
    )

    def __init__(self, array: list[tuple[float, T]]) -> None:
        """From a `JavaPriorityQueue`'s array whose keys take at most two values (the smaller is level 0)."""
        lowest = min((key for key, _ in array), default=0.0)
        upper_places = [place for place, (key, _) in enumerate(array) if key != lowest]
        self._start([item for _, item in array], upper_places)

    @classmethod
    def offered(cls, keys: Sequence[float], items: Sequence[T]) -> TwoLevelQueue[T]:
        """The queue after offering ``items[i]`` at ``keys[i]`` in turn into an empty one, the keys taking
        at most two values (the smaller is level 0), without sifting: for a big process's members, nearly
        all lower, whose queue is made again after each task given by member id."""
        queue = cls.__new__(cls)
        if not keys:
            queue._start([], [])
            return queue
        array, upper = _offered_in_two_keys(keys, items, min(keys))
        queue._start([item for _, item in array], _places_of(upper, 1, upper.count(1)))
        return queue

    def _start(self, items: list[T], upper_places: list[int]) -> None:
        """The queue over Java's array ``items`` whose ``upper_places`` hold the upper key and the others the
        lower one. The cached layout of every place lower, less the upper places: no sort."""
        size = len(items)
        self._size = size
        self._pre_rank, self._post_rank, self._by_post_rank = _tree_orders(size)
        self.level = 0
        self.below = False  # whether the head is an element a level below the lower key
        self._upper = items
        places, by_pre, by_post = _all_lower(size, size)
        self._lower_by_pre, self._lower_by_post = bytearray(by_pre), bytearray(by_post)
        for place in upper_places:
            self._lower_by_pre[self._pre_rank[place]] = 0
            self._lower_by_post[self._post_rank[place]] = 0
        # `places` is every place in descending preorder, i.e. by preorder rank reversed: the marks by
        # preorder rank, reversed, select the lower ones.
        self._lower: list[T] = list(compress(map(items.__getitem__, places), self._lower_by_pre[::-1]))

    def __len__(self) -> int:
        return self._size

    def _next_level(self) -> None:
        """No element is lower: all are at the upper key, which becomes the lower one."""
        self.level += 1
        places, by_pre, by_post = _all_lower(len(self._pre_rank), self._size)
        self._lower = list(map(self._upper.__getitem__, places))
        self._lower_by_pre = bytearray(by_pre)
        self._lower_by_post = bytearray(by_post)

    def head(self) -> T:
        """The element `poll` would return (the queue is not empty)."""
        if not self._lower:
            self._next_level()
        return self._lower[-1]

    def lower_count(self) -> int:
        """How many elements are at the lower key (or below it)."""
        return len(self._lower)

    def requeue_head_up(self) -> T:
        """The head polled and offered back one level higher; returns the new head."""
        lower = self._lower
        if not lower:
            self._next_level()
            lower = self._lower
        last = self._size - 1
        if not last or self.below:
            was_below = self.below
            head = self.poll()
            if was_below:
                self.offer_lower(head)
            else:
                self.offer_upper(head)
            return self.head()
        # `poll` then `offer_upper` written out (this runs once per step): the head goes to the last place.
        by_pre = self._lower_by_pre
        rank = self._pre_rank[last]
        if by_pre[rank]:
            # The last element is lower: it goes to the head and stays there.
            index = by_pre.count(1, rank + 1)
            head = lower.pop()
            lower.append(lower.pop(index))
            by_pre[rank] = 0
            self._lower_by_post[self._post_rank[last]] = 0
            self._upper[last] = head
            return lower[-1]
        # The usual step: the last element sinks into the first lower place in postorder (`_free`).
        by_post = self._lower_by_post
        rank = by_post.find(1)
        by_post[rank] = 0
        freed = self._by_post_rank[rank]
        by_pre[self._pre_rank[freed]] = 0
        upper = self._upper
        upper[freed] = upper[last]
        upper[last] = lower.pop()
        if not lower:
            self._next_level()
            lower = self._lower
        return lower[-1]

    def around_head(self, most: int) -> list[T]:
        """The elements the next steps give to while the head is skipped each time, in order, up to
        ``most``: `requeue_second_up` (the head is polled and offered back to the last place) then
        `requeue_head_up` (which brings it from there to the head again), in turn. Read off the lower
        elements' order behind the head, as long as the skipped head stays below a lower parent when
        offered back; empty when that shape does not hold (the caller steps one by one)."""
        lower = self._lower
        last = self._size - 1
        if self.below or last < 3 or len(lower) < 4:
            return []
        by_pre, pre_rank = self._lower_by_pre, self._pre_rank
        parent = (last - 1) >> 1
        if by_pre[pre_rank[last]] or by_pre[pre_rank[last - 1]] or not by_pre[pre_rank[parent]]:
            return []
        # Each `requeue_second_up` frees the first two lower places in postorder before the head comes
        # back: the parent of the last place must not be one of them.
        frees_before_parent = self._lower_by_post.count(1, 0, self._post_rank[parent])
        count = min(most, len(lower) - 3, 2 * (frees_before_parent // 2))
        return lower[-2 : -count - 2 : -1] if count > 0 else []

    def requeue_around_head(self, count: int) -> None:
        """The steps `around_head` reads, giving to its first ``count`` elements (``count`` at most its
        length): in each `requeue_second_up` the elements in the last two places sink into the next two
        first lower places in postorder, and the head goes back to the last place, then to the head with
        `requeue_head_up`. After an odd count it stays in the last place."""
        lower, upper = self._lower, self._upper
        by_pre, by_post = self._lower_by_pre, self._lower_by_post
        pre_rank, by_post_rank = self._pre_rank, self._by_post_rank
        last = self._size - 1
        given = lower[-2 : -count - 2 : -1]
        head = lower[-1]
        del lower[-count - 1 :]
        # What sinks, in turn: the elements first in the last two places, then each step's two.
        sinking = [upper[last], upper[last - 1]]
        for done in range(2, count + (count & 1), 2):
            sinking.append(given[done - 1])  # the last place's (given by `requeue_head_up`)
            sinking.append(given[done - 2])  # the place before it's (given by `requeue_second_up`)
        rank = -1
        for element in sinking:  # `_free` for each, written out (two per replica): the search goes on
            rank = by_post.find(1, rank + 1)  # from the last place freed, whose marks before were cleared
            by_post[rank] = 0
            freed = by_post_rank[rank]
            by_pre[pre_rank[freed]] = 0
            upper[freed] = element
        if count & 1:
            upper[last - 1] = given[count - 1]
            self._add_lower(last, head)
        else:
            upper[last - 1] = given[count - 2]
            upper[last] = given[count - 1]
            lower.append(head)

    def second(self) -> T | None:
        """The element that would be the head after one `poll`, if the head is at the lower key and
        another one is too (None otherwise: the caller polls step by step)."""
        lower = self._lower
        if len(lower) < 2 or self.below or self._size < 3:
            return None
        rank = self._pre_rank[self._size - 1]
        if self._lower_by_pre[rank]:  # the last element goes to the head
            return lower[self._lower_by_pre.count(1, rank + 1)]
        return lower[-2]

    def requeue_second_up(self) -> T:
        """With `second` not None: the head polled, the next head polled and offered back one level
        higher, then the first offered back at its own key; returns the new head."""
        head = self._poll_lower()
        following = self._poll_lower()
        self._upper[self._size] = following  # `offer_upper`, written out
        self._size += 1
        self.offer_lower(head)
        return self._lower[-1]

    def _free(self, last: int) -> None:
        """The first lower place in postorder takes the (upper) element in place `last`."""
        by_post = self._lower_by_post
        rank = by_post.find(1)
        by_post[rank] = 0
        freed = self._by_post_rank[rank]
        self._lower_by_pre[self._pre_rank[freed]] = 0
        upper = self._upper
        upper[freed] = upper[last]

    def poll(self) -> T:
        """Java's `poll` of a queue with a lower element (call `head` first to move to the next level).
        `below` says beforehand whether the head is a level below the others."""
        self.below = False
        if self._size == 1:  # the head is the only element
            self._size = 0
            self._lower_by_pre[0] = 0
            self._lower_by_post[self._post_rank[0]] = 0
            return self._lower.pop()
        return self._poll_lower()

    def _poll_lower(self) -> T:
        """`poll` of a lower head with another element behind it."""
        lower = self._lower
        head = lower.pop()
        self._size = last = self._size - 1
        by_pre = self._lower_by_pre
        rank = self._pre_rank[last]
        if by_pre[rank]:
            # The last element is lower: at the head it is not larger than either child, so it stays there
            # and the last place leaves the lower ones.
            lower.append(lower.pop(by_pre.count(1, rank + 1)))
            by_pre[rank] = 0
            self._lower_by_post[self._post_rank[last]] = 0
        else:
            self._free(last)
        return head

    def offer_upper(self, item: T) -> None:
        """Java's `offer` at the upper key: no key is larger, so the element stays in the last place."""
        self._upper[self._size] = item
        self._size += 1

    def offer_lower(self, item: T) -> None:
        """Java's `offer` at the lower key: it climbs past upper parents to below the first lower one."""
        place = self._size
        self._size += 1
        by_pre, pre_rank, upper = self._lower_by_pre, self._pre_rank, self._upper
        while place:
            parent = (place - 1) >> 1
            if by_pre[pre_rank[parent]]:
                break
            upper[place] = upper[parent]
            place = parent
        self._add_lower(place, item)

    def _add_lower(self, place: int, item: T) -> None:
        rank = self._pre_rank[place]
        self._lower.insert(self._lower_by_pre.count(1, rank + 1), item)
        self._lower_by_pre[rank] = 1
        self._lower_by_post[self._post_rank[place]] = 1

    def _remove_lower(self, place: int) -> T:
        rank = self._pre_rank[place]
        self._lower_by_pre[rank] = 0
        self._lower_by_post[self._post_rank[place]] = 0
        return self._lower.pop(self._lower_by_pre.count(1, rank + 1))

    def offer_below(self, item: T) -> bool:
        """Java's `offer` a level below the lower key: every parent is larger, so the element climbs to the
        head and the places on its way move down one. False (nothing done) if one is below already."""
        if self.below:
            return False
        place = self._size
        self._size += 1
        way = [place]  # from the new last place up to the head
        while place:
            place = (place - 1) >> 1
            way.append(place)
        way.reverse()
        by_pre, pre_rank, upper = self._lower_by_pre, self._pre_rank, self._upper
        lower_on_way = 0  # the lower places on the way are its first ones (closed upwards)
        while lower_on_way < len(way) - 1 and by_pre[pre_rank[way[lower_on_way]]]:
            lower_on_way += 1
        for step in range(len(way) - 1, lower_on_way, -1):
            upper[way[step]] = upper[way[step - 1]]
        moved = [self._remove_lower(place) for place in way[:lower_on_way]]
        self._add_lower(way[0], item)
        for place, lower_item in zip(way[1:], moved, strict=False):
            self._add_lower(place, lower_item)
        self.below = True
        return True

    def array(self) -> list[tuple[int, T]]:
        """Java's array now, as (level of the key, element): the lower elements fill the lower places in
        preorder (the order they keep), the upper ones their places."""
        size, pre_rank, by_pre = self._size, self._pre_rank, self._lower_by_pre
        keyed: list[tuple[int, T]] = [(self.level + 1, item) for item in self._upper[:size]]
        places = sorted((place for place in range(size) if by_pre[pre_rank[place]]), key=pre_rank.__getitem__)
        for place, item in zip(places, reversed(self._lower), strict=True):
            keyed[place] = (self.level, item)
        if self.below:
            keyed[0] = (self.level - 1, keyed[0][1])
        return keyed
