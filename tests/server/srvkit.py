"""Helpers for the embedded-server tests: a two-dialect A2A client, a REST client, turn summaries.

``A2A`` speaks one dialect (``"0.3"``: ``message/stream`` with ``kind`` fields;
``"1.0"``: ``SendStreamingMessage`` with ``A2A-Version: 1.0``) and normalizes
every stream result to the 0.3 shape (``kind``, lower-case states and roles,
``kind`` on parts), so one set of assertions covers both dialects. The raw
frames are kept on ``A2A.last_raw`` for dialect-specific checks.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import httpx

REWIND_KEY = "kagent_rewind_before_invocation_id"

_V1_KINDS = {"task": "task", "message": "message", "statusUpdate": "status-update", "artifactUpdate": "artifact-update"}


def _norm_part(part: dict[str, Any]) -> dict[str, Any]:
    if "kind" in part:
        return part
    out: dict[str, Any] = {}
    if "text" in part:
        out = {"kind": "text", "text": part["text"]}
    elif "data" in part:
        out = {"kind": "data", "data": part["data"]}
    else:
        out = {"kind": "file", "file": {k: v for k, v in part.items() if k != "metadata"}}
    if "metadata" in part:
        out["metadata"] = part["metadata"]
    return out


def _norm_message(message: dict[str, Any]) -> dict[str, Any]:
    out = dict(message)
    out["kind"] = "message"
    role = out.get("role", "")
    out["role"] = {"ROLE_USER": "user", "ROLE_AGENT": "agent"}.get(role, role)
    out["parts"] = [_norm_part(p) for p in out.get("parts", [])]
    return out


def _norm_status(status: dict[str, Any]) -> dict[str, Any]:
    out = dict(status)
    state = out.get("state", "")
    if state.startswith("TASK_STATE_"):
        out["state"] = state[len("TASK_STATE_") :].lower().replace("_", "-")
    if "message" in out:
        out["message"] = _norm_message(out["message"])
    return out


def normalize_result(result: dict[str, Any]) -> dict[str, Any]:
    """A stream/RPC result of either dialect in the 0.3 shape."""
    if "kind" in result:
        return result
    ((key, value),) = result.items()
    kind = _V1_KINDS[key]
    out = dict(value)
    out["kind"] = kind
    if "status" in out:
        out["status"] = _norm_status(out["status"])
    if kind == "message":
        out = _norm_message(out)
    if "history" in out:
        out["history"] = [_norm_message(m) for m in out["history"]]
    if "artifact" in out:
        art = dict(out["artifact"])
        art["parts"] = [_norm_part(p) for p in art.get("parts", [])]
        out["artifact"] = art
    return out


def texts(message: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in message.get("parts", []) if p.get("kind") == "text")


class A2A:
    def __init__(self, client: httpx.Client, url: str, dialect: str, user: str | None = None) -> None:
        self.client = client
        self.url = url
        self.dialect = dialect
        self.user = user
        self.last_raw: list[dict[str, Any]] = []
        self._ids = 0

    # -- request building ----------------------------------------------------------
    def headers(self, streaming: bool = True) -> dict[str, str]:
        headers = {"Accept": "text/event-stream" if streaming else "application/json"}
        if self.dialect == "1.0":
            headers["A2A-Version"] = "1.0"
        if self.user is not None:
            headers["X-User-Id"] = self.user
        return headers

    def message(
        self,
        text: str,
        context_id: str | None,
        *,
        metadata: dict[str, Any] | None = None,
        message_id: str | None = None,
        task_id: str | None = None,
    ) -> dict[str, Any]:
        mid = message_id or str(uuid.uuid4())
        if self.dialect == "0.3":
            msg: dict[str, Any] = {
                "kind": "message",
                "role": "user",
                "messageId": mid,
                "parts": [{"kind": "text", "text": text}],
            }
        else:
            msg = {"role": "ROLE_USER", "messageId": mid, "parts": [{"text": text}]}
        if context_id:
            msg["contextId"] = context_id
        if metadata:
            msg["metadata"] = metadata
        if task_id:
            msg["taskId"] = task_id
        return msg

    def rpc(self, method_03: str, method_10: str, params: dict[str, Any]) -> dict[str, Any]:
        self._ids += 1
        return {
            "jsonrpc": "2.0",
            "id": f"req-{self._ids}",
            "method": method_03 if self.dialect == "0.3" else method_10,
            "params": params,
        }

    # -- calls -----------------------------------------------------------------------
    def post_stream(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """Raw JSON-RPC frames of one streaming call (SSE ``data:`` lines, or one JSON body)."""
        frames: list[dict[str, Any]] = []
        with self.client.stream("POST", self.url, json=body, headers=self.headers()) as resp:
            assert resp.status_code == 200, resp.read()
            if resp.headers.get("content-type", "").startswith("text/event-stream"):
                for line in resp.iter_lines():
                    if line.startswith("data:"):
                        frames.append(json.loads(line[5:]))
            else:
                frames.append(json.loads(resp.read()))
        self.last_raw = frames
        return frames

    def stream(self, text: str, context_id: str | None, **kw: Any) -> list[dict[str, Any]]:
        """Normalized results of a ``message/stream`` / ``SendStreamingMessage`` call."""
        body = self.rpc("message/stream", "SendStreamingMessage", {"message": self.message(text, context_id, **kw)})
        frames = self.post_stream(body)
        errors = [f for f in frames if "error" in f]
        assert not errors, errors
        return [normalize_result(f["result"]) for f in frames]

    def stream_error(self, text: str, context_id: str | None, **kw: Any) -> dict[str, Any]:
        """The JSON-RPC error a streaming call is refused with (it must be refused)."""
        body = self.rpc("message/stream", "SendStreamingMessage", {"message": self.message(text, context_id, **kw)})
        frames = self.post_stream(body)
        assert len(frames) == 1 and "error" in frames[0], frames
        return frames[0]["error"]

    def rewind(self, context_id: str, invocation_id: str, text: str = "", **kw: Any) -> list[dict[str, Any]]:
        return self.stream(text, context_id, metadata={REWIND_KEY: invocation_id}, **kw)

    def send(self, text: str, context_id: str | None, **kw: Any) -> dict[str, Any]:
        """``message/send`` / ``SendMessage``: the resulting task (normalized)."""
        body = self.rpc("message/send", "SendMessage", {"message": self.message(text, context_id, **kw)})
        resp = self.client.post(self.url, json=body, headers=self.headers(streaming=False))
        data = resp.json()
        assert "result" in data, data
        result = data["result"]
        return normalize_result(result if "kind" in result or "task" in result else {"task": result})

    def get_task(self, task_id: str) -> dict[str, Any]:
        body = self.rpc("tasks/get", "GetTask", {"id": task_id})
        resp = self.client.post(self.url, json=body, headers=self.headers(streaming=False))
        data = resp.json()
        assert "result" in data, data
        result = data["result"]
        return normalize_result(result if "kind" in result else {"task": result})


class Turn:
    """What one streamed turn produced: its stream opens with the turn's Task (the spec's order;
    kagent's opens with a ``submitted`` status echoing the user message instead -- read both)."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        opening = [
            e
            for e in events
            if (e["kind"] == "task" and not e.get("metadata", {}).get("rewindtui_effective_history"))
            or (e["kind"] == "status-update" and e["status"]["state"] == "submitted")
        ]
        assert opening and opening[0]["status"]["state"] == "submitted", events
        if opening[0]["kind"] == "task":
            (self.user_message,) = opening[0]["history"]
            self.task_id = opening[0]["id"]
        else:
            self.user_message = opening[0]["status"]["message"]
            self.task_id = opening[0]["taskId"]
        self.invocation_id = self.user_message["metadata"]["kagent_invocation_id"]
        self.final = events[-1]
        self.full_messages = [
            e["status"]["message"]
            for e in events
            if e["kind"] == "status-update"
            and e["status"]["state"] == "working"
            and "message" in e["status"]
            and not e["status"]["message"]["metadata"].get("kagent_adk_partial")
        ]
        self.answer = texts(self.full_messages[-1]) if self.full_messages else ""
        self.message_ids = [self.user_message["messageId"]] + [m["messageId"] for m in self.full_messages]


