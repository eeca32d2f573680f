"""Which kagent: each kind of controller gets one clear sentence, and nothing falls back to the
other profile without saying so (config/kagent1_profile.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from asgi_thread import ServeInThread
from clirun import Result, isolate
from rewindtui.cli import main as cli
from rewindtui.client.a2a_client import A2AClient
from rewindtui.config.connection import ConnectProblem, connect
from rewindtui.config.settings import load_settings
from rewindtui.kagent1 import grpcweb
from rewindtui.kagent1.client import Kagent1Client

AGENT = "kagent/helper"
KNOWN = "rewindtui knows kagent 0.10 (REST) and 1.0 (SessionService, kagent @1e2422ff)"


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)


def grpc_web_app(answers: dict[str, int]) -> Starlette:
    """A gRPC-Web server answering each ``Service/Method`` it knows with an empty message and that
    status, every other with UNIMPLEMENTED (what a gRPC server says of a service it has not)."""

    async def handle(request: Request) -> Response:
        path = request.url.path.removeprefix("/api/")
        status = answers.get(path, 12)
        body = (grpcweb.frame(b"") if status == 0 else b"") + grpcweb.trailers(
            status, "" if status == 0 else f"unknown service {path}"
        )
        return Response(body, media_type=grpcweb.CONTENT_TYPE)

    async def not_found(request: Request) -> Response:
        return PlainTextResponse("404 page not found\n", status_code=404)

    return Starlette(
        routes=[Route("/api/{service}/{method}", handle, methods=["POST"]), Route("/api/sessions", not_found)]
    )


async def refused(base: str, part: str = "kagent_api") -> str:
    with pytest.raises(ConnectProblem) as info:
        conn = await connect(load_settings({"kagent": base, "agent": AGENT, "user_id": "alice"}))
        await conn.aclose()
    assert info.value.part == part and info.value.address == base
    return str(info.value)


async def test_a_controller_answering_unimplemented_gets_one_sentence():
    with ServeInThread(grpc_web_app({})) as served:
        said = await refused(served.url)
    assert said == (
        "this kagent controller does not offer kagent.api.v1alpha1.SessionService (UNIMPLEMENTED: unknown service "
        "kagent.api.v1alpha1.SessionService/ListSessions) nor kagent 0.10's REST sessions "
        f"(GET /api/sessions: HTTP 404, not kagent 0.10's envelope); {KNOWN}"
    )


async def test_a_controller_answering_404_gets_one_sentence():
    async def nothing(request: Request) -> Response:
        return PlainTextResponse("404 page not found\n", status_code=404)

    app = Starlette(routes=[Route("/{path:path}", nothing, methods=["GET", "POST"])])
    with ServeInThread(app) as served:
        said = await refused(served.url)
    assert said == (
        f"this kagent controller does not offer kagent.api.v1alpha1.SessionService (UNIMPLEMENTED: HTTP 404 from "
        f"{served.url}/api/kagent.api.v1alpha1.SessionService/ListSessions) nor kagent 0.10's REST sessions "
        f"(GET /api/sessions: HTTP 404, not kagent 0.10's envelope); {KNOWN}"
    )


async def test_the_agent_instance_generation_is_named_not_guessed():
    """kagent 1.0 before the cutover (AgentInstanceService, agent_instances.proto@50d7a125)."""
    app = grpc_web_app({"kagent.api.v1alpha1.AgentInstanceService/ListAgentInstances": 0})
    with ServeInThread(app) as served:
        said = await refused(served.url)
    assert said == (
        "this kagent controller offers kagent.api.v1alpha1.AgentInstanceService, "
        "kagent 1.0's API before its cutover to "
        "SessionService (kagent docs/protobuf-api.md @3855fe51), and not kagent.api.v1alpha1.SessionService "
        f"(UNIMPLEMENTED: unknown service kagent.api.v1alpha1.SessionService/ListSessions); {KNOWN}"
    )


def card(capsys, base: str, *more: str) -> Result:
    capsys.readouterr()
    rc = cli.main(["card", *more, "--kagent", base, "--agent", AGENT, "--user-id", "dora"])
    out, err = capsys.readouterr()
    return Result(rc, out, err)


def test_a_0_10_controller_gets_the_0_10_profile_and_says_so(capsys):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kagent"))
    import asyncio

    from kagent_double import KagentController

    with ServeInThread(KagentController({}).app()) as served:
        conn = asyncio.run(connect_only(served.url))
        assert conn[0] is A2AClient and conn[1].api == "0.10"
        assert conn[1].said == (
            "kagent 0.10 (REST: GET /api/sessions: HTTP 200 with kagent 0.10's envelope); "
            "it does not offer kagent.api.v1alpha1.SessionService (UNIMPLEMENTED)"
        )


async def connect_only(base: str) -> tuple[type, object]:
    """(the client's class, the detection) -- the agent card is not read (the 0.10 double has no agent)."""
    from rewindtui.config.kagent1_profile import kagent_profile

    client, detection = await kagent_profile(load_settings({"kagent": base, "agent": AGENT, "user_id": "alice"}))
    return (A2AClient if client is None else type(client)), detection


def test_card_says_which_kagent_api_and_what_works(capsys, kagent1):
    double, base = kagent1
    shown = card(capsys, base)
    assert shown.rc == 0, shown.err
    lines = shown.out.splitlines()
    at = lines.index("kagent: kagent 1.0 (kagent.api.v1alpha1.SessionService, kagent @1e2422ff)")
    said = dict(line.strip().split(": ", 1) for line in lines[at + 1 : at + 7])
    assert set(said) == {"sessions", "history", "checkpoints", "fork", "rewind", "shares"}
    assert said["sessions"].startswith("yes") and said["shares"].startswith("yes")
    assert "unverified" in said["checkpoints"] and "unverified" in said["fork"]
    record = card(capsys, base, "--json").records()[0]
    assert record["kagent"]["api"] == "1.0" and set(record["kagent"]["features"]) == set(said)


async def test_told_versions_are_said_to_be_told(kagent1):
    double, base = kagent1
    conn = await connect(load_settings({"kagent": base, "agent": AGENT, "user_id": "alice", "kagent_version": "1"}))
    try:
        assert isinstance(conn.client, Kagent1Client)
        assert conn.kagent.said == "kagent 1.0 (SessionService), as kagent_version says (not asked)"
    finally:
        await conn.aclose()


async def test_a_controller_that_does_not_answer_is_said_to_be_unreachable():
    """Nothing listening: neither kagent 1.0 nor 0.10 -- said as such, not guessed."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    said = await refused(base, "controller")
    assert said.startswith(f"cannot reach the kagent controller at {base} (")
