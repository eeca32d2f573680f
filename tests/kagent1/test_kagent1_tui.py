"""The app on kagent 1.0 (Pilot), against the controller double (controller_double.py, following
kagent's Go sources) with the embedded agent behind its A2A route, connected exactly as
``rewindtui --kagent URL --agent NS/NAME`` connects: open, send, rewind = a fork (the preview says
so; the view moves to the fork, the original stays), undo back (also after a restart), the
checkpoints' costs in the status line, a read-only share with the composer disabled and why, and
a failed fork that leaves the view as it was, with the reason."""

from __future__ import annotations

from pathlib import Path

from kit.pilot import screen_lines, wait_until
from rewindtui.chat import Chat
from rewindtui.config.connection import app_connector, connect
from rewindtui.config.settings import Settings, load_settings
from rewindtui.kagent1.client import Kagent1Client
from rewindtui.kagent1.forks import FILE as FORKS_FILE
from rewindtui.model import ItemKind
from rewindtui.tui.app import RewindApp

AGENT = "kagent/helper"
SIZE = (130, 36)


def settings_for(base: str, tmp_path: Path, **more: str) -> Settings:
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = tmp_path / "config.toml"
    config.write_text("")
    values = {
        "kagent": base,
        "agent": AGENT,
        "user_id": "tess",
        "config": str(config),
        "data_dir": str(tmp_path / "data"),
    }
    return load_settings({**values, **more}, env={})


def app_for(settings: Settings, session_id: str | None = None) -> RewindApp:
    connector, hint = app_connector(settings)
    app = RewindApp(connector, hint=hint, session_id=session_id, new_session=session_id is None)
    app.animation_level = "none"
    return app


async def settle(app: RewindApp, pilot) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def send(app: RewindApp, pilot, *texts: str) -> None:
    await settle(app, pilot)
    for text in texts:
        app.chat_screen.composer.focus()
        app.chat_screen.composer.text = text
        await pilot.press("enter")
        await settle(app, pilot)


def users(app: RewindApp) -> list[str]:
    assert app.chat is not None
    return [i.text for i in app.chat.conversation.items if i.kind is ItemKind.MESSAGE and i.role == "user"]


def notes(app: RewindApp) -> list[str]:
    return [n.message for n in app._notifications]


async def preview_turn(app: RewindApp, pilot, turn: int) -> str:
    """Rewind mode on turn ``turn`` (0-based); the banner's text."""
    chat = app.chat
    assert chat is not None
    invocation = chat.conversation.turn_invocations()[turn]
    assert app.chat_screen.enter_rewind_mode(chat.conversation.index_of_invocation(invocation))
    await pilot.pause()
    return app.chat_screen.banner.text


async def test_rewind_is_a_fork_the_preview_says_so_and_ctrl_z_goes_back(kagent1, tmp_path):
    double, base = kagent1
    app = app_for(settings_for(base, tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "one", "two", "three")
        chat = app.chat
        assert chat is not None and isinstance(chat.client, Kagent1Client)
        original = chat.session_id
        screen = app.chat_screen
        assert screen.status.rewind.startswith("fork · 3 checkpoints, ")  # their count and time
        banner = await preview_turn(app, pilot, 2)
        assert "kagent forks: a new session from turn 2; the original is kept." in banner
        assert "go, on the server too" not in banner
        lines = "\n".join(screen_lines(screen.transcript))
        assert "fork point: a new session without the 1 turn below" in lines and "will be removed" not in lines
        await pilot.press("enter")
        await settle(app, pilot)
        fork = chat.session_id
        assert fork != original and fork in double.sessions  # the view moved to the fork
        assert users(app) == ["one", "two"]
        assert "1 fork, " in screen.status.rewind
        assert screen.status.undo == "ctrl+z: undo the rewind: back to the original session"
        await pilot.press("ctrl+z")
        await settle(app, pilot)
        assert chat.session_id == original and users(app) == ["one", "two", "three"]  # the original, kept
        assert screen.status.undo == ""
        assert fork in double.sessions  # the fork stays a session of its own


async def test_the_undo_of_a_rewind_survives_a_restart(kagent1, tmp_path):
    double, base = kagent1
    settings = settings_for(base, tmp_path)
    app = app_for(settings)
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "one", "two")
        original = app.chat.session_id
        await preview_turn(app, pilot, 1)
        await pilot.press("enter")
        await settle(app, pilot)
        fork = app.chat.session_id
        assert fork != original
    path = tmp_path / "data" / FORKS_FILE
    assert path.stat().st_mode & 0o777 == 0o600  # the fork records are the user's only
    again = app_for(settings, session_id=fork)  # a new process: only the file knows where the fork came from
    async with again.run_test(size=SIZE) as pilot:
        await settle(again, pilot)
        assert again.chat.session_id == fork and users(again) == ["one"]
        assert again.chat_screen.status.undo.startswith("ctrl+z: undo the rewind: back to the original session")
        await pilot.press("ctrl+z")
        await settle(again, pilot)
        assert again.chat.session_id == original and users(again) == ["one", "two"]
    third = app_for(settings, session_id=fork)
    async with third.run_test(size=SIZE) as pilot:
        await settle(third, pilot)
        assert third.chat_screen.status.undo == ""  # undone once: nothing more to undo there


