"""``rewindtui task get | list | cancel | resubscribe`` and ``rewindtui push set | get | list |
remove | receive``: A2A tasks and push-notification configs by id, on the binding and dialect the
agent card gives (:mod:`rewindtui.client.task_ops`), and a standalone webhook receiver
(:class:`rewindtui.client.push.PushReceiver`, with its token check).

Text output is one line per task or config; ``--json`` prints the task / config objects as the
server sent them (tasks) or in one flat shape (configs, :mod:`rewindtui.a2a.push_wire`), one per
line. A push config's token is shown only as ``***`` unless ``--show-token``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable
from typing import Any

from rewindtui.a2a import raw
from rewindtui.a2a.dialect import TURN_ENDING_STATES, norm_state
from rewindtui.cli.output import CommandFailed, Output


class _Command:
    """What ``parser.extra_commands`` wants of a command: ``add_parser(sub, options)`` and ``main``."""

    def __init__(self, add: Callable[[Any, Callable[[argparse.ArgumentParser], None]], None]) -> None:
        self.add_parser = add

    @staticmethod
    def main(settings: Any, args: argparse.Namespace) -> int:
        return main(settings, args)


# -- parsers --------------------------------------------------------------------------------------


def _json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="one JSON object per line")


def _add_task(sub: Any, options: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "task",
        help="A2A tasks by id: get, list, cancel, resubscribe",
        description=(
            "Read, list, cancel or follow an A2A task by its id, over the binding the agent card gives "
            "(JSON-RPC, HTTP+JSON or gRPC). A2A 0.3 has no list method: `task list` says so."
        ),
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    get = actions.add_parser("get", help="print a task: state, history, artifacts (--json: the task as sent)")
    get.add_argument("task_id", metavar="TASK_ID")
    get.add_argument("--history-length", type=int, metavar="N", help="ask for at most N of the newest messages")
    listed = actions.add_parser("list", help="list tasks (A2A 1.0 ListTasks), newest first as the server orders them")
    listed.add_argument("--context-id", metavar="ID", help="only the tasks of this context (session)")
    listed.add_argument("--limit", type=int, default=100, metavar="N", help="at most N tasks (default 100)")
    cancel = actions.add_parser("cancel", help="cancel a running task; prints it after the server took the request")
    cancel.add_argument("task_id", metavar="TASK_ID")
    follow = actions.add_parser("resubscribe", help="follow a running task's events until its turn ends")
    follow.add_argument("task_id", metavar="TASK_ID")
    for a in (get, listed, cancel, follow):
        options(a)
        _json(a)
    options(p)


def _add_push(sub: Any, options: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "push",
        help="push-notification configs of a task (set, get, list, remove) and a webhook receiver",
        description=(
            "Manage the push-notification configs of an A2A task, over the binding the agent card gives; "
            "or run a webhook receiver (`push receive`) that prints or forwards each notification whose "
            "X-A2A-Notification-Token is the expected one."
        ),
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    set_ = actions.add_parser("set", help="ask the agent to POST the task to URL when its turn ends")
    set_.add_argument("task_id", metavar="TASK_ID")
    set_.add_argument("--push-url", dest="push_url", metavar="URL", required=True, help="the webhook")
    set_.add_argument("--config-id", metavar="ID", help="the config's id (default: the server's choice)")
    set_.add_argument(
        "--token-env",
        metavar="VAR",
        help="the token the agent sends back (X-A2A-Notification-Token) from this variable",
    )
    get = actions.add_parser("get", help="print one config")
    get.add_argument("task_id", metavar="TASK_ID")
    get.add_argument("--config-id", metavar="ID", help="the config's id (default: the task's only one)")
    listed = actions.add_parser("list", help="list a task's configs")
    listed.add_argument("task_id", metavar="TASK_ID")
    remove = actions.add_parser("remove", help="delete a config")
    remove.add_argument("task_id", metavar="TASK_ID")
    remove.add_argument("--config-id", metavar="ID", required=True)
    for a in (set_, get, listed):
        a.add_argument("--show-token", action="store_true", help="print the config's token (default ***)")
    receive = actions.add_parser(
        "receive",
        help="a webhook receiver: print (or forward) each notification with the right token",
        description=(
            "Listen on HOST:PORT at PATH for A2A push notifications. A POST without the token (from "
            "--token-env, else a new random one, printed on stderr) is refused with 401, another path "
            "with 404; each accepted notification (a task, a status or an artifact update, as a2a-sdk's "
            'sender POSTs them) is printed ({"kind", "event"} a line with --json) and, with '
            "--forward, POSTed as it came to that URL (without the token). Stops after --count notifications, or on "
            "Ctrl+C."
        ),
    )
    receive.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    receive.add_argument("--port", type=int, default=0, help="port (default: a free one, printed)")
    receive.add_argument("--path", default="/a2a-push", help="the webhook path (default /a2a-push)")
    receive.add_argument("--token-env", metavar="VAR", help="the expected token from this variable")
    receive.add_argument("--forward", metavar="URL", help="also POST each accepted notification to URL")
    receive.add_argument("--count", type=int, metavar="N", help="stop after N notifications")
    receive.add_argument("--until-done", action="store_true", help="stop after a notification that a task's turn ended")
    for a in (set_, get, listed, remove):
        options(a)
    for a in (set_, get, listed, remove, receive):
        _json(a)
    options(p)


TASK = _Command(_add_task)
PUSH = _Command(_add_push)


# -- running --------------------------------------------------------------------------------------
def main(settings: Any, args: argparse.Namespace) -> int:
    if args.command == "push" and args.action == "receive":
        return asyncio.run(receive(args, Output(args.json)))
    return asyncio.run(run(settings, args, Output(args.json)))


async def run(settings: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.config.connection import connection

    async with connection(settings) as conn:
        if args.command == "task":
            return await run_task(conn.client, args, out)
        return await run_push(conn.client, args, out)


async def run_task(client: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.client import task_ops
    from rewindtui.output.render_text import json_line

    if args.action == "get":
        task = await task_ops.get_task(client, args.task_id, args.history_length)
        _print_task(task, out, full=True)
        return 0
    if args.action == "list":
        tasks = await task_ops.list_tasks(client, args.context_id, limit=args.limit)
        for task in tasks:
            _print_task(task, out, full=False)
        if not out.as_json and not tasks:
            out.line("no tasks")
        return 0
    if args.action == "cancel":
        task = await task_ops.cancel_task(client, args.task_id)
        _print_task(task, out, full=False)
        return 0
    from contextlib import aclosing

    state = ""
    async with aclosing(task_ops.resubscribe(client, args.task_id)) as events:  # type: ignore[type-var]
        async for event in events:
            if out.as_json:
                out.line(json_line({"kind": event.kind.value, "event": event.body}))
            else:
                out.line(event_line(event))
            if event.kind.value == "error":
                raise CommandFailed(f"task {args.task_id}: {_error_text(event.body)}")
            state = _event_state(event.body) or state
            if state in TURN_ENDING_STATES:
                break
    return 0


def _error_text(body: Any) -> str:
    if isinstance(body, dict):
        return f"{body.get('message') or 'error'} (code {body.get('code')})"
    return str(body)


def _event_state(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    status = body.get("status")
    if isinstance(status, dict) and status.get("state"):
        return norm_state(status.get("state"))
    return ""


def event_line(event: Any) -> str:
    """One line for a task event: its kind, state and text."""
    body = event.body if isinstance(event.body, dict) else {}
    kind = event.kind.value
    state = _event_state(body)
    text = ""
    if kind == "artifact-update" or "artifact" in body:
        text = raw.text_of(body.get("artifact") or {})
    elif isinstance(body.get("status"), dict) and isinstance(body["status"].get("message"), dict):
        text = raw.text_of(body["status"]["message"])
    elif "parts" in body:
        text = raw.text_of(body)
    pieces = [kind] + ([state] if state else []) + ([repr(text)] if text else [])
    return "  ".join(pieces)


def task_summary(task: dict[str, Any]) -> str:
    state = norm_state((task.get("status") or {}).get("state"))
    context = task.get("contextId") or task.get("context_id") or "?"
    history = len(task.get("history") or ())
    artifacts = len(task.get("artifacts") or ())
    return f"{task.get('id')}  {state}  context {context}  {history} message(s)  {artifacts} artifact(s)"


def _print_task(task: dict[str, Any], out: Output, *, full: bool) -> None:
    from rewindtui.output.render_text import json_line

    if out.as_json:
        out.line(json_line(task))
        return
    out.line(task_summary(task))
    if not full:
        return
    for message in task.get("history") or ():
        if isinstance(message, dict):
            role = "agent" if "agent" in str(message.get("role", "")).lower() else "user"
            out.line(f"  {role}: {raw.text_of(message)}")
    status_message = (task.get("status") or {}).get("message")
    if isinstance(status_message, dict):
        out.line(f"  status: {raw.text_of(status_message)}")
    for artifact in task.get("artifacts") or ():
        if isinstance(artifact, dict):
            name = artifact.get("name") or artifact.get("artifactId") or "artifact"
            out.line(f"  artifact {name}: {raw.text_of(artifact)}")


def shown_config(config: dict[str, Any], show_token: bool) -> dict[str, Any]:
    """A config as printed: its token (and any authentication credentials) as ``***`` unless asked."""
    shown = dict(config)
    if not show_token:
        if "token" in shown:
            shown["token"] = "***"
        auth = shown.get("authentication")
        if isinstance(auth, dict) and auth.get("credentials"):
            shown["authentication"] = {**auth, "credentials": "***"}
    return shown


def _print_config(config: dict[str, Any], out: Output, show_token: bool) -> None:
    from rewindtui.output.render_text import json_line

    shown = shown_config(config, show_token)
    if out.as_json:
        out.line(json_line(shown))
    else:
        token = f"  token {shown['token']}" if "token" in shown else ""
        out.line(f"{shown.get('id', '?')}  task {shown.get('taskId', '?')}  {shown.get('url')}{token}")


async def run_push(client: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.client import task_ops
    from rewindtui.output.render_text import json_line

    show = getattr(args, "show_token", False)
    if args.action == "set":
        token = _env_secret(args.token_env) if args.token_env else None
        config = await task_ops.set_push(client, args.task_id, args.push_url, token, args.config_id)
        _print_config(config, out, show)
    elif args.action == "get":
        _print_config(await task_ops.get_push(client, args.task_id, args.config_id), out, show)
    elif args.action == "list":
        configs = await task_ops.list_push(client, args.task_id)
        for config in configs:
            _print_config(config, out, show)
        if not configs and not out.as_json:
            out.line(f"task {args.task_id} has no push notification configs")
    else:
        await task_ops.delete_push(client, args.task_id, args.config_id)
        if out.as_json:
            out.line(json_line({"removed": args.config_id, "taskId": args.task_id}))
        else:
            out.line(f"removed push config {args.config_id} of task {args.task_id}")
    return 0


def _env_secret(name: str) -> str:
    from rewindtui.client.auth import register_secret

    value = os.environ.get(name, "")
    if not value:
        raise CommandFailed(f"--token-env {name}: the variable is not set or empty", code="usage")
    register_secret(value)  # never printed, from here on
    return value


class WebhookReceiver:
    """``push receive``'s receiver: :class:`rewindtui.client.push.PushReceiver` (its HTTP server,
    path and token check, bounded body), taking every kind of notification a server sends: a2a-sdk's
    ``BasePushNotificationSender`` POSTs each event as a ``StreamResponse`` (a task, a status update
    or an artifact update), not only the task when its turn ends."""

    def __new__(cls, host: str, port: int, path: str, token: str | None, on_event: Callable[[Any], None]) -> Any:
        import hmac
        import json

        from rewindtui.a2a.classify import EventKind, classify
        from rewindtui.client.push import TOKEN_HEADER, PushReceiver

        class _Receiver(PushReceiver):
            def _take(self, request: Any, body: bytes) -> tuple[int, str]:
                headers = {n.decode("latin-1").lower(): v.decode("latin-1") for n, v in request.headers}
                if request.method != b"POST" or request.target.decode("latin-1") != self.path:
                    self.rejected += 1
                    return 404, "not found"
                if not hmac.compare_digest(headers.get(TOKEN_HEADER, "").encode(), self.token.encode()):
                    self.rejected += 1
                    return 401, "wrong or missing notification token"
                try:
                    frame = json.loads(body)
                    event = classify(frame)
                except (ValueError, RecursionError):
                    self.rejected += 1
                    return 400, "not JSON"
                if event.kind is EventKind.UNKNOWN:
                    return 200, "ignored: not an A2A event"
                on_event((event, frame))
                return 200, "ok"

        receiver = _Receiver(host, port)
        receiver.path = path
        if token:
            receiver.token = token
        return receiver


async def receive(args: argparse.Namespace, out: Output, *, ready: Callable[[Any], Any] | None = None) -> int:
    """``push receive``: print (and forward) each accepted notification until ``--count`` of them
    or, with ``--until-done``, one saying a task's turn ended."""
    import httpx

    from rewindtui.output.render_text import json_line

    if not args.path.startswith("/"):
        raise CommandFailed("--path must start with /", code="usage")
    queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=1000)

    def arrived(event: Any) -> None:
        if queue.full():  # a reader that cannot keep up loses the oldest, never memory
            queue.get_nowait()
        queue.put_nowait(event)

    token = _env_secret(args.token_env) if args.token_env else None
    receiver = WebhookReceiver(args.host, args.port, args.path, token, arrived)
    async with receiver, httpx.AsyncClient(timeout=10) as http:
        sys.stderr.write(f"rewindtui: listening for push notifications at {receiver.url}\n")
        if not token:
            sys.stderr.write(f"rewindtui: token (X-A2A-Notification-Token): {receiver.token}\n")
        sys.stderr.flush()
        if ready is not None:
            ready(receiver)
        seen = 0
        while args.count is None or seen < args.count:
            event, frame = await queue.get()
            seen += 1
            out.line(json_line({"kind": event.kind.value, "event": event.body}) if out.as_json else event_line(event))
            if args.forward:
                try:
                    answer = await http.post(args.forward, json=frame)
                    if answer.status_code >= 300:
                        sys.stderr.write(f"rewindtui: note: {args.forward} answered HTTP {answer.status_code}\n")
                except httpx.HTTPError as exc:
                    sys.stderr.write(f"rewindtui: note: could not forward to {args.forward}: {type(exc).__name__}\n")
            if args.until_done and _event_state(event.body) in TURN_ENDING_STATES:
                break
    return 0
