"""Redo (undo a rewind), nested rewinds, rewound branches brought back or forked, and the
``include_rewound`` views -- over loopback against the embedded server, real ADK and SQLite.

The demo model answers from what it sees: its history of user texts and the session state
``weather_calls`` (which the weather tool bumps). So each answer after a redo says whether the
model sees the restored turns again and whether the state came back.
"""

from __future__ import annotations

import ast
import asyncio
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from srvkit import A2A, Api, Served, Turn, wait_for_file

from rewindtui.a2a import contract
from rewindtui.server import EmbeddedServer
from rewindtui.server.agent.agent import build_agent
from rewindtui.server.http.options import PAUSE_ENV
from rewindtui.server.shared.wire import effective_events

#: also on a team server's PostgreSQL (tests/server/conftest.py)
ENGINES = ("sqlite", "postgresql")

POSIX = sys.platform != "win32"


def seen(answer: str) -> tuple[list[str], int]:
    """(the user texts the demo model saw, weather_calls) from a plain answer."""
    history = ast.literal_eval(answer.split("history: ", 1)[1].rsplit("; weather_calls", 1)[0])
    return history, int(answer.rsplit("weather_calls=", 1)[1].rstrip(")"))


def redo(api: Api, sid: str, rewind_task_id: str | None = None) -> httpx.Response:
    body = {contract.REST_REDO_FIELD: rewind_task_id} if rewind_task_id else {}
    return api.post(contract.REST_REDO.format(id=sid), body)


def rewind(api: Api, sid: str, invocation_id: str) -> dict[str, Any]:
    resp = api.post(contract.REST_REWIND.format(id=sid), {contract.REST_BEFORE_FIELD: invocation_id})
    assert resp.status_code == 200, resp.text
    return resp.json()["data"]


def check(srv: EmbeddedServer, sid: str, user: str = "local") -> list[str]:
    """ADK's effective history and the store's agree (the recovery check)."""
    return srv.call(srv.app.state.parts.service.recovery.check(sid, user), timeout=30)


def ids(turns: list[Turn]) -> list[str]:
    return [mid for turn in turns for mid in turn.message_ids]


def turns_of(a2a: A2A, sid: str, *texts: str) -> list[Turn]:
    return [Turn(a2a.stream(text, sid)) for text in texts]


def rewound_tasks(api: Api, sid: str) -> dict[str, dict[str, Any]]:
    """Rewound turn tasks by task id: their rewound metadata."""
    out = {}
    for task in api.tasks(sid, include_rewound=True):
        meta = task.get("metadata") or {}
        if meta.get(contract.REWOUND_KEY) and task.get("history") and not meta.get(contract.EFFECTIVE_HISTORY_KEY):
            out[task["id"]] = meta
    return out


# -- ADK itself ----------------------------------------------------------------------------------
def test_adk_rewinding_before_a_rewind_event_restores_history_and_state() -> None:
    """What redo is built on: ``Runner.rewind_async`` before the rewind event's own invocation.
    ADK hides the rewind event itself, so the turns it hid are seen again, and the state delta it
    computes restores the state from before the rewind -- in place, nothing deleted."""

    async def run() -> None:
        sessions = InMemorySessionService()
        runner = Runner(app_name="a", agent=build_agent(), session_service=sessions)
        await sessions.create_session(app_name="a", user_id="u", session_id="s")
        invocations: list[str] = []

        async def turn(text: str) -> str:
            answer = ""
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for event in runner.run_async(
                user_id="u", session_id="s", new_message=message, yield_user_message=True
            ):
                if event.author == "user":
                    invocations.append(event.invocation_id)
                elif event.content and event.content.parts and event.content.parts[0].text:
                    answer = event.content.parts[0].text
            return answer

        await turn("hello")
        await turn("weather in Oslo")
        await runner.rewind_async(user_id="u", session_id="s", rewind_before_invocation_id=invocations[1])
        session = await sessions.get_session(app_name="a", user_id="u", session_id="s")
        assert session is not None and not session.state.get("weather_calls")
        rewind_event = session.events[-1].invocation_id
        await runner.rewind_async(user_id="u", session_id="s", rewind_before_invocation_id=rewind_event)
        session = await sessions.get_session(app_name="a", user_id="u", session_id="s")
        assert session is not None and session.state["weather_calls"] == 1
        assert len(session.events) == 8  # hello (2 events), weather (4), 2 rewind events: all kept
        assert [e.invocation_id for e in effective_events(session.events) if e.author == "user"] == invocations
        assert seen(await turn("after")) == (["hello", "weather in Oslo", "after"], 1)

    asyncio.run(run())