class Api:
    def __init__(self, client: httpx.Client, base: str, user: str | None = None) -> None:
        self.client = client
        self.base = base
        self.user = user

    def _headers(self) -> dict[str, str]:
        return {"X-User-Id": self.user} if self.user else {}

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return self.client.get(self.base + path, headers=self._headers(), **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> httpx.Response:
        return self.client.post(self.base + path, json=body, headers=self._headers(), **kw)

    def delete(self, path: str) -> httpx.Response:
        return self.client.delete(self.base + path, headers=self._headers())

    def tasks(self, session_id: str, include_rewound: bool = False) -> list[dict[str, Any]]:
        params = {"include_rewound": "true"} if include_rewound else None
        resp = self.get(f"/sessions/{session_id}/tasks", params=params)
        assert resp.status_code == 200, resp.text
        body = resp.json()
        assert body["error"] is False
        return body["data"]

    def merged(self, session_id: str) -> list[dict[str, Any]]:
        """The conversation a client shows: task histories merged, deduplicated by messageId."""
        seen: set[str] = set()
        out: list[dict[str, Any]] = []
        for task in self.tasks(session_id):
            for message in task.get("history", []):
                if message["messageId"] not in seen:
                    seen.add(message["messageId"])
                    out.append(message)
        return out

    def merged_ids(self, session_id: str) -> list[str]:
        return [m["messageId"] for m in self.merged(session_id)]


class Served:
    """A real ``rewindtui serve`` server (``python -m rewindtui.server.process.serve``) on a data dir:
    a process forked from the test zygote (``kit.zygote``: google-adk imported once per pytest
    process, not once per server), ``process`` what ``subprocess.Popen`` would give."""

    def __init__(self, data_dir: Any, *, env: dict[str, str] | None = None, extra: list[str] | None = None) -> None:
        import os

        from kit import zygote

        child_env = {k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")}
        child_env.update(env or {})
        self.process: Any = zygote.spawn(
            ["--port", "0", "--data-dir", str(data_dir), *(extra or [])],
            stdout=zygote.PIPE,
            stderr=zygote.PIPE,
            text=True,
            env=child_env,
        )
        first = self.process.stdout.readline() if self.process.stdout else ""
        if not first.startswith("serving on "):
            self.process.kill()
            raise RuntimeError(
                f"server did not start: {first!r} {self.process.stderr.read() if self.process.stderr else ''}"
            )
        self.base_url = first.split("serving on ", 1)[1].strip()
        self.agent_url = self.base_url + "/api/a2a/local/demo/"
        self.api_url = self.base_url + "/api"

    def kill9(self) -> None:
        import signal

        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


def wait_for_file(path: Any, timeout: float = 60.0) -> None:
    """Wait (polling) until ``path`` exists."""
    import time
    from pathlib import Path

    deadline = time.monotonic() + timeout
    while not Path(path).exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never appeared")
        time.sleep(0.02)


def running(pid: int) -> bool:
    """Process ``pid`` runs: alive and not a zombie (ended, its parent not having reaped it yet)."""
    from rewindtui.server.shared.pids import alive

    if not alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def gone(pid: int, timeout: float = 30.0) -> bool:
    """Whether process ``pid`` ended within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not running(pid):
            return True
        time.sleep(0.05)
    return False


def send_body(session: str, text: str, method: str = "message/send", **extra: Any) -> dict[str, Any]:
    """A JSON-RPC ``message/send`` (or ``method``: ``message/stream``) (A2A 0.3) of ``text`` in
    ``session``, a fresh message id; ``extra`` goes into the message (a ``messageId`` replaces it)."""
    message = {
        "kind": "message",
        "role": "user",
        "messageId": str(uuid.uuid4()),
        "contextId": session,
        "parts": [{"kind": "text", "text": text}],
        **extra,
    }
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}
