"""The real load pipeline: experts offloaded to a file; each expert's exponent chunks read in one request and
decompressed by one worker-pool task, its sign-mantissa planes (and the baselines' raw bytes) read in one request
by an I/O thread, while the model computes the experts that are already there.

``OffloadStore`` writes every expert twice into one file: in ZipMoE's format (K compressed E-chunks per tensor,
then the raw SM planes) and as raw bf16 bytes (for the baselines). An expert's E-chunks of all its tensors lie
back to back in one page-aligned span (4096 bytes), its SM planes in a second and its raw bytes in a third, so each
is one read. ``Storage`` reads with ``os.preadv`` into a fresh numpy buffer (no copy); the file sits in the OS page
cache on this machine, so the storage device is emulated (ours, [INF]): transfers share one channel of
``bandwidth`` bytes/s, one after another, and each read completes ``latency`` seconds after its transfer
(requests are queued, as on an NVMe device with ``io_depth`` outstanding reads).

``ZipMoEEngine`` serves a layer's experts from the hierarchical cache: full-slot experts at once, SM-slot
experts after reading and decompressing their E-chunks (type II), others after reading E-chunks and SM
(type I), issued in the cache-affinity order, one pool task per expert (decompress, wait for the SM read,
recombine). ``RawEngine`` serves the baselines (no cache, LRU, LFU), one raw read per missed expert. Both yield
experts as they become ready and record each layer's load latency.
"""

from __future__ import annotations

import os
import queue
import threading
import time
import zlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from icml26_shared import check_int, check_positive, fail

from .codec import ChunkCorruptError, compress_bf16, decompress_bytes, merge_planes
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


@dataclass(frozen=True)
class ExpertSpans:
    """The three page-aligned spans of one expert: its E-chunks, its SM planes, its raw bf16 bytes."""

    e: Extent
    sm: Extent
    raw: Extent


def _span(extents: list[Extent]) -> Extent:
    """The byte range from the first extent's start to the last one's end (extents written back to back)."""
    return Extent(extents[0].offset, extents[-1].offset + extents[-1].length - extents[0].offset, 0, 0)


class OffloadStore:
    """Expert tensors of a model, offloaded into ``path`` (ZipMoE format and raw bf16), with an index."""

    def __init__(self, experts: dict[tuple[int, int], tuple[torch.Tensor, ...]], path: Path, num_chunks: int, codec):
        self.path, self.codec = Path(path), codec
        self.index: dict[tuple[int, int], tuple[TensorEntry, ...]] = {}
        self.spans: dict[tuple[int, int], ExpertSpans] = {}
        with open(self.path, "wb") as fh:

            def put(data: bytes, size: int, crc: int) -> Extent:
                offset = fh.tell()
                fh.write(data)
                return Extent(offset, len(data), size, crc)

            def align() -> None:  # each span starts on a page, like the official offload file's chunks
                fh.write(b"\0" * (-fh.tell() % PAGE))

            for key, tensors in experts.items():
                packed = [compress_bf16(tensor, num_chunks, codec) for tensor in tensors]
                align()
                e_chunks = [tuple(put(c.blob, c.size, c.crc32) for c in p.e_chunks) for p in packed]
                align()
                sms = [put(p.sm_chunk.blob, p.sm_chunk.size, p.sm_chunk.crc32) for p in packed]
                align()
                raws = [
                    put(t.contiguous().view(torch.int16).numpy().tobytes(), 2 * p.numel, 0)
                    for t, p in zip(tensors, packed, strict=True)
                ]
                self.index[key] = tuple(
                    TensorEntry(p.shape, e, sm, raw) for p, e, sm, raw in zip(packed, e_chunks, sms, raws, strict=True)
                )
                self.spans[key] = ExpertSpans(_span([c for e in e_chunks for c in e]), _span(sms), _span(raws))

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

    def read(self, extent: Extent) -> np.ndarray:
        """The extent's bytes as a writable (n,) uint8 array, read straight into it, after the emulated delay."""
        with self.lock:
            transfer_end = max(time.perf_counter(), self.free) + extent.length / self.bandwidth
            self.free = transfer_end
        data = np.empty(extent.length, dtype=np.uint8)
        got = os.preadv(self.fd, [data], extent.offset)
        if got != extent.length:
            raise ChunkCorruptError(f"extent: read {got} bytes at {extent.offset}, expected {extent.length}")
        remaining = transfer_end + self.latency - time.perf_counter()
        if remaining > 0:
            time.sleep(remaining)
        return data

    def close(self) -> None:
        os.close(self.fd)


def _check(extent: Extent, data) -> None:
    """Check decoded ``data`` (bytes-like) against the index's length and CRC-32: a corrupted read raises."""
    if len(data) != extent.size:
        raise ChunkCorruptError(f"chunk: decoded {len(data)} bytes, expected {extent.size}")
    if zlib.crc32(data) != extent.crc32:
        raise ChunkCorruptError(f"chunk: CRC-32 {zlib.crc32(data):#010x} != recorded {extent.crc32:#010x}")


