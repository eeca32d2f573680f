"""A path prompt with completion: attach a file, choose where to save.

Tab (or →) completes the path from the file system (the longest common start of the entries that
match; a directory gets its ``/``); Enter checks the path with the caller's ``accept`` function,
which returns the result (the screen dismisses with it) or raises ``ValueError`` with a message
(shown under the input; nothing is lost, the prompt stays). Esc cancels (dismisses with None).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Input, Static

from rewindtui.base.textsafe import sanitize


class PathSuggester(Suggester):
    """Completes the last component of a path from the directory it is in."""

    def __init__(self, *, directories_only: bool = False) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.directories_only = directories_only

    async def get_suggestion(self, value: str) -> str | None:
        return complete_path(value, directories_only=self.directories_only)


def complete_path(value: str, *, directories_only: bool = False) -> str | None:
    """``value`` completed as far as the file system makes it unambiguous (None: nothing to add)."""
    if not value:
        return None
    head, sep, prefix = value.rpartition("/")
    directory = Path(os.path.expanduser(head + sep if sep else ".") or "/")
    try:
        entries = [
            e
            for e in os.scandir(directory)
            if e.name.startswith(prefix) and (prefix.startswith(".") or not e.name.startswith("."))
        ]
    except OSError:
        return None
    if directories_only:
        entries = [e for e in entries if e.is_dir()]
    if not entries:
        return None
    names = sorted(e.name for e in entries)
    common = os.path.commonprefix(names)
    if len(names) == 1 and entries[0].is_dir():
        common += "/"
    if len(common) <= len(prefix):
        return None
    return value + common[len(prefix) :]


class PathPrompt(ModalScreen[Any]):
    DEFAULT_CSS = """
    PathPrompt { align: center middle; }
    PathPrompt > #prompt-box {
        width: 80%; max-width: 100; height: auto; border: thick $accent; background: $panel; padding: 1 2;
    } PathPrompt #prompt-error { color: $text-error; height: auto; }
    PathPrompt #prompt-hint { color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="prompt.cancel", tooltip="Close; nothing changes"),
        Binding("tab", "complete", "Complete", id="prompt.complete", tooltip="Complete the path", priority=True),
    ]

    def __init__(
        self,
        title: str,
        accept: Callable[[str], Any],
        *,
        value: str = "",
        hint: str = "",
        directories_only: bool = False,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.accept = accept
        self.initial = value
        self.hint = hint
        self.directories_only = directories_only

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-box"):
            yield Static(Text(self.title_text, style="bold"), id="prompt-title")
            yield Input(
                value=self.initial,
                suggester=PathSuggester(directories_only=self.directories_only),
                id="prompt-input",
            )
            yield Static("", id="prompt-error", markup=False)
            yield Static(
                Text(self.hint + ("  " if self.hint else "") + "Tab completes · Enter accepts · Esc cancels"),
                id="prompt-hint",
            )

    def on_mount(self) -> None:
        self.input.focus()
        # pre-filled and selected: typing replaces it (an absolute path), → or Tab keeps and extends it
        self.call_after_refresh(self.input.select_all)

    @property
    def input(self) -> Input:
        return self.query_one("#prompt-input", Input)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            result = self.accept(event.value)
        except ValueError as exc:
            self.query_one("#prompt-error", Static).update(Text(sanitize(str(exc))))
            return
        self.dismiss(result)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_one("#prompt-error", Static).update("")

    def action_complete(self) -> None:
        completed = complete_path(self.input.value, directories_only=self.directories_only)
        if completed is None:
            self.app.bell()
            return
        self.input.value = completed
        self.input.cursor_position = len(completed)

    def action_cancel(self) -> None:
        self.dismiss(None)
