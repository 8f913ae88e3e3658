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

from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

_DEFAULT_CAPACITY = 16
_TREEIFY_THRESHOLD = 8
_MIN_TREEIFY_CAPACITY = 64

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


def _to_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= (1 << 31) else value


def java_string_hash(text: str) -> int:
    """`String.hashCode()`: 31-polynomial over the UTF-16 code units, in 32-bit signed arithmetic."""
    h = 0
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
    Java hashes them; removals are not needed by any caller and not supported.
    """

    __slots__ = ("_buckets", "_capacity", "_threshold", "_size", "_hashes", "treeified")

    def __init__(self, initial_capacity: int | None = None) -> None:
        self._buckets: list[list[str]] = []
        self._capacity = 0  # no table yet: Java allocates it on the first insertion
        # Before the table exists Java keeps the requested table size in the threshold field.
        self._threshold = 0 if initial_capacity is None else table_size_for(initial_capacity)
        self._size = 0
        self._hashes: dict[str, int] = {}
        self.treeified = False

    def __len__(self) -> int:
        return self._size

    def __contains__(self, key: object) -> bool:
        return key in self._hashes

    def _resize(self) -> None:
        if self._capacity == 0:
            capacity = self._threshold if self._threshold > 0 else _DEFAULT_CAPACITY
        else:
            capacity = self._capacity * 2
        old = self._buckets
        self._buckets = [[] for _ in range(capacity)]
        self._capacity = capacity
        self._threshold = capacity * 3 // 4  # (int) (capacity * 0.75f) for every power of two
        # Java splits each old bucket into a low and a high one keeping the keys' relative order; walking
        # the old buckets in index order and appending reproduces exactly that.
        for bucket in old:
            for key in bucket:
                self._buckets[self._hashes[key] & (capacity - 1)].append(key)

    def _bucket_of(self, key: str) -> list[str]:
        return self._buckets[self._hashes[key] & (self._capacity - 1)]

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
        self._hashes[key] = _spread(java_string_hash(key))
        if self._capacity == 0:
            self._resize()
        bucket = self._bucket_of(key)
        bucket.append(key)
        # putVal treeifies when the bucket already held TREEIFY_THRESHOLD keys before this one.
        self._grow_crowded_bucket(len(bucket), _TREEIFY_THRESHOLD + 1)
        self._size += 1
        if self._size > self._threshold:
            self._resize()

    def compute_if_absent(self, key: str) -> None:
        """`HashMap.computeIfAbsent(key, ...)` with a function that never returns null."""
        if self._capacity == 0 or self._size > self._threshold:
            self._resize()  # before the lookup, even when the key is present
        if key in self._hashes:
            return
        self._hashes[key] = _spread(java_string_hash(key))
        bucket = self._bucket_of(key)
        bucket.insert(0, key)
        self._grow_crowded_bucket(len(bucket), _TREEIFY_THRESHOLD)
        self._size += 1

    def keys(self) -> list[str]:
        """The keys in the order `keySet()` iterates them."""
        return [key for bucket in self._buckets for key in bucket]


def hash_map_put_order(keys: list[str], initial_capacity: int | None = None) -> list[str]:
    """Iteration order of a HashMap filled by `put` in the order of `keys`."""
    order = JavaHashOrder(initial_capacity)
    for key in keys:
        order.put(key)
    return order.keys()


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

    def offer(self, item: T) -> None:
        heap = self._heap
        entry = (self._key(item), item)
        k = len(heap)
        heap.append(entry)
        while k > 0:
            parent = (k - 1) >> 1
            above = heap[parent]
            if not entry[0] < above[0]:  # compare(x, parent) >= 0 stops the climb
                break
            heap[k] = above
            k = parent
        heap[k] = entry

    def poll(self) -> T | None:
        heap = self._heap
        if not heap:
            return None
        result = heap[0][1]
        last = heap.pop()
        n = len(heap)
        if n:
            k, half = 0, n >> 1
            while k < half:
                child = 2 * k + 1
                smaller = heap[child]
                right = child + 1
                if right < n and smaller[0] > heap[right][0]:  # compare(left, right) > 0 takes the right
                    child = right
                    smaller = heap[right]
                if not last[0] > smaller[0]:  # compare(x, child) <= 0 stops the descent
                    break
                heap[k] = smaller
                k = child
            heap[k] = last
        return result