# -- redo ----------------------------------------------------------------------------------------
def test_redo_brings_back_history_and_state(data_dir: Path, engine_options, dialect: str, http: httpx.Client) -> None:
    sid = "redo-basic"
    with EmbeddedServer(data_dir, options=engine_options) as srv:
        a2a, api = A2A(http, srv.agent_url, dialect), Api(http, srv.api_url)
        turns = turns_of(a2a, sid, "hello", "what is the weather in Tokyo", "third")
        events = a2a.rewind(sid, turns[1].invocation_id)  # the A2A control message
        rewind_task = events[0]
        assert api.merged_ids(sid) == turns[0].message_ids

        resp = redo(api, sid)
        assert resp.status_code == 200, resp.text
        answer = resp.json()["data"]
        meta = answer["metadata"]
        assert meta[contract.EFFECTIVE_HISTORY_KEY] is True
        assert meta[contract.REDO_OF_KEY] == rewind_task["id"]
        assert meta[contract.REWOUND_BEFORE_KEY] == rewind_task["metadata"][contract.REWIND_INVOCATION_KEY]
        assert [m["messageId"] for m in answer["history"]] == ids(turns)  # the original messages, in order
        assert api.merged_ids(sid) == ids(turns)  # stored: a reload shows it
        assert check(srv, sid) == []

        after = Turn(a2a.stream("after redo", sid))
        assert seen(after.answer) == (["hello", "what is the weather in Tokyo", "third", "after redo"], 1)

    with EmbeddedServer(data_dir, options=engine_options) as srv:  # restart on the same data dir
        a2a, api = A2A(http, srv.agent_url, dialect), Api(http, srv.api_url)
        assert api.merged_ids(sid) == ids([*turns, after])
        assert check(srv, sid) == []


def test_nested_rewinds_redo_newest_first(server: EmbeddedServer, make_a2a, make_api) -> None:
    a2a, api = make_a2a(server), make_api(server)
    sid = "redo-nested"
    turns = turns_of(a2a, sid, "one", "weather in Lima", "three", "four")
    first = rewind(api, sid, turns[3].invocation_id)  # takes turn 4 away
    second = rewind(api, sid, turns[1].invocation_id)  # takes turns 2-3 away
    assert api.merged_ids(sid) == turns[0].message_ids

    undo_second = redo(api, sid).json()["data"]
    assert undo_second["metadata"][contract.REDO_OF_KEY] == second["id"]
    assert api.merged_ids(sid) == ids(turns[:3])
    undo_first = redo(api, sid).json()["data"]
    assert undo_first["metadata"][contract.REDO_OF_KEY] == first["id"]
    assert api.merged_ids(sid) == ids(turns)
    assert check(server, sid) == []

    nothing = redo(api, sid)  # every rewind is undone
    assert nothing.status_code == 409 and "nothing to redo" in nothing.json()["error"]
    assert api.merged_ids(sid) == ids(turns)
    assert rewound_tasks(api, sid) == {}

    after = Turn(a2a.stream("five", sid))
    assert seen(after.answer) == (["one", "weather in Lima", "three", "four", "five"], 1)


def test_plain_redo_is_refused_after_a_new_turn_and_changes_nothing(server, make_a2a, make_api) -> None:
    a2a, api = make_a2a(server), make_api(server)
    sid = "redo-after-turn"
    turns = turns_of(a2a, sid, "one", "two")
    rewind(api, sid, turns[1].invocation_id)
    new = Turn(a2a.stream("other two", sid))
    before = api.tasks(sid, include_rewound=True)
    resp = redo(api, sid)
    assert resp.status_code == 409, resp.text
    assert api.tasks(sid, include_rewound=True) == before
    assert seen(Turn(a2a.stream("three", sid)).answer)[0] == ["one", "other two", "three"]
    assert new.invocation_id


