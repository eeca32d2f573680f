"""The chat screen's file actions: attach a file to the next message, save the files and data an
agent sent, show the agent card. The screen binds keys and palette entries to these; the work is
here (and in :mod:`rewindtui.client.attachments`, shared with the headless commands)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rewindtui.client.attachments import AttachmentError, attach, savable, save_parts
from rewindtui.client.errors import ClientError
from rewindtui.model import Item
from rewindtui.output.card_extras import load_keys
from rewindtui.tui.screens.card import CardScreen
from rewindtui.tui.screens.path_prompt import PathPrompt
from rewindtui.tui.widgets.attachment_bar import AttachmentBar

if TYPE_CHECKING:
    from rewindtui.tui.screens.chat import ChatScreen


def default_save_dir() -> Path:
    downloads = Path.home() / "Downloads"
    return downloads if downloads.is_dir() else Path.cwd()


def save_directory(value: str) -> Path:
    """The directory a save prompt's answer names (``~`` expanded); refused when empty or a file."""
    if not value.strip():
        raise ValueError("give a directory")
    path = Path(value.strip()).expanduser()
    if path.exists() and not path.is_dir():
        raise ValueError(f"{value} is a file, not a directory")
    return path


def _turn_of(items: Sequence[Item], index: int) -> list[Item]:
    """The items of the turn holding ``items[index]`` (same rewind target, else same task)."""
    item = items[index]
    target, task = item.rewind_target, item.task_id

    def same(other: Item) -> bool:
        return (target is not None and other.rewind_target == target) or (
            target is None and task is not None and other.task_id == task
        )

    start = index
    while start > 0 and same(items[start - 1]):
        start -= 1
    end = index + 1
    while end < len(items) and same(items[end]):
        end += 1
    return list(items[start:end]) if (target or task) else [item]


def parts_to_save(items: Sequence[Item], selected: tuple[int, int] | None = None) -> list[Any]:
    """The agent's files and data to save: of the selected turn (rewind mode), else of the latest
    turn that has some."""
    if selected is not None:
        chosen = list(items[selected[0] : selected[1]])
    else:
        chosen = []
        for index in range(len(items) - 1, -1, -1):
            item = items[index]
            if item.role != "user" and item.raw is not None and savable(item.other_parts):
                chosen = _turn_of(items, index)
                break
    return [p for item in chosen if item.role != "user" and item.raw is not None for p in savable(item.other_parts)]


class FileActions:
    def __init__(self, screen: ChatScreen) -> None:
        self.screen = screen
        self.save_dir: Path | None = None  # the last directory saved to
        self.attach_dir = ""

    @property
    def bar(self) -> AttachmentBar:
        return self.screen.query_one(AttachmentBar)

    # -- attach --------------------------------------------------------------------------------
    def attach(self) -> None:
        bar = self.bar

        def accept(value: str) -> Any:
            try:
                return attach(value, already=bar.attachments)
            except AttachmentError as exc:
                raise ValueError(str(exc)) from None

        def attached(result: Any) -> None:
            if result is not None:
                bar.add(result)
                self.attach_dir = str(Path(result.source).parent) + "/" if not result.url else self.attach_dir
                self.screen.notify(f"Attached {result.name}; it goes with your next message.", timeout=3)
            self.screen.composer.focus()

        self.screen.app.push_screen(
            PathPrompt(
                "Attach a file to the next message",
                accept,
                value=self.attach_dir or (str(Path.cwd()) + "/"),
                hint="A path is sent inline (10 MB at most); an http(s) URL is sent as a link.",
            ),
            attached,
        )

    def remove_all(self) -> None:
        count = len(self.bar.attachments)
        self.bar.clear()
        self.screen.notify(
            f"Removed {count} attachment{'s' if count != 1 else ''}." if count else "Nothing is attached.", timeout=3
        )

    # -- save ----------------------------------------------------------------------------------
    def save(self, item: Item | None = None) -> None:
        screen = self.screen
        chat = screen.chat
        if chat is None:
            screen.notify("Not connected.", severity="warning")
            return
        items = chat.conversation.items
        if item is not None:
            parts = savable(item.other_parts) if item.raw is not None else []
        else:
            bounds = screen.transcript.selected_bounds() if screen.rewind_mode else None
            parts = parts_to_save(items, bounds)
        if not parts:
            screen.notify("No files or data to save here.", title="Save", severity="warning")
            return
        client = chat.client

        def chosen(directory: Path | None) -> None:
            if directory is not None:
                self.save_dir = directory
                screen.run_worker(self._save(parts, directory, client.http), group="save", exclusive=False)

        count = len(parts)
        screen.app.push_screen(
            PathPrompt(
                f"Save {count} file{'s' if count != 1 else ''} / data part{'s' if count != 1 else ''} into directory",
                save_directory,
                value=str(self.save_dir or default_save_dir()) + "/",
                hint="Existing files are never overwritten.",
                directories_only=True,
            ),
            chosen,
        )

    async def _save(self, parts: list[Any], directory: Path, http: Any) -> None:
        try:
            saved = await save_parts(parts, directory, http=http)
        except AttachmentError as exc:
            self.screen.notify(str(exc), title="Save failed", severity="error", timeout=8)
            return
        if saved.written:
            names = ", ".join(p.name for p in saved.written)
            self.screen.notify(f"Saved to {directory}: {names}", title="Saved", timeout=6)
        for reason in saved.skipped:
            self.screen.notify(f"Not saved: {reason}", title="Save", severity="warning", timeout=8)

    # -- the agent card ------------------------------------------------------------------------
    def show_card(self) -> None:
        chat = self.screen.chat
        caps = chat.client.capabilities if chat is not None else None
        if chat is None or caps is None:
            self.screen.notify("Not connected yet: no agent card to show.", severity="warning")
            return
        embedded = getattr(self.screen.app, "server_key", "") == "embedded"
        settings = getattr(getattr(self.screen.app, "connector", None), "settings", None)
        try:  # whom the user trusts to sign cards (card_keys / card_issuers)
            keys = load_keys(getattr(settings, "card_keys", None))
        except ClientError as exc:
            self.screen.notify(f"Card keys not used: {exc}", severity="warning", timeout=8)
            keys = None
        issuers = tuple(getattr(settings, "card_issuers", ()) or ())
        self.screen.app.push_screen(
            CardScreen(
                caps.card,
                url=chat.client.url,
                choice=caps.choice,
                embedded=embedded,
                client=chat.client,
                keys=keys,
                issuers=issuers,
            )
        )
