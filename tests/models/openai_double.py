"""A small OpenAI-compatible chat server for tests: real HTTP over loopback, streaming or not.

It stands in for the model provider the embedded server reaches through LiteLLM. Its one route
mirrors OpenAI's ``POST /v1/chat/completions`` as the ``openai`` Python client parses it
(openai-python ``src/openai/types/chat/chat_completion.py`` and ``chat_completion_chunk.py``:
``chat.completion`` objects, ``chat.completion.chunk`` SSE frames ending with ``data: [DONE]``,
``tool_calls`` deltas; errors as ``{"error": {"message", "type", "code"}}`` with the HTTP status,
which ``openai/_client.py``'s ``_make_status_error`` turns into ``AuthenticationError`` (401),
``NotFoundError`` (404), ``RateLimitError`` (429), ``InternalServerError`` (5xx)).

What it answers, unless a canned reply is queued (``double.queue(...)``):

* the last message is a tool result -> ``Tool said: <its content>``;
* the last user text mentions "weather" and a ``get_weather`` tool is offered -> a call of it
  with ``{"city": "Paris"}``;
* anything else -> ``Echo: <the last user text> (users=<the user texts it was sent>)``.

Canned replies: ``Reply.error(status, ...)`` (401, 404, 429 with ``Retry-After``, 500, a 400
context-length error), ``Reply.hang()`` (opens the answer and never finishes it),
``Reply.say_then_hang(text)`` (streams ``text``, then never finishes). Every request body is
recorded in ``double.requests``.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from asgi_thread import ServeInThread

CHUNK_WORDS = 2


@dataclass
class Reply:
    kind: str  # error | hang | text | say_then_hang
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)
    text: str = ""

    @classmethod
    def error(cls, status: int, message: str, code: str, *, retry_after: str | None = None) -> Reply:
        headers = {"retry-after": retry_after} if retry_after is not None else {}
        kind = "invalid_request_error" if status < 500 else "server_error"
        return cls("error", status, headers, {"error": {"message": message, "type": kind, "code": code, "param": None}})

    @classmethod
    def hang(cls) -> Reply:
        return cls("hang")

    @classmethod
    def say(cls, text: str) -> Reply:
        return cls("text", text=text)

    @classmethod
    def say_then_hang(cls, text: str) -> Reply:
        """Stream ``text`` (in the usual chunks), then send nothing more and never finish."""
        return cls("say_then_hang", text=text)


BAD_KEY = Reply.error(401, "Incorrect API key provided: sk-***. You can find your API key at ...", "invalid_api_key")
NO_MODEL = Reply.error(404, "The model `nope` does not exist or you do not have access to it.", "model_not_found")
TOO_LONG = Reply.error(
    400,
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
    "context_length_exceeded",
)
SERVER_ERROR = Reply.error(500, "The server had an error while processing your request.", "server_error")


def rate_limited(retry_after: str = "7") -> Reply:
    return Reply.error(429, "Rate limit reached for requests", "rate_limit_exceeded", retry_after=retry_after)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def user_texts(body: dict[str, Any]) -> list[str]:
    """The user messages' texts of a recorded request, in order."""
    return [_text(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user"]


class OpenAIDouble:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._queue: list[Reply] = []
        self._lock = threading.Lock()
        self._served: ServeInThread | None = None
        self._stop: asyncio.Event | None = None
        self.hangs = 0  # hang replies begun so far

    # -- control -----------------------------------------------------------------
    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    @property
    def url(self) -> str:
        assert self._served is not None
        return self._served.url + "/v1"

    def start(self) -> OpenAIDouble:
        routes = [
            Route("/v1/chat/completions", self._chat, methods=["POST"]),
            Route("/control/queue/{name}", self._control, methods=["POST"]),
            Route("/control/requests", self._recorded, methods=["GET"]),
        ]
        self._served = ServeInThread(Starlette(routes=routes))
        self._served.start()
        return self

    def stop(self) -> None:
        if self._served is not None and self._served.loop is not None and self._stop is not None:
            self._served.loop.call_soon_threadsafe(self._stop.set)
        if self._served is not None:
            self._served.stop()

    def __enter__(self) -> OpenAIDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the routes --------------------------------------------------------------
    async def _recorded(self, request: Request) -> Response:
        """``GET /control/requests``: the user texts of every request received, in order (by hand)."""
        with self._lock:
            return JSONResponse([user_texts(body) for body in self.requests])

    async def _control(self, request: Request) -> Response:
        """``POST /control/queue/{401|404|429|500|context|hang}``: queue a canned reply (by hand)."""
        canned = {"401": BAD_KEY, "404": NO_MODEL, "429": rate_limited(), "500": SERVER_ERROR, "context": TOO_LONG}
        name = request.path_params["name"]
        reply = Reply.hang() if name == "hang" else canned.get(name)
        if reply is None:
            return JSONResponse({"error": f"unknown reply {name!r}"}, status_code=404)
        self.queue(reply)
        return JSONResponse({"queued": name})

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            reply = self._queue.pop(0) if self._queue else None
        if self._stop is None:
            self._stop = asyncio.Event()
        stream = bool(body.get("stream"))
        if reply is not None and reply.kind == "error":
            return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers)
        if reply is not None and reply.kind == "say_then_hang" and stream:
            chunks = self._chunks(body.get("model", "test-model"), reply.text, None, hang=True)
            return StreamingResponse(chunks, media_type="text/event-stream")
        if reply is not None and reply.kind == "hang":
            return (
                StreamingResponse(self._hang(), media_type="text/event-stream") if stream else await self._hang_plain()
            )
        text, call = (reply.text, None) if reply is not None else self._answer(body)
        model = body.get("model", "test-model")
        if stream:
            return StreamingResponse(self._chunks(model, text, call), media_type="text/event-stream")
        message: dict[str, Any] = {"role": "assistant", "content": text if call is None else None}
        if call is not None:
            message["tool_calls"] = [call]
        return JSONResponse(
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {"index": 0, "message": message, "finish_reason": "stop" if call is None else "tool_calls"}
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )

    def _answer(self, body: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        messages = body.get("messages", [])
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":
            return f"Tool said: {_text(last.get('content'))}", None
        users = user_texts(body)
        current = users[-1] if users else ""
        tools = {t.get("function", {}).get("name") for t in body.get("tools") or []}
        if "weather" in current.lower() and "get_weather" in tools:
            n = len(self.requests)
            call = {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})},
            }
            return "", call
        return f"Echo: {current} (users={users})", None

    async def _chunks(
        self, model: str, text: str, call: dict[str, Any] | None, *, hang: bool = False
    ) -> AsyncIterator[bytes]:
        def frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
            chunk = {
                "id": "chatcmpl-test",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(chunk)}\n\n".encode()

        if call is not None:
            yield frame({"role": "assistant", "tool_calls": [{"index": 0, **call}]})
            yield frame({}, "tool_calls")
        else:
            words = text.split(" ")
            for i in range(0, len(words), CHUNK_WORDS):
                piece = " ".join(words[i : i + CHUNK_WORDS]) + (" " if i + CHUNK_WORDS < len(words) else "")
                yield frame({"role": "assistant", "content": piece} if i == 0 else {"content": piece})
                await asyncio.sleep(0)
            if hang:
                async for _ in self._hang():
                    pass
                return
            yield frame({}, "stop")
        yield b"data: [DONE]\n\n"

    async def _hang(self) -> AsyncIterator[bytes]:
        self.hangs += 1
        assert self._stop is not None
        await self._stop.wait()
        yield b""

    async def _hang_plain(self) -> Response:
        async for _ in self._hang():
            pass
        return JSONResponse({"error": {"message": "stopped"}}, status_code=503)


def main() -> None:
    """``python tests/models/openai_double.py``: serve it until Ctrl+C (a hand session)."""
    double = OpenAIDouble().start()
    print(f"OpenAI-compatible test server at {double.url} (queue a reply: POST {double.url[:-3]}/control/queue/401)")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        double.stop()


if __name__ == "__main__":
    main()