async def test_a_failed_fork_leaves_the_view_unchanged_with_the_reason(kagent1, tmp_path):
    double, base = kagent1
    app = app_for(settings_for(base, tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "one", "two")
        chat = app.chat
        sid = chat.session_id
        shown = [(i.key, i.text) for i in chat.conversation.items]
        double.fail_next_fork = "out of sandbox capacity"
        await preview_turn(app, pilot, 1)
        await pilot.press("enter")
        await settle(app, pilot)
        assert chat.session_id == sid and [(i.key, i.text) for i in chat.conversation.items] == shown
        assert any("out of sandbox capacity" in n and "the conversation is unchanged" in n for n in notes(app))
        assert app.chat_screen.status.undo == ""


async def test_a_read_only_share_opens_with_the_composer_disabled_and_why(kagent1, tmp_path):
    double, base = kagent1
    conn = await connect(settings_for(base, tmp_path / "owner"))
    try:
        chat = Chat(conn.client)
        await chat.open(None)
        await chat.send("one")
        sid = chat.session_id
        assert isinstance(conn.client, Kagent1Client) and sid
        token = (await conn.client.kagent1.share(sid, read_only=True))[1]
    finally:
        await conn.aclose()
    reader = settings_for(base, tmp_path / "reader", user_id="rhea", kagent_share=token)
    app = app_for(reader, session_id=sid)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = app.chat_screen
        assert app.chat.session_id == sid and users(app) == ["one"]
        composer = screen.composer
        assert composer.read_only and composer.has_class("-read-only")
        assert (
            composer.placeholder
            == "Read-only: this session was opened from a read-only share: it can be read, not written to"
        )
        composer.focus()
        await pilot.pause()
        assert not any(
            b.binding.action == "submit" and b.enabled for b in app.active_bindings.values()
        )  # no "Send" offered
        await pilot.press(*"hi", "enter")
        await settle(app, pilot)
        assert composer.text == "" and users(app) == ["one"]
        assert not screen.chat.permissions().can_rewind and screen.status.rewind == "fork · not on a read-only share"
        assert app.chat.why_not_rewind_to(app.chat.conversation.items[0]).startswith(
            "this session was opened from a read-only share"
        )
    owner = await connect(settings_for(base, tmp_path / "owner"))
    try:
        assert len(await owner.client.session_tasks(sid)) == 1  # nothing was sent
    finally:
        await owner.aclose()


async def test_with_auto_checkpoints_off_only_existing_checkpoints_are_offered(kagent1, tmp_path):
    from rewindtui.kagent1.controller import Kagent1Controller

    double, base = kagent1
    app = app_for(settings_for(base, tmp_path, kagent_checkpoints="false"))
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "one")
        sid = app.chat.session_id
        async with Kagent1Controller(base, user_id="tess") as by_hand:  # kagent's UI's Checkpoint button
            head = (await double._tasks(sid, "tess"))[-1]["id"]
            await by_hand.checkpoint(sid, "by-hand-after-one", head)
        await send(app, pilot, "two", "three")
        screen = app.chat_screen
        assert screen.status.rewind == "fork · no checkpoints taken · auto-checkpoints off"
        banner = await preview_turn(app, pilot, 2)  # after turn 2: no checkpoint
        assert "there is no checkpoint after turn 2 to fork from (auto-checkpoints are off)" in banner
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.chat.session_id == sid and users(app) == ["one", "two", "three"]  # nothing changed
        assert any("auto-checkpoints are off" in n for n in notes(app))
        banner = await preview_turn(app, pilot, 1)  # after turn 1: the checkpoint taken by hand
        assert "kagent forks: a new session from turn 1; the original is kept." in banner
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.chat.session_id != sid and users(app) == ["one"]


