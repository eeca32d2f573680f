"""The app's F3 card screen shows the signature and the extended card, against a2a-sdk servers:
the card signed by a2a-sdk's own signer (``a2a.utils.signing.create_agent_card_signer``) with a
key made in the test, the extended card served by a2a-sdk's ``DefaultRequestHandler``
(``GetExtendedAgentCard``) behind the bearer check of ``protected_agent.Guard``.

The snapshot's server listens on a Unix socket (real HTTP through uvicorn, not loopback TCP) so
that the card's URLs, which the screen shows, are the same on every run; its signing keys are
given to the screen as a trusted key set (as ``rewindtui card --card-keys`` gives them). The Pilot
test of a bad signature runs on loopback TCP and fetches the key set from the card's ``jku``."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks.inmemory_task_store import InMemoryTaskStore
from a2a.utils.signing import create_agent_card_signer
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from protected_agent import Guard, extended_card, protected_card
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from asgi_thread import ServeInThread
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.tui.app import RewindApp
from rewindtui.tui.screens.card import CHECKING, CardScreen

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "a2a_servers"))
from a2a_servers import EchoExecutor

pytestmark = pytest.mark.slow  # about 2 s each (a server, the app, a signature check)

TOKEN = "member-token"
#: the agent's address as its card says and the client uses (reached over the Unix socket)
AGENT = "http://agent.test/"
JWKS_PATH = "/.well-known/jwks.json"


def _jwks(key: Any, kid: str) -> dict[str, Any]:
    jwk = json.loads(ECAlgorithm.to_jwk(key.public_key()))
    return {"keys": [{**jwk, "kid": kid, "use": "sig", "alg": "ES256"}]}


def _signed_protected_app(url: str, key: Any, *, tamper: bool = False) -> Any:
    """a2a-sdk's handler and card routes (as ``protected_agent.protected_app``): a card signed by
    a2a-sdk's signer that offers an extended card (signed too; given only with ``TOKEN``), and
    the key set at /.well-known/jwks.json."""
    agent_card = protected_card(url, "http://issuer.test", oidc=False, flows=False)
    agent_card.description = "a protected echo agent; members see more"
    header = {"kid": "test-key", "alg": "ES256", "jku": url.rstrip("/") + JWKS_PATH, "typ": "JOSE"}
    create_agent_card_signer(key, header)(agent_card)  # type: ignore[arg-type]
    if tamper:
        agent_card.description = "an agent that was changed after it was signed"
    extended = extended_card(agent_card)
    del extended.signatures[:]
    create_agent_card_signer(key, header)(extended)  # type: ignore[arg-type]
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=agent_card,
        extended_agent_card=extended,
    )
    (rpc,) = create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True)
    guarded = Guard(Starlette(routes=[rpc, *create_agent_card_routes(agent_card)]), lambda token: token == TOKEN)
    keys = Starlette(routes=[Route(JWKS_PATH, lambda request: JSONResponse(_jwks(key, "test-key")))])

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:  # the key set is public, as the card is
        await (keys if scope.get("path") == JWKS_PATH else guarded)(scope, receive, send)

    return app


class ServeOnSocket:
    """uvicorn on a Unix socket, on a background thread (``ServeInThread`` for a socket path)."""

    def __init__(self, app: Any, path: Path) -> None:
        self.app, self.path = app, path
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ServeOnSocket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(self.path))
        server = uvicorn.Server(
            uvicorn.Config(self.app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2)
        )
        self._server = server
        self._thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
        self._thread.start()
        while not server.started:
            assert self._thread.is_alive(), "the test server did not start"
            threading.Event().wait(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.should_exit = True
        self._thread.join(10)


@pytest.fixture
def key() -> Any:
    return ec.generate_private_key(ec.SECP256R1())


def _app(client: A2AClient) -> RewindApp:
    chat = Chat(client)
    chat.conversation.session_id = "s1"
    app = RewindApp(chat=chat)
    app.animation_level = "none"
    return app


async def _checked(pilot: Any, screen: CardScreen) -> None:
    """Until the screen's check (its worker, real HTTP) has shown its result."""
    await pilot.app.workers.wait_for_complete()
    for _ in range(500):
        if screen.extras is not None:
            break
        await asyncio.sleep(0.01)
    assert screen.extras is not None
    await pilot.pause()


async def _open_card(pilot: Any) -> CardScreen:
    """F3, as the user opens it."""
    await pilot.app.chat.client.connect()
    await pilot.press("f3")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, CardScreen)
    await _checked(pilot, screen)
    return screen


def test_f3_shows_a_verified_signature_and_the_extended_card(snap_compare, key, tmp_path: Path) -> None:
    socket_path = tmp_path / "agent.sock"
    with ServeOnSocket(_signed_protected_app(AGENT, key), socket_path):
        http = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=str(socket_path)), timeout=10)
        config = ServerConfig(url=AGENT, credentials={"Authorization": f"Bearer {TOKEN}"})
        client = A2AClient(config, http=http)
        app = _app(client)
        seen: dict[str, Any] = {}

        async def run_before(pilot: Any) -> None:
            caps = await client.connect()
            # the screen F3 opens, with the keys the card was signed with given as trusted (as
            # ``rewindtui card --card-keys`` gives them: the socket's host has no key set to fetch)
            screen = CardScreen(
                caps.card, url=client.url, choice=caps.choice, client=client, keys=_jwks(key, "test-key")
            )
            await app.push_screen(screen)
            await _checked(pilot, screen)
            seen["extras"] = screen.extras
            seen["text"] = _shown(screen)

        assert snap_compare(app, terminal_size=(110, 60), run_before=run_before)
    extras = seen["extras"]
    assert extras.signature.status == "verified" and extras.extended_status == "fetched"
    assert "verified (key test-key)" in seen["text"]
    assert "skill added" in seen["text"] and "secret skill — only for members" in seen["text"]
    assert CHECKING not in seen["text"]


def _shown(screen: CardScreen) -> str:
    """The text of the screen's rows (tables rendered to plain text)."""
    from rich.console import Console

    console = Console(width=200, record=True)
    for static in screen.query("Static"):
        console.print(static.content)
    return console.export_text()


async def test_f3_says_bad_signature_with_the_reason_and_needs_auth_without_credentials(key) -> None:
    with ServeInThread(factory=lambda url: _signed_protected_app(url + "/", key, tamper=True)) as served:
        client = A2AClient(ServerConfig(url=served.url + "/"))  # no credentials
        app = _app(client)
        async with app.run_test(size=(110, 60)) as pilot:
            await pilot.pause()
            screen = await _open_card(pilot)
            assert screen.extras is not None
            assert screen.extras.signature.status == "bad signature"
            text = _shown(screen)
            assert "bad signature (the card does not match its signature" in text
            assert "needs auth (the agent has one for authenticated users" in text
            assert "secret skill" not in text
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, CardScreen)
