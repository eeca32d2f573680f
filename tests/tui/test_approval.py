"""The agent asks for approval of a tool call (the embedded demo agent's ``delete_file``, which
asks as kagent-adk's tools do): the app shows the question above the composer with Approve /
Reject (buttons and alt+y / alt+n), answers with the same task, and the server's record is what
the view shows. Both A2A dialects."""

from __future__ import annotations

import pytest
from textual import events

from kit.apps import make_app
from kit.pilot import SIZE, notifications, send, server_tasks, server_users, settle, texts
from rewindtui.a2a.dialect import Dialect
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig

DIALECTS = [Dialect.V03, Dialect.V10]


def agent_texts(app) -> list[str]:
    return [t for r, t in texts(app) if r == "agent"]


def footer_keys(app) -> set[str]:
    return {key for key, active in app.screen.active_bindings.items() if active.binding.show and active.enabled}


async def ask(app, pilot, name: str = "notes.txt") -> None:
    await send(app, pilot, f"please delete {name}")
    screen = app.chat_screen
    assert app.chat.conversation.turn_state == "input-required" and screen.status.turn == "input-required"
    assert screen.turn_bar.kind == "question"
    assert f"Delete {name}?" in screen.turn_bar.text and f'delete_file({{"name": "{name}"}})' in screen.turn_bar.text
    assert {"alt+y", "alt+n"} <= footer_keys(app)


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.value)
async def test_approve_by_key_and_reject_by_button(server, dialect):
    app = make_app(server, dialect=dialect)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        await ask(app, pilot, "notes.txt")
        await pilot.press("alt+y")
        await settle(app, pilot)
        assert app.chat.conversation.turn_state == "completed" and screen.turn_bar.kind == ""
        assert (
            "'status': 'deleted'" in agent_texts(app)[-1] and "'deleted_files': ['notes.txt']" in agent_texts(app)[-1]
        )
        assert not {"alt+y", "alt+n"} & footer_keys(app)  # nothing to answer: the keys are gone

        await ask(app, pilot, "report.pdf")
        await pilot.click("#turn-reject")
        await settle(app, pilot)
        assert (
            "'status': 'rejected'" in agent_texts(app)[-1] and "'deleted_files': ['notes.txt']" in agent_texts(app)[-1]
        )
        assert screen.focused is screen.composer
        # the view is the server's record: both turns completed, each with its answer
        tasks = await server_tasks(server, app.chat.session_id)
        assert [t["status"]["state"] for t in tasks] == ["completed", "completed"]
        answers = [
            m for t in tasks for m in t["history"] if m["role"] == "user" and m["parts"][0].get("kind") == "data"
        ]
        assert [m["parts"][0]["data"] for m in answers] == [{"decision_type": "approve"}, {"decision_type": "reject"}]


async def test_text_while_a_question_waits_is_refused_and_the_draft_kept(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        await ask(app, pilot)
        before = [it.text for it in app.chat.conversation.items]
        await send(app, pilot, "yes go ahead")
        # the embedded agent takes only an answer for a waiting task: refused, nothing shown, draft kept
        assert screen.composer.text == "yes go ahead"
        assert [it.text for it in app.chat.conversation.items] == before
        # said in the app's words (issue 20, 7): what to do, never the protocol's error
        assert "Answer the question first: alt+y approves, alt+n rejects." in notifications(app)
        assert not any("decision_type" in n for n in notifications(app)) and screen.status.turn != "failed"
        assert screen.turn_bar.kind == "question" and app.chat.conversation.turn_state == "input-required"
        screen.composer.clear_draft()
        # alt+n as a terminal sends it (ESC n): a key that carries its letter; it answers, it types nothing
        screen.composer.post_message(events.Key("alt+n", "n"))
        await settle(app, pilot)
        assert "'status': 'rejected'" in agent_texts(app)[-1] and screen.composer.text == ""


async def test_a_reopened_session_still_asks(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await ask(app, pilot, "old.log")
        session_id = app.chat.session_id
    again = make_app(server, session_id)
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        assert again.chat_screen.turn_bar.kind == "question" and "Delete old.log?" in again.chat_screen.turn_bar.text
        await pilot.press("alt+y")
        await settle(again, pilot)
        assert "'deleted_files': ['old.log']" in agent_texts(again)[-1]


async def test_rewind_takes_a_confirmed_turn_back_whole(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await send(app, pilot, "hello")
        await ask(app, pilot, "a.txt")
        await pilot.press("alt+y")
        await settle(app, pilot)
        screen = app.chat_screen
        await pilot.press("alt+up")  # rewind mode on the last turn: question, answer and reply
        await pilot.pause()
        assert screen.rewind_mode and "“please delete a.txt”" in screen.banner.text and "1 turn" in screen.banner.text
        await pilot.press("enter")
        await settle(app, pilot)
        assert [t for r, t in texts(app) if r == "user"] == ["hello"]
        assert await server_users(server, app) == ["hello"]
        await ask(app, pilot, "b.txt")
        await pilot.press("alt+y")
        await settle(app, pilot)
        assert "'deleted_files': ['b.txt']" in agent_texts(app)[-1]  # the state went back too


async def test_a_question_answered_by_another_client_is_said_once_and_the_view_follows(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        await ask(app, pilot, "z.txt")
        # another client (as `rewindtui send --approve`) answers while the app shows the question
        async with A2AClient(ServerConfig(url=server.agent_url, api=server.api_url)) as client:
            other = Chat(client)
            await other.open(app.chat.session_id)
            await other.confirm(True)
        await pilot.press("alt+y")
        await settle(app, pilot)
        said = [n for n in notifications(app) if "answered" in n]
        assert said == [
            "The question was already answered elsewhere: the turn is completed on the server, as shown now."
        ]
        assert screen.turn_bar.kind == "" and not {"alt+y", "alt+n"} & footer_keys(app)
        assert "'status': 'deleted'" in agent_texts(app)[-1]
