"""Issue 33's cosmetics in the app: ctrl+q in the footer at any width, rewind mode usable on a
40×10 terminal, the ⟲ under a tool call says what it does, the rename box selects the old name."""

from __future__ import annotations

from kit.apps import make_app
from kit.offline import offline_app, offline_chat
from kit.pilot import SIZE, screen_lines, settle, turns, wait_until
from rewindtui.tui.screens.rename import RenameScreen
from rewindtui.tui.widgets.key_footer import KeyFooter


def screen_text(app) -> list[str]:
    """The lines of the whole screen as the terminal gets them (every widget, composed)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def test_ctrl_q_shows_in_the_footer_at_narrow_widths():
    for width in (60, 80, 100):
        app = offline_app()
        async with app.run_test(size=(width, 24)) as pilot:
            await pilot.pause()
            footer = app.chat_screen.query_one(KeyFooter)
            await wait_until(pilot, lambda footer=footer: bool(footer.children))
            await pilot.pause()
            line = screen_text(app)[-1]
            assert "^q Quit" in line, (width, line)


async def test_rewind_mode_at_40_by_10_keeps_the_keys_and_what_goes_on_screen():
    chat = offline_chat()
    app = offline_app(chat)
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        screen = app.chat_screen
        second = chat.conversation.turn_invocations()[1]
        screen.enter_rewind_mode(chat.conversation.index_of_invocation(second))
        await pilot.pause()
        banner = screen.banner
        assert "Enter rewinds, Esc leaves" in banner.text and "2 turns go" in banner.text
        shown = " ".join(line.strip() for line in screen_text(app))
        assert "Enter rewinds, Esc leaves" in shown and "2 turns go" in shown, shown  # drawn, not cut
        assert banner.region.bottom <= 10 and screen.composer.region.height >= 3  # the composer stays
        assert screen.transcript.region.height >= 1  # the rule saying what goes
        await pilot.press("escape")
        await pilot.pause()
        assert not screen.rewind_mode


async def test_the_rewind_button_under_a_tool_call_is_labelled():
    app = offline_app(offline_chat(["03_turn_with_tool_call"]))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        lines = screen_lines(app.chat_screen.transcript)
        under = [line for line in lines if line.startswith("▏") and "[⟲" in line]
        assert under and all("[⟲ Rewind to here]" in line for line in under), lines


async def test_the_rename_box_opened_by_slash_rename_selects_the_old_name(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await turns(app, pilot, "name me")
        screen = app.chat_screen
        screen.composer.text = "/rename"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RenameScreen))
        box = app.screen.query_one("#rename-input")
        old = box.value
        assert old and box.selected_text == old  # typing replaces it
        await pilot.press(*"fresh", "enter")
        await settle(app, pilot)
        sessions = await app.chat.client.list_sessions()
        assert [s.name for s in sessions if s.id == app.chat.session_id] == ["fresh"]  # not "name mefresh"
