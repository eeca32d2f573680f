"""The app in a real pseudo-terminal, read back through a terminal emulator (pyte): what a user's
terminal sends, not Pilot's key events (alt+f arriving as ESC f was found only this way).

Each test starts ``rewindtui`` on its embedded server (its own data dir, the paced demo model so a
reply stays in flight) and drives it with the bytes a terminal sends.
"""

from __future__ import annotations

import re
import time

import pytest

from rewindtui.tui.widgets.composer import PLACEHOLDER
from terminal.ptyterm import KEYS, Terminal, app_argv, app_env

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
    tops = [i for i, line in enumerate(lines) if line.startswith("▊▔")]
    if not tops:
        return "<no composer on screen>"
    body = lines[tops[-1] + 1 :]
    end = next((i for i, line in enumerate(body) if line.startswith("▊▁")), len(body))
    text = "\n".join(line.strip("▊▎ ").rstrip() for line in body[:end]).strip()
    return "" if text.startswith(PLACEHOLDER) else text


def transcript(screen: str) -> str:
    lines = screen.split("\n")
    top = max((i for i, line in enumerate(lines) if line.startswith("▊▔")), default=len(lines))
    return "\n".join(lines[1:top])


@pytest.fixture
def home(tmp_path):
    return tmp_path


def preview(term: Terminal, *keys: str, shows: str) -> str:
    """alt+↑ until the preview can rewind, then ``keys`` until it ``shows``. Right after a turn, an
    undo or a rewind the app may still be closing that request: the preview then says "Wait for
    the current turn to finish" (Esc, and again, as a user would)."""
    deadline = time.monotonic() + 30
    while True:
        term.press("alt+up")
        try:
            screen = term.wait_for(lambda s: "Rewind mode" in s, 3)
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            continue  # not taken (the app was busy with the request before): press it again
        if ") go, on the" in screen:  # what would go, not a reason to wait (the line may wrap after it)
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"the preview never could rewind\n{screen}")
        term.press("escape")
        term.wait_for(lambda s: "Rewind mode" not in s)
        time.sleep(0.2)  # a person's pause before trying again
    term.press(*keys)
    return term.wait_for(shows, 10)


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
        preview(term, "up", shows="2 turns (")  # the turn before the last: beta
        term.press("enter")
        screen = term.wait_for("ctrl+z: undo the rewind", 30)
        assert "You said: beta" not in transcript(screen) and "You said: alpha" in transcript(screen)
        term.press("ctrl+z")
        # what the undo brings back, drawn: under load a screen with beta back was read before the
        # stopped turn was drawn below it (with "undoing…" in the status line, or just after)
        term.wait_for(lambda s: "You said: beta" in transcript(s) and "gamma" in transcript(s), 30)
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


