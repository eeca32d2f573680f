"""The client's errors, and turning HTTP failures into them.

Every failure talking to a server is a :class:`ClientError` whose ``str()`` is one line a person
can act on, with secrets redacted (:mod:`rewindtui.client.auth`). ``code`` is a short machine-readable
name (``category``; ``--json`` errors carry it), ``hint`` what to do about it (may be empty).

Transport failures say whether the request can have reached the server: :class:`ConnectFailed`
(it did not: nothing was sent) or :class:`ConnectionLost` (it was sent; the connection broke
before the whole answer came back, so the server may have acted on it).
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from rewindtui.a2a.classify import StreamEvent, classify_frame
from rewindtui.a2a.dialect import RPC_NOT_OFFERED
from rewindtui.client.auth import redact
from rewindtui.client.bounded_json import loads as bounded_loads

_EXCERPT = 200
#: Transport failures after which the request may have reached the server.
LOST = (
    httpx.ReadError,
    httpx.WriteError,
    httpx.RemoteProtocolError,
    httpx.ReadTimeout,
    httpx.WriteTimeout,
    httpx.CloseError,
)


class ClientError(Exception):
    """A failure talking to the server; ``str()`` is a one-line human message (secrets redacted)."""

    category = "error"

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(redact(message))
        self.hint = redact(hint)

    @property
    def message(self) -> str:
        """The failure without the hint."""
        return redact(super().__str__())

    def __str__(self) -> str:
        hint = redact(self.hint)
        return f"{self.message}; {hint}" if hint else self.message


class ConnectFailed(ClientError):
    """The request did not reach the server (connection refused, DNS, connect timeout...)."""

    category = "connect"


class ConnectionLost(ConnectFailed):
    """The request was sent but the connection broke (or timed out) before the whole answer came
    back: the server may have acted on it."""

    category = "connection-lost"


class HTTPStatusFailed(ClientError):
    category = "http"

    def __init__(self, message: str, status: int, detail: str = "", *, hint: str = "", url: str = "") -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.url = url  # the request's URL
        self.detail = redact(detail)  # the server's own error text, if it gave one
        if status in (401, 403):
            self.category = "auth"
        elif status == 404:
            self.category = "not-found"


class RpcError(ClientError):
    """A JSON-RPC error answer to a request (or the HTTP+JSON binding's equivalent)."""

    category = "rpc"

    def __init__(self, message: str, code: int | None, rpc_message: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.rpc_message = rpc_message

    @property
    def not_offered(self) -> bool:
        """The server does not offer this method / operation."""
        return self.code in RPC_NOT_OFFERED


class MalformedFrame(ClientError):
    category = "malformed"


class Unsupported(ClientError):
    category = "unsupported"


def excerpt(text: str, limit: int = _EXCERPT) -> str:
    """A short single-line excerpt of a body: HTML tags dropped, whitespace runs squeezed."""
    if text.lstrip().startswith("<"):
        text = re.sub(r"<(script|style)\b.*?</\1>|<[^>]*>", " ", text, flags=re.S | re.I)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_json(data: bytes | str) -> Any:
    """Parse a JSON body. pydantic-core's parser: a large session's tasks load in about 0.7x the
    time of ``json.loads``. ValueError on bad JSON; nesting past ``limits.MAX_JSON_DEPTH`` is cut
    to a marker (:mod:`rewindtui.client.bounded_json`), never a RecursionError."""
    return bounded_loads(data)


def parse_frame(data: str) -> StreamEvent:
    """One SSE ``data:`` payload -> a classified event. MalformedFrame if it is not JSON."""
    try:
        frame = bounded_loads(data)
    except ValueError:
        raise MalformedFrame(f"malformed stream frame: {excerpt(data)!r}") from None
    return classify_frame(frame)


def describe_transport(exc: Exception, url: str) -> ClientError:
    """An httpx transport failure as ConnectFailed / ConnectionLost."""
    reason = excerpt(str(exc)) or type(exc).__name__
    if isinstance(exc, LOST):
        what = "timed out waiting for" if isinstance(exc, httpx.TimeoutException) else "lost the connection to"
        return ConnectionLost(f"{what} {url} after sending the request ({reason})")
    if isinstance(exc, httpx.TimeoutException):
        return ConnectFailed(f"timed out connecting to {url}")
    if isinstance(exc, httpx.ConnectError):
        return ConnectFailed(f"cannot connect to {url}: {excerpt(str(exc)) or 'connection refused'}")
    return ConnectFailed(f"connection to {url} failed: {reason}")


def status_error(response: httpx.Response) -> HTTPStatusFailed:
    """An HTTP error answer as HTTPStatusFailed, with the server's own error text when it gave one."""
    try:
        body = response.text
    except httpx.ResponseNotRead:
        body = ""
    detail = ""
    try:
        data = bounded_loads(body) if body else None
        if isinstance(data, dict):
            err = data.get("error")
            if isinstance(err, dict):
                detail = str(err.get("message") or err)
            elif isinstance(err, str):
                detail = err
            else:
                detail = str(data.get("message") or data.get("detail") or "")
    except ValueError:
        pass
    detail = excerpt(detail or body)
    reason = response.reason_phrase or ""
    msg = f"HTTP {response.status_code} {reason} from {response.request.method} {response.request.url}".replace(
        "  ", " "
    )
    return HTTPStatusFailed(
        msg + (f": {detail}" if detail else ""), response.status_code, detail, url=str(response.request.url)
    )


# -- the app's words for known refusals ---------------------------------------------------------
#: where the words are said: the app (keys) or the headless commands (flags and commands)
APP = "app"
CLI = "cli"

_HINTS = {
    APP: {
        "answer": "Answer the question first: alt+y approves, alt+n rejects.",
        "branches": "F4 shows rewound turns; Restore brings one back.",
    },
    CLI: {
        "answer": "Answer the question first: `rewindtui send --approve` or `--reject`.",
        "branches": (
            "`rewindtui history --include-rewound` shows rewound turns; `rewindtui redo --rewind-task` brings one back."
        ),
    },
}
#: a task's id, which the app never shows: "Task <uuid>" (or a prefix of one followed by "…")
_TASK_ID = re.compile(
    r"\b(?:rewind )?task '?(?:[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|[0-9a-f]{8}[-0-9a-f]*…)'?", re.I
)


def _waits_for_answer(text: str) -> bool:
    return "waits for approval" in text or ("decision_type" in text and "-32602" in text)


def user_message(exc: BaseException, face: str = APP) -> str:
    """One sentence for ``exc`` in the app's terms (``face``: :data:`APP` names keys,
    :data:`CLI` flags). Known server refusals are said as what the user can do; the protocol's
    words (JSON-RPC codes, task ids) never reach the user. Anything else is ``str(exc)``."""
    hints = _HINTS.get(face, _HINTS[APP])
    text = str(exc)
    if _waits_for_answer(text) or type(exc).__name__ == "QuestionWaiting":
        return hints["answer"]
    if "nothing to redo" in text or "nothing to undo" in text:
        word = "redo" if "nothing to redo" in text else "undo"
        return (
            f"Nothing to {word}: no rewind is the last thing done in this session (a turn came after it, "
            f"or it was undone already). {hints['branches']}"
        )
    if re.search(r"no rewind task .* in session", text):
        return f"That rewind is not in this session. {hints['branches']}"
    text = re.sub(r"JSON-RPC error -?\d+: ", "", text)
    if face == APP:
        text = _TASK_ID.sub("the turn", text)
        text = text[:1].upper() + text[1:]
    return text
