"""The app in a real pseudo-terminal, read back through a terminal emulator (pyte): what a user's
terminal sends, not Pilot's key events (alt+f arriving as ESC f was found only this way).

Each test starts ``rewindtui`` on its embedded server (its own data dir, the paced demo model so a
reply stays in flight) and drives it with the bytes a terminal sends.
"""

from __future__ import annotations

import re

import pytest

from rewindtui.tui.widgets.composer import PLACEHOLDER
from terminal.ptyterm import Terminal, app_argv, app_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

def status(screen: str) -> str:
    return screen.split("\n", 1)[0]


def turn_is(state: str):
    """The status line shows the turn ``state`` (labelled when wide, bare when the line is full)."""
    return lambda screen: re.search(rf"(^|[ ·]){state}( |$)", status(screen)) is not None


READY = turn_is("idle")
LONG = " ".join(["and tell it at length"] * 10)


def composer(screen: str) -> str:
    """The composer's text as drawn (between its top and bottom borders, frame characters off)."""
    lines = screen.split("\n")
    top = max(i for i, line in enumerate(lines) if line.startswith("▊▔"))
    body = lines[top + 1 :]
    end = next(i for i, line in enumerate(body) if line.startswith("▊▁"))
    text = "\n".join(line.strip("▊▎ ").rstrip() for line in body[:end]).strip()
    return "" if text.startswith(PLACEHOLDER) else text


def transcript(screen: str) -> str:
    lines = screen.split("\n")
    top = max(i for i, line in enumerate(lines) if line.startswith("▊▔"))
    return "\n".join(lines[1:top])


@pytest.fixture
def home(tmp_path):
    return tmp_path


def start(home, *args: str, lines: int = 30) -> Terminal:
    term = Terminal(app_argv(home / "data", "--model", "demo-slow", *args), env=app_env(home), columns=120, lines=lines)
    term.wait_for(READY, 90)
    return term


def test_type_escape_escape_then_typing_and_a_bracketed_paste(home):
    term = start(home)
    try:
        term.type("hello")
        term.wait_for(lambda s: composer(s) == "hello")
        term.press("escape")
        term.wait_for("Esc again clears the draft")
        term.press("escape")
        term.wait_for(lambda s: composer(s) == "")
        term.type("xyz")  # typing right after Esc Esc is text, every character kept
        term.wait_for(lambda s: composer(s) == "xyz")
        term.press("ctrl+c")  # clears the draft
        term.wait_for(lambda s: composer(s) == "")
        term.press("ctrl+z")  # brings it back
        term.wait_for(lambda s: composer(s) == "xyz")
        term.press("ctrl+c")
        term.wait_for(lambda s: composer(s) == "")
        # a bracketed paste with a newline and an escape sequence: the text lands, nothing is sent
        term.paste("first line\nsecond \x1b[31mred\x1b[0m line")
        screen = term.wait_for(lambda s: "second red line" in composer(s))
        assert composer(screen) == "first line\nsecond red line"
        assert "You said" not in transcript(screen)
    finally:
        term.close()


def test_ctrl_c_stops_a_reply_enter_queues_and_ctrl_c_twice_quits(home):
    term = start(home)
    try:
        term.type(f"one {LONG}")
        term.press("enter")
        term.wait_for("You said: one")
        term.type("two")
        term.press("enter")  # during the reply: queued, shown under it
        screen = term.wait_for("⏳ 1. two")
        assert composer(screen) == ""
        term.wait_for(lambda s: "You said: two" in s, 90)  # sent when the first reply ended
        term.type(f"three {LONG}")
        term.press("enter")
        term.wait_for("You said: three")
        term.press("ctrl+c")  # stops the reply; what came stays
        screen = term.wait_for(lambda s: turn_is("canceled")(s) and "■ stopped" in transcript(s), 30)
        assert "You said: three" in screen
        term.press("ctrl+c")  # empty composer: asks
        term.wait_for("ctrl+c again to quit")
        term.press("ctrl+c")
        assert term.wait_exit(30) == 0
    finally:
        term.close()


def test_stop_with_esc_then_rewind_and_undo(home):
    term = start(home)
    try:
        for text in ("alpha", "beta"):
            term.type(text)
            term.press("enter")
            term.wait_for(f"You said: {text}", 60)
            term.wait_for(turn_is("completed"), 60)
        term.type(f"gamma {LONG}")
        term.press("enter")
        term.wait_for("You said: gamma")
        term.press("escape")  # stop
        term.wait_for(turn_is("canceled"), 30)
        term.press("alt+up")  # the preview of the last turn
        term.wait_for("Enter rewinds")
        term.press("up")  # the turn before: beta
        term.wait_for(lambda s: "2 turns" in s)
        term.press("enter")
        screen = term.wait_for("ctrl+z: undo the rewind", 30)
        assert "You said: beta" not in transcript(screen) and "You said: alpha" in transcript(screen)
        term.press("ctrl+z")
        screen = term.wait_for(lambda s: "You said: beta" in transcript(s), 30)
        assert "gamma" in transcript(screen)
    finally:
        term.close()


def test_quit_and_restart_into_the_same_session_with_the_draft(home):
    term = start(home)
    try:
        term.type("the session to come back to")
        term.press("enter")
        term.wait_for("You said: the session to come back to", 60)
        term.wait_for(turn_is("completed"), 60)
        term.type("half-written")
        term.wait_for(lambda s: composer(s) == "half-written")
        term.press("ctrl+q")
        assert term.wait_exit(30) == 0
    finally:
        term.close()
    again = start(home)
    try:
        screen = again.wait_for(lambda s: composer(s) == "half-written", 30)
        assert "the session to come back to" in transcript(screen)
    finally:
        again.close()
