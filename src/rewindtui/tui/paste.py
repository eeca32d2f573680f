"""Bracketed paste that keeps escape sequences inside the paste.

Textual's input parser (8.2) reads an escape sequence found *inside* a bracketed paste as key
presses: text copied from a terminal with colours in it (``ESC [31m``…) arrives as an Escape key,
stray characters typed before the paste, and a Paste event holding what is left. That scrambles
the draft and, worse, the Escape keys act as Esc presses. Here the bytes between the paste
markers are cut out of the input before Textual's parser sees them and delivered as one Paste
event (the composer then strips the escape sequences from it).

Used by the app on POSIX terminals through :class:`PasteSafeDriver`.

Textual has no public API for its input parser, so this module is the one place in the app that
leans on Textual's private names, listed in :data:`PRIVATE_NAMES` (Textual is pinned in
``pyproject.toml``). ``tests/tui/test_paste_internals.py`` fails loudly when one of them changes:
a name or signature gone, ``LinuxDriver.run_input_thread`` (which :class:`PasteSafeDriver`
replaces) no longer built as this copy assumes, or Textual's own parser reading escapes inside
a paste correctly at last (then this module can go).
"""

from __future__ import annotations

import os
import selectors
import signal
from codecs import getincrementaldecoder
from collections.abc import Iterable
from time import monotonic

from textual import events
from textual._xterm_parser import XTermParser  # private: see PRIVATE_NAMES
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

#: (module, attribute path) of every private Textual name used here, for the version-drift test.
#: ``Driver._debug`` is set on the instance (``Driver.__init__``) and checked there by the test.
PRIVATE_NAMES: tuple[tuple[str, str], ...] = (
    ("textual._xterm_parser", "XTermParser"),
    ("textual._xterm_parser", "XTermParser.feed"),
    ("textual._xterm_parser", "XTermParser.tick"),
)

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
#: Input that might be the start of a paste marker is held back at most this long.
HOLD_SECONDS = 0.05


def _partial_suffix(text: str, marker: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``marker``, ignoring a
    lone ESC (the Escape key must not wait for more input)."""
    for size in range(min(len(marker) - 1, len(text)), 1, -1):
        if marker.startswith(text[-size:]):
            return size
    return 0


class PasteSafeParser(XTermParser):
    """An :class:`XTermParser` that takes bracketed pastes out of the input itself."""

    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        self._pending = ""
        self._paste: list[str] | None = None  # inside a paste: the text so far
        self._held_since: float | None = None

    def feed(self, data: str) -> Iterable[Message]:
        if not data:  # end of input
            pending, self._pending = self._pending, ""
            out = list(super().feed(pending)) if pending and self._paste is None else []
            return out + list(super().feed(""))
        self._pending += data
        return self._drain(final=False)

    def tick(self) -> Iterable[Message]:
        out = list(super().tick())
        if self._held_since is not None and monotonic() - self._held_since >= HOLD_SECONDS:
            out.extend(self._drain(final=True))
        return out

    def _drain(self, *, final: bool) -> list[Message]:
        out: list[Message] = []
        self._held_since = None
        while self._pending:
            if self._paste is None:
                start = self._pending.find(PASTE_START)
                if start < 0:
                    keep = 0 if final else _partial_suffix(self._pending, PASTE_START)
                    head, self._pending = (
                        self._pending[: len(self._pending) - keep],
                        self._pending[len(self._pending) - keep :],
                    )
                    if head:
                        out.extend(super().feed(head))
                    break
                if start:
                    out.extend(super().feed(self._pending[:start]))
                self._pending = self._pending[start + len(PASTE_START) :]
                self._paste = []
            else:
                end = self._pending.find(PASTE_END)
                if end < 0:
                    keep = _partial_suffix(self._pending, PASTE_END)
                    self._paste.append(self._pending[: len(self._pending) - keep])
                    self._pending = self._pending[len(self._pending) - keep :]
                    break
                self._paste.append(self._pending[:end])
                self._pending = self._pending[end + len(PASTE_END) :]
                out.append(events.Paste("".join(self._paste).replace("\x00", "")))
                self._paste = None
        if self._pending and self._paste is None:
            self._held_since = monotonic()
        return out


class PasteSafeDriver(LinuxDriver):
    """Textual's POSIX driver, reading input through :class:`PasteSafeParser`."""

    def run_input_thread(self) -> None:
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        parser = PasteSafeParser(self._debug)
        decode = getincrementaldecoder("utf-8")(errors="replace").decode
        try:
            while not self.exit_event.is_set():
                for _key, mask in selector.select(0.1):
                    if mask & selectors.EVENT_READ:
                        try:
                            raw = os.read(self.fileno, 4096)
                        except OSError:
                            raw = b""
                        if not raw:
                            # the terminal hung up: stop reading (a closed terminal is always
                            # "readable") and let the hangup signal end the app
                            os.kill(os.getpid(), signal.SIGHUP)
                            return
                        for event in parser.feed(decode(raw)):
                            self.process_message(event)
                for event in parser.tick():
                    self.process_message(event)
        finally:
            selector.close()
