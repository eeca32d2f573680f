"""Issue 20's property, over random key sequences in every mode (composing, choosing a rewind
point, editing, a question waiting, the turn picker, the sessions panel) against the embedded
server: no rewind happens without an Enter on a preview the user sees, and every printable
character typed ends up in the composer, in a sent message, in a stashed draft (or the draft Esc
Esc cleared, which ctrl+z brings back) -- except a letter a list the user opened took as its own
command (shown on screen there)."""

from __future__ import annotations

import asyncio
from collections import Counter

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kit.apps import make_app
from kit.pilot import SIZE, send, settle
from rewindtui.tui.screens.rewind_picker import RewindPicker

#: letters that were commands once (r e f t c) or are in the lists (r e f d n), a space and "/";
#: no slash command's name can be spelled with them (a command typed whole is no lost text)
LETTERS = list("reftcdn /")
COMMANDS = ["escape", "up", "down", "enter", "ctrl+z"]
MODES = ["composing", "choosing", "editing", "question", "picker", "sessions"]


async def _start(app, pilot, mode: str) -> None:
    await settle(app, pilot)
    await send(app, pilot, "one")
    await send(app, pilot, "please delete x.txt" if mode == "question" else "two")
    keys = {"choosing": ["alt+up"], "editing": ["alt+up", "alt+e"], "picker": ["ctrl+g"], "sessions": ["f2"]}.get(
        mode, []
    )
    for key in keys:
        await pilot.press(key)
        await settle(app, pilot)


async def _scenario(server, mode: str, keys: list[str]) -> None:
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await _start(app, pilot, mode)
        screen = app.chat_screen
        chat = app.chat
        sent: list[str] = []
        rewinds: list[tuple[str, bool]] = []
        original_send, original_rewind = chat.send, chat.rewind

        async def recording_send(text, attachments=()):
            editing = chat.edit is not None
            result = await original_send(text, attachments)
            sent.append(text)
            if editing:
                rewinds.append(("edit-resend", True))
            return result

        armed = {"now": False, "key": ""}

        async def recording_rewind(invocation_id, text=None):
            rewinds.append((armed["key"], armed["now"]))
            return await original_rewind(invocation_id, text)

        chat.send = recording_send  # type: ignore[method-assign]
        chat.rewind = recording_rewind  # type: ignore[method-assign]
        typed: list[str] = []
        for key in keys:
            in_list = isinstance(app.screen, RewindPicker) or (
                screen.sessions.has_focus and not screen.sessions.has_class("hidden")
            )
            armed["key"] = key
            # a preview the user sees: the rewind banner over the dimmed turns, or an edit's banner
            armed["now"] = key == "enter" and (
                (screen.rewind_mode and screen.banner.kind == "rewind" and app.screen is screen)
                or chat.edit is not None
            )
            text_undo = key == "ctrl+z" and not screen.branches.can_undo() and app.screen is screen
            await pilot.press(key)
            if text_undo:
                typed.clear()  # the composer's own undo of typing: the user took those characters back
            if key in ("enter", "ctrl+z", "escape"):
                await settle(app, pilot)
            else:
                await pilot.pause()
            if len(key) == 1 and not (in_list and key in "refdnq"):
                typed.append(key)
        await settle(app, pilot)
        for key, was_armed in rewinds:
            assert was_armed, f"a rewind without an Enter on a visible preview (key {key!r}, keys {keys})"
        kept = screen.composer.text + screen.memory.stash.peek() + screen.escape.cleared_draft + "".join(sent)
        missing = Counter(c for c in typed if c != " ") - Counter(kept)
        assert not missing, (
            f"typed and lost: {dict(missing)} (keys {keys}, composer {screen.composer.text!r}, sent {sent})"
        )


# bounded and deterministic: a few dozen examples of real app + server, no shrinking (each is seconds)
@settings(
    max_examples=16,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
@given(mode=st.sampled_from(MODES), keys=st.lists(st.sampled_from(LETTERS + COMMANDS), min_size=1, max_size=12))
def test_no_rewind_without_enter_on_a_preview_and_no_typed_character_lost(server, mode, keys):
    asyncio.run(_scenario(server, mode, keys))
