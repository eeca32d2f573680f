"""The app (Pilot) against servers built on a2a-sdk's own classes, in both dialects: no rewind
here, so the footer offers none and the keys say why; Esc stops a turn on the server
(CancelTask / tasks/cancel); the approval question is answered from the turn bar; a session
whose last turn still runs is followed on open; and where the server cannot give history back
(0.3: no ListTasks, a session not used from here) the view says so plainly."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kit.apps import app_at
from kit.pilot import SIZE, notifications, send, settle, wait_until
from rewindtui.a2a.dialect import norm_state
from rewindtui.chat import Chat
from rewindtui.chat.history import CANNOT_READ_BACK
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.model import ItemKind
from rewindtui.tui.app import RewindApp

SLOW = "a slow answer " + " ".join(["with many many words to say"] * 3)


def agent_texts(app: RewindApp) -> list[str]:
    assert app.chat is not None
    return [
        i.text
        for i in app.chat.conversation.items
        if i.role == "agent" and i.kind in (ItemKind.MESSAGE, ItemKind.ARTIFACT)
    ]


async def task_state(server, tmp_path: Path, app: RewindApp) -> list[str]:
    """The states of the session's tasks as the server has them (GetTask on each)."""
    assert app.chat is not None
    async with A2AClient(ServerConfig(url=server.url + "/")) as client:
        await client.connect()
        return [
            norm_state((await client.get_task(t))["status"]["state"])
            for t in app.chat.history.store.task_ids(app.chat.session_id)
        ]


async def test_no_rewind_offered_and_the_keys_say_why(sdk_server, tmp_path):
    app = app_at(sdk_server.url + "/", local_store=tmp_path / "sessions.db")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "hello")
        assert agent_texts(app) == ["You said: hello (turn 1)"]
        shown = {key for key, active in app.screen.active_bindings.items() if active.binding.show}
        assert "alt+up" not in shown
        await pilot.press("alt+up")
        await pilot.pause()
        assert "does not support rewind" in notifications(app)[-1]
        assert not app.chat_screen.rewind_mode


async def test_esc_stops_the_turn_on_the_server(sdk_server, tmp_path):
    app = app_at(sdk_server.url + "/", local_store=tmp_path / "sessions.db")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        screen.composer.text = SLOW
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.replying and bool(agent_texts(app)))
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.chat.conversation.turn_state == "canceled" and screen.status.turn == "canceled"
        assert await task_state(sdk_server, tmp_path, app) == ["canceled"]  # CancelTask reached the server


async def test_approve_and_reject_from_the_turn_bar(sdk_server, tmp_path):
    app = app_at(sdk_server.url + "/", local_store=tmp_path / "sessions.db")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        await send(app, pilot, "please delete build-cache")
        assert screen.turn_bar.kind == "question" and "Delete build-cache?" in screen.turn_bar.text
        await pilot.click("#turn-approve")
        await settle(app, pilot)
        assert agent_texts(app)[-1] == "Deleted build-cache." and screen.turn_bar.kind == ""
        await send(app, pilot, "and delete logs")
        await pilot.press("alt+n")
        await settle(app, pilot)
        assert agent_texts(app)[-1] == "Kept logs."
        assert await task_state(sdk_server, tmp_path, app) == ["completed", "completed"]


async def test_what_the_server_cannot_give_back_is_said_plainly(sdk_server, tmp_path):
    async with A2AClient(ServerConfig(url=sdk_server.url + "/", local_store=tmp_path / "elsewhere.db")) as client:
        chat = Chat(client)  # the session is used from somewhere else
        await chat.open(None)
        await chat.send("from another machine")
        session_id = chat.session_id
        only_03 = chat.client.capabilities is not None and chat.client.capabilities.name.endswith("-03")
    app = app_at(sdk_server.url + "/", session_id, local_store=tmp_path / "sessions.db")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        note = app.chat_screen.query_one("#history-note")
        if only_03:  # no ListTasks: nothing to read back, and the view says so
            assert note.note == CANNOT_READ_BACK and note.display
            assert app.chat.conversation.items == []
        else:  # ListTasks gives it back: no note
            assert note.note == "" and not note.display
            assert agent_texts(app) == ["You said: from another machine (turn 1)"]


async def test_opening_a_session_whose_turn_runs_follows_it(serve, tmp_path):
    server = serve()  # A2A 1.0: ListTasks shows the running task
    async with A2AClient(ServerConfig(url=server.url + "/", local_store=tmp_path / "other.db")) as client:
        other = Chat(client)
        await other.open(None)
        running = asyncio.ensure_future(other.send(SLOW))
        while not [i for i in other.conversation.items if i.role == "agent"]:
            await asyncio.sleep(0.02)
        app = app_at(server.url + "/", other.session_id, local_store=tmp_path / "sessions.db")
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.chat is not None and app.chat_screen.turn_bar.kind == "replying")
            await wait_until(pilot, lambda: app.chat.conversation.turn_state == "completed", timeout=20)
            await settle(app, pilot)
            assert agent_texts(app)[-1] == f"You said: {SLOW} (turn 1)"
        await running


async def test_f2_lists_the_sessions_used_here_and_marks_those_the_server_lost(serve, tmp_path):
    from rewindtui.tui.widgets.sessions_panel import SessionsPanel

    def app_on(server) -> RewindApp:
        async def connect():
            config = ServerConfig(
                url=server.url + "/", local_store=tmp_path / "sessions.db", local_store_key="one-server"
            )
            client = A2AClient(config)
            return client, client.aclose

        app = RewindApp(connect, new_session=True)
        app.animation_level = "none"
        return app

    def entries(panel: SessionsPanel) -> list[str]:
        return [
            "\n".join(getattr(r, "renderable", r).plain for r in panel.get_option(s.id).prompt.renderables)
            for s in panel.sessions
        ]

    server = serve()  # a2a-sdk 1.x: no REST API at all
    app = app_on(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "remember me")
        sid = app.chat.session_id
        await pilot.press("f2")
        panel = app.chat_screen.sessions
        await wait_until(pilot, lambda: [s.id for s in panel.sessions] == [sid])
        assert "remember me" in entries(panel)[0] and "gone" not in entries(panel)[0]
    server.stop()
    restarted = serve()  # the same server, restarted with an empty memory
    app = app_on(restarted)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("f2")
        panel = app.chat_screen.sessions
        await wait_until(pilot, lambda: sid in [s.id for s in panel.sessions])
        (entry,) = [e for s, e in zip(panel.sessions, entries(panel), strict=True) if s.id == sid]
        assert "remember me" in entry and "gone from the server" in entry  # marked, not dropped
