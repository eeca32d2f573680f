"""The issue's end-to-end scenario, in both A2A dialects, through every rewind path.

Three turns (the second one calls the tool, which bumps ``weather_calls``) ->
rewind before turn 2 (A2A control message, REST, rewind-and-send, or fork) ->
the effective history has the original messageIds -> the next answer shows the
model no longer sees turns 2-3 and ``weather_calls`` went back -> GET tasks
shows the rewound view -> stop, restart on the same data dir: all still there.
"""

from __future__ import annotations

from pathlib import Path

import httpx
from srvkit import A2A, Api, Turn, texts

from rewindtui.server import EmbeddedServer
from rewindtui.server.http.options import ServerOptions

#: also on a team server's PostgreSQL (tests/server/conftest.py)
ENGINES = ("sqlite", "postgresql")

SID = "sess-main"


def three_turns(a2a: A2A, sid: str = SID) -> list[Turn]:
    turns = [Turn(a2a.stream(text, sid)) for text in ("hello", "what is the weather in Tokyo", "third message")]
    assert turns[0].answer == "You said: hello (turn 1; history: ['hello']; weather_calls=0)"
    assert turns[1].answer == (
        "Tool get_weather returned: {'city': 'Tokyo', 'forecast': 'sunny', 'temp_c': 21, 'call_no': 1} "
        "(weather_calls=1)"
    )
    assert turns[2].answer == (
        "You said: third message (turn 3; history: ['hello', 'what is the weather in Tokyo', "
        "'third message']; weather_calls=1)"
    )
    assert len({t.invocation_id for t in turns}) == 3
    return turns


def assert_effective_task(task: dict, sid: str, expected_ids: list[str]) -> None:
    assert task["kind"] == "task"
    assert task["contextId"] == sid
    assert task["status"]["state"] == "completed"
    assert task["metadata"]["rewindtui_effective_history"] is True
    assert [m["messageId"] for m in task.get("history", [])] == expected_ids


def after_rewind_answer(text: str, turn: int, seen: list[str]) -> str:
    return f"You said: {text} (turn {turn}; history: {seen!r}; weather_calls=0)"


def test_a2a_rewind_control_message(
    data_dir: Path, engine_options: ServerOptions, dialect: str, http: httpx.Client
) -> None:
    with EmbeddedServer(data_dir, options=engine_options) as srv:
        a2a, api = A2A(http, srv.agent_url, dialect), Api(http, srv.api_url)
        turns = three_turns(a2a)
        assert api.merged_ids(SID) == turns[0].message_ids + turns[1].message_ids + turns[2].message_ids

        events = a2a.rewind(SID, turns[1].invocation_id)
        assert len(events) == 1, events  # one full Task, the model is not called
        assert_effective_task(events[0], SID, turns[0].message_ids)
        assert texts(events[0]["history"][1]) == turns[0].answer
        if dialect == "0.3":
            assert a2a.last_raw[0]["result"]["kind"] == "task"
        else:
            assert "task" in a2a.last_raw[0]["result"]

        assert api.merged_ids(SID) == turns[0].message_ids  # saved: a reload shows the rewound view
        after = Turn(a2a.stream("after rewind", SID))
        assert after.answer == after_rewind_answer("after rewind", 2, ["hello", "after rewind"])
        expected = turns[0].message_ids + after.message_ids
        assert api.merged_ids(SID) == expected

    with EmbeddedServer(data_dir, options=engine_options) as srv:  # restart on the same data dir
        a2a, api = A2A(http, srv.agent_url, dialect), Api(http, srv.api_url)
        assert api.merged_ids(SID) == expected
        again = Turn(a2a.stream("after restart", SID))
        assert again.answer == after_rewind_answer("after restart", 3, ["hello", "after rewind", "after restart"])


def test_rest_rewind(data_dir: Path, engine_options: ServerOptions, dialect: str, http: httpx.Client) -> None:
    with EmbeddedServer(data_dir, options=engine_options) as srv:
        a2a, api = A2A(http, srv.agent_url, dialect), Api(http, srv.api_url)
        turns = three_turns(a2a)
        resp = api.post(f"/sessions/{SID}/rewind", {"rewind_before_invocation_id": turns[1].invocation_id})
        assert resp.status_code == 200, resp.text
        body = resp.json()
        assert body["error"] is False and body["message"]
        assert_effective_task(body["data"], SID, turns[0].message_ids)
        assert api.merged_ids(SID) == turns[0].message_ids
        after = Turn(a2a.stream("after rest rewind", SID))
        assert after.answer == after_rewind_answer("after rest rewind", 2, ["hello", "after rest rewind"])
        expected = turns[0].message_ids + after.message_ids

    with EmbeddedServer(data_dir, options=engine_options) as srv:
        a2a, api = A2A(http, srv.agent_url, dialect), Api(http, srv.api_url)
        assert api.merged_ids(SID) == expected
        again = Turn(a2a.stream("later", SID))
        assert again.answer == after_rewind_answer("later", 3, ["hello", "after rest rewind", "later"])


