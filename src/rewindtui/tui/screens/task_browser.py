"""The task browser (F8, ``/tasks``): every task of the open session as the server holds it,
rewound ones included and marked, and the one highlighted in full: its state, history,
artifacts and raw JSON.

Where the tasks come from: the session's REST API with its rewound tasks (the embedded server,
kagent with the rewind add-on); else A2A 1.0's ``ListTasks`` of the session's context; else (A2A
0.3 and no REST) the tasks the conversation names, each read with ``GetTask``. At most
:data:`MAX_TASKS` (the newest).

Keys: ``r`` reloads (the list and the highlighted task, read again from the server), ``f`` follows a
running task (resubscribe: its state and artifacts as they change), ``x`` cancels a running task
(after a yes), ``y`` copies its id, ``j`` copies its raw JSON, ``c`` copies its artifacts (their
text, data and file names), ``a`` saves its artifacts into a directory it asks for, ``s`` saves its
raw JSON in the data dir's ``tasks/`` folder. A save never overwrites a file (a free name is taken)
and says where it wrote only what it wrote (:mod:`rewindtui.client.artifact_files`). Esc closes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from rewindtui.a2a import contract, raw
from rewindtui.a2a.dialect import TERMINAL_STATES, Dialect, norm_role, norm_state
from rewindtui.base.textsafe import sanitize, sanitize_line

#: tasks listed at most (the newest)
MAX_TASKS = 200
#: characters of raw JSON shown (the rest is in a saved or copied copy)
MAX_JSON = 20_000


def task_kind(task: dict[str, Any]) -> str:
    """``"rewound"`` (a turn a rewind took away), ``"rewind"`` (a rewind itself) or ``""``."""
    meta = raw.metadata(task)
    if meta.get(contract.EFFECTIVE_HISTORY_KEY):
        return "rewind"
    if meta.get(contract.REWOUND_KEY) is True:
        return "rewound"
    return ""


def state_of(task: dict[str, Any]) -> str:
    return norm_state((task.get("status") or {}).get("state"))


def first_user_text(task: dict[str, Any]) -> str:
    for message in task.get("history") or ():
        if isinstance(message, dict) and norm_role(message.get("role")) == "user":
            return raw.text_of(message)
    return ""


def label(task: dict[str, Any]) -> str:
    kind = task_kind(task)
    mark = {"rewound": "  [rewound]", "rewind": "  [rewind]"}.get(kind, "")
    ident = sanitize_line(str(task.get("id", "?"))[:8])
    return f"{ident}  {sanitize_line(state_of(task)):<14}{mark}  {sanitize_line(first_user_text(task)[:60])}"


def details(task: dict[str, Any]) -> str:
    """The task as text: state, history, status message, artifacts, raw JSON (bounded)."""
    lines = [
        f"task {task.get('id')}",
        f"state: {state_of(task)}",
        f"context: {task.get('contextId') or task.get('context_id')}",
    ]
    meta = raw.metadata(task)
    kind = task_kind(task)
    if kind == "rewound":
        lines.append(
            f"rewound by {meta.get(contract.REWOUND_BY_TASK_KEY) or '?'} at {meta.get(contract.REWOUND_AT_KEY) or '?'}"
        )
    elif kind == "rewind":
        lines.append("a rewind (its history is what the session kept)")
    lines.append("")
    lines.append("history:")
    for message in task.get("history") or ():
        if isinstance(message, dict):
            lines.append(f"  {norm_role(message.get('role'))}: {raw.text_of(message)[:2000]}")
    status = task.get("status") or {}
    if isinstance(status.get("message"), dict):
        lines.append(f"status message: {raw.text_of(status['message'])[:2000]}")
    artifacts = task.get("artifacts") or ()
    if artifacts:
        lines.append("artifacts:")
        for artifact in artifacts:
            if isinstance(artifact, dict):
                name = artifact.get("name") or artifact.get("artifactId") or "artifact"
                lines.append(f"  {name}: {raw.text_of(artifact)[:2000]}")
    text = json.dumps(task, indent=1, ensure_ascii=False, default=str)
    lines += [
        "",
        "raw JSON:",
        text[:MAX_JSON] + (f"\n… ({len(text):,} characters in all: s saves it whole)" if len(text) > MAX_JSON else ""),
    ]
    return sanitize("\n".join(lines))


class TaskBrowserScreen(ModalScreen[None]):
    CSS_PATH = "task_browser.tcss"
    BINDINGS = [
        Binding("escape,f8", "dismiss", "Close", id="tasks.close"),
        Binding("r", "reload", "Reload", id="tasks.reload"),
        Binding("f", "follow", "Follow", id="tasks.follow"),
        Binding("x", "cancel_task", "Cancel task", id="tasks.cancel"),
        Binding("y", "copy_id", "Copy id", id="tasks.copy_id"),
        Binding("j", "copy_json", "Copy JSON", id="tasks.copy_json"),
        Binding("s", "save_json", "Save JSON", id="tasks.save"),
        Binding("c", "copy_artifacts", "Copy artifacts", id="tasks.copy_artifacts"),
        Binding("a", "save_artifacts", "Save artifacts", id="tasks.save_artifacts"),
    ]

    def __init__(self, chat: Any, files_dir: Path | None = None) -> None:
        super().__init__()
        self.chat = chat
        self.files_dir = files_dir
        #: the directory artifacts were last saved into (the next save offers it)
        self.save_dir: Path | None = None
        self.tasks: list[dict[str, Any]] = []
        self.source = ""

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="tasks-frame"):
            yield Static("Tasks of this session — reading…", id="tasks-title")
            with Horizontal(id="tasks-body"):
                yield OptionList(id="tasks-list")
                with VerticalScroll(id="tasks-detail-box"):
                    yield Static("", id="tasks-detail")
            yield Static(
                "r reload · f follow a running task · x cancel it · y copy id · j copy JSON · s save JSON · "
                "c copy artifacts · a save artifacts · Esc closes",
                id="tasks-hint",
            )

    def on_mount(self) -> None:
        self.load()

    @property
    def current(self) -> dict[str, Any] | None:
        index = self.query_one("#tasks-list", OptionList).highlighted
        return self.tasks[index] if index is not None and 0 <= index < len(self.tasks) else None

    # -- reading ----------------------------------------------------------------------------------
    async def read_tasks(self) -> tuple[list[dict[str, Any]], str]:
        chat = self.chat
        client = chat.client
        sid = chat.session_id
        if not sid:
            return [], "no session is open"
        if getattr(client, "has_api", False):
            return (await client.session_tasks(sid, include_rewound=True))[
                -MAX_TASKS:
            ], "the session's REST API (rewound tasks included)"
        caps = await client.connect()
        if caps.dialect is Dialect.V10:
            from rewindtui.client.task_ops import list_tasks

            return (
                await list_tasks(client, sid, limit=MAX_TASKS)
            ), "A2A ListTasks (this server keeps no rewound tasks a client can read)"
        ids: list[str] = []
        for item in chat.conversation.items:
            if item.task_id and item.task_id not in ids:
                ids.append(str(item.task_id))
        tasks = [await client.get_task(task_id) for task_id in ids[-MAX_TASKS:]]
        return tasks, "the conversation's tasks, each read with GetTask (A2A 0.3 has no ListTasks)"

    @work(exclusive=True, group="tasks-load")
    async def load(self) -> None:
        title = self.query_one("#tasks-title", Static)
        try:
            tasks, source = await self.read_tasks()
        except Exception as exc:  # the browser says why; the session is not touched
            title.update(Text(f"Tasks of this session — could not read them: {sanitize_line(str(exc))}"))
            return
        self.tasks, self.source = tasks, source
        rewound = sum(1 for t in tasks if task_kind(t) == "rewound")
        title.update(Text(f"Tasks of this session — {len(tasks)} ({rewound} rewound), from {source}"))
        listing = self.query_one("#tasks-list", OptionList)
        listing.clear_options()
        listing.add_options([Option(Text(label(t))) for t in tasks])
        if tasks:
            listing.highlighted = len(tasks) - 1
            listing.focus()
        else:
            self.query_one("#tasks-detail", Static).update("No tasks.")

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        task = self.current
        if task is not None:
            self.query_one("#tasks-detail", Static).update(Text(details(task)))

    def _replace(self, task: dict[str, Any]) -> None:
        for i, known in enumerate(self.tasks):
            if known.get("id") == task.get("id"):
                self.tasks[i] = {**known, **task, "metadata": {**raw.metadata(known), **raw.metadata(task)}}
                listing = self.query_one("#tasks-list", OptionList)
                listing.replace_option_prompt_at_index(i, Text(label(self.tasks[i])))
                if listing.highlighted == i:
                    self.query_one("#tasks-detail", Static).update(Text(details(self.tasks[i])))

    # -- actions ----------------------------------------------------------------------------------
    def action_reload(self) -> None:
        self.load()

    @work(exclusive=True, group="tasks-follow")
    async def action_follow(self) -> None:
        task = self.current
        if task is None:
            return
        if state_of(task) in TERMINAL_STATES:
            self.notify(
                f"Task {str(task.get('id'))[:8]} has ended ({state_of(task)}): nothing to follow.", title="Tasks"
            )
            return
        from contextlib import aclosing

        from rewindtui.a2a.classify import EventKind
        from rewindtui.client.task_ops import resubscribe

        task_id = str(task.get("id"))
        try:
            async with aclosing(resubscribe(self.chat.client, task_id)) as events:  # type: ignore[type-var]
                async for event in events:
                    if event.kind is EventKind.ERROR:
                        self.notify(
                            f"Following {task_id[:8]} stopped: {sanitize_line(str(event.body))}",
                            title="Tasks",
                            severity="warning",
                        )
                        return
                    if state_of(event.body if isinstance(event.body, dict) else {}) in TERMINAL_STATES:
                        break
        except Exception as exc:
            self.notify(
                f"Following {task_id[:8]} stopped: {sanitize_line(str(exc))}", title="Tasks", severity="warning"
            )
            return
        self._replace(await self.chat.client.get_task(task_id))  # as the server holds it now

    def action_cancel_task(self) -> None:
        task = self.current
        if task is None:
            return
        if state_of(task) in TERMINAL_STATES:
            self.notify(
                f"Task {str(task.get('id'))[:8]} has ended ({state_of(task)}): nothing to cancel.", title="Tasks"
            )
            return
        from rewindtui.tui.screens.confirm import ConfirmScreen

        task_id = str(task.get("id"))

        def answered(yes: bool | None) -> None:
            if yes:
                self.cancel(task_id)

        self.app.push_screen(
            ConfirmScreen(
                f"Cancel task {task_id[:8]}?",
                "The server stops it and marks it canceled. A rewind cannot undo that.",
                go="Cancel the task",
                stay="Keep it running",
                purpose="cancel-task",
            ),
            answered,
        )

    @work(group="tasks-cancel")
    async def cancel(self, task_id: str) -> None:
        try:
            task = await self.chat.client.cancel_task(task_id)
        except Exception as exc:
            self.notify(
                f"The server did not cancel {task_id[:8]}: {sanitize_line(str(exc))}", title="Tasks", severity="warning"
            )
            return
        self._replace(task)
        self.notify(f"Task {task_id[:8]} is {state_of(task)} on the server.", title="Tasks")

    def _copy(self, text: str, what: str) -> None:
        from rewindtui.base.dirs import default_data_dir
        from rewindtui.tui.clipboard import copy_text

        copied = copy_text(text, self.app.copy_to_clipboard, self.files_dir or default_data_dir())
        self.notify(f"{what}: {copied.message}", title="Tasks", timeout=8, markup=False)

    def action_copy_id(self) -> None:
        task = self.current
        if task is not None:
            self._copy(str(task.get("id")), "The task id")

    def action_copy_json(self) -> None:
        task = self.current
        if task is not None:
            self._copy(json.dumps(task, indent=1, ensure_ascii=False, default=str), "The task's JSON")

    def action_save_json(self) -> None:
        task = self.current
        if task is None:
            return
        from rewindtui.base.dirs import default_data_dir
        from rewindtui.client.attachments import AttachmentError, _write_new

        folder = (self.files_dir or default_data_dir()) / "tasks"
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in str(task.get("id")))[:80] or "task"
        data = json.dumps(task, indent=1, ensure_ascii=False, default=str).encode("utf-8", "replace")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = _write_new(folder, f"{safe}.json", data)  # an earlier save of it stays as it was
        except AttachmentError as exc:
            self.notify(f"Not saved: {exc}", title="Tasks", severity="warning", markup=False)
            return
        except OSError as exc:
            self.notify(f"Not saved: {exc.strerror or exc}", title="Tasks", severity="warning", markup=False)
            return
        self.notify(f"Saved the task's JSON in {path}", title="Tasks", markup=False)

    # -- its artifacts (rewindtui.client.artifact_files) ----------------------------------------------
    def _with_artifacts(self) -> dict[str, Any] | None:
        from rewindtui.client.artifact_files import artifacts_of

        task = self.current
        if task is None:
            return None
        if not artifacts_of(task):
            self.notify(f"Task {sanitize_line(str(task.get('id')))[:8]} has no artifacts.", title="Tasks")
            return None
        return task

    def action_copy_artifacts(self) -> None:
        from rewindtui.client.artifact_files import artifacts_text

        task = self._with_artifacts()
        if task is not None:
            self._copy(artifacts_text(task), "The task's artifacts")

    def action_save_artifacts(self) -> None:
        from rewindtui.client.artifact_files import artifacts_of
        from rewindtui.tui.file_actions import default_save_dir, save_directory
        from rewindtui.tui.screens.path_prompt import PathPrompt

        task = self._with_artifacts()
        if task is None:
            return

        def chosen(directory: Path | None) -> None:
            if directory is not None:
                self.save_dir = directory
                self.save_artifacts(task, directory)

        count = len(artifacts_of(task))
        self.app.push_screen(
            PathPrompt(
                f"Save the {count} artifact{'s' if count != 1 else ''} of task "
                f"{sanitize_line(str(task.get('id')))[:8]} into directory",
                save_directory,
                value=str(self.save_dir or default_save_dir()) + "/",
                hint="Existing files are never overwritten: a free name is taken.",
                directories_only=True,
            ),
            chosen,
        )

    @work(group="tasks-save")
    async def save_artifacts(self, task: dict[str, Any], directory: Path) -> None:
        from rewindtui.client.artifact_files import save_artifacts
        from rewindtui.client.attachments import AttachmentError

        try:
            saved = await save_artifacts(task, directory, http=getattr(self.chat.client, "http", None))
        except AttachmentError as exc:
            self.notify(f"Not saved: {exc}", title="Tasks", severity="error", timeout=8, markup=False)
            return
        if saved.written:
            names = ", ".join(p.name for p in saved.written)
            self.notify(f"Saved to {directory}: {names}", title="Tasks", timeout=8, markup=False)
        for reason in saved.skipped:
            self.notify(f"Not saved: {reason}", title="Tasks", severity="warning", timeout=8, markup=False)
        if not saved.written and not saved.skipped:
            self.notify("Nothing to save: its artifacts hold no text, files or data.", title="Tasks", markup=False)