def test_the_readme_first_five_minutes_step_by_step(home):
    """README "The first five minutes", steps 1-5, as written (the demo model, not the paced one)."""
    term = Terminal(app_argv(home / "data"), env=app_env(home), columns=120, lines=40)
    try:
        # 1. start: the status line says when it is connected to its embedded agent
        screen = term.wait_for(READY, 90)
        assert "agent demo" in status(screen)
        # 2. three messages; the replies count the turns and the weather calls
        for text, shows in (
            ("hello", "(turn 1;"),
            ("what is the weather in Tokyo", "(weather_calls=1)"),
            ("third message", "(turn 3;"),
        ):
            term.type(text)
            term.press("enter")
            term.wait_for(shows, 60)
            term.wait_for(turn_is("completed"), 60)
        assert "weather_calls=1" in term.text()
        # 3. alt+↑: the last turn under a rewind point; ↑ moves it; Esc backs out; a letter goes to the composer
        preview(term, "up", shows="2 turns (")
        term.press("escape")
        term.wait_for(lambda s: "Rewind mode" not in s)
        term.press("alt+up")
        term.wait_for("Rewind mode")
        term.type("x")
        screen = term.wait_for(lambda s: composer(s) == "x" and "Rewind mode" not in s)
        assert "You said: third message" in transcript(screen)  # nothing rewound
        term.press("ctrl+c")  # clears the draft
        term.wait_for(lambda s: composer(s) == "")
        # 4. the point on the weather turn, Enter: gone; ctrl+z brings them back
        preview(term, "up", shows="2 turns (")
        term.press("enter")
        screen = term.wait_for("ctrl+z: undo the rewind", 30)
        assert "weather in Tokyo" not in transcript(screen)
        term.press("ctrl+z")
        screen = term.wait_for(lambda s: "You said: third message" in transcript(s), 30)
        # 5. rewind again and send: the agent no longer sees them, its weather count is back
        preview(term, "up", shows="2 turns (")
        term.press("enter")
        term.wait_for("ctrl+z: undo the rewind", 30)
        term.type("what do you remember?")
        term.press("enter")
        screen = term.wait_for(lambda s: "You said: what do you remember? (turn 2;" in s and "weather_calls=" in s, 60)
        reply = " ".join(line.strip("▏ ") for line in transcript(screen).split("\n"))
        assert "weather_calls=0" in reply
        assert "(turn 2;" in reply  # the agent sees two turns: hello and this one (toasts may cover the rest)
        term.press("f4")  # rewound turns where they were (the view may start below the first)
        term.wait_for(lambda s: "⟲ rewound" in transcript(s) and "third message" in transcript(s), 30)
    finally:
        term.close()


def test_restart_opens_the_session_that_was_open_not_the_newest(home):
    term = start(home)
    try:
        term.type("older session")
        term.press("enter")
        term.wait_for(turn_is("completed"), 60)
        term.type("/new")
        term.press("enter")
        term.wait_for(READY, 30)
        term.type("newer session")
        term.press("enter")
        term.wait_for(turn_is("completed"), 60)
        term.press("f2")  # the sessions panel: the older one is second (newest first)
        term.wait_for("older session", 30)
        term.press("down", "enter")
        term.wait_for(lambda s: "You said: older session" in transcript(s) and "newer session" not in transcript(s), 30)
        term.type("draft for later")
        term.wait_for(lambda s: composer(s) == "draft for later")
        term.press("ctrl+q")
        assert term.wait_exit(30) == 0
    finally:
        term.close()
    again = start(home)
    try:
        screen = again.wait_for(lambda s: composer(s) == "draft for later", 30)
        assert "You said: older session" in transcript(screen)
    finally:
        again.close()


def test_enter_and_ctrl_c_in_one_burst_stop_without_asking_to_quit(home):
    """A message, Enter and ctrl+c written to the terminal at once (a fast typist's or a script's
    burst): ctrl+c stops what Enter started -- the send before its message left (the text comes back
    to the composer), or the reply if the send got out first -- and never says "again to quit"."""
    term = start(home)
    try:
        term.type("first")
        term.press("enter")
        term.wait_for(turn_is("completed"), 60)
        words = " ".join(["burst"] * 150)
        seen_quit_hint: list[bool] = []

        def stopped(screen: str) -> bool:
            seen_quit_hint.append("ctrl+c again to quit" in screen)
            return "Stopped before it was sent" in screen or turn_is("canceled")(screen)

        term.type(words + KEYS["enter"].decode() + KEYS["ctrl+c"].decode())
        screen = term.wait_for(stopped, 60)
        assert not any(seen_quit_hint)
        if "Stopped before it was sent" in screen:
            # back in the composer, not sent. The app puts the text back and then shows the toast,
            # in one frame, but the screen is read as the terminal's bytes come in, and a read can
            # fall inside a frame (a clean-clone run read the toast over an empty composer)
            screen = term.wait_for(lambda s: composer(s).startswith("burst burst"), 10)
            assert "You said: burst" not in transcript(screen)
        else:  # the send got out first: its turn ended canceled on the server (what came stays)
            assert turn_is("canceled")(screen)
    finally:
        term.close()
