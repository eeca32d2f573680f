"""The wire console (F5, ``/wire``): every request, answer, SSE frame and gRPC message of the
app's connections, in order, with timings, credentials redacted (:mod:`rewindtui.client.wire_log`).

Opening it starts recording when nothing records yet (an in-memory log, bounded: the newest
2,000 entries, 8 MB); it then keeps recording for the app's life, so closing and opening it again
loses nothing in between. With ``--wire-log FILE`` it shows that log, from the start. The list
shows at most :data:`MAX_SHOWN` lines (the oldest go first). Enter on a request copies it as a
curl command line (redacted values stay ``***``); on any other line, the entry as JSON.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from rewindtui.base.textsafe import sanitize_line
from rewindtui.client import wire_log

#: lines the console shows at most
MAX_SHOWN = 1000


def log_for_console() -> wire_log.WireLog:
    """The active wire log; one in memory, made active now, when there is none."""
    log = wire_log.active()
    if log is None:
        log = wire_log.WireLog()
        wire_log.activate(log)
    return log


class WireConsoleScreen(ModalScreen[None]):
    CSS_PATH = "wire_console.tcss"
    BINDINGS = [Binding("escape,f5", "dismiss", "Close", id="wire.close", tooltip="Close the wire console")]

    def __init__(self, files_dir: Path | None = None) -> None:
        super().__init__()
        self.wire = log_for_console()
        self.files_dir = files_dir
        self.shown: list[dict[str, Any]] = []
        self._unsubscribe: Any = None

    def compose(self) -> ComposeResult:
        with Vertical(id="wire-body"):
            yield Static("Wire console — every request, answer and frame, credentials redacted", id="wire-title")
            yield OptionList(id="wire-list")
            yield Static("Enter: copy a request as curl (any other line: as JSON) · Esc closes", id="wire-hint")

    def on_mount(self) -> None:
        for entry in list(self.wire.entries):
            self._add(entry)
        if not self.shown:
            self.query_one("#wire-hint", Static).update(
                "Nothing yet: what the app sends from now on is shown here · Esc closes"
            )
        self._unsubscribe = self.wire.subscribe(self._heard)

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()

    def _heard(self, entry: dict[str, Any]) -> None:
        if threading.get_ident() == self.app._thread_id:
            self._add(entry)
        else:
            self.app.call_from_thread(self._add, entry)

    def _add(self, entry: dict[str, Any]) -> None:
        listing = self.query_one("#wire-list", OptionList)
        self.shown.append(entry)
        listing.add_option(Option(Text(sanitize_line(wire_log.entry_line(entry))[:240])))
        if len(self.shown) > MAX_SHOWN:
            self.shown.pop(0)
            listing.remove_option_at_index(0)
        if listing.highlighted is None or listing.highlighted >= len(self.shown) - 2:
            listing.highlighted = len(self.shown) - 1  # follow the newest unless the user moved up

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        from rewindtui.base.dirs import default_data_dir
        from rewindtui.tui.clipboard import copy_text

        entry = self.shown[event.option_index]
        text = entry.get("curl") or json.dumps(entry, ensure_ascii=False, default=str)
        what = "the request as curl" if entry.get("curl") else "the entry as JSON"
        copied = copy_text(text, self.app.copy_to_clipboard, self.files_dir or default_data_dir())
        self.notify(f"Copied {what}: {copied.message}", title="Wire", timeout=8, markup=False)
