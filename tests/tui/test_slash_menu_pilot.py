"""Issue 33 in the app: turn numbers mean one thing (``/rewind 2`` is turn 2 from the start, as
the picker numbers it), and the slash menu is picked from with ↑/↓, Tab and Enter, Esc closing
it with the draft kept. Real app, real embedded server over loopback."""

from __future__ import annotations

from kit.apps import make_app
from kit.pilot import SIZE, burst, frame_lines, notifications, server_users, settle, turns, user_texts, wait_until
from rewindtui.output.turn_list import turn_entries
from rewindtui.tui.slash import Completion
from rewindtui.tui.widgets.slash_menu import SlashMenu


async def test_rewind_n_is_turn_n_from_the_start_as_the_picker_numbers_it(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one", "two", "three", "four")
        screen = app.chat_screen
        numbered = {e.number: e.preview for e in turn_entries(app.chat.conversation)}
        assert numbered == {1: "one", 2: "two", 3: "three", 4: "four"}
        screen.composer.text = "/rewind 2"
        await pilot.press("enter")
        await settle(app, pilot)
        assert screen.rewind_mode and screen.transcript.selected().text == "two"  # a preview only
        await pilot.press("enter")  # Enter on the preview rewinds
        await settle(app, pilot)
        await wait_until(pilot, lambda: user_texts(app) == ["one"])
        assert await server_users(server, app) == ["one"]
        # -1 is the last turn; a number that names no turn is refused and the draft kept
        await turns(app, pilot, "again")
        screen.composer.text = "/rewind -1"
        await pilot.press("enter")
        await settle(app, pilot)
        assert screen.rewind_mode and screen.transcript.selected().text == "again"
        await pilot.press("escape")
        await settle(app, pilot)
        screen.composer.text = "/fork 7"
        await pilot.press("enter")
        await settle(app, pilot)
        assert screen.composer.text == "/fork 7"
        assert any("no turn 7" in n and "turns 1 to 2" in n for n in notifications(app))
        assert await server_users(server, app) == ["one", "again"]


async def test_arrows_tab_and_enter_pick_from_the_menu_and_esc_keeps_the_draft(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one")
        screen = app.chat_screen
        menu = screen.query_one(SlashMenu)
        await pilot.press(*"/re")
        await pilot.pause()
        # /redo and /retry cannot run now (nothing undone, the last turn succeeded): not offered
        assert menu.names == ["rewind", "rename"] and menu.completion.highlight == 0
        await pilot.press("down", "down")  # the highlight wraps around
        assert menu.completion.chosen().slash == "rewind"
        await pilot.press("down")
        await pilot.press("tab")
        assert screen.composer.text == "/rename "  # the highlighted one, not the first
        # Esc closes the menu; the draft stays, and the screen's Esc does nothing else
        screen.composer.set_draft("/se")
        await pilot.pause()
        assert menu.has_class("-shown")
        await pilot.press("escape")
        await pilot.pause()
        assert not menu.has_class("-shown") and screen.composer.text == "/se" and not screen.rewind_mode
        await pilot.press("a")  # typing opens it again
        await pilot.pause()
        assert menu.has_class("-shown") and menu.names == ["search"]
        # Enter takes the highlighted command; Enter on a command typed whole runs it
        screen.composer.text = "/he"
        await pilot.pause()
        await pilot.press("enter")
        assert screen.composer.text == "/help "
        screen.composer.text = "/new"
        await pilot.press("enter")
        await settle(app, pilot)
        assert user_texts(app) == []  # /new ran: a new, empty session
        # while arguments are typed, the menu names them
        await pilot.press(*"/fork ")
        await pilot.pause()
        assert menu.has_class("-shown") and "N: turn N counts from 1" in "".join(frame_lines(menu))


async def test_a_command_typed_whole_in_one_burst_with_enter_runs_it(server):
    """``/new`` and Enter arriving in one read (a fast typist on a busy machine, a paste, tmux): the
    menu has not yet followed the last letters when Enter comes, and Enter must act on the text as
    typed, not take the highlight of an older text (once seen: ``/rewind`` put in the composer)."""
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "one")
        screen = app.chat_screen
        first = app.chat.session_id
        menu = screen.query_one(SlashMenu)
        await pilot.press("/")
        await pilot.pause()
        assert menu.has_class("-shown") and menu.completion.chosen() is not None  # every command listed
        burst(app, [*"new", "enter"])
        await settle(app, pilot)
        await wait_until(pilot, lambda: app.chat.session_id != first)
        assert screen.composer.text == "" and user_texts(app) == []
        # a name still being typed takes the highlight of what was typed: /he -> /help
        burst(app, [*"/he", "enter"])
        await settle(app, pilot)
        assert screen.composer.text == "/help "


def test_the_menu_lists_only_what_the_predicate_allows_and_the_highlight_follows_its_command():
    completion = Completion(available=lambda c: c.slash != "redo")
    completion.update("/re")
    assert [c.slash for c in completion.matches] == ["rewind", "retry", "rename"]
    completion.move(-1)
    assert completion.chosen().slash == "rename" and completion.taken() == "/rename "
    completion.update("/ren")  # typing on: the highlighted command stays highlighted
    assert completion.chosen().slash == "rename"
    completion.update("/")
    for _ in range(20):
        completion.move(1)
        start, end = completion.window()
        assert start <= completion.highlight < end and end - start <= Completion.ROWS
    completion.update("/redo")
    assert completion.complete_name() and not completion.matches  # hidden, but typed whole it runs
    completion.update("//etc")
    assert not completion.shown


def test_f1_and_the_keys_doc_state_the_turn_number_rule():
    import io

    from rich.console import Console

    from rewindtui.model import turn_numbers
    from rewindtui.tui import interaction
    from rewindtui.tui.screens.help import mode_tables

    console = Console(width=400, record=True, file=io.StringIO())
    console.print(mode_tables())
    shown = " ".join(console.export_text().split())
    assert "Turn numbers" in shown and turn_numbers.RULE in shown
    assert "/rewind [N]" in shown  # the argument named
    assert turn_numbers.RULE in interaction.render_markdown()
