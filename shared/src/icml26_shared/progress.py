"""Progress bars for long loops: tqdm on a terminal, silent when output goes to a file or CI."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def progress(iterable: Iterable[T], desc: str = "", total: int | None = None) -> Iterator[T]:
    """Wrap ``iterable`` in a tqdm bar on stderr, only when stderr is a terminal."""
    from tqdm.auto import tqdm

    yield from tqdm(iterable, desc=desc, total=total, disable=not sys.stderr.isatty(), leave=False)
