"""``GET {api}/sessions/{id}/tasks?history_length=N``: each task's history cut to its newest N
messages (0: none). The newest-task check (the live view's, and the one before each send) asks for
none: after the undo of a long rewind, the newest task is the redo's, whose history is the whole
effective history -- seen in a real terminal as megabytes and seconds per check on a
5,000-turn session."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.server import EmbeddedServer
from seed_turns import seed_session

TURNS = 30
SID = "long"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def undone(tmp_path_factory: pytest.TempPathFactory):
    """A session of ``TURNS`` turns, rewound to before its second turn and the rewind undone."""
    with EmbeddedServer(tmp_path_factory.mktemp("hl")) as srv:
        invocations = srv.call(seed_session(srv.app.state.parts, SID, TURNS))
        service = srv.app.state.parts.service
        task, _ = srv.call(service.rewind("local", SID, invocations[1]))
        srv.call(service.redo("local", SID, task["id"]))
        yield srv


def test_the_newest_task_check_reads_no_history(undone):
    async def newest():
        async with A2AClient(ServerConfig(url=undone.agent_url, api=undone.api_url)) as client:
            await client.connect()
            return await client.newest_task(SID)

    task = asyncio.run(newest())
    assert task is not None and task["metadata"]["rewindtui_redo_of"]  # the redo's Task
    assert task["history"] == []  # not the 60 messages of the effective history


def test_history_length_cuts_each_history_to_its_newest_messages(undone, http):
    url = f"{undone.api_url}/sessions/{SID}/tasks"
    whole = http.get(url, params={"limit": 3}).json()["data"]
    assert [len(t["history"]) for t in whole] == [2, 2, 2 * TURNS]  # the last turn, the rewind, the redo
    for length in (0, 1, 3, 5, 10_000):  # 3: more than a short history holds, fewer than twice it
        cut = http.get(url, params={"limit": 3, "history_length": length}).json()["data"]
        assert [t["id"] for t in cut] == [t["id"] for t in whole]
        assert [t["history"] for t in cut] == [t["history"][max(0, len(t["history"]) - length) :] for t in whole]
    everything = http.get(url, params={"history_length": 0}).json()["data"]
    assert len(everything) > 3 and all(t["history"] == [] for t in everything)


def test_a_bad_history_length_is_refused(undone, http):
    url = f"{undone.api_url}/sessions/{SID}/tasks"
    for value in ("-1", "ten", "1.5", ""):
        resp = http.get(url, params={"limit": 1, "history_length": value})
        assert resp.status_code == 400 and "history_length" in resp.json()["error"], (value, resp.text)
