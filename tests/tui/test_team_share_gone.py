"""A session shared with bob, open in bob's app, stops being shared (``rewindtui team unshare``):
the server answers bob 404, as for a deleted session (it does not tell him more), and the app
must not claim that another client deleted it. The real embedded server with users
(``ServerOptions(users=True)``, on SQLite), tokens and shares made by the admin command."""

from __future__ import annotations

import asyncio
import io
import uuid
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import httpx
import pytest

from kit.apps import new_app
from kit.pilot import SIZE, notifications, settle, wait_until
from kit.servers import settings_in
from rewindtui.config.connection import AppConnector
from rewindtui.server import EmbeddedServer
from rewindtui.server.http.options import ServerOptions


def _team(data_dir: Path, *args: str) -> str:
    """``rewindtui team --data-dir DIR ARGS`` through the CLI's entry point (in a thread: it runs
    its own event loop). Not thread-safe (it swaps sys.stdout): one call at a time."""
    from rewindtui.cli.main import main as cli

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = cli(["team", "--data-dir", str(data_dir), *args])
    assert rc == 0, err.getvalue()
    return out.getvalue()


async def _tokens(tmp_path, data) -> str:
    """alice's and bob's tokens (bob's in ``bob.token``, his client's data in ``bob/``): alice's."""
    alice = (await asyncio.to_thread(_team, data, "token", "alice")).split()[0]
    bob = (await asyncio.to_thread(_team, data, "token", "bob")).split()[0]
    (tmp_path / "bob.token").write_text(bob)
    (tmp_path / "bob").mkdir()
    return alice


async def _shared_with_bob(server, data, alice: str) -> str:
    """A session of alice's with one turn, shared with bob for writing: its id."""
    session = f"s-{uuid.uuid4().hex[:8]}"
    message = {"kind": "message", "role": "user", "messageId": "m1", "contextId": session}
    message["parts"] = [{"kind": "text", "text": "from alice"}]
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    async with httpx.AsyncClient(timeout=60) as http:
        sent = await http.post(server.agent_url, json=body, headers={"Authorization": f"Bearer {alice}"})
    assert sent.json()["result"]["status"]["state"] == "completed"
    await asyncio.to_thread(_team, data, "share", session, "bob", "--mode", "write")
    return session


@pytest.mark.slow
async def test_a_share_withdrawn_under_an_open_app_is_not_called_a_delete(tmp_path):
    data = tmp_path / "server"
    alice = await _tokens(tmp_path, data)
    with EmbeddedServer(data, options=ServerOptions(users=True)) as server:
        session = await _shared_with_bob(server, data, alice)
        settings = settings_in(tmp_path / "bob", url=server.agent_url, bearer_file=str(tmp_path / "bob.token"))
        app = new_app(AppConnector(settings), session_id=session)  # as `rewindtui --session ID` opens it
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            assert app.chat is not None and app.chat.session_id == session
            await asyncio.to_thread(_team, data, "unshare", session, "bob")
            screen = app.chat_screen
            screen.composer.text = "bob's draft"
            await pilot.press("enter")
            await wait_until(pilot, lambda: any("no longer on the server" in n for n in notifications(app)), 30)
            said = " ".join(notifications(app))
            assert "no longer shared with you" in said and "another client deleted it," in said
            assert "(another client deleted it)" not in said  # not claimed as the one cause
            assert screen.composer.text == "bob's draft"  # kept, nothing sent


@pytest.mark.slow
async def test_a_shared_session_is_not_listed_as_gone_while_it_is_shared(tmp_path):
    """A team server lists one's own sessions; a session shared with bob and remembered by his
    client is read by its id: listed as it is (alice's), not "gone from the server", until the
    share is withdrawn."""
    from rewindtui.chat import Chat
    from rewindtui.client.a2a_client import A2AClient

    data = tmp_path / "server"
    alice = await _tokens(tmp_path, data)
    with EmbeddedServer(data, options=ServerOptions(users=True)) as server:
        session = await _shared_with_bob(server, data, alice)
        settings = settings_in(tmp_path / "bob", url=server.agent_url, bearer_file=str(tmp_path / "bob.token"))
        async with A2AClient(settings.server_config()) as client:
            await client.connect()
            chat = Chat(client)
            await chat.open(session)
            await chat.send("from bob")  # remembered by bob's client from here on
            listed = {s.id: s for s in await chat.list_sessions()}
            assert session in listed and not listed[session].gone
            await asyncio.to_thread(_team, data, "unshare", session, "bob")
            listed = {s.id: s for s in await chat.list_sessions()}
            assert listed[session].gone
