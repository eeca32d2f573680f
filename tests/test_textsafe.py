"""The terminal-safety sanitiser: nothing a model says may drive the terminal."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewindtui.base.textsafe import is_clean, sanitize, sanitize_line

ESC = "\x1b"


@pytest.mark.parametrize(
    "dirty, clean",
    [
        ("plain text", "plain text"),
        ("two\nlines\tand a tab", "two\nlines\tand a tab"),
        ("unicode ✓ ünïcödé 日本語 🙂", "unicode ✓ ünïcödé 日本語 🙂"),
        (f"{ESC}[31mred{ESC}[0m", "red"),
        (f"{ESC}[1;38;5;208mbold{ESC}[m", "bold"),
        (f"{ESC}[2J{ESC}[Hcleared", "cleared"),
        (f"{ESC}[?1049hALT", "ALT"),
        (f"{ESC}]0;evil title\x07after", "after"),
        (f"{ESC}]8;;https://evil.example/{ESC}\\link{ESC}]8;;{ESC}\\", "link"),
        (f"{ESC}]52;c;ZXZpbA=={ESC}\\x", "x"),  # clipboard write
        (f"{ESC}P1$r0m{ESC}\\dcs", "dcs"),
        (f"{ESC}_apc payload{ESC}\\z", "z"),
        (f"{ESC}(Bcharset", "charset"),
        (f"{ESC}7save{ESC}8", "save"),
        (f"{ESC}cRIS", "RIS"),
        ("\x9b31mC1 CSI", "C1 CSI"),
        ("\x9d0;title\x9cafter", "after"),
        (f"unterminated {ESC}]0;title to the end", "unterminated "),
        (f"dangling {ESC}", "dangling "),
        ("bell\x07!", "bell\u2407!"),
        ("nul\x00", "nul\u2400"),
        ("back\x08space", "back\u2408space"),
        ("del\x7f", "del\u2421"),
        ("c1\x85next", "c1\ufffdnext"),
        ("over\rwrite", "over\nwrite"),
        ("crlf\r\nline", "crlf\nline"),
    ],
)
def test_sanitize(dirty: str, clean: str) -> None:
    assert sanitize(dirty) == clean


def test_sanitize_line_folds_whitespace() -> None:
    assert sanitize_line("a\nb\t c\r\n\x1b[31md") == "a b c d"


def test_is_clean() -> None:
    assert is_clean("fine\nand\tfine")
    assert not is_clean("\x1b[0m")
    assert not is_clean("\x9b")


@given(st.text())
def test_output_never_holds_controls(text: str) -> None:
    out = sanitize(text)
    assert is_clean(out)
    assert sanitize(out) == out  # idempotent


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc",))))
def test_text_without_controls_is_unchanged(text: str) -> None:
    assert sanitize(text) == text
