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
=================================================================  ============================

Names this code used to rely on and no longer does: ``Session._storage_update_marker`` (a
cached copy made with pydantic's ``model_copy`` keeps it), aiosqlite's worker ``_thread``
(the store runs sqlite3 on threads it owns).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.adk.sessions import DatabaseSessionService

#: (module, attribute path) of every private name used, for the version-drift test.
PRIVATE_NAMES: tuple[tuple[str, str], ...] = (
    ("google.adk.sessions.database_session_service", "DatabaseSessionService._get_schema_classes"),
    ("google.adk.sessions.database_session_service", "DatabaseSessionService._uses_naive_datetime"),
    ("google.adk.sessions.database_session_service", "DatabaseSessionService._rollback_on_exception_session"),
    ("google.adk.sessions._session_util", "extract_json_safe_state_delta"),
)


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
            storage_event=schema.StorageEvent,
            naive_datetime=bool(service._uses_naive_datetime()),
            open_session=service._rollback_on_exception_session,
            session_state_delta=lambda delta: dict(extract(delta)["session"]),
        )
    except (AttributeError, ImportError, KeyError, TypeError):
        return None
