"""The embedded server on a real model path: ADK's LiteLlm -> LiteLLM -> the OpenAI-compatible
test server over loopback. Asserted on what the test server received."""

from __future__ import annotations

import uuid

import pytest
from modelkit import MODEL, model_server
from openai_double import BAD_KEY, NO_MODEL, SERVER_ERROR, TOO_LONG, Reply, rate_limited, user_texts
from srvkit import A2A, Turn, texts

from rewindtui.server import EmbeddedServer
from rewindtui.server.agent.model_options import ModelOptions
from rewindtui.server.http.options import ServerOptions

pytestmark = pytest.mark.slow


def sid() -> str:
    return f"s-{uuid.uuid4().hex[:12]}"


def failure(events: list[dict]) -> str:
    final = events[-1]
    assert final["status"]["state"] == "failed", final
    return texts(final["status"]["message"])


def test_a_turn_streams(a2a, double):
    events = a2a.stream("hello model world", sid())
    turn = Turn(events)
    assert turn.final["status"]["state"] == "completed"
    assert turn.answer == "Echo: hello model world (users=['hello model world'])"
    partials = [
        e
        for e in events
        if e["kind"] == "status-update"
        and "message" in e["status"]
        and e["status"]["message"]["metadata"].get("kagent_adk_partial")
    ]
    assert len(partials) >= 3  # the answer arrived in pieces
    assert "".join(texts(e["status"]["message"]) for e in partials) == turn.answer
    (request,) = double.requests
    assert request["stream"] is True and request["model"] == "test-model"


def test_a_tool_call_runs(a2a, double):
    turn = Turn(a2a.stream("what is the weather in Paris?", sid()))
    assert turn.final["status"]["state"] == "completed"
    assert turn.answer.startswith("Tool said: ") and "sunny" in turn.answer and '"call_no": 1' in turn.answer
    first, second = double.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather", "delete_file"]
    tool = second["messages"][-1]
    assert tool["role"] == "tool" and "sunny" in tool["content"]


def test_a_rewind_removes_turns_from_the_next_request(a2a, double):
    session = sid()
    Turn(a2a.stream("one", session))
    two = Turn(a2a.stream("two", session))
    Turn(a2a.stream("three", session))
    assert user_texts(double.requests[-1]) == ["one", "two", "three"]
    events = a2a.rewind(session, two.invocation_id)
    assert events[-1]["status"]["state"] == "completed"
    four = Turn(a2a.stream("four", session))
    assert four.answer == "Echo: four (users=['one', 'four'])"
    assert user_texts(double.requests[-1]) == ["one", "four"]


@pytest.mark.parametrize(
    ("reply", "sentence"),
    [
        (BAD_KEY, "The model provider refused the API key for openai/test-model (HTTP 401)"),
        (rate_limited("7"), "rate-limiting this key or its quota is used up (HTTP 429); retry after 7 s."),
        (NO_MODEL, "The model provider does not know openai/test-model (HTTP 404): check the model id."),
        (TOO_LONG, "The conversation is too long for the model's context window"),
        (SERVER_ERROR, "The model provider failed (HTTP 500); try again in a moment."),
    ],
    ids=["401", "429", "404", "context", "500"],
)
def test_each_error_shows_its_sentence_and_keeps_the_message(a2a, api, double, reply, sentence):
    session = sid()
    double.queue(reply)
    events = a2a.stream("please fail politely", session)
    said = failure(events)
    assert sentence in said
    assert "Traceback" not in said and "litellm" not in said.lower()
    (task,) = api.tasks(session)
    assert task["status"]["state"] == "failed"
    assert [texts(m) for m in task["history"] if m["role"] == "user"] == ["please fail politely"]


def test_network_failure_is_one_sentence(tmp_path, double, http, _api_key):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    options = ServerOptions(model=ModelOptions(base_url=dead, retries=0, timeout=5.0))
    with EmbeddedServer(tmp_path / "data", model=MODEL, options=options) as srv:
        said = failure(A2A(http, srv.agent_url, "0.3").stream("anyone there?", sid()))
    assert said.startswith("Cannot reach the model provider (") and said.endswith(
        "check the network or the model's base URL."
    )


def test_a_failed_message_is_no_stray_in_the_next_request(a2a, api, double):
    session = sid()
    Turn(a2a.stream("baseline turn", session))
    double.queue(BAD_KEY)
    failure(a2a.stream("message during 401 error", session))
    again = Turn(a2a.stream("message during 401 error", session))
    assert again.final["status"]["state"] == "completed"
    # the model saw the message once (before: ['baseline turn', 'message during 401 error', 'message during 401 error'])
    assert user_texts(double.requests[-1]) == ["baseline turn", "message during 401 error"]
    # the view: the baseline and the one good copy; the failed turn went to the rewound branches
    turns = [t for t in api.tasks(session) if not t["metadata"].get("rewindtui_effective_history")]
    shown = [texts(m) for t in turns for m in t["history"] if m["role"] == "user"]
    assert shown == ["baseline turn", "message during 401 error"]
    rewound = [t for t in api.tasks(session, include_rewound=True) if t["status"]["state"] == "failed"]
    assert len(rewound) == 1


def test_something_else_after_a_failure_drops_the_failed_message_too(a2a, double):
    session = sid()
    double.queue(SERVER_ERROR)
    failure(a2a.stream("lost words", session))
    Turn(a2a.stream("new words", session))
    assert user_texts(double.requests[-1]) == ["new words"]


def test_a_hang_times_out_with_its_reason(a2a, api, double):
    session = sid()
    double.queue(Reply.hang())
    said = failure(a2a.stream("are you stuck?", session))
    assert said == "The model openai/test-model did not answer within 2 s; try again, or raise model_timeout."
    # the session is free again: the next turn runs
    assert Turn(a2a.stream("hello again", session)).final["status"]["state"] == "completed"


def test_a_stall_fails_the_turn(tmp_path, double, http, _api_key):
    with model_server(tmp_path / "data", double, timeout=60.0, stall_timeout=1.0) as srv:
        double.queue(Reply.hang())
        said = failure(A2A(http, srv.agent_url, "0.3").stream("say something", sid()))
    assert said == "The model sent nothing for 1 s, so the turn was stopped; try again, or raise stall_timeout."


def test_retries_only_what_may_pass(tmp_path, double, http, _api_key):
    """Two retries: a 500 is tried again (and the retry's answer taken); a bad key is not."""
    from openai_double import SERVER_ERROR as FIVE_HUNDRED

    with model_server(tmp_path / "data", double, timeout=20.0, retries=2) as srv:
        a2a = A2A(http, srv.agent_url, "0.3")
        double.queue(FIVE_HUNDRED)
        turn = Turn(a2a.stream("flaky provider", sid()))
        assert turn.final["status"]["state"] == "completed" and len(double.requests) == 2
        double.clear()
        double.queue(BAD_KEY)
        failure(a2a.stream("bad key once", sid()))
        assert len(double.requests) == 1
