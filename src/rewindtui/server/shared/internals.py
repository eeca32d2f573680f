"""The one place that touches other libraries' private names.

Everything else in the server uses public API (or, for a2a-sdk, the modules its own server
routes are built from). The private names below are pinned by the minor versions in
``pyproject.toml`` and listed in :data:`PRIVATE_NAMES`; ``tests/server/test_internals.py``
fails loudly when one disappears, and every user has a fallback that needs none of them.

=================================================================  ============================
private name                                                       used for
=================================================================  ============================
``DatabaseSessionService._get_schema_classes``                     fork: one-transaction import
``DatabaseSessionService._uses_naive_datetime``                    of a session's events
``DatabaseSessionService._rollback_on_exception_session``          (``import_events``); without
``google.adk.sessions._session_util.extract_json_safe_state_delta``  them: event by event
``Session._storage_update_marker``                                 the direct append
                                                                   (``append_event`` without
                                                                   ADK's three reads); without
                                                                   it: ADK's own append
``google.adk.sessions._rewind_utils.rewind_session``                 rewind from checkpoints
                                                                   (``adk_rewind``): ADK's own
                                                                   rewind on a session of
                                                                   stand-in events; without
                                                                   it: ``Runner.rewind_async``
``google.adk.flows.llm_flows.context._contents._get_contents``       the model request's contents
``..._contents._copy_content_for_request``                          from the events a call adds
``..._contents._should_include_event_in_context``                   (``agent/contents_memo``);
``google.adk.flows.llm_flows.context._fencing._is_other_agent_reply``  without them: ADK's own
``google.adk.runners._find_active_task_scope``                      a new message's task scope
                                                                   from the events it adds (idem)
``google.adk.telemetry.tracing._use_native_generate_content_span_``  no per-content log record
``stable_semconv``, ``tracing.otel_logger``,                         built for OpenTelemetry's
``opentelemetry._logs._internal.ProxyLogger``, ``_LOGGER_PROVIDER``  no-op logger
                                                                   (``agent/quiet_logs``);
                                                                   without them: ADK's own
=================================================================  ============================

``Session._storage_update_marker`` is the stored revision (``update_time``) a session object
was read at: ADK's ``append_event`` compares it with the session row to refuse a stale writer,
and the direct append does the same comparison inside its ``UPDATE``. Name no longer relied on:
aiosqlite's worker ``_thread`` (the store runs sqlite3 on threads it owns).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.adk.sessions import DatabaseSessionService
from google.adk.sessions.session import Session

#: (module, attribute path) of every private name used, for the version-drift test.
PRIVATE_NAMES: tuple[tuple[str, str], ...] = (
    ("google.adk.sessions.database_session_service", "DatabaseSessionService._get_schema_classes"),
    ("google.adk.sessions.database_session_service", "DatabaseSessionService._uses_naive_datetime"),
    ("google.adk.sessions.database_session_service", "DatabaseSessionService._rollback_on_exception_session"),
    ("google.adk.sessions._session_util", "extract_json_safe_state_delta"),
    ("google.adk.sessions.session", "Session._storage_update_marker"),
    # the team server's artifacts in the database (storage/db_artifacts.py, storage/move.py): ADK's
    # own rules for references and for a rewind's "absent" marker
    ("google.adk.artifacts.artifact_util", "_MAX_ARTIFACT_REFERENCE_DEPTH"),
    ("google.adk.artifacts.artifact_util", "_is_rewind_tombstone"),
    ("google.adk.artifacts.artifact_util", "_new_rewind_tombstone"),
    ("google.adk.sessions._rewind_utils", "rewind_session"),
    # the model request's contents built from the events a call adds (agent/contents_memo.py)
    ("google.adk.flows.llm_flows.context._contents", "_get_contents"),
    ("google.adk.flows.llm_flows.context._contents", "_copy_content_for_request"),
    ("google.adk.flows.llm_flows.context._contents", "_should_include_event_in_context"),
    ("google.adk.flows.llm_flows.context._fencing", "_is_other_agent_reply"),
    ("google.adk.runners", "_find_active_task_scope"),
    # ADK's per-content log records skipped when they reach OpenTelemetry's no-op logger
    # (agent/quiet_logs.py): ADK's span function and logger, the API's proxy logger and provider
    ("google.adk.telemetry.tracing", "_use_native_generate_content_span_stable_semconv"),
    ("opentelemetry._logs._internal", "ProxyLogger"),
)
_MARKER = "_storage_update_marker"


def resolve(module: str, path: str) -> Any:
    """The object at ``module`` + dotted ``path``; AttributeError/ImportError when it is gone."""
    target: Any = importlib.import_module(module)
    for name in path.split("."):
        target = getattr(target, name)
    return target


@dataclass(frozen=True)
class BulkEventWriter:
    """What ``import_events`` needs from a ``DatabaseSessionService`` to write many events at once."""

    storage_session: Any  # the ORM class of a session row
    storage_app_state: Any  # the ORM classes of the app-wide and user-wide state rows
    storage_user_state: Any
    storage_event: Any  # the ORM class of an event row (``from_event``)
    naive_datetime: bool
    open_session: Callable[[], Any]  # async context manager: an ORM session, rolled back on error
    session_state_delta: Callable[[dict[str, Any]], dict[str, Any]]  # the session-scoped part of a delta


def bulk_event_writer(service: DatabaseSessionService) -> BulkEventWriter | None:
    """The private pieces behind a one-transaction event import, or None if this ADK lacks one."""
    try:
        schema = service._get_schema_classes()
        extract = resolve("google.adk.sessions._session_util", "extract_json_safe_state_delta")
        return BulkEventWriter(
            storage_session=schema.StorageSession,
            storage_app_state=schema.StorageAppState,
            storage_user_state=schema.StorageUserState,
            storage_event=schema.StorageEvent,
            naive_datetime=bool(service._uses_naive_datetime()),
            open_session=service._rollback_on_exception_session,
            session_state_delta=lambda delta: dict(extract(delta)["session"]),
        )
    except (AttributeError, ImportError, KeyError, TypeError):
        return None


def adk_rewind_session() -> Callable[..., Any] | None:
    """ADK's ``rewind_session`` (what ``Runner.rewind_async`` runs on the session it read), or None."""
    try:
        fn = resolve("google.adk.sessions._rewind_utils", "rewind_session")
    except (AttributeError, ImportError):
        return None
    return fn if callable(fn) else None


def has_update_marker() -> bool:
    """Whether this ADK's ``Session`` carries the stored revision it was read at."""
    return _MARKER in Session.__private_attributes__


def update_marker(session: Session) -> str | None:
    """The stored revision ``session`` was read at or last written as (None: unknown)."""
    marker = getattr(session, _MARKER, None)
    return marker if isinstance(marker, str) else None


def set_update_marker(session: Session, marker: str) -> None:
    """Record that ``session`` now matches the stored revision ``marker`` (as ADK's append does)."""
    setattr(session, _MARKER, marker)


def artifact_reference_depth() -> int:
    """How many artifact references ADK follows before giving up (its in-memory service's rule)."""
    return int(resolve("google.adk.artifacts.artifact_util", "_MAX_ARTIFACT_REFERENCE_DEPTH"))


def is_rewind_tombstone(part: Any) -> bool:
    """Whether ``part`` is the marker a rewind saves for an artifact absent at its point."""
    return bool(resolve("google.adk.artifacts.artifact_util", "_is_rewind_tombstone")(part))


def new_rewind_tombstone() -> Any:
    """That marker (an artifact version that loads as absent)."""
    return resolve("google.adk.artifacts.artifact_util", "_new_rewind_tombstone")()
