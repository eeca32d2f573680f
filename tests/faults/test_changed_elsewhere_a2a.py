"""The view follows the server on any A2A 1.0 server too: a server built on a2a-sdk's own classes
(no REST API, no revision of its own) is checked with ``ListTasks`` of the session (one task, no
history). Another client's turn there is seen before a send; one's own turns are not taken for
changes; an A2A 0.3 server (no ListTasks) is not checked, and says nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "a2a_servers"))

from a2a_servers import sdk_app
from asgi_thread import ServeInThread
from kit.a2a_chats import connected_client as _client
from kit.a2a_chats import user_texts_of as _users
from rewindtui.chat import Chat, TurnRefused
from rewindtui.client import freshness

pytestmark = pytest.mark.timeout(60)


async def test_another_clients_turn_on_an_a2a_server_is_seen_before_a_send(tmp_path, monkeypatch):
    asked: list[dict] = []
    real = freshness.newest_listed_task_id

    async def counted(client, session_id):
        result = await real(client, session_id)
        asked.append({"session": session_id, "answer": result})
        return result

    monkeypatch.setattr(freshness, "newest_listed_task_id", counted)
    with ServeInThread(factory=lambda url: sdk_app(url + "/")) as served:
        app = Chat(await _client(served, tmp_path / "app.db"))
        other = Chat(await _client(served, tmp_path / "other.db"))
        try:
            await app.send("one")
            await app.send("two")  # one's own turn: no change seen
            assert app.session_id is not None and len(asked) == 1
            await other.open(app.session_id)
            await other.send("three")
            with pytest.raises(TurnRefused, match="changed elsewhere: reloaded"):
                await app.send("four")
            assert _users(app) == ["one", "two", "three"]  # re-read from the server; "four" not sent
            await app.send("four")  # now it goes, on the fresh view
            assert _users(app) == ["one", "two", "three", "four"]
        finally:
            await app.client.aclose()
            await other.client.aclose()
    assert len(asked) == 4 and all  # app: two, four, four; other: three(a["session"] == app.session_id for a in asked)


async def test_an_a2a_03_server_is_not_checked(tmp_path, monkeypatch):
    with ServeInThread(factory=lambda url: sdk_app(url + "/", only_03=True)) as served:
        app = Chat(await _client(served, tmp_path / "app.db"))
        try:
            await app.send("one")
            calls: list[str] = []
            real_rpc = app.client.rpc

            async def rpc(operation, params):
                calls.append(operation)
                return await real_rpc(operation, params)

            monkeypatch.setattr(app.client, "rpc", rpc)
            await app.send("two")
        finally:
            await app.client.aclose()
    assert "list_tasks" not in calls and _users(app) == ["one", "two"]


async def test_the_check_is_one_list_of_one_task_without_history(tmp_path, monkeypatch):
    with ServeInThread(factory=lambda url: sdk_app(url + "/")) as served:
        app = Chat(await _client(served, tmp_path / "app.db"))
        try:
            await app.send("one")
            calls: list[tuple[str, dict]] = []
            real_rpc = app.client.rpc

            async def rpc(operation, params):
                calls.append((operation, dict(params)))
                return await real_rpc(operation, params)

            monkeypatch.setattr(app.client, "rpc", rpc)
            await app.send("two")
        finally:
            await app.client.aclose()
    lists = [params for operation, params in calls if operation == "list_tasks"]
    assert lists == [{"contextId": app.session_id, "pageSize": 1, "historyLength": 0, "includeArtifacts": False}]