def _slices(span_data: np.ndarray, span: Extent, extents) -> list[np.ndarray]:
    """Views (no copy) of ``extents`` inside the bytes ``span_data`` read for ``span``."""
    return [span_data[e.offset - span.offset : e.offset - span.offset + e.length] for e in extents]


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
    """bf16 tensor over a writable uint16 array (shares its memory)."""
    return torch.from_numpy(words.view(np.int16)).view(torch.bfloat16).reshape(shape)


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
        for task in order:  # one pool task per expert; a type-I task's SM planes come from one I/O-thread read
            key = (layer, task.expert)
            sm = self.sm[key] if task.kind == "sm_hit" else self.io.submit(self._read_sm, key)
            pending[task.expert] = [self.pool.submit(self._load_expert, key, sm)]
        self.cache.access(layer, need)
        self._evict(layer)
        return self._stream(start, ready, pending, lambda e, parts: self._keep((layer, e), *parts[0]))

    def _evict(self, layer: int) -> None:
        for slots, kind in ((self.full, "full"), (self.sm, "sm")):
            for key in [k for k in slots if k[0] == layer and self.cache.state(*k) != kind]:
                del slots[key]

    def _read_sm(self, key: tuple[int, int]) -> list[np.ndarray]:
        """The expert's SM planes, one (n,) uint8 view per tensor of one read, each CRC-checked."""
        span = self.store.spans[key].sm
        extents = [t.sm for t in self.store.index[key]]
        planes = _slices(self.storage.read(span), span, extents)
        for extent, plane in zip(extents, planes, strict=True):
            _check(extent, plane)
        return planes

    def _load_expert(self, key: tuple[int, int], sm) -> tuple[tuple[torch.Tensor, ...], list[np.ndarray]]:
        """Read the expert's E-chunks in one request, decompress and check each, recombine with SM (a list of
        planes, or the future of their read): ``(bf16 tensors, SM planes)``."""
        span = self.store.spans[key].e
        data = self.storage.read(span)
        entries = self.store.index[key]
        exponents = []
        for entry in entries:
            plane = np.empty(sum(c.size for c in entry.e_chunks), dtype=np.uint8)
            cursor = 0
            for extent, blob in zip(entry.e_chunks, _slices(data, span, entry.e_chunks), strict=True):
                decoded = decompress_bytes(blob, self.store.codec, extent.size)
                _check(extent, decoded)
                plane[cursor : cursor + extent.size] = np.frombuffer(decoded, np.uint8)
                cursor += extent.size
            exponents.append(plane)
        planes = sm if isinstance(sm, list) else sm.result()
        tensors = tuple(
            _to_bf16(merge_planes(e, p), t.shape) for e, p, t in zip(exponents, planes, entries, strict=True)
        )  # u16 = s<<15 | E<<7 | m
        return tensors, planes

    def _keep(self, key: tuple[int, int], tensors: tuple[torch.Tensor, ...], planes) -> tuple[torch.Tensor, ...]:
        state = self.cache.state(*key)
        if state == "full":
            self.full[key] = tensors
        elif state == "sm":
            self.sm[key] = planes
        return tensors


class RawEngine(_Engine):
    """Baseline engine: a full-expert cache (none, LRU, LFU); a miss reads the expert's raw bf16 in one request."""

    def __init__(self, store, storage, cache):
        super().__init__(store, storage, 1)
        self.cache = cache
        self.resident: dict[tuple[int, int], tuple[torch.Tensor, ...]] = {}

    def get_experts(self, layer: int, need: dict[int, int]) -> Iterator:
        start = time.perf_counter()
        ready = [(e, self.resident[(layer, e)]) for e in need if self.cache.state(layer, e) == "full"]
        pending = {
            e: [self.io.submit(self.storage.read, self.store.spans[(layer, e)].raw)]
            for e in sorted(need)
            if self.cache.state(layer, e) != "full"
        }
        self.cache.access(layer, need)
        return self._stream(start, ready, pending, lambda e, parts: self._build(layer, e, parts[0]))

    def _build(self, layer: int, expert: int, data: np.ndarray) -> tuple[torch.Tensor, ...]:
        entries = self.store.index[(layer, expert)]
        span = self.store.spans[(layer, expert)].raw
        weights = tuple(
            _to_bf16(raw.view(np.uint16), t.shape)
            for t, raw in zip(entries, _slices(data, span, [t.raw for t in entries]), strict=True)
        )
        if self.cache.state(layer, expert) == "full":
            self.resident[(layer, expert)] = weights
        for key in [k for k in self.resident if k[0] == layer and self.cache.state(*k) != "full"]:
            del self.resident[key]
        return weights
