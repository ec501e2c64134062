"""What ZipMoE is compared with: full-expert caches (none, LRU, LFU) loading raw bf16 on a miss, and
lossless compression without the bit-field split (zstd or LZ4HC on the raw bf16 bytes)."""

from __future__ import annotations

from collections import OrderedDict

from icml26_shared import check_int, fail

from .codec import CODEC_LEVELS, bf16_words, compress_bytes

BASELINES = ("nocache", "lru", "lfu")  # the expert caches ZipMoE is compared with


class NoCache:
    """On-demand loading: every routed expert is read from storage (raw bf16)."""

    def state(self, layer: int, expert: int) -> str | None:
        return None

    def access(self, layer: int, need: dict[int, int]) -> None:
        """Nothing is kept."""


class LRUCache:
    """``capacity`` decompressed experts per layer; a miss evicts the least recently used one."""

    def __init__(self, num_layers: int, capacity: int):
        check_int("num_layers", num_layers, 1)
        self.capacity = check_int("capacity", capacity, 1)
        self.slots: list[OrderedDict[int, None]] = [OrderedDict() for _ in range(num_layers)]

    def state(self, layer: int, expert: int) -> str | None:
        return "full" if expert in self.slots[layer] else None

    def access(self, layer: int, need: dict[int, int]) -> None:
        """Mark this layer's requested experts (``{expert: tokens}``) most recent; evict beyond capacity."""
        slots = self.slots[layer]
        for expert in need:
            slots[expert] = None
            slots.move_to_end(expert)
        while len(slots) > self.capacity:
            slots.popitem(last=False)


class LFUCache:
    """``capacity`` decompressed experts per layer; a miss evicts the least frequently used one
    (use counts over the whole run; ties go to the least recently used)."""

    def __init__(self, num_layers: int, capacity: int):
        check_int("num_layers", num_layers, 1)
        self.capacity = check_int("capacity", capacity, 1)
        self.counts: list[dict[int, int]] = [{} for _ in range(num_layers)]
        self.slots: list[OrderedDict[int, None]] = [OrderedDict() for _ in range(num_layers)]

    def state(self, layer: int, expert: int) -> str | None:
        return "full" if expert in self.slots[layer] else None

    def access(self, layer: int, need: dict[int, int]) -> None:
        """Count one use of each requested expert (``{expert: tokens}``); evict the least used beyond capacity."""
        counts, slots = self.counts[layer], self.slots[layer]
        for expert in need:
            counts[expert] = counts.get(expert, 0) + 1
            slots[expert] = None
            slots.move_to_end(expert)
        while len(slots) > self.capacity:
            victim = min((e for e in slots if e not in need), key=lambda e: counts[e], default=None)
            slots.pop(next(iter(slots)) if victim is None else victim)


def full_slots(budget: float, expert_elements: int) -> int:
    """How many raw bf16 experts fit ``budget`` bytes (a baseline cache's capacity per layer)."""
    capacity = int(budget // (2 * check_int("expert_elements", expert_elements, 1)))
    if capacity < 1:
        raise fail("budget", budget, f"at least one bf16 expert ({2 * expert_elements} bytes)")
    return capacity


def raw_zstd_ratio(tensors, level: int = CODEC_LEVELS["zstd"]) -> float:
    """zstd on the raw bf16 bytes of ``tensors`` (no bit-field split): compressed over raw size."""
    import zstandard

    compressor = zstandard.ZstdCompressor(level=check_int("level", level, 1, 22))
    raw = compressed = 0
    for tensor in tensors:
        data = bf16_words(tensor).tobytes()
        raw += len(data)
        compressed += len(compressor.compress(data))
    if raw == 0:
        raise fail("tensors", tensors, "at least one non-empty bf16 tensor")
    return compressed / raw


def raw_lz4_ratio(tensors) -> float:
    """LZ4HC (level 9, the strongest LZ4 the codec uses) on the raw bf16 bytes: compressed over raw size."""
    raw = compressed = 0
    for tensor in tensors:
        data = bf16_words(tensor).tobytes()
        raw += len(data)
        compressed += len(compress_bytes(data, "lz4hc"))
    if raw == 0:
        raise fail("tensors", tensors, "at least one non-empty bf16 tensor")
    return compressed / raw
