"""What the pieces of the agent service share: one :class:`ServerContext`, built once per server.

The agent service (:mod:`~rewindtui.server.service.agent_service`) builds its pieces -- sessions,
turns, rewinds -- from one context instead of passing each the same five or six arguments. A piece
reads the shared things by the names it always had (``self.store``, ``self.runner``, ...) through
:class:`UsesContext`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rewindtui.server.service.faults import Checkpoints
from rewindtui.server.service.jobs import Jobs
from rewindtui.server.storage.store import Store

if TYPE_CHECKING:  # google-adk's runner takes a second to import: the server's front (its REST
    # routes build on this module) answers before it is loaded
    from google.adk.runners import Runner
    from google.adk.sessions.base_session_service import BaseSessionService


@dataclass(frozen=True)
class ServerContext:
    """The store, ADK's session service and runner, which agent this is, and the per-session jobs."""

    #: the task store (SQLite): sessions, tasks, messages, the journal
    store: Store
    #: ADK's sessions (events and state)
    session_service: BaseSessionService
    #: ADK's runner for the agent
    runner: Runner
    #: ADK's app name the sessions are kept under
    app_name: str
    #: the agent's reference as clients name it (``namespace/name``)
    agent_ref: str
    #: where fault-injection tests stop the server (none outside tests)
    checkpoints: Checkpoints = field(default_factory=Checkpoints)
    #: seconds a turn may go without an event from the agent before it fails (None: forever)
    stall_timeout: float | None = None
    #: one job per session at a time, and shutdown (the locks every piece claims)
    jobs: Jobs = field(default_factory=Jobs)


class UsesContext:
    """A piece of the agent service: the context's fields, read-only, under their usual names."""

    def __init__(self, context: ServerContext) -> None:
        self.context = context

    @property
    def store(self) -> Store:
        return self.context.store

    @property
    def session_service(self) -> BaseSessionService:
        return self.context.session_service

    @property
    def runner(self) -> Runner:
        return self.context.runner

    @property
    def app_name(self) -> str:
        return self.context.app_name

    @property
    def agent_ref(self) -> str:
        return self.context.agent_ref

    @property
    def checkpoints(self) -> Checkpoints:
        return self.context.checkpoints

    @property
    def stall_timeout(self) -> float | None:
        return self.context.stall_timeout
