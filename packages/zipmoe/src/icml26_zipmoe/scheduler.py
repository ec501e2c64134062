"""Cache-affinity scheduling of one layer's expert loads, and the event model that times a schedule.

A load task fetches one expert that is not in a full slot. *Type-I* tasks (SM miss) read the expert's
compressed exponent chunks and its SM plane, then decompress K chunks per tensor; *type-II* tasks (SM hit)
read only the compressed exponents and decompress them. Baseline *raw* tasks read the bf16 bytes.

Resources: one storage channel transferring reads one after another in the order they are issued (each
read also waits a per-request latency, which overlaps with other transfers: the device queues requests),
and a pool of ``workers`` decompression threads; a chunk is decompressed as soon as it is read and a
worker is free, and a task is ready when its last read and its last decompression are done.

``affinity_order`` keeps a running estimate of the I/O time and of the pool's compute time and adds a
type-I task when compute leads, a type-II task otherwise, so the I/O channel and the pool stay busy
together (the paper's cache-affinity scheduler, tasks prioritised by the number of tokens that need them).
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass

from icml26_shared import check_choice, check_int, check_positive, fail

KINDS = ("miss", "sm_hit", "raw")  # type-I, type-II, baseline raw read


@dataclass(frozen=True)
class LoadTask:
    """One expert to load: ``e_chunks`` compressed chunk sizes (bytes, all tensors), ``e_raw`` their decoded
    sizes, ``sm_bytes`` the SM plane and ``raw_bytes`` the bf16 size; ``tokens`` that routed to it."""

    expert: int
    kind: str
    tokens: int
    e_chunks: tuple[int, ...] = ()
    e_raw: tuple[int, ...] = ()
    sm_bytes: int = 0
    raw_bytes: int = 0

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, KINDS)
        check_int("tokens", self.tokens, 1)
        if len(self.e_chunks) != len(self.e_raw):
            raise fail("e_raw", self.e_raw, f"one decoded size per chunk ({len(self.e_chunks)})")

    @property
    def reads(self) -> list[tuple[int, int]]:
        """(bytes, decoded exponent bytes to decompress, or 0) per read, in issue order: E-chunks, then SM."""
        if self.kind == "raw":
            return [(self.raw_bytes, 0)]
        reads = list(zip(self.e_chunks, self.e_raw, strict=True))
        return reads + ([(self.sm_bytes, 0)] if self.kind == "miss" else [])


@dataclass(frozen=True)
class Device:
    """Timing of the load path: ``bandwidth`` (bytes/s) and ``latency`` (s per read) of the storage,
    ``decompress_rate`` (decoded exponent bytes/s per worker) plus ``op_overhead`` (s per chunk), ``workers``."""

    bandwidth: float
    decompress_rate: float
    workers: int
    latency: float = 0.0
    op_overhead: float = 0.0

    def __post_init__(self) -> None:
        check_positive("bandwidth", self.bandwidth)
        check_positive("decompress_rate", self.decompress_rate)
        check_int("workers", self.workers, 1)
        if self.latency < 0 or self.op_overhead < 0:
            raise fail("latency/op_overhead", (self.latency, self.op_overhead), "non-negative seconds")

    def read_time(self, nbytes: int) -> float:
        """Channel occupancy of one read (its latency overlaps with other transfers)."""
        return nbytes / self.bandwidth

    def decompress_time(self, decoded: int) -> float:
        return self.op_overhead + decoded / self.decompress_rate


def simulate_loads(tasks: list[LoadTask], device: Device) -> list[float]:
    """Ready time of each task (same order) when reads are issued in the order of ``tasks``."""
    clock = 0.0
    pool = [0.0] * device.workers  # when each worker is free (a heap)
    ready = []
    for task in tasks:
        done = 0.0
        for nbytes, decoded in task.reads:
            clock += device.read_time(nbytes)
            end = clock + device.latency
            if decoded:
                start = max(end, heapq.heappop(pool))
                end = start + device.decompress_time(decoded)
                heapq.heappush(pool, end)
            done = max(done, end)
        ready.append(done)
    return ready


def makespan(tasks: list[LoadTask], device: Device) -> float:
    """When the last task of ``tasks`` (issued in this order) is ready; 0 for no task."""
    return max(simulate_loads(tasks, device), default=0.0)


def fifo_order(tasks: list[LoadTask]) -> list[LoadTask]:
    """Baseline order: as the router listed the experts (by expert id)."""
    return sorted(tasks, key=lambda t: t.expert)


def affinity_order(tasks: list[LoadTask], device: Device) -> list[LoadTask]:
    """The cache-affinity schedule: alternate type-I / type-II tasks to balance I/O and decompression.

    Within a type, tasks needed by more tokens go first. After each task the running I/O time and the
    pool's compute time (ops / workers) are updated; compute ahead of I/O calls for a type-I task (it adds
    an SM read), otherwise a type-II task (it adds decompression only). Raw tasks keep their order, last.
    """

    def by_tokens(kind: str) -> list[LoadTask]:
        return sorted((t for t in tasks if t.kind == kind), key=lambda t: (-t.tokens, t.expert))

    type_one, type_two = by_tokens("miss"), by_tokens("sm_hit")
    io = compute = 0.0
    order = []
    while type_one or type_two:
        task = type_one.pop(0) if type_one and (compute > io or not type_two) else type_two.pop(0)
        order.append(task)
        io += sum(device.read_time(b) for b, _ in task.reads)
        compute += sum(device.decompress_time(d) for _, d in task.reads if d) / device.workers
    return order + [t for t in tasks if t.kind == "raw"]


def optimal_order(tasks: list[LoadTask], device: Device) -> list[LoadTask]:
    """Brute force over all issue orders (small inputs only): the order with the least makespan."""
    if len(tasks) > 8:
        raise fail("tasks", len(tasks), "at most 8 tasks for the brute-force search")
    return list(min(itertools.permutations(tasks), key=lambda o: makespan(list(o), device)))
