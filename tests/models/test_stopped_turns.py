"""A stopped turn in the model's context: the user's message and the reply as far as the user saw
it stay there as one exchange, marked stopped (docs/models.md, "Stop") -- never the message alone
as a stray. Asserted on the requests the OpenAI-compatible test server received."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from modelkit import model_server
from openai_double import Reply, user_texts
from srvkit import A2A, Api, Turn, normalize_result, texts

from rewindtui.a2a.contract import STOPPED_KEY
from rewindtui.server.service.turns import STOP_NOTE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def patient(tmp_path_factory, double, _api_key) -> Iterator:
    """A server that waits a minute for the model: a hang stays a running turn until stopped."""
    with model_server(tmp_path_factory.mktemp("patient"), double, timeout=60.0, stall_timeout=60.0) as srv:
        yield srv


def wait_for(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


class Streaming:
    """One ``message/stream`` read on a thread: its events as they arrive."""

    def __init__(self, a2a: A2A, text: str, session: str) -> None:
        self.events: list[dict[str, Any]] = []
        body = a2a.rpc("message/stream", "", {"message": a2a.message(text, session)})
        self._thread = threading.Thread(target=self._read, args=(a2a.url, body), daemon=True)
        self._thread.start()

    def _read(self, url: str, body: dict[str, Any]) -> None:
        with httpx.stream("POST", url, json=body, headers={"Accept": "text/event-stream"}, timeout=60) as resp:
            for line in resp.iter_lines():
                if line.startswith("data:"):
                    self.events.append(normalize_result(json.loads(line[5:])["result"]))

    @property
    def task_id(self) -> str | None:
        return next((e["id"] for e in self.events if e.get("kind") == "task"), None)

    def shown(self) -> str:
        """The reply text streamed so far (the deltas)."""
        return "".join(
            texts(e["status"]["message"])
            for e in list(self.events)
            if e.get("kind") == "status-update"
            and "message" in e["status"]
            and e["status"]["message"]["metadata"].get("kagent_adk_partial")
        )

    def join(self) -> list[dict[str, Any]]:
        self._thread.join(30)
        assert not self._thread.is_alive()
        return self.events


def stop(http: httpx.Client, srv: Any, task_id: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": "stop", "method": "tasks/cancel", "params": {"id": task_id}}
    answer = http.post(srv.agent_url, json=body).json()
    assert "result" in answer, answer
    return answer["result"]


def chat_roles(request: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of each user/assistant message of a request the test server received."""
    out = []
    for m in request["messages"]:
        if m["role"] in ("user", "assistant"):
            content = m.get("content")
            text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content or [])
            out.append((m["role"], text))
    return out


def test_a_stopped_reply_and_its_message_are_one_exchange_in_the_next_request(patient, double, http):
    a2a, api = A2A(http, patient.agent_url, "0.3"), Api(http, patient.api_url)
    session = f"s-{uuid.uuid4().hex[:12]}"
    Turn(a2a.stream("baseline turn", session))
    double.queue(Reply.say_then_hang("Once upon a time there was a ship"))
    running = Streaming(a2a, "tell me a story", session)
    wait_for(lambda: running.shown() == "Once upon a time there was a ship")
    assert running.task_id is not None
    assert stop(http, patient, running.task_id)["status"]["state"] == "canceled"
    assert running.join()[-1]["status"]["state"] == "canceled"

    # the store: the user's message, then the reply as shown, under its author, marked stopped
    stopped = api.tasks(session)[-1]
    assert stopped["status"]["state"] == "canceled" and "message" not in stopped["status"]
    user, kept = stopped["history"]
    assert texts(user) == "tell me a story"
    assert texts(kept) == "Once upon a time there was a ship"
    assert kept["metadata"][STOPPED_KEY] is True and kept["metadata"]["kagent_author"] == "demo"

    # the model: the same exchange, the reply ending with the stop note; the message once
    after = Turn(a2a.stream("go on", session))
    assert after.final["status"]["state"] == "completed"
    assert chat_roles(double.requests[-1]) == [
        ("user", "baseline turn"),
        ("assistant", "Echo: baseline turn (users=['baseline turn'])"),
        ("user", "tell me a story"),
        ("assistant", f"Once upon a time there was a ship\n\n{STOP_NOTE}"),
        ("user", "go on"),
    ]

    # a rewind to before the stopped turn takes both out of the model's context
    a2a.rewind(session, kept["metadata"]["kagent_invocation_id"])
    Turn(a2a.stream("something else", session))
    assert user_texts(double.requests[-1]) == ["baseline turn", "something else"]


def test_a_turn_stopped_before_any_reply_leaves_no_stray_message(patient, double, http):
    a2a, api = A2A(http, patient.agent_url, "0.3"), Api(http, patient.api_url)
    session = f"s-{uuid.uuid4().hex[:12]}"
    double.queue(Reply.hang())
    hangs = double.hangs
    running = Streaming(a2a, "are you there?", session)
    wait_for(lambda: double.hangs > hangs and running.task_id is not None)
    stop(http, patient, running.task_id or "")
    running.join()
    (stopped,) = api.tasks(session)
    assert stopped["status"]["state"] == "canceled" and "message" not in stopped["status"]
    assert [m["role"] for m in stopped["history"]] == ["user"]  # nothing of the agent's to keep

    Turn(a2a.stream("hello?", session))
    assert chat_roles(double.requests[-1]) == [
        ("user", "are you there?"),
        ("assistant", STOP_NOTE),
        ("user", "hello?"),
    ]
