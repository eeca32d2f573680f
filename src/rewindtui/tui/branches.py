"""The chat screen's branch features: redo (and undo right after a rewind), the rewound turns shown
in place, the jump-to-turn picker, copy and export, and the sessions panel's entries (fork
origins, rewound branches, rename, delete, live titles).

:class:`Branches` is owned by :class:`~rewindtui.tui.screens.chat.ChatScreen`, which keeps the
bindings and palette entries and calls in here. Every server operation runs through the screen's
:class:`~rewindtui.chat.Chat` (the same code as the headless commands), in the screen's worker
groups: a redo is a rewind in flight like any other (one at a time, the composer's draft kept).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from rewindtui.base.dirs import default_data_dir
from rewindtui.chat import Action, Chat
from rewindtui.client.a2a_client import ClientError, Session
from rewindtui.client.errors import user_message
from rewindtui.model import Change, Item, ItemKind
from rewindtui.output.export import export, markdown_items
from rewindtui.output.turn_list import turn_entries
from rewindtui.tui import interaction
from rewindtui.tui.clipboard import copy_text
from rewindtui.tui.screens.confirm import ConfirmScreen
from rewindtui.tui.screens.path_prompt import PathPrompt
from rewindtui.tui.screens.rename import RenameScreen
from rewindtui.tui.screens.rewind_picker import PickerChoice, RewindPicker

if TYPE_CHECKING:
    from rewindtui.tui.screens.chat import ChatScreen, RewindOutcome

def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40] or "session"


class Branches:
    def __init__(self, screen: ChatScreen) -> None:
        self.screen = screen
        #: the user asked to see rewound turns (kept across rewinds, turns and sessions)
        self.showing = False
        #: where exports are written (default: the current directory) and a copy's fallback file
        self.export_dir: Path | None = None
        self.files_dir: Path | None = None

    @property
    def chat(self) -> Chat | None:
        return self.screen.chat

    def _notify(self, text: str, *, title: str, severity: str = "information", timeout: float = 6) -> None:
        # literal text: server answers and our own "[button]" names are not markup
        self.screen.notify(text, title=title, severity=severity, timeout=timeout, markup=False)  # type: ignore[arg-type]

    # -- redo --------------------------------------------------------------------------------
    def why_not_redo(self) -> str:
        chat = self.chat
        if chat is None:
            return "Not connected."
        return self.screen.why_not(Action.REDO)

    def redo(self, rewind_task_id: str | None = None, *, title: str = "Redo", up_to: str | None = None) -> None:
        """Undo a rewind on the server (None: the last one); nothing is sent when the server does
        not offer redo (the reason is shown). ``up_to``: then rewind again before this invocation
        (the turn after the one restored to), so the branch comes back only up to there."""
        reason = self.why_not_redo()
        if reason:
            self._notify(reason, title=f"{title} unavailable", severity="warning")
            return
        screen = self.screen
        if screen.rewind_mode:
            screen.leave_mode()
        screen.outcome = None
        screen.activity = "redoing…"
        screen.refresh_status()
        screen.rewind_worker = screen.run_worker(self._redo(rewind_task_id, title, up_to), group="rewind", exit_on_error=False)

    async def _redo(self, rewind_task_id: str | None, title: str, up_to: str | None = None) -> None:
        chat = self.chat
        assert chat is not None
        before = chat.conversation.turn_invocations()
        try:
            await chat.redo(rewind_task_id)
            if up_to is not None and up_to in chat.conversation.turn_invocations():
                try:
                    await chat.rewind(up_to)  # the rest of the branch stays rewound: nothing is lost
                except ClientError as exc:
                    self._notify(
                        f"The whole branch came back, but the turns after the one chosen could not be rewound again: {user_message(exc)}",
                        title=title,
                        severity="warning",
                        timeout=8,
                    )
        except ClientError as exc:
            self._notify(user_message(exc), title=f"{title} failed", severity="error", timeout=8)
            return
        finally:
            self.screen.activity = None
            self.screen.refresh_status()
        after = chat.conversation.turn_invocations()
        back = len(set(after) - set(before))
        gone = len(set(before) - set(after))
        text = f"{_plural(back, 'turn')} back, with the agent's state as it was"
        if gone:
            text += f"; {_plural(gone, 'turn')} went to the rewound turns (F4 shows them)"
        self._notify(text + ".", title=title)

    def undo_hint(self, outcome: RewindOutcome) -> str:
        """``ctrl+z undoes it`` when the core's one undo now names this session's last change."""
        chat = self.chat
        if chat is None or outcome.session_id != chat.session_id or not chat.undo_label():
            return ""
        return f"{self._undo_keys()} undoes it"

    def _undo_keys(self) -> str:
        return interaction.keys_of("chat.undo_rewind", getattr(self.screen.app, "keymap_overrides", None))

    def undo_label(self) -> str:
        """What ctrl+z undoes now, for the status line ("" : the composer's own text undo). The
        core reads it per session from the server: it survives restarts, never crosses sessions."""
        chat = self.chat
        return (chat.undo_label() or "") if chat is not None else ""

    def why_not_undo(self) -> str:
        chat = self.chat
        if chat is None:
            return "not connected."
        return self.screen.why_not(Action.UNDO) or ("" if chat.undo_label() else "nothing to undo in this session.")

    def can_undo(self) -> bool:
        """ctrl+z undoes what the status line names, also with text in the composer (composer undo
        never hides it); when it names nothing, the key is the composer's text undo."""
        chat = self.chat
        return chat is not None and bool(chat.undo_label()) and not chat.why_not(Action.UNDO) and not self.screen.busy

    def undo(self) -> None:
        if not self.can_undo():
            return
        screen = self.screen
        if screen.rewind_mode:
            screen.leave_mode()
        screen.outcome = None
        screen.activity = "undoing…"
        screen.refresh_status()
        screen.rewind_worker = screen.run_worker(self._undo(), group="rewind", exit_on_error=False)

    async def _undo(self) -> None:
        chat = self.chat
        assert chat is not None
        try:
            outcome = await chat.undo()
        except ClientError as exc:
            self._notify(user_message(exc), title="Undo failed", severity="error", timeout=8)
            return
        finally:
            self.screen.activity = None
            self.screen.refresh_status()
        hint = f" {self._undo_keys()}: {outcome.undo_label}." if outcome.undo_label else ""
        self._notify(outcome.said + hint, title="Undo")

    def disarm_undo(self) -> None:
        """Nothing to do: the core ends an undo when a turn is sent."""

    # -- rewound turns -----------------------------------------------------------------------
    def toggle_rewound(self) -> None:
        chat = self.chat
        if chat is None:
            return
        if self.showing:
            self.showing = False
            chat.hide_rewound()
            self._notify("Rewound turns hidden.", title="Rewound turns", timeout=3)
            return
        reason = chat.why_not_rewound()
        if reason:
            self._notify(reason, title="Rewound turns", severity="warning")
            return
        self.showing = True
        self.screen.run_worker(self._show(announce=True), group="rewound", exclusive=True, exit_on_error=False)

    async def _show(self, *, announce: bool = False) -> None:
        chat = self.chat
        if chat is None or not self.showing or chat.why_not_rewound():
            return
        try:
            shown = await chat.show_rewound()
        except ClientError as exc:
            self._notify(user_message(exc), title="Rewound turns", severity="error")
            return
        if announce and not shown:
            self.showing = False  # nothing to show: F4 next time looks again, it does not hide
        if announce:
            turns = len({i.task_id for i in chat.conversation.items if i.rewound is not None})
            text = (
                f"{_plural(turns, 'rewound turn')} shown dimmed, in place ({shown} messages); "
                "[⟲ Restore] on a turn brings its branch back up to it, [fork branch] copies it. F4 hides them."
                if shown
                else "This session has no rewound turns."
            )
            self._notify(text, title="Rewound turns")

    def changed(self, change: Change) -> None:
        """A conversation change: after a turn, rewind or reload, re-read what was rewound (when
        shown) and the session's title (it is named by its first turn)."""
        if not change.turn_ended:
            return
        if self.showing:
            self.screen.run_worker(self._show(), group="rewound", exclusive=True, exit_on_error=False)
        self.refresh_sessions()

    # -- the picker ----------------------------------------------------------------------------
    def open_picker(self) -> None:
        screen = self.screen
        chat = self.chat
        reason = screen.why_not_preview()
        if reason or chat is None:
            self._notify(reason or "Not connected.", title="Turns", severity="warning")
            return
        entries = turn_entries(chat.conversation)
        if not entries:
            self._notify("No turns yet.", title="Turns")
            return
        screen.app.push_screen(RewindPicker(entries, chat.permissions()), self._picked)

    def _picked(self, choice: PickerChoice | None) -> None:
        if choice is None or self.chat is None:
            return
        self.act(choice.action, choice.item)

    def act(self, action: str, item: Item) -> None:
        """An action on a turn, from the picker or a rewound turn's button."""
        screen = self.screen
        if action == "restore":
            if item.rewound is not None and item.rewound.by:
                self.redo(item.rewound.by, title="Restore branch", up_to=self._next_in_branch(item))
            else:
                self._notify("This server keeps this turn but cannot bring it back.", title="Restore branch", severity="warning")
            return
        if action == "fork_branch":
            self.fork_branch(item)
            return
        items = self.chat.conversation.items if self.chat is not None else []
        index = next((i for i in range(len(items) - 1, -1, -1) if items[i] is item), None)
        if index is None:
            self._notify("That turn is no longer shown.", title="Turns", severity="warning")
        elif action == "rewind":
            screen.enter_rewind_mode(index)  # what would go is shown; Enter confirms
        else:
            screen.handle_action(action, item)

    def _next_in_branch(self, item: Item) -> str | None:
        """The invocation of the rewound turn after ``item``'s in its branch (None: it is the last):
        restoring up to ``item`` rewinds again before it."""
        mark = item.rewound
        chat = self.chat
        if mark is None or chat is None:
            return None
        branch: list[str] = []
        for other in chat.conversation.items:
            if other.rewound is not None and other.rewound.by == mark.by and other.invocation_id and other.invocation_id not in branch:
                branch.append(other.invocation_id)
        if item.invocation_id not in branch:
            return None
        later = branch[branch.index(item.invocation_id) + 1 :]
        return later[0] if later else None

    def fork_branch(self, item: Item) -> None:
        chat = self.chat
        mark = item.rewound
        if chat is None or mark is None or not mark.fork_before:
            self._notify("This server cannot fork from a rewound turn.", title="Fork", severity="warning")
            return
        reason = self.screen.why_not(Action.FORK)
        if reason:
            self._notify(reason, title="Fork unavailable", severity="warning")
            return
        screen = self.screen
        screen.activity = "forking…"
        screen.refresh_status()
        screen.rewind_worker = screen.run_worker(self._fork(mark.fork_before), group="rewind", exit_on_error=False)

    async def _fork(self, invocation_id: str) -> None:
        chat = self.chat
        assert chat is not None
        original = chat.session_id or ""
        try:
            session = await chat.fork_branch(invocation_id)
        except ClientError as exc:
            self._notify(user_message(exc), title="Fork failed", severity="error", timeout=8)
            return
        finally:
            self.screen.activity = None
            self.screen.refresh_status()
        self.screen.show_conversation()
        self._notify(
            f"Forked the rewound branch into “{session.name or session.id}”; the original ({original[:8]}) is in the "
            "sessions panel (F2).",
            title="Fork",
        )

    # -- copy and export -------------------------------------------------------------------------
    def _copy_items(self) -> list[Item]:
        """The selected turn in rewind mode, else the last reply."""
        screen = self.screen
        chat = self.chat
        if chat is None:
            return []
        items = chat.conversation.items
        bounds = screen.transcript.selected_bounds() if screen.rewind_mode else None
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
        copied = copy_text(text, self.screen.app.copy_to_clipboard, self.files_dir or default_data_dir())
        what = "the selected turn" if self.screen.rewind_mode else "the last reply"
        self._notify(f"{what[:1].upper() + what[1:]}: {copied.message}", title="Copy", timeout=8)

    def export(self, fmt: str) -> None:
        """Ask where to write the transcript (a path prompt); an existing file is overwritten
        only after a yes."""
        chat = self.chat
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
                question = ConfirmScreen("Replace it?", f"{path} exists. Replace it with this transcript?", go="Replace", purpose="overwrite")
                self.screen.app.push_screen(question, lambda go: self._write_export(path, fmt) if go else self._notify("Nothing written.", title="Export"))
                return
            self._write_export(path, fmt)

        self.screen.app.push_screen(
            PathPrompt(f"Export the transcript ({fmt}) to", accept, value=str(suggested), hint="An existing file is replaced only if you say so."),
            chosen,
        )

    def _write_export(self, path: Path, fmt: str) -> None:
        chat = self.chat
        if chat is None:
            return
        session = chat.session
        text = export(chat.conversation.items, fmt, session_id=chat.session_id, title=session.name if session else "", times=chat.conversation.task_times)
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            self._notify(f"Could not write {path}: {exc.strerror or exc}", title="Export", severity="error")
            return
        rewound = " (rewound turns included, marked)" if chat.conversation.shows_rewound else ""
        self._notify(f"Transcript written to {path}{rewound}.", title="Export", timeout=8)

    # -- sessions ------------------------------------------------------------------------------
    def refresh_sessions(self) -> None:
        """Re-read the sessions when the panel shows them; else, for the status line, the open
        session's title once the server has named it."""
        chat = self.chat
        if chat is None:
            return
        if not self.screen.sessions.has_class("hidden"):
            self.screen.run_worker(self._load_sessions(), group="sessions", exclusive=True, exit_on_error=False)
        elif chat.session_id and chat.client.has_api and not (chat.session and chat.session.name):
            self.screen.run_worker(self._load_title(), group="title", exclusive=True, exit_on_error=False)

    def load_sessions(self) -> None:
        self.screen.run_worker(self._load_sessions(), group="sessions", exclusive=True, exit_on_error=False)

    async def _load_sessions(self) -> None:
        chat = self.chat
        panel = self.screen.sessions
        if chat is None:
            return
        try:
            sessions = await chat.list_sessions()
        except ClientError as exc:
            self._notify(user_message(exc), title="Sessions", severity="error")
            return
        if not sessions:
            panel.show_note("No sessions yet." if chat.client.has_api else "No sessions used from here yet.")
            return
        panel.show_sessions(sessions, chat.session_id)
        self._adopt(next((s for s in sessions if s.id == chat.session_id and not s.gone), None))

    async def _load_title(self) -> None:
        chat = self.chat
        if chat is None or not chat.session_id:
            return
        try:
            self._adopt(await chat.client.get_session(chat.session_id))
        except ClientError:
            return  # only the status line's title; the next turn tries again

    def _adopt(self, session: Session | None) -> None:
        """The open session as the server lists it now (its title may have changed)."""
        chat = self.chat
        if chat is None or session is None or session.id != chat.session_id:
            return
        if chat.session is None or chat.session.name != session.name:
            chat.session = session
            self.screen.refresh_status()

    def rename(self, session: Session) -> None:
        chat = self.chat
        if chat is None:
            return
        if not chat.client.has_api:
            self._notify("This server has no sessions API to rename a session with.", title="Rename", severity="warning")
            return

        def named(name: str | None) -> None:
            if name:
                self.screen.run_worker(self._rename(session, name), group="sessions-edit", exit_on_error=False)

        self.screen.app.push_screen(RenameScreen(session.name), named)

    async def _rename(self, session: Session, name: str) -> None:
        chat = self.chat
        assert chat is not None
        try:
            await chat.rename_session(session.id, name)
        except ClientError as exc:
            self._notify(user_message(exc), title="Rename failed", severity="error")
            return
        self.screen.refresh_status()
        await self._load_sessions()
        if not self.screen.sessions.has_class("hidden"):
            self.screen.sessions.focus()  # ↑ / Enter move the highlight again

    def delete(self, session: Session) -> None:
        chat = self.chat
        if chat is None:
            return
        if session.id == chat.session_id:
            self._notify("This is the open session: open another one (or a new one, n) first.", title="Delete", severity="warning")
            return
        title = session.name or session.id[:8]
        what = (
            "It is only forgotten here: the server no longer has it."
            if session.gone
            else "Its turns (rewound ones too) are deleted on the server. This cannot be undone."
        )

        def answered(go: bool | None) -> None:
            if go:
                self.screen.run_worker(self._delete(session), group="sessions-edit", exit_on_error=False)

        self.screen.app.push_screen(
            ConfirmScreen(f"Delete “{title}”?", what, go="Delete", purpose="delete"), answered
        )

    async def _delete(self, session: Session) -> None:
        chat = self.chat
        assert chat is not None
        try:
            await chat.delete_session(session.id)
        except ClientError as exc:
            self._notify(user_message(exc), title="Delete failed", severity="error")
            return
        self._notify(f"Deleted “{session.name or session.id[:8]}”.", title="Sessions", timeout=4)
        await self._load_sessions()

