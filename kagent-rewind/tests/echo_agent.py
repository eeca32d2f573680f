"""A real kagent-adk agent for the tests, offline: ``KAgentApp(...).build(local=True)`` with a
stand-in model and a tool that writes session state.

``EchoLlm`` is a real ADK ``BaseLlm``. It answers from what ADK puts in its request, so a rewind is
visible in the answers:

* ``You said: <text> (turn N; history: ['a', 'b']; weather_calls=K)``: the user texts in the
  request, their count, and the session state ``weather_calls`` (rendered into the instruction by
  ADK's ``{weather_calls?}`` template);
* a text with "weather" calls ``get_weather``, which adds one to ``weather_calls``; with the tool's
  result in the request it answers ``Tool get_weather returned: {...} (weather_calls=K)``.

``serve`` runs an app with uvicorn on a loopback port in a thread (tests in this venv); the
script ``serve_echo.py`` runs one as a process (rewindtui's tests, from their own venv).
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
from collections.abc import AsyncGenerator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from a2a.types import AgentCapabilities, AgentCard, AgentSkill
from fastapi import FastAPI
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from kagent.adk import KAgentApp

from kagent_rewind import enable_rewind

APP_NAME = "test__NS__echo_agent"
#: A text containing "hold" makes the model wait for the event it appends here (set it from the
#: server's loop), so a test can keep a turn running.
HELD: list[asyncio.Event] = []
_STATE = re.compile(r"weather_calls=(\d+)")


def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """The weather in a city; each call adds one to the session state ``weather_calls``."""
    calls = int(tool_context.state.get("weather_calls") or 0) + 1
    tool_context.state["weather_calls"] = calls
    return {"city": city, "forecast": "sunny", "call_no": calls}


def _instruction_text(request: LlmRequest) -> str:
    instruction = request.config.system_instruction if request.config else None
    if isinstance(instruction, str):
        return instruction
    if isinstance(instruction, types.Content):
        return "".join(p.text or "" for p in instruction.parts or [])
    return str(instruction or "")


class EchoLlm(BaseLlm):
    model: str = "echo"

    @classmethod
    def supported_models(cls) -> list[str]:
        return ["echo"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        found = _STATE.search(_instruction_text(llm_request))
        calls = int(found.group(1)) if found else 0
        last = llm_request.contents[-1] if llm_request.contents else None
        result = next((p.function_response for p in (last.parts or []) if p.function_response), None) if last else None
        users = [
            "".join(p.text or "" for p in c.parts or [] if p.text)
            for c in llm_request.contents
            if c.role == "user" and any(p.text for p in c.parts or [])
        ]
        current = users[-1] if users else ""
        if result is None and "hold" in current:
            HELD.append(asyncio.Event())
            await HELD[-1].wait()
        if result is None and "weather" in current.lower():
            city = current.rsplit(" ", 1)[-1]
            call = types.FunctionCall(name="get_weather", args={"city": city})
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))
            return
        if result is not None:
            text = f"Tool {result.name} returned: {result.response} (weather_calls={calls})"
        else:
            text = f"You said: {current} (turn {len(users)}; history: {users!r}; weather_calls={calls})"
        if stream:
            words = text.split(" ")
            for i in range(0, len(words), 4):
                chunk = " ".join(words[i : i + 4]) + (" " if i + 4 < len(words) else "")
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=chunk)]), partial=True)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]), turn_complete=True)


def agent_card(url: str) -> AgentCard:
    return AgentCard(
        name="echo_agent",
        description="Offline kagent-adk echo agent (tests)",
        url=url,
        version="0.1.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[AgentSkill(id="echo", name="echo", description="Echoes; 'weather in X' calls a tool", tags=["echo"])],
    )


def kagent_app(url: str = "http://127.0.0.1/", *, stream: bool = False, lifespan: Any = None) -> KAgentApp:
    def root_agent() -> LlmAgent:
        return LlmAgent(
            name="echo_agent",
            model=EchoLlm(),
            instruction="Answer. Session state: weather_calls={weather_calls?}",
            tools=[get_weather],
        )

    return KAgentApp(root_agent, agent_card(url), "http://127.0.0.1:9", APP_NAME, stream=stream, lifespan=lifespan)


def build_app(url: str = "http://127.0.0.1/", *, rewind: bool = True, stream: bool = False) -> FastAPI:
    """The real kagent-adk app in local mode; with ``rewind``, enabled in one line."""
    app = kagent_app(url, stream=stream).build(local=True)
    return enable_rewind(app) if rewind else app


def bind_loopback() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@dataclass
class Served:
    """An app served on loopback by uvicorn in a thread (its own event loop)."""

    url: str
    app: FastAPI
    server: uvicorn.Server
    thread: threading.Thread
    loop: asyncio.AbstractEventLoop

    def call(self, factory: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
        """Run a coroutine on the server's loop (to look at its state) and return its result."""
        return asyncio.run_coroutine_threadsafe(factory(), self.loop).result(10)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def serve(make_app: Callable[[str], FastAPI]) -> Served:
    sock = bind_loopback()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    app = make_app(url)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    loops: list[asyncio.AbstractEventLoop] = []

    def run() -> None:
        loop = asyncio.new_event_loop()
        loops.append(loop)
        loop.run_until_complete(server.serve(sockets=[sock]))
        pending = asyncio.all_tasks(loop)  # e.g. sse-starlette's shutdown watchers
        for task in pending:
            task.cancel()
        if pending:  # gather() of nothing asks for the thread's current loop, which it has none of
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    with httpx.Client() as client:
        for _ in range(500):
            if server.started:
                break
            threading.Event().wait(0.01)
        client.get(url + ".well-known/agent-card.json").raise_for_status()
    return Served(url, app, server, thread, loops[0])


