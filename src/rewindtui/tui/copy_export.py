"""Copy and export, for the chat screen: the last reply (or the turn chosen in rewind mode) to the
clipboard, the transcript to a file the user names (an existing file is replaced only after a yes).
Files an agent sent are never inlined: :mod:`rewindtui.output.export` names them."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rewindtui.base.dirs import default_data_dir
from rewindtui.model import Item, ItemKind
from rewindtui.output.export import export, markdown_items
from rewindtui.tui.clipboard import copy_text
from rewindtui.tui.host import ScreenHost
from rewindtui.tui.screens.confirm import ConfirmScreen
from rewindtui.tui.screens.path_prompt import PathPrompt


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40] or "session"


class CopyExport:
    def __init__(
        self, host: ScreenHost, *, ask: Callable[[Any, Callable[[Any], None]], object], clipboard: Callable[[str], None]
    ) -> None:
        self.host = host
        self.ask = ask  # push a modal screen and get its answer
        self.clipboard = clipboard
        #: where exports are written (default: the current directory) and a copy's fallback file
        self.export_dir: Path | None = None
        self.files_dir: Path | None = None

    def _notify(self, text: str, *, title: str, severity: str = "information", timeout: float = 6) -> None:
        # literal text: server answers and file names are not markup
        self.host.notify(text, title=title, severity=severity, timeout=timeout, markup=False)

    def _copy_items(self) -> list[Item]:
        """The selected turn in rewind mode, else the last reply."""
        host = self.host
        chat = host.chat
        if chat is None:
            return []
        items = chat.conversation.items
        bounds = host.transcript.selected_bounds() if host.rewind_mode else None
        if bounds is not None:
            return items[bounds[0] : bounds[1]]
        last: list[Item] = []
        for item in reversed(items):
            if item.rewound is not None or item.kind not in (ItemKind.MESSAGE, ItemKind.ARTIFACT):
                continue
            if item.role == "user":
                break
            last.insert(0, item)
        return last

    def copy(self) -> None:
        items = self._copy_items()
        if not items:
            self._notify("Nothing to copy yet.", title="Copy")
            return
        text = items[0].text if len(items) == 1 else markdown_items(items)
        copied = copy_text(text, self.clipboard, self.files_dir or default_data_dir())
        what = "the selected turn" if self.host.rewind_mode else "the last reply"
        self._notify(f"{what[:1].upper() + what[1:]}: {copied.message}", title="Copy", timeout=8)

    def export(self, fmt: str) -> None:
        """Ask where to write the transcript (a path prompt); an existing file is overwritten
        only after a yes."""
        chat = self.host.chat
        if chat is None or not chat.conversation.items:
            self._notify("Nothing to export yet.", title="Export")
            return
        session = chat.session
        title = session.name if session else ""
        folder = self.export_dir or Path.cwd()
        suggested = folder / f"rewindtui-{_slug(title)}-{(chat.session_id or 'new')[:8]}.{fmt}"

        def accept(value: str) -> Path:
            path = Path(value).expanduser()
            if not value.strip() or value.endswith("/") or path.is_dir():
                raise ValueError("Give a file name, not a directory.")
            if not path.parent.is_dir():
                raise ValueError(f"No such directory: {path.parent}")
            return path

        def chosen(path: Path | None) -> None:
            if path is None:
                return
            if path.exists():
                question = ConfirmScreen(
                    "Replace it?", f"{path} exists. Replace it with this transcript?", go="Replace", purpose="overwrite"
                )
                self.ask(
                    question,
                    lambda go: self._write(path, fmt) if go else self._notify("Nothing written.", title="Export"),
                )
                return
            self._write(path, fmt)

        prompt = PathPrompt(
            f"Export the transcript ({fmt}) to",
            accept,
            value=str(suggested),
            hint="An existing file is replaced only if you say so.",
        )
        self.ask(prompt, chosen)

    def _write(self, path: Path, fmt: str) -> None:
        chat = self.host.chat
        if chat is None:
            return
        session = chat.session
        text = export(
            chat.conversation.items,
            fmt,
            session_id=chat.session_id,
            title=session.name if session else "",
            times=chat.conversation.task_times,
        )
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self._notify(f"Could not write {path}: {exc.strerror or exc}", title="Export", severity="error")
            return
        rewound = " (rewound turns included, marked)" if chat.conversation.shows_rewound else ""
        self._notify(f"Transcript written to {path}{rewound}.", title="Export", timeout=8)
