"""Logging with one format for every package (``get_logger``) and one switch for verbosity."""

from __future__ import annotations

import logging

FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"
DATEFMT = "%H:%M:%S"


def configure_logging(verbose: bool = False) -> None:
    """Route every ``icml26*`` logger to stderr in the house format; DEBUG when ``verbose``."""
    root = logging.getLogger("icml26")
    if not any(getattr(h, "_icml26", False) for h in root.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter(FORMAT, DATEFMT))
        handler._icml26 = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    root.propagate = False


def get_logger(name: str) -> logging.Logger:
    """A logger under the ``icml26`` namespace: ``get_logger("ultralif")`` -> ``icml26.ultralif``."""
    return logging.getLogger(name if name.startswith("icml26") else f"icml26.{name}")
