"""An app's own server (``Front(load_when_idle=...)``) loads the agent runtime once its client is
done opening -- an idle moment after a store read, a request that needs the agent, or a deadline --
and a turn sent before then is still answered by the full app."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from asgi_thread import ServeInThread

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))
from srvkit import A2A, Turn

from rewindtui.server.http.app import create_app
from rewindtui.server.http.front import Front
from rewindtui.server.http.front_card import plain_agent_card
from rewindtui.server.http.options import ServerOptions
from rewindtui.server.shared.paths import AGENT_PATH, API_PATH

pytestmark = pytest.mark.slow  # servers in threads, the agent app built


class Served:
    """A front over ``data``, its full app the real one; ``asked`` is set when its load starts."""

    def __init__(self, data: Path, **front: Any) -> None:
        self.asked = threading.Event()
        self.asked_at = 0.0
        urls: dict[str, str] = {}

        def card() -> dict[str, Any]:
            base = urls["base"]
            return plain_agent_card(agent_url=base + AGENT_PATH, api_url=base + API_PATH, name="demo", model="demo")

        def build() -> Any:
            self.asked_at = time.monotonic()
            self.asked.set()
            return create_app(data, urls["base"])

        def factory(url: str) -> Front:
            urls["base"] = url
            return Front(data, build=build, card=card, options=ServerOptions(), bind_host="127.0.0.1", **front)

        self.server = ServeInThread(factory=factory).start()
        self.url = self.server.url

    def stop(self) -> None:
        self.server.stop()


def test_the_load_waits_until_the_client_has_read_its_sessions(tmp_path: Path) -> None:
    served = Served(tmp_path / "data", load_when_idle=0.3, load_by=60)
    try:
        with httpx.Client(timeout=30) as http:
            card = http.get(served.url + AGENT_PATH + ".well-known/agent-card.json")
            assert card.status_code == 200
            assert not served.asked.wait(1.0), "the card alone started the load"
            read = time.monotonic()
            assert http.get(served.url + API_PATH + "/sessions").status_code == 200
            assert served.asked.wait(30), "the load never started"
            assert served.asked_at - read >= 0.3  # after an idle moment, not during the reads
    finally:
        served.stop()


def test_a_turn_starts_the_load_at_once_and_is_answered(tmp_path: Path) -> None:
    served = Served(tmp_path / "data", load_when_idle=60, load_by=120)
    try:
        with httpx.Client(timeout=60) as http:
            assert http.get(served.url + API_PATH + "/sessions").status_code == 200
            sent = time.monotonic()
            turn = Turn(A2A(http, served.url + AGENT_PATH, "1.0").stream("before the agent", "s-deferred"))
            assert served.asked.is_set() and served.asked_at - sent < 30  # not the idle wait (60 s)
            assert turn.answer.startswith("You said: before the agent")
    finally:
        served.stop()


def test_a_server_nobody_talks_to_loads_by_its_deadline(tmp_path: Path) -> None:
    started = time.monotonic()
    served = Served(tmp_path / "data", load_when_idle=60, load_by=0.5)
    try:
        assert served.asked.wait(30)
        assert served.asked_at - started >= 0.5
    finally:
        served.stop()


def test_without_it_the_load_starts_at_once(tmp_path: Path) -> None:
    served = Served(tmp_path / "data")
    try:
        assert served.asked.wait(30)  # no request at all
    finally:
        served.stop()
