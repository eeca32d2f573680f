"""Make text from models and servers safe to write to a terminal.

Anything a model or a server says is shown literally, so it must not be able to drive the
terminal: no colour changes, cursor moves, screen clears, window titles, hyperlinks, clipboard
writes (OSC 52) or bells. :func:`sanitize` removes whole escape sequences (7-bit ``ESC ...`` and
their 8-bit C1 forms) and replaces every other control character with a visible stand-in, keeping
newlines and tabs. :func:`sanitize_line` also folds line breaks, for one-line places (errors,
status lines, titles).

Pure functions over ``str``; used by the headless commands and the app.
"""

from __future__ import annotations

import re

__all__ = ["sanitize", "sanitize_line", "strip_controls", "is_clean"]

# A string sequence (OSC, DCS, SOS, PM, APC) runs to its terminator: ST (ESC \ or 0x9c) or, for
# OSC in practice, BEL. An unterminated one runs to the end of the text (a terminal would swallow
# it all the same).
_STRING_SEQ = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c|$)"
# CSI: ESC [ or 0x9b, parameter bytes, intermediate bytes, one final byte (possibly missing).
_CSI = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
# Other escapes: ESC, intermediate bytes (0x20-0x2f), one final byte (e.g. ESC ( B, ESC 7, ESC c).
_ESC = r"\x1b[ -/]*[0-~]?"
_SEQUENCE = re.compile(f"{_STRING_SEQ}|{_CSI}|{_ESC}")
# What is left after removing sequences: C0 controls except tab and newline, DEL, C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _picture(match: re.Match[str]) -> str:
    """A visible stand-in: the Unicode control picture for C0 and DEL, U+FFFD for C1."""
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # e.g. BEL -> '␇'
    if code == 0x7F:
        return "\u2421"  # '␡'
    return "\ufffd"


def sanitize(text: str) -> str:
    """``text`` with terminal escape sequences removed and other control characters made visible.

    Newlines and tabs are kept; ``\\r\\n`` becomes ``\\n`` and a lone ``\\r`` (which would let text
    overwrite what came before it on the line) becomes a newline.
    """
    if not isinstance(text, str):
        text = str(text)
    if not _CONTROL.search(text):
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _SEQUENCE.sub("", text)
    return _CONTROL.sub(_picture, text)


def sanitize_line(text: str) -> str:
    """:func:`sanitize`, then line breaks and tabs folded into single spaces: one line."""
    return " ".join(sanitize(text).split())


def strip_controls(text: str) -> str:
    """``text`` with escape sequences and control characters removed (newlines and tabs kept):
    for text a user pastes, where a visible stand-in would only be noise."""
    if not _CONTROL.search(text):
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", _SEQUENCE.sub("", text))


def is_clean(text: str) -> bool:
    """True if ``text`` holds no control character other than newline and tab."""
    return not _CONTROL.search(text)
