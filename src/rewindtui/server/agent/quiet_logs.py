"""ADK's per-content log records of a model request, not built when nothing can receive them.

With ADK's stable GenAI conventions (what the embedded server picks when nothing records spans),
``google.adk.telemetry.tracing._use_native_generate_content_span_stable_semconv`` emits, for every
model call, one ``gen_ai.system.message`` record and then one ``gen_ai.user.message`` record per
content of the request -- 20,000 at 10,000 turns, each a ``LogRecord`` and a body built and handed
to ADK's module logger ``tracing.otel_logger``. When that logger is OpenTelemetry's
``ProxyLogger`` with no real logger behind it and no global logger provider set (or is a
``NoOpLogger``), every one of those records goes to ``NoOpLogger.emit``, which does nothing.

:func:`install` puts a thin function in place of ADK's: in exactly that case it hands ADK's own
function a shallow copy of the request with no contents (the span, its attributes and the system
record are ADK's, built from the same model and config); in every other case -- a provider set,
even later, or any other logger -- it calls ADK's function with the request itself. The check is
made on every call, mirroring ``ProxyLogger._logger``. ``tests/server/test_quiet_logs.py`` checks
both: a configured provider receives every record, and without one nothing is built per content.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from opentelemetry._logs import NoOpLogger

from rewindtui.server.shared.internals import resolve

_TRACING = "google.adk.telemetry.tracing"
_NAME = "_use_native_generate_content_span_stable_semconv"
_LOGS = "opentelemetry._logs._internal"

_installed: Callable[..., Any] | None = None


def logs_dropped() -> bool:
    """Whether a record ADK's tracing module emits now reaches nothing (``NoOpLogger.emit``)."""
    logger = _module(_TRACING).otel_logger
    if type(logger) is NoOpLogger:
        return True
    logs = _module(_LOGS)
    if type(logger) is not logs.ProxyLogger:
        return False
    real = getattr(logger, "_real_logger", True)
    if real:  # ProxyLogger._logger: its real logger, once it has one
        return type(real) is NoOpLogger
    return not getattr(logs, "_LOGGER_PROVIDER", True)  # else the global provider's, if set; else no-op


def _module(name: str) -> Any:
    return importlib.import_module(name)


def install() -> Callable[..., Any] | None:
    """Put the quiet variant in place of ADK's function (once); ADK's original, or None when this
    ADK lacks it or something else already wrapped it (then nothing is changed)."""
    global _installed
    if _installed is not None:
        return _installed
    try:
        original = resolve(_TRACING, _NAME)
        _module(_LOGS).ProxyLogger  # noqa: B018 -- the class the check relies on
    except (AttributeError, ImportError):
        return None
    if getattr(original, "__module__", None) != _TRACING:  # not ADK's own function any more: leave it
        return None

    def quiet(llm_request: Any, *args: Any, **kwargs: Any) -> Any:
        if llm_request.contents and logs_dropped():
            llm_request = llm_request.model_copy(update={"contents": []})
        return original(llm_request, *args, **kwargs)

    quiet.__wrapped__ = original  # type: ignore[attr-defined]
    setattr(_module(_TRACING), _NAME, quiet)
    _installed = original
    return original
