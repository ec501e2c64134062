"""The real load pipeline: experts offloaded to a file; exponent chunks read and decompressed by a worker
pool, sign-mantissa planes (and the baselines' raw bytes) read by I/O threads, while the model computes
the experts that are already there.

``OffloadStore`` writes every expert tensor twice into one file, page-aligned (4096 bytes): in ZipMoE's
format (K compressed E-chunks + the raw SM plane) and as raw bf16 bytes (for the baselines). ``Storage``
reads with ``os.pread``; the file sits in the OS page cache on this machine, so the storage device is
emulated (ours, [INF]): transfers share one channel of ``bandwidth`` bytes/s, one after another, and each
read completes ``latency`` seconds after its transfer (requests are queued, as on an NVMe device with
``io_depth`` outstanding reads).

``ZipMoEEngine`` serves a layer's experts from the hierarchical cache: full-slot experts at once, SM-slot
experts after reading and decompressing their E-chunks (type II), others after reading E-chunks and SM
(type I), issued in the cache-affinity order. ``RawEngine`` serves the baselines (no cache, LRU, LFU),
reading raw bf16 on a miss. Both yield experts as they become ready and record each layer's load latency.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from icml26_shared import check_int, check_positive, fail

from .codec import Chunk, ChunkCorruptError, compress_bf16, decompress_bytes, merge_planes
from .scheduler import Device, LoadTask, affinity_order, fifo_order

PAGE = 4096


@dataclass(frozen=True)
class Extent:
    """A stored byte range: file ``offset``, stored ``length``; ``size`` and ``crc32`` of the decoded bytes."""

    offset: int
    length: int
    size: int
    crc32: int


@dataclass(frozen=True)
class TensorEntry:
    shape: tuple[int, ...]
    e_chunks: tuple[Extent, ...]
    sm: Extent
    raw: Extent


class OffloadStore:
    """Expert tensors of a model, offloaded into ``path`` (ZipMoE format and raw bf16), with an index."""

    def __init__(self, experts: dict[tuple[int, int], tuple[torch.Tensor, ...]], path: Path, num_chunks: int, codec):
        self.path, self.codec = Path(path), codec
        self.index: dict[tuple[int, int], tuple[TensorEntry, ...]] = {}
        with open(self.path, "wb") as fh:

            def put(data: bytes, size: int, crc: int) -> Extent:
                offset = fh.tell()
                fh.write(data + b"\0" * (-len(data) % PAGE))  # page-aligned, like the official offload file
                return Extent(offset, len(data), size, crc)

            for key, tensors in experts.items():
                entries = []
                for tensor in tensors:
                    packed = compress_bf16(tensor, num_chunks, codec)
                    raw = tensor.contiguous().view(torch.int16).numpy().tobytes()
                    entries.append(
                        TensorEntry(
                            shape=packed.shape,
                            e_chunks=tuple(put(c.blob, c.size, c.crc32) for c in packed.e_chunks),
                            sm=put(packed.sm_chunk.blob, packed.sm_chunk.size, packed.sm_chunk.crc32),
                            raw=put(raw, len(raw), 0),
                        )
                    )
                self.index[key] = tuple(entries)

    def task(self, layer: int, expert: int, kind: str, tokens: int) -> LoadTask:
        """The scheduler's view of loading this expert (byte counts per read)."""
        entries = self.index[(layer, expert)]
        return LoadTask(
            expert=expert,
            kind=kind,
            tokens=tokens,
            e_chunks=tuple(c.length for t in entries for c in t.e_chunks),
            e_raw=tuple(c.size for t in entries for c in t.e_chunks),
            sm_bytes=sum(t.sm.length for t in entries),
            raw_bytes=sum(t.raw.length for t in entries),
        )


