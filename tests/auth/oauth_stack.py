"""The Authlib OAuth server and the protected a2a-sdk agent, started together on loopback."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from oauth_server import AuthServer, Client
from protected_agent import protected_app

from asgi_thread import ServeInThread

CC_ID, CC_SECRET = "machine-client", "s3cret-client-value"
DEVICE_ID = "terminal-client"


class Stack:
    def __init__(self, auth: AuthServer, issuer: ServeInThread, agent: ServeInThread, guard: Any) -> None:
        self.auth, self.issuer, self.agent, self.guard = auth, issuer, agent, guard


def start_stack(
    expires_in: int = 3600, client_auth: str = "client_secret_basic", **card: Any
) -> tuple[Stack, list[ServeInThread]]:
    holder: dict[str, AuthServer] = {}

    def make_auth(url: str) -> Any:
        auth = AuthServer(url, expires_in=expires_in, client_auth=client_auth)
        auth.clients[CC_ID] = Client(CC_ID, CC_SECRET, ("client_credentials",))
        auth.clients[DEVICE_ID] = Client(
            DEVICE_ID, None, ("urn:ietf:params:oauth:grant-type:device_code", "refresh_token")
        )
        holder["auth"] = auth
        return auth.app()

    issuer = ServeInThread(factory=make_auth).start()
    auth = holder["auth"]
    guards: list[Any] = []

    def make_agent(url: str) -> Any:
        guard = protected_app(url + "/", issuer.url, auth.valid, **card)
        guards.append(guard)
        return guard

    agent = ServeInThread(factory=make_agent).start()
    return Stack(auth, issuer, agent, guards[0]), [agent, issuer]
