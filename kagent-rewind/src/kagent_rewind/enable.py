"""Turning rewind on in a kagent agent: one call on the ``KAgentApp`` or on the app it built.

    app = enable_rewind(KAgentApp(...).build())   # the built FastAPI app, changed in place
    kagent_app = enable_rewind(KAgentApp(...))     # or: every later build() has rewind

The built app holds a2a-sdk's JSON-RPC application (``KAgentApp.build`` adds its routes to the
FastAPI app); its request handler gets a :class:`~kagent_rewind.executor.RewindExecutor` around
kagent's executor and a :class:`~kagent_rewind.tasks.RefusalAwareTaskStore` around kagent's
store, and its agent card advertises the rewind extension. Enabling twice changes nothing more.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from a2a.server.apps.jsonrpc.jsonrpc_app import JSONRPCApplication
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.types import AgentCard, AgentExtension
from kagent.adk import KAgentApp
from starlette.applications import Starlette

from kagent_rewind import contract
from kagent_rewind.executor import RewindExecutor
from kagent_rewind.tasks import RefusalAwareTaskStore

T = TypeVar("T", KAgentApp, Starlette)

DESCRIPTION = (
    "Rewind a session to before one of its turns: send a message whose metadata names the turn's "
    "invocation id; the answer is a Task holding the session's effective history. Redo (undo the "
    "last rewind): the same message naming the rewind's own invocation id (its Task's "
    "rewindtui_rewind_invocation_id)."
)


def rewind_extension() -> AgentExtension:
    return AgentExtension(
        uri=contract.EXTENSION_URI,
        description=DESCRIPTION,
        params={
            contract.PARAM_REWIND: [contract.MODE_A2A],
            contract.PARAM_METADATA_KEY: contract.REWIND_METADATA_KEY,
            contract.PARAM_REDO: True,
        },
        required=False,
    )


def advertise(card: AgentCard) -> None:
    """Add the rewind extension to ``card`` (once)."""
    extensions = list(card.capabilities.extensions or [])
    if not any(ext.uri == contract.EXTENSION_URI for ext in extensions):
        extensions.append(rewind_extension())
    card.capabilities.extensions = extensions


def a2a_applications(app: Starlette) -> list[JSONRPCApplication]:
    """The a2a-sdk applications whose routes ``app`` serves."""
    found: list[JSONRPCApplication] = []
    for route in app.routes:
        owner = getattr(getattr(route, "endpoint", None), "__self__", None)
        if isinstance(owner, JSONRPCApplication) and owner not in found:
            found.append(owner)
    return found


def _enable_app(app: Starlette) -> None:
    applications = a2a_applications(app)
    if not applications:
        raise ValueError(
            "enable_rewind: this app serves no A2A JSON-RPC application; pass what KAgentApp(...).build() returns"
        )
    for application in applications:
        handler = application.handler.request_handler
        if not isinstance(handler, DefaultRequestHandler):
            raise TypeError(f"enable_rewind: unsupported A2A request handler {type(handler).__name__}")
        if not isinstance(handler.agent_executor, RewindExecutor):
            store = RefusalAwareTaskStore(handler.task_store)
            handler.agent_executor = RewindExecutor(handler.agent_executor, store)
            handler.task_store = store
        advertise(application.agent_card)
        if application.handler.agent_card is not application.agent_card:
            advertise(application.handler.agent_card)


def enable_rewind(target: T) -> T:
    """Turn rewind on for a ``KAgentApp`` (its later builds) or an app it built; returns it."""
    if isinstance(target, KAgentApp):
        advertise(target.agent_card)
        build: Callable[..., Any] = target.build
        if not getattr(build, "_kagent_rewind", False):

            def build_with_rewind(*args: Any, **kwargs: Any) -> Any:
                return enable_rewind(build(*args, **kwargs))

            build_with_rewind._kagent_rewind = True  # type: ignore[attr-defined]
            target.build = build_with_rewind
        return target
    if isinstance(target, Starlette):
        _enable_app(target)
        return target
    raise TypeError(f"enable_rewind takes a KAgentApp or the app it built, not {type(target).__name__}")


@asynccontextmanager
async def rewind_lifespan(app: Starlette) -> AsyncIterator[None]:
    """A lifespan that enables rewind on the app at startup: for ``kagent-adk run``, which uses
    an agent package's ``lifespan`` (``from kagent_rewind import rewind_lifespan as lifespan``)."""
    enable_rewind(app)
    yield


def install() -> None:
    """Every ``KAgentApp`` built from now on has rewind (used by ``kagent-rewind-adk``)."""
    original = KAgentApp.build
    if getattr(original, "_kagent_rewind", False):
        return

    def build(self: KAgentApp, *args: Any, **kwargs: Any) -> Any:
        return enable_rewind(original(self, *args, **kwargs))

    build._kagent_rewind = True  # type: ignore[attr-defined]
    KAgentApp.build = build


def main() -> None:
    """``kagent-rewind-adk``: kagent's ``kagent-adk`` command with rewind on in every agent it runs."""
    install()
    from kagent.adk.cli import run_cli

    run_cli()
