"""Moving in and out: ``rewindtui team import DIR`` copies a solo data directory's sessions into the
team database, ``rewindtui team export DIR`` copies them back out; sessions, rewound branches,
redo records, forks and artifact versions all come along and keep working."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.genai import types
from srvkit import A2A, Api, Turn
from test_redo import check, redo, rewind, seen, turns_of

from rewindtui.a2a import contract
from rewindtui.server import EmbeddedServer
from rewindtui.server.http.options import ServerOptions
from rewindtui.server.shared.paths import APP_NAME

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _team(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
    return subprocess.run(
        [sys.executable, "-m", "rewindtui", "team", *args], capture_output=True, text=True, env=env, timeout=120
    )


def _view(srv: EmbeddedServer, http: httpx.Client, sid: str) -> Any:
    """What a client reads of a session: every task (rewound ones too) and the current ones."""
    api = Api(http, srv.api_url)
    return api.tasks(sid, include_rewound=True), api.tasks(sid)


def _artifacts(srv: EmbeddedServer, sid: str) -> list[Any]:
    service = srv.app.state.parts.runner.artifact_service

    async def read() -> list[Any]:
        versions = await service.list_versions(app_name=APP_NAME, user_id="local", filename="notes.txt", session_id=sid)
        return [
            (
                v,
                await service.load_artifact(
                    app_name=APP_NAME, user_id="local", filename="notes.txt", session_id=sid, version=v
                ),
            )
            for v in versions
        ]

    return srv.call(read(), timeout=30)


def test_a_solo_data_dir_moves_into_the_team_database_and_back(tmp_path: Path, pg_url: str, http: httpx.Client) -> None:
    solo, back = tmp_path / "solo", tmp_path / "back"
    sid = "moving"
    with EmbeddedServer(solo) as srv:
        a2a, api = A2A(http, srv.agent_url, "0.3"), Api(http, srv.api_url)
        turns = turns_of(a2a, sid, "one", "weather in Oslo", "three")
        rewind(api, sid, turns[1].invocation_id)  # a rewound branch: turns 2-3
        assert redo(api, sid).status_code == 200  # a redo record: they are back
        rewind(api, sid, turns[2].invocation_id)  # and turn 3 rewound again
        fork = api.post(contract.REST_FORK.format(id=sid), {contract.REST_BEFORE_FIELD: turns[1].invocation_id})
        assert fork.status_code == 201
        fork_id = fork.json()["data"]["id"]
        service = srv.app.state.parts.runner.artifact_service
        for text in ("v0", "v1"):
            srv.call(
                service.save_artifact(
                    app_name=APP_NAME,
                    user_id="local",
                    filename="notes.txt",
                    session_id=sid,
                    artifact=types.Part(text=text),
                ),
                timeout=30,
            )
        before = {s: _view(srv, http, s) for s in (sid, fork_id)}
        artifacts = _artifacts(srv, sid)
        assert [v for v, _ in artifacts] == [0, 1]

    moved = _team("--database-url", pg_url, "import", str(solo))
    assert moved.returncode == 0, moved.stderr
    assert "moved 2 session(s)" in moved.stdout and "2 artifact version(s)" in moved.stdout
    again = _team("--database-url", pg_url, "import", str(solo))  # a session is moved once
    assert again.returncode == 1 and "already has session" in again.stderr and "\n" not in again.stderr.strip()

    team_data = tmp_path / "replica"
    with EmbeddedServer(team_data, options=ServerOptions(database_url=pg_url)) as srv:
        for s in (sid, fork_id):
            assert _view(srv, http, s) == before[s]  # the same tasks, marks and histories
            assert check(srv, s) == []  # ADK's history and the store's agree
        assert _artifacts(srv, sid) == artifacts
        api = Api(http, srv.api_url)
        assert redo(api, sid).status_code == 200  # the redo record still works: turn 3 comes back
        answer = Turn(A2A(http, srv.agent_url, "0.3").stream("after the move", sid)).answer
        assert seen(answer) == (["one", "weather in Oslo", "three", "after the move"], 1)
        fork_answer = Turn(A2A(http, srv.agent_url, "0.3").stream("in the fork", fork_id)).answer
        assert seen(fork_answer)[0] == ["one", "in the fork"]
        after = {s: _view(srv, http, s) for s in (sid, fork_id)}

    out = _team("--database-url", pg_url, "export", str(back))
    assert out.returncode == 0, out.stderr
    with EmbeddedServer(back) as srv:
        for s in (sid, fork_id):
            assert _view(srv, http, s) == after[s]
            assert check(srv, s) == []
        assert _artifacts(srv, sid) == artifacts

    # and the other way round: that solo copy of the team database moves into a second, empty team
    # database (a team database copied through the solo format) and reads the same there
    from kit.postgres import new_database

    second = new_database()
    moved = _team("--database-url", second, "import", str(back))
    assert moved.returncode == 0, moved.stderr
    assert "moved 2 session(s)" in moved.stdout and "2 artifact version(s)" in moved.stdout
    with EmbeddedServer(tmp_path / "replica2", options=ServerOptions(database_url=second)) as srv:
        for s in (sid, fork_id):
            assert _view(srv, http, s) == after[s]
            assert check(srv, s) == []
        assert _artifacts(srv, sid) == artifacts
        api = Api(http, srv.api_url)
        invocations = [t.invocation_id for t in turns]
        rewind(api, sid, invocations[1])  # rewound branches still work: back to after turn 1
        answer = Turn(A2A(http, srv.agent_url, "0.3").stream("in the second database", sid)).answer
        assert seen(answer) == (["one", "in the second database"], 0)  # the weather call went back too
