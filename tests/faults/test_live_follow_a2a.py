"""The live view's core on any A2A 1.0 server (a server built on a2a-sdk's own classes: no REST
API, no revision of its own): the check is ``ListTasks`` of the session, one task, without history;
another client's turn there is followed, one's own turns are not taken for changes; an A2A 0.3
server (no ListTasks) is not followed, and is not asked."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "a2a_servers"))

from a2a_servers import sdk_app
from asgi_thread import ServeInThread
from kit.a2a_chats import connected_client as _client
from kit.a2a_chats import user_texts_of as _users
from rewindtui.chat import Chat
from rewindtui.chat.live import LiveWatch, can_follow

pytestmark = pytest.mark.timeout(60)


async def test_another_clients_turn_on_an_a2a_server_is_followed(tmp_path, monkeypatch):
    with ServeInThread(factory=lambda url: sdk_app(url + "/")) as served:
        mine = Chat(await _client(served, tmp_path / "mine.db"))
        other = Chat(await _client(served, tmp_path / "other.db"))
        try:
            await mine.send("one")
            watch = LiveWatch(mine)
            assert can_follow(mine)
            calls: list[tuple[str, dict]] = []
            real_rpc = mine.client.rpc

            async def rpc(operation, params):
                calls.append((operation, dict(params)))
                return await real_rpc(operation, params)

            monkeypatch.setattr(mine.client, "rpc", rpc)
            assert await watch.check() is None
            await mine.send("two")  # one's own turn
            assert await watch.check() is None
            await other.open(mine.session_id)
            await other.send("three")
            followed = await watch.check()
            assert followed is not None and followed.said.startswith("Another client sent a turn in this session")
            assert _users(mine) == ["one", "two", "three"]
        finally:
            await mine.client.aclose()
            await other.client.aclose()
    checks = [params for operation, params in calls if operation == "list_tasks"]
    assert checks[0] == {"contextId": mine.session_id, "pageSize": 1, "historyLength": 0, "includeArtifacts": False}


async def test_an_a2a_03_server_is_not_followed(tmp_path, monkeypatch):
    with ServeInThread(factory=lambda url: sdk_app(url + "/", only_03=True)) as served:
        mine = Chat(await _client(served, tmp_path / "mine.db"))
        try:
            await mine.send("one")
            calls: list[str] = []
            real_rpc = mine.client.rpc

            async def rpc(operation, params):
                calls.append(operation)
                return await real_rpc(operation, params)

            monkeypatch.setattr(mine.client, "rpc", rpc)
            assert not can_follow(mine)
            assert await LiveWatch(mine).check() is None
        finally:
            await mine.client.aclose()
    assert calls == []