async def test_kagent_screen_lists_checkpoints_renames_deletes_forks_and_revokes_shares(kagent1, tmp_path):
    """kagent 1.0's own UI in the app (/kagent): the session's checkpoints with their names,
    rename, delete (asked first), fork from any (the app moves to the fork), shares revoked."""
    from textual.widgets import Input, OptionList

    from rewindtui.tui.screens.kagent import KagentScreen

    double, base = kagent1
    app = app_for(settings_for(base, tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await send(app, pilot, "one", "two", "three")
        original = app.chat.session_id
        _, token = await app.chat.client.create_share(original, read_only=True)

        def mine() -> list:
            return [c for c in double.checkpoints.values() if c.session_id == original]

        await send(app, pilot, "/kagent")
        screen = app.screen
        assert isinstance(screen, KagentScreen)
        await settle(app, pilot)
        shown = kagent_text(app.screen)
        assert (
            "after turn 1 After turn 1 · ready" in shown
            and "after turn 3 After turn 3 · ready" in shown
            and "read-only" in shown
        )
        assert "3 checkpoint(s), 1 share(s)" in shown
        # rename the first
        await pilot.press("r")
        name = screen.query_one("#kagent-name", Input)
        name.value = "before the detour"
        await pilot.press("enter")
        await settle(app, pilot)
        first = screen.checkpoints[0]
        assert double.checkpoints[first.id].name == "before the detour" and first.name == "before the detour"
        assert "is now named 'before the detour'" in kagent_text(app.screen)
        # delete the last: asked first; Esc there keeps it
        await pilot.press("end", "d")
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        assert len(mine()) == 3
        await pilot.press("d")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert len(screen.checkpoints) == 2 and len(mine()) == 2
        # revoke the share
        screen.query_one("#kagent-shares", OptionList).focus()
        await pilot.press("home", "x")
        await settle(app, pilot)
        await pilot.press("y")
        await settle(app, pilot)
        assert all(s.revoked for s in double.shares.values() if s.session_id == original) and screen.shares == []
        # fork from the first checkpoint: the app moves to the fork, the original is kept
        screen.query_one("#kagent-checkpoints", OptionList).focus()
        await pilot.press("home", "f")
        # the fork's worker dismisses the screen; the switch to the fork is a worker started after it
        await wait_until(pilot, lambda: app.chat is not None and app.chat.session_id != original, timeout=30)
        await settle(app, pilot)
        assert not isinstance(app.screen, KagentScreen)
        fork = app.chat.session_id
        assert fork != original and double.forked_from[fork] == first.id and original in double.sessions
        assert users(app) == ["one"]
        assert token not in (None, "")


def kagent_text(screen) -> str:
    """What the kagent screen shows: its two lists' lines and the line under them."""
    from textual.widgets import OptionList, Static

    lines = [
        str(o.prompt)
        for which in ("#kagent-checkpoints", "#kagent-shares")
        for o in screen.query_one(which, OptionList).options
    ]
    return "\n".join([*lines, str(screen.query_one("#kagent-said", Static).render())])
