"""The app's file actions, used as a person would, against real servers over loopback: attach with
ctrl+o (path prompt, Tab completion), remove, send, save the reply's files with ctrl+s; a failed
send keeps the draft and the attachments; F3 shows the card."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kit.apps import app_at as app_for

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "a2a_servers"))

from binding_servers import REPORT_BYTES, REPORT_NAME, both_bindings_app, card_json_10

from asgi_thread import ServeInThread
from kit.pilot import settle, wait_until
from rewindtui.client.attachments import FileAttachment
from rewindtui.tui.screens.card import CardScreen
from rewindtui.tui.screens.path_prompt import PathPrompt, complete_path


@pytest.fixture(scope="module")
def both():
    served = ServeInThread(factory=lambda url: both_bindings_app(url + "/")).start()
    yield served
    served.stop()


def test_complete_path(tmp_path):
    (tmp_path / "report-2026.pdf").write_text("x")
    (tmp_path / "reports").mkdir()
    (tmp_path / "zeta.txt").write_text("z")
    base = str(tmp_path) + "/"
    assert complete_path(base + "z") == base + "zeta.txt"
    assert complete_path(base + "r") == base + "report"  # the common start of two
    assert complete_path(base + "reports") == base + "reports/"  # a directory gets its slash
    assert complete_path(base + "report", directories_only=True) == base + "reports/"
    assert complete_path(base + "nothing") is None


async def test_attach_remove_send_and_save(both, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.md").write_text("# notes\n")
    (tmp_path / "other.txt").write_text("other")
    app = app_for(both.url + "/")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        # attach: ctrl+o, type the start of the name, Tab completes, Enter attaches
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, PathPrompt))
        prompt = app.screen
        prompt.input.value = str(tmp_path) + "/no"
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, PathPrompt))
        assert [a.name for a in screen.files.bar.attachments] == ["notes.md"]
        # a path that does not exist: said in the prompt, which stays open
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, PathPrompt))
        app.screen.input.value = str(tmp_path / "missing.txt")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PathPrompt) and "no such file" in str(
            app.screen.query_one("#prompt-error").render()
        )
        app.screen.input.value = str(tmp_path / "other.txt")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, PathPrompt))
        assert [a.name for a in screen.files.bar.attachments] == ["notes.md", "other.txt"]
        # remove the selected one (the last added) from the bar
        screen.files.bar.focus()
        await pilot.press("delete")
        assert [a.name for a in screen.files.bar.attachments] == ["notes.md"]
        # send with no text: the attachment alone is a message
        screen.composer.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.chat is not None and screen.chat.conversation.turn_state == "completed")
        await settle(app, pilot)
        assert screen.files.bar.attachments == []
        data = [p for i in screen.chat.conversation.items for p in i.other_parts if "data" in p]
        assert data[0]["data"]["received"][0]["filename"] == "notes.md"
        # save the reply's files: ctrl+s, a directory, Enter
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, PathPrompt))
        app.screen.input.value = str(tmp_path / "saved")
        await pilot.press("enter")
        await wait_until(pilot, lambda: (tmp_path / "saved" / REPORT_NAME).exists())
        await settle(app, pilot)
        assert (tmp_path / "saved" / REPORT_NAME).read_bytes() == REPORT_BYTES
        assert (tmp_path / "saved" / "data-3.json").exists()


async def test_a_failed_send_keeps_draft_and_attachments(tmp_path):
    from test_auth import _guarded_app

    card = card_json_10("http://placeholder/")
    with ServeInThread(_guarded_app(card)) as served:
        card["supportedInterfaces"][0]["url"] = served.url + "/"
        app = app_for(served.url + "/")
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            screen = app.chat_screen
            kept = FileAttachment(name="a.txt", media_type="text/plain", data=b"abc")
            screen.files.bar.add(kept)
            screen.composer.text = "my careful draft"
            screen.composer.focus()
            await pilot.press("enter")
            await settle(app, pilot)
            assert screen.composer.text == "my careful draft"
            assert screen.files.bar.attachments == [kept]
            assert screen.chat.conversation.items == []  # the server did not take it: nothing shown


async def test_card_view_opens_and_closes(both):
    app = app_for(both.url + "/")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, CardScreen))
        titles = [str(w.render()) for w in app.screen.query(".card-section")]
        assert titles[:2] == ["Agent", "Interfaces"] and "Skills" in titles
        assert app.screen.card["name"] == "both-bindings" and app.screen.choice.binding == "JSONRPC"
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, CardScreen))