def test_a_rewound_branch_comes_back_by_its_rewind_and_the_other_branch_is_kept(server, make_a2a, make_api) -> None:
    """Rewind turn 2 away, send another turn 2; bring the first branch back (the new turn becomes a
    rewound branch in its turn), then bring the new one back again. Nothing is ever lost."""
    a2a, api = make_a2a(server), make_api(server)
    sid = "redo-branches"
    one, weather = turns_of(a2a, sid, "one", "weather in Rome")
    first_rewind = rewind(api, sid, weather.invocation_id)
    other = Turn(a2a.stream("other", sid))
    rewound = rewound_tasks(api, sid)
    assert list(rewound) == [weather.task_id]
    assert rewound[weather.task_id][contract.REWOUND_BY_TASK_KEY] == first_rewind["id"]
    assert rewound[weather.task_id][contract.REWOUND_AT_KEY]

    resp = redo(api, sid, first_rewind["id"])
    assert resp.status_code == 200, resp.text
    restore = resp.json()["data"]
    assert api.merged_ids(sid) == ids([one, weather])
    rewound = rewound_tasks(api, sid)
    assert list(rewound) == [other.task_id]  # the other branch is kept, rewound by the redo
    assert rewound[other.task_id][contract.REWOUND_BY_TASK_KEY] == restore["id"]
    assert check(server, sid) == []
    assert seen(Turn(a2a.stream("probe", sid)).answer) == (["one", "weather in Rome", "probe"], 1)

    probe_branch = rewound_tasks(api, sid)
    assert other.task_id in probe_branch
    back = redo(api, sid, restore["id"])  # the other branch again (undoes the probe's branch too)
    assert back.status_code == 200, back.text
    assert api.merged_ids(sid) == ids([one, other])
    assert seen(Turn(a2a.stream("last", sid)).answer) == (["one", "other", "last"], 0)
    assert check(server, sid) == []


def test_include_rewound_lists_every_task_with_its_marks(server, make_a2a, make_api) -> None:
    a2a, api = make_a2a(server), make_api(server)
    sid = "redo-views"
    turns = turns_of(a2a, sid, "a", "b", "c")
    first = rewind(api, sid, turns[2].invocation_id)
    second = rewind(api, sid, turns[1].invocation_id)
    everything = api.tasks(sid, include_rewound=True)
    assert [t["id"] for t in everything] == [*(t.task_id for t in turns), first["id"], second["id"]]
    assert [t["id"] for t in api.tasks(sid)] == [turns[0].task_id, second["id"]]
    marks = {t["id"]: (t.get("metadata") or {}).get(contract.REWOUND_BY_TASK_KEY) for t in everything}
    # turn c was taken away by the first rewind; turn b and the first rewind by the second
    assert marks == {
        turns[0].task_id: None,
        turns[1].task_id: second["id"],
        turns[2].task_id: first["id"],
        first["id"]: second["id"],
        second["id"]: None,
    }
    # rewound tasks keep their histories (nothing deleted)
    assert [m["messageId"] for t in everything[:3] for m in t["history"]] == ids(turns)
    # redo of the first rewind (itself rewound) brings back everything up to it: turns b and c
    resp = redo(api, sid, first["id"])
    assert resp.status_code == 200, resp.text
    assert api.merged_ids(sid) == ids(turns)
    assert rewound_tasks(api, sid) == {}
    assert check(server, sid) == []


def test_redo_refusals(server, make_a2a, make_api) -> None:
    a2a, api = make_a2a(server), make_api(server)
    sid = "redo-refusals"
    (turn,) = turns_of(a2a, sid, "only")
    assert redo(api, sid).status_code == 409  # no rewind at all
    assert redo(api, sid, "no-such-task").status_code == 404
    assert redo(api, sid, turn.task_id).status_code == 404  # a turn is not a rewind
    assert redo(api, sid, "bad id!").status_code == 400
    assert redo(api, "no-such-session").status_code == 404
    assert api.merged_ids(sid) == turn.message_ids


# -- fork from a rewound branch --------------------------------------------------------------------
def test_fork_a_rewound_branch_whole(server, make_a2a, make_api) -> None:
    """Fork before a rewind's own invocation: the new session is the branch that rewind took away,
    state included; the original is untouched."""
    a2a, api = make_a2a(server), make_api(server)
    sid = "fork-branch"
    turns = turns_of(a2a, sid, "one", "weather in Oslo")
    taken = rewind(api, sid, turns[1].invocation_id)
    before = api.merged_ids(sid)
    resp = api.post(
        contract.REST_FORK.format(id=sid),
        {contract.REST_BEFORE_FIELD: taken["metadata"][contract.REWIND_INVOCATION_KEY]},
    )
    assert resp.status_code == 201, resp.text
    fork = resp.json()["data"]
    assert fork[contract.SESSION_FORKED_FROM_FIELD] == sid and fork["name"].endswith("@ turn 3")
    assert api.merged_ids(fork["id"]) == ids(turns)
    assert seen(Turn(a2a.stream("in the fork", fork["id"])).answer) == (["one", "weather in Oslo", "in the fork"], 1)
    assert api.merged_ids(sid) == before
    assert check(server, fork["id"]) == [] and check(server, sid) == []