# -- a small A2A 0.3 client ------------------------------------------------------------------------
def message(text: str, context_id: str | None, **metadata: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "message",
        "role": "user",
        "messageId": f"m-{next(_ids)}",
        "parts": [{"kind": "text", "text": text}],
    }
    if context_id:
        body["contextId"] = context_id
    if metadata:
        body["metadata"] = metadata
    return body


def _counter() -> Any:
    n = 0
    while True:
        n += 1
        yield n


_ids = _counter()


def stream(url: str, msg: dict[str, Any]) -> list[dict[str, Any]]:
    """``message/stream``: the results of the SSE frames, in order."""
    request = {"jsonrpc": "2.0", "id": "1", "method": "message/stream", "params": {"message": msg}}
    results = []
    with httpx.Client(timeout=30) as client, client.stream("POST", url, json=request) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if line.startswith("data:"):
                frame = json.loads(line[5:])
                results.append(frame.get("result", frame))
    return results


def rpc(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    request = {"jsonrpc": "2.0", "id": "1", "method": method, "params": params}
    response = httpx.post(url, json=request, timeout=30)
    response.raise_for_status()
    body: dict[str, Any] = response.json()
    return body


def text_of(message: dict[str, Any] | None) -> str:
    return "".join(p.get("text", "") for p in (message or {}).get("parts", []) if p.get("kind") == "text")


# -- looking at the server's state (on its own loop) -----------------------------------------------
def request_handler(served: Served) -> Any:
    from kagent_rewind.enable import a2a_applications

    return a2a_applications(served.app)[0].handler.request_handler


def adk_session(served: Served, session_id: str) -> Any:
    """The ADK session (events, state) as kagent's session service holds it, or ``None``."""
    executor = request_handler(served).agent_executor
    kagent_executor = getattr(executor, "inner", executor)

    async def read() -> Any:
        runner = kagent_executor._runner()
        try:
            return await runner.session_service.get_session(
                app_name=APP_NAME, user_id=f"A2A_USER_{session_id}", session_id=session_id
            )
        finally:
            await runner.close()

    return served.call(read)


def stored_tasks(served: Served, session_id: str) -> list[dict[str, Any]]:
    """The session's tasks in kagent's (local) task store, oldest first, as A2A JSON."""
    store = request_handler(served).task_store
    store = getattr(store, "inner", store)

    async def read() -> list[dict[str, Any]]:
        async with store.lock:
            return [
                t.model_dump(mode="json", by_alias=True, exclude_none=True)
                for t in store.tasks.values()
                if t.context_id == session_id
            ]

    result: list[dict[str, Any]] = served.call(read)
    return result


def merged_messages(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a client shows from a session's tasks: kagent's UI ``extractMessagesFromTasks`` (each
    task's history in order, each messageId once), without streamed deltas."""
    seen: set[str] = set()
    out = []
    for task in tasks:
        for m in task.get("history") or []:
            if m["messageId"] in seen or (m.get("metadata") or {}).get("kagent_adk_partial") is True:
                continue
            seen.add(m["messageId"])
            out.append(m)
    return out
