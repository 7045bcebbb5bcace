"""The loader's figures as Prometheus metrics, for the engine's own /metrics.

Every `modelplane_loader.load()` in this process is recorded (succeeded or failed) into one
process-wide set kept by the C library; `register()` adds a prometheus_client collector that
exposes it, so an engine that already serves prometheus_client's registry shows the loader's
metrics with no extra port:

    import modelplane_loader.metrics
    modelplane_loader.metrics.register()            # into prometheus_client.REGISTRY
    tensors = modelplane_loader.load("/models/llama", device="cuda:0")

The metric families are built by the C++ library (node-agent/loader/loader_metrics.h), the same
ones `modelplane-node-agent stream --metrics-file` writes; the collector reads them back with
prometheus_client's own text parser. Names and labels: docs/loader.md, "Metrics".

prometheus_client is needed only by the collector (`register`, `LoaderCollector.collect`);
`exposition()` and the recording work without it.
"""

from __future__ import annotations

import ctypes
import logging
import threading

__all__ = ["LoaderCollector", "register", "exposition"]

_log = logging.getLogger(__name__)


class _MetricsSet:
    """One mp_loader_metrics set of the C library."""

    def __init__(self, lib):
        self._lib = lib
        self._handle = lib.mp_loader_metrics_create()
        if not self._handle:
            raise MemoryError("mp_loader_metrics_create")

    def record(self, result_handle: int) -> int:
        return self._lib.mp_loader_metrics_record(self._handle, result_handle)

    def text(self) -> str:
        pointer = self._lib.mp_loader_metrics_text(self._handle)
        if not pointer:
            raise MemoryError("mp_loader_metrics_text")
        try:
            return ctypes.string_at(pointer).decode("utf-8")
        finally:
            self._lib.mp_loader_free(pointer)

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.mp_loader_metrics_destroy(self._handle)
            self._handle = None


_process_set = None
_process_lock = threading.Lock()
_warned = False


def _process_metrics() -> _MetricsSet:
    global _process_set
    with _process_lock:
        if _process_set is None:
            from . import _lib  # noqa: PLC0415  (the package imports this module lazily)

            _process_set = _MetricsSet(_lib())
        return _process_set


def _record(result_handle: int) -> None:
    """Called by load() for every load; metrics never make a load fail."""
    global _warned
    try:
        code = _process_metrics().record(result_handle)
    except Exception as error:  # noqa: BLE001  (a metrics fault must not fail the load)
        code, detail = -1, repr(error)
    else:
        detail = f"error code {code}"
    if code != 0 and not _warned:
        _warned = True  # once: a label limit reached stays reached
        _log.warning("modelplane_loader: load not recorded in metrics (%s)", detail)


def exposition() -> str:
    """The Prometheus text exposition (format 0.0.4) of every load this process made."""
    return _process_metrics().text()


class LoaderCollector:
    """A prometheus_client collector of every load this process made (see the module doc)."""

    def collect(self):
        from prometheus_client.parser import text_string_to_metric_families  # noqa: PLC0415

        return list(text_string_to_metric_families(exposition()))

    def describe(self):
        # The families exist (without samples) from the start: the registry checks their
        # names against other collectors' when this one is registered.
        return self.collect()


def register(registry=None) -> LoaderCollector:
    """Registers a LoaderCollector into `registry` (default prometheus_client.REGISTRY) and
    returns it; `registry.unregister(collector)` removes it. Raises ImportError without
    prometheus_client, and ValueError if the registry already has these metric names."""
    if registry is None:
        from prometheus_client import REGISTRY as registry  # noqa: PLC0415,N811

    collector = LoaderCollector()
    registry.register(collector)
    return collector
