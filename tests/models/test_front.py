"""The server's front: the card and the read-only REST answered while the agent runtime is
still loading; everything else waits for it, then goes to the full app."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from asgi_thread import ServeInThread

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))
from srvkit import A2A, Turn

from rewindtui.a2a import contract
from rewindtui.server.http.app import create_app
from rewindtui.server.http.card import agent_card_json, build_agent_card
from rewindtui.server.http.front import Front
from rewindtui.server.http.options import ServerOptions
from rewindtui.server.shared.paths import AGENT_PATH, API_PATH

pytestmark = pytest.mark.slow


def test_the_front_answers_before_the_agent_is_loaded(tmp_path: Path) -> None:
    data = tmp_path / "data"
    release = threading.Event()
    built: list[str] = []
    urls: dict[str, str] = {}

    def card() -> dict:
        return agent_card_json(
            build_agent_card(
                agent_url=urls["base"] + AGENT_PATH, api_url=urls["base"] + API_PATH, name="demo", model="demo"
            )
        )

    def build():
        release.wait(60)  # the agent runtime is "still importing" until the test says
        built.append("app")
        return create_app(data, urls["base"])

    def factory(url: str) -> Front:
        urls["base"] = url
        return Front(data, build=build, card=card, options=ServerOptions(), bind_host="127.0.0.1")

    # a session in the store from an earlier run
    early_server = ServeInThread(factory=lambda url: create_app(data, url)).start()
    try:
        with httpx.Client(timeout=30) as http:
            Turn(A2A(http, early_server.url + AGENT_PATH, "0.3").stream("from before", "s-front-1"))
    finally:
        early_server.stop()

    served = ServeInThread(factory=factory).start()
    try:
        with httpx.Client(timeout=30) as http:
            base = served.url
            started = time.monotonic()
            card_answer = http.get(base + AGENT_PATH + ".well-known/agent-card.json")
            sessions = http.get(base + API_PATH + "/sessions")
            tasks = http.get(base + API_PATH + "/sessions/s-front-1/tasks")
            assert not built, "the front waited for the agent"
            assert time.monotonic() - started < 10
            assert card_answer.status_code == 200 and card_answer.json()["name"] == "demo"
            assert [s["id"] for s in sessions.json()["data"]] == ["s-front-1"]
            assert tasks.status_code == 200 and len(tasks.json()["data"]) == 1
            # a turn waits for the agent, then runs on the full app
            result: list = []
            worker = threading.Thread(
                target=lambda: result.append(
                    A2A(httpx.Client(timeout=60), base + AGENT_PATH, "0.3").stream("after", "s-front-1")
                )
            )
            worker.start()
            worker.join(0.5)
            assert worker.is_alive() and not result  # waiting for the agent
            release.set()
            worker.join(60)
            assert Turn(result[0]).answer.startswith("You said: after (turn 2; history: ['from before', 'after']")
            # the full app answers the card now: the same card, plus the gRPC interface it lists once
            # its gRPC port listens (server/grpc_listener.py; the front cannot know that port)
            full = http.get(base + AGENT_PATH + ".well-known/agent-card.json").json()
            full["supportedInterfaces"] = [i for i in full["supportedInterfaces"] if i.get("protocolBinding") != "GRPC"]
            early = card_answer.json()
            # ... and without the front's word that the agent is still starting (contract.PARAM_STARTING)
            (params,) = [e["params"] for e in early["capabilities"]["extensions"] if e["uri"] == contract.EXTENSION_URI]
            assert params.pop(contract.PARAM_STARTING) is True
            (full_params,) = [
                e["params"] for e in full["capabilities"]["extensions"] if e["uri"] == contract.EXTENSION_URI
            ]
            assert contract.PARAM_STARTING not in full_params
            assert full == early
    finally:
        release.set()
        served.stop()