def test_rewind_and_send(data_dir: Path, engine_options: ServerOptions, dialect: str, http: httpx.Client) -> None:
    with EmbeddedServer(data_dir, options=engine_options) as srv:
        a2a, api = A2A(http, srv.agent_url, dialect), Api(http, srv.api_url)
        turns = three_turns(a2a)
        events = a2a.rewind(SID, turns[1].invocation_id, text="something else")
        assert_effective_task(events[0], SID, turns[0].message_ids)
        # ...then the next turn, in the same stream, opening with its Task (the user message)
        rest = events[1:]
        assert rest[0]["kind"] == "task" and rest[0]["status"]["state"] == "submitted"
        (echo,) = rest[0]["history"]
        assert texts(echo) == "something else"
        assert echo["metadata"]["kagent_invocation_id"].startswith("e-")
        assert "kagent_rewind_before_invocation_id" not in echo["metadata"]
        turn = Turn(rest)
        assert turn.task_id != events[0]["id"]
        assert turn.final["status"]["state"] == "completed"
        assert turn.answer == after_rewind_answer("something else", 2, ["hello", "something else"])
        expected = turns[0].message_ids + turn.message_ids
        assert api.merged_ids(SID) == expected

    with EmbeddedServer(data_dir, options=engine_options) as srv:
        a2a, api = A2A(http, srv.agent_url, dialect), Api(http, srv.api_url)
        assert api.merged_ids(SID) == expected
        again = Turn(a2a.stream("and now", SID))
        assert again.answer == after_rewind_answer("and now", 3, ["hello", "something else", "and now"])


def test_fork(data_dir: Path, engine_options: ServerOptions, dialect: str, http: httpx.Client) -> None:
    with EmbeddedServer(data_dir, options=engine_options) as srv:
        a2a, api = A2A(http, srv.agent_url, dialect), Api(http, srv.api_url)
        turns = three_turns(a2a)
        original_tasks = api.tasks(SID)
        resp = api.post(f"/sessions/{SID}/fork", {"rewind_before_invocation_id": turns[1].invocation_id})
        assert resp.status_code == 201, resp.text
        fork = resp.json()["data"]
        assert fork["id"] != SID
        assert fork["name"] == "Fork of hello @ turn 2"
        assert fork["user_id"] == "local" and fork["agent_ref"] == "local/demo"

        # the original is untouched
        assert api.tasks(SID) == original_tasks
        # the fork holds the effective history before turn 2, with the original messageIds
        fork_tasks = api.tasks(fork["id"])
        assert len(fork_tasks) == 1
        assert_effective_task(fork_tasks[0], fork["id"], turns[0].message_ids)
        assert all(m["contextId"] == fork["id"] for m in fork_tasks[0]["history"])
        assert all(m["metadata"]["kagent_session_id"] == fork["id"] for m in fork_tasks[0]["history"])

        in_fork = Turn(a2a.stream("in the fork", fork["id"]))
        assert in_fork.answer == after_rewind_answer("in the fork", 2, ["hello", "in the fork"])
        in_original = Turn(a2a.stream("in the original", SID))
        assert in_original.answer == (
            "You said: in the original (turn 4; history: ['hello', 'what is the weather in Tokyo', "
            "'third message', 'in the original']; weather_calls=1)"
        )
        fork_expected = turns[0].message_ids + in_fork.message_ids
        assert api.merged_ids(fork["id"]) == fork_expected
        # a fork can be rewound like any session (its invocations were copied)
        events = a2a.rewind(fork["id"], in_fork.invocation_id)
        assert_effective_task(events[0], fork["id"], turns[0].message_ids)

    with EmbeddedServer(data_dir, options=engine_options) as srv:
        api = Api(http, srv.api_url)
        assert api.merged_ids(fork["id"]) == turns[0].message_ids
        assert api.get(f"/sessions/{fork['id']}").json()["data"]["name"] == "Fork of hello @ turn 2"
        assert len(api.merged_ids(SID)) == sum(len(t.message_ids) for t in turns) + len(in_original.message_ids)


def test_repeated_rewinds_keep_state_consistent(
    data_dir: Path, engine_options: ServerOptions, http: httpx.Client
) -> None:
    """Rewind, chat, rewind again further back, chat: history and state follow every step."""
    with EmbeddedServer(data_dir, options=engine_options) as srv:
        a2a, api = A2A(http, srv.agent_url, "0.3"), Api(http, srv.api_url)
        w1 = Turn(a2a.stream("weather in Oslo", SID))
        w2 = Turn(a2a.stream("weather in Rome", SID))
        assert w2.answer.endswith("(weather_calls=2)")
        a2a.rewind(SID, w2.invocation_id)
        w3 = Turn(a2a.stream("weather in Lima", SID))
        assert w3.answer.endswith("'call_no': 2} (weather_calls=2)")
        # the rewound turn is no longer a target
        refused = a2a.rewind(SID, w2.invocation_id)
        assert refused[-1]["status"]["state"] == "failed"
        events = a2a.rewind(SID, w1.invocation_id)
        assert_effective_task(events[0], SID, [])
        fresh = Turn(a2a.stream("hi again", SID))
        assert fresh.answer == "You said: hi again (turn 1; history: ['hi again']; weather_calls=0)"
        assert api.merged_ids(SID) == fresh.message_ids