class Storage:
    """Reads from the offload file at an emulated ``bandwidth`` (bytes/s, one shared channel) and per-read
    ``latency`` (s, overlapping between queued reads)."""

    def __init__(self, path: Path, bandwidth: float, latency: float = 0.0):
        self.bandwidth = check_positive("bandwidth", bandwidth)
        self.latency = latency
        self.fd = os.open(path, os.O_RDONLY)
        self.lock = threading.Lock()
        self.free = 0.0  # when the channel finishes its queued transfers (perf_counter clock)

    def read(self, extent: Extent) -> bytes:
        with self.lock:
            transfer_end = max(time.perf_counter(), self.free) + extent.length / self.bandwidth
            self.free = transfer_end
        data = os.pread(self.fd, extent.length, extent.offset)
        if len(data) != extent.length:
            raise ChunkCorruptError(f"extent: read {len(data)} bytes at {extent.offset}, expected {extent.length}")
        remaining = transfer_end + self.latency - time.perf_counter()
        if remaining > 0:
            time.sleep(remaining)
        return data

    def close(self) -> None:
        os.close(self.fd)


def _check(extent: Extent, data: bytes) -> bytes:
    """``data`` after checking its length and CRC-32 against the index (a corrupted read raises)."""
    return Chunk(blob=data, size=extent.size, crc32=extent.crc32).decode("zstd", raw=True)


@dataclass
class LoadLog:
    """Per-layer load latencies (s) of a serving run."""

    latencies: list[float] = field(default_factory=list)


IO_DEPTH = 4  # reads in flight (I/O threads), for every engine


class _Engine:
    def __init__(self, store: OffloadStore, storage: Storage, workers: int):
        self.store, self.storage = store, storage
        self.io = ThreadPoolExecutor(IO_DEPTH, thread_name_prefix="zipmoe-io")
        self.pool = ThreadPoolExecutor(check_int("workers", workers, 1), thread_name_prefix="zipmoe-dec")
        self.log = LoadLog()

    def close(self) -> None:
        self.io.shutdown()
        self.pool.shutdown()

    def _stream(self, start: float, ready: list, pending: dict[int, list[Future]], build) -> Iterator:
        """Yield resident experts, then each pending expert as soon as all its futures are done.

        Each future's completion callback counts down its expert; a finished expert goes into a queue
        that this (the compute) thread drains, so waiting costs O(1) per event.
        """
        yield from ready
        finished: queue.SimpleQueue[int] = queue.SimpleQueue()
        lock = threading.Lock()
        left = {e: len(futures) for e, futures in pending.items()}

        def count_down(expert: int) -> None:
            with lock:
                left[expert] -= 1
                done = left[expert] == 0
            if done:
                finished.put(expert)

        for e, futures in pending.items():
            for future in futures:
                future.add_done_callback(lambda _, e=e: count_down(e))
        for n in range(len(pending)):
            e = finished.get()
            weights = build(e, [f.result() for f in pending[e]])
            if n == len(pending) - 1:
                self.log.latencies.append(time.perf_counter() - start)
            yield e, weights
        if not pending:
            self.log.latencies.append(time.perf_counter() - start)


def _to_bf16(words: np.ndarray, shape: tuple[int, ...]) -> torch.Tensor:
    return torch.from_numpy(words.view(np.int16).copy()).view(torch.bfloat16).reshape(shape)