def test_fork_before_a_rewound_turn(server, make_a2a, make_api) -> None:
    a2a, api = make_a2a(server), make_api(server)
    sid = "fork-rewound-turn"
    turns = turns_of(a2a, sid, "one", "weather in Oslo", "three")
    rewind(api, sid, turns[1].invocation_id)
    resp = api.post(contract.REST_FORK.format(id=sid), {contract.REST_BEFORE_FIELD: turns[2].invocation_id})
    assert resp.status_code == 201, resp.text
    fork = resp.json()["data"]
    assert api.merged_ids(fork["id"]) == ids(turns[:2])
    assert seen(Turn(a2a.stream("x", fork["id"])).answer) == (["one", "weather in Oslo", "x"], 1)


# -- sessions: fork origin, rewound branches, rename ----------------------------------------------
def test_sessions_say_fork_turn_and_rewound_branches(server, make_a2a, make_api) -> None:
    a2a, api = make_a2a(server, user="branches-user"), make_api(server, user="branches-user")
    sid = "listed"
    turns = turns_of(a2a, sid, "one", "two", "three")
    rewind(api, sid, turns[2].invocation_id)
    rewind(api, sid, turns[1].invocation_id)
    fork = api.post(contract.REST_FORK.format(id=sid), {contract.REST_BEFORE_FIELD: turns[1].invocation_id}).json()[
        "data"
    ]
    listed = {s["id"]: s for s in api.get("/sessions").json()["data"]}
    assert listed[sid][contract.SESSION_BRANCHES_FIELD] == 2
    assert contract.SESSION_FORKED_FROM_FIELD not in listed[sid]
    assert listed[fork["id"]][contract.SESSION_FORKED_FROM_FIELD] == sid
    assert listed[fork["id"]][contract.SESSION_FORK_TURN_FIELD] == 2
    assert listed[fork["id"]][contract.SESSION_BRANCHES_FIELD] == 0
    redo(api, sid)
    assert api.get(f"/sessions/{sid}").json()["data"][contract.SESSION_BRANCHES_FIELD] == 1


def test_rename_a_session(server, make_a2a, make_api) -> None:
    a2a, api = make_a2a(server), make_api(server)
    Turn(a2a.stream("hello", "to-rename"))
    resp = api.client.put(api.base + "/sessions/to-rename", json={"name": "  My   chat "})
    assert resp.status_code == 200, resp.text
    assert resp.json()["data"]["name"] == "My chat"
    assert api.get("/sessions/to-rename").json()["data"]["name"] == "My chat"
    assert api.client.put(api.base + "/sessions/to-rename", json={"name": " "}).status_code == 400
    assert api.client.put(api.base + "/sessions/nope", json={"name": "x"}).status_code == 404
    other = api.client.put(api.base + "/sessions/to-rename", json={"name": "x"}, headers={"X-User-Id": "someone"})
    assert other.status_code == 404


# -- a crash between ADK's redo and the store's ----------------------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(not POSIX, reason="uses SIGKILL")
def test_kill_9_mid_redo_then_restart(tmp_path: Path, http: httpx.Client) -> None:
    data, marker = tmp_path / "d", tmp_path / "paused"
    sid = "redo-crash"
    with EmbeddedServer(data) as srv:
        a2a, api = A2A(http, srv.agent_url, "0.3"), Api(http, srv.api_url)
        turns = turns_of(a2a, sid, "one", "weather in Oslo")
        rewind(api, sid, turns[1].invocation_id)
    served = Served(data, env={PAUSE_ENV: f"rewind.after_agent={marker}"})
    try:
        api = Api(http, served.api_url)
        thread = threading.Thread(target=lambda: _quietly(lambda: redo(api, sid)), daemon=True)
        thread.start()
        wait_for_file(marker)  # ADK has undone the rewind; the store has not been touched
        served.kill9()
    finally:
        served.close()

    with EmbeddedServer(data) as srv:
        report = srv.app.state.parts.service.recovery.startup_report
        assert (report.intents_completed, report.intents_dropped, report.problems) == (1, 0, [])
        api = Api(http, srv.api_url)
        assert api.merged_ids(sid) == ids(turns)  # the journal finished the redo in the store
        assert check(srv, sid) == []
        assert seen(Turn(A2A(http, srv.agent_url, "1.0").stream("after", sid)).answer) == (
            ["one", "weather in Oslo", "after"],
            1,
        )


def _quietly(fn: Any) -> None:
    try:
        fn()
    except httpx.HTTPError:  # the server is killed under it
        pass
