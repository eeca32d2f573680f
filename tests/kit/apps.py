"""The app as tests run it: real ``RewindApp``, no animation, connected the way a test needs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from rewindtui.a2a.dialect import Dialect
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.tui.app import RewindApp


def new_app(
    connector: Any = None, *, session_id: str | None = None, new_session: bool | None = None, **kw: Any
) -> RewindApp:
    """``RewindApp`` with animations off; a new session unless ``session_id`` is given. The live
    view (its timed checks for other clients' changes) is off unless ``live=True``: tests that
    script another client's change at a chosen moment must not race a timer
    (tests/tui/test_live_view.py tests it)."""
    kw.setdefault("live", False)
    app = RewindApp(
        connector, session_id=session_id, new_session=session_id is None if new_session is None else new_session, **kw
    )
    app.animation_level = "none"
    return app


def connector_for(
    url: str,
    api: str | None,
    transport: httpx.AsyncBaseTransport | None = None,
    dialect: Dialect | None = None,
    *,
    local_store: Path | None = None,
):
    """The app's connector for an A2A agent at ``url`` (REST API at ``api``), optionally through
    a fault-injecting ``transport`` and with the client's local sessions store at ``local_store``."""

    async def connect():
        http = httpx.AsyncClient(transport=transport, timeout=30, follow_redirects=True) if transport else None
        client = A2AClient(ServerConfig(url=url, api=api, dialect=dialect, local_store=local_store), http=http)

        async def close() -> None:
            await client.aclose()

        return client, close

    return connect


def make_app(
    server,
    session_id: str | None = None,
    *,
    transport=None,
    data_dir: Path | None = None,
    keymap=None,
    dialect: Dialect | None = None,
) -> RewindApp:
    """The app on the embedded ``server`` (its A2A and REST URLs)."""
    return new_app(
        connector_for(server.agent_url, server.api_url, transport, dialect),
        session_id=session_id,
        data_dir=data_dir,
        keymap=keymap,
    )


def app_at(url: str, session_id: str | None = None, *, local_store: Path | None = None) -> RewindApp:
    """The app on any A2A agent at ``url`` (no REST API)."""
    return new_app(connector_for(url, None, local_store=local_store), session_id=session_id)


def proxied_app(proxy, server, session_id: str | None = None) -> RewindApp:
    """The app on the embedded ``server`` through a ``faults.proxy.FaultProxy``."""
    return new_app(connector_for(proxy.rewrite(server.agent_url), proxy.rewrite(server.api_url)), session_id=session_id)


def settings_app(settings, *, new_session: bool = True) -> RewindApp:
    """The app connected from settings as ``rewindtui`` connects (its connector, its hint)."""
    from rewindtui.config.connection import AppConnector

    connector = AppConnector(settings)
    return new_app(connector, hint=connector.hint, new_session=new_session)