class ZipMoEEngine(_Engine):
    """ZipMoE's engine: hierarchical cache, type-I/II tasks in cache-affinity order, pooled decompression.

    A loaded expert is kept where the cache placed it: its bf16 tensors in a full slot, or only its SM
    planes in an SM slot; evicted entries are dropped.
    """

    def __init__(self, store, storage, workers, cache, device: Device, schedule: str = "affinity"):
        super().__init__(store, storage, workers)
        if schedule not in ("affinity", "fifo"):
            raise fail("schedule", schedule, "'affinity' or 'fifo'")
        self.cache, self.device, self.schedule = cache, device, schedule
        self.full: dict[tuple[int, int], tuple[torch.Tensor, ...]] = {}
        self.sm: dict[tuple[int, int], list[np.ndarray]] = {}

    def get_experts(self, layer: int, need: dict[int, int]) -> Iterator:
        start = time.perf_counter()
        states = {e: self.cache.state(layer, e) for e in need}
        ready = [(e, self.full[(layer, e)]) for e in need if states[e] == "full"]
        tasks = [
            self.store.task(layer, e, "sm_hit" if s == "sm" else "miss", need[e])
            for e, s in states.items()
            if s != "full"
        ]
        order = affinity_order(tasks, self.device) if self.schedule == "affinity" else fifo_order(tasks)
        pending: dict[int, list[Future]] = {}
        for task in order:
            entries = self.store.index[(layer, task.expert)]
            futures = []
            for entry in entries:  # a worker reads an E-chunk and decompresses it (official: pread in the pool)
                futures += [self.pool.submit(self._load_chunk, extent) for extent in entry.e_chunks]
            if task.kind == "miss":
                futures += [self.io.submit(self.storage.read, entry.sm) for entry in entries]
            pending[task.expert] = futures
        sm_planes = {e: self.sm[(layer, e)] for e, s in states.items() if s == "sm"}
        self.cache.access(layer, need)
        self._evict(layer)
        return self._stream(start, ready, pending, lambda e, parts: self._build(layer, e, parts, sm_planes.get(e)))

    def _evict(self, layer: int) -> None:
        for slots, kind in ((self.full, "full"), (self.sm, "sm")):
            for key in [k for k in slots if k[0] == layer and self.cache.state(*k) != kind]:
                del slots[key]

    def _load_chunk(self, extent: Extent) -> bytes:
        return _check(extent, decompress_bytes(self.storage.read(extent), self.store.codec, extent.size))

    def _build(self, layer: int, expert: int, parts: list[bytes], cached_sm) -> tuple[torch.Tensor, ...]:
        entries = self.store.index[(layer, expert)]
        n_chunks = sum(len(t.e_chunks) for t in entries)
        chunks, sm_reads = parts[:n_chunks], parts[n_chunks:]
        planes = cached_sm or [
            np.frombuffer(_check(t.sm, data), np.uint8) for t, data in zip(entries, sm_reads, strict=True)
        ]
        out, cursor = [], 0
        for entry, sm in zip(entries, planes, strict=True):
            exponent = np.frombuffer(b"".join(chunks[cursor : cursor + len(entry.e_chunks)]), np.uint8)
            cursor += len(entry.e_chunks)
            out.append(_to_bf16(merge_planes(exponent, sm), entry.shape))  # u16 = s<<15 | E<<7 | m
        state = self.cache.state(layer, expert)
        if state == "full":
            self.full[(layer, expert)] = tuple(out)
        elif state == "sm":
            self.sm[(layer, expert)] = planes
        return tuple(out)


class RawEngine(_Engine):
    """Baseline engine: a full-expert cache (none, LRU, LFU); misses read raw bf16 and need no decompression."""

    def __init__(self, store, storage, cache):
        super().__init__(store, storage, 1)
        self.cache = cache
        self.resident: dict[tuple[int, int], tuple[torch.Tensor, ...]] = {}

    def get_experts(self, layer: int, need: dict[int, int]) -> Iterator:
        start = time.perf_counter()
        ready = [(e, self.resident[(layer, e)]) for e in need if self.cache.state(layer, e) == "full"]
        pending = {
            e: [self.io.submit(self.storage.read, t.raw) for t in self.store.index[(layer, e)]]
            for e in sorted(need)
            if self.cache.state(layer, e) != "full"
        }
        self.cache.access(layer, need)
        return self._stream(start, ready, pending, lambda e, parts: self._build(layer, e, parts))

    def _build(self, layer: int, expert: int, parts: list[bytes]) -> tuple[torch.Tensor, ...]:
        entries = self.store.index[(layer, expert)]
        weights = tuple(_to_bf16(np.frombuffer(p, np.uint16), t.shape) for t, p in zip(entries, parts, strict=True))
        if self.cache.state(layer, expert) == "full":
            self.resident[(layer, expert)] = weights
        for key in [k for k in self.resident if k[0] == layer and self.cache.state(*k) != "full"]:
            del self.resident[key]
        return weights
