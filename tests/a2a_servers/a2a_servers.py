"""Plain A2A servers built on a2a-sdk's own server classes (not ours): the kind of server users
point rewindtui at when it is neither kagent nor the embedded one. No REST API, no rewind.

- :func:`sdk_app`: an a2a-sdk 1.x server (``DefaultRequestHandler``, ``InMemoryTaskStore``,
  ``create_jsonrpc_routes``): each turn opens with a Task, then status updates; ``ListTasks``,
  ``GetTask``, ``CancelTask`` and ``SubscribeToTask`` are a2a-sdk's own. Its agent card speaks
  A2A 1.0 (and the 0.3 compat fields a2a-sdk adds).
- ``sdk_app(only_03=True)``: the same handler answering the 0.3 dialect only (``message/stream``,
  ``tasks/get``, ``tasks/cancel``, ``tasks/resubscribe``; no ``ListTasks``), with a 0.3 card; a
  1.0 request is answered "method not found", as a 0.3 server would.

The agent (:class:`EchoExecutor`) answers "You said: <text> (turn N)" as one artifact streamed word
by word with a delay (``slow`` in the text: long enough to stop it or cut its stream), and asks for approval when the
text says ``delete <thing>``: the turn ends ``input-required`` with kagent's
``adk_request_confirmation`` call as a data part; a message to that task carrying
``{"decision_type": "approve" | "reject"}`` resumes it.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from typing import Any

from a2a.helpers.proto_helpers import get_data_parts, get_message_text, new_task_from_user_message, new_text_part
from a2a.server.agent_execution.agent_executor import AgentExecutor
from a2a.server.agent_execution.context import RequestContext
from a2a.server.events.event_queue_v2 import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks.inmemory_task_store import InMemoryTaskStore
from a2a.server.tasks.task_updater import TaskUpdater
from a2a.types import a2a_pb2 as pb
from google.protobuf import struct_pb2
from google.protobuf.json_format import ParseDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

V03_METHODS = {"message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe"}


class EchoExecutor(AgentExecutor):
    def __init__(self, delay: float = 0.01, slow_delay: float = 0.1) -> None:
        self.delay = delay
        self.slow_delay = slow_delay
        self.turns: dict[str, int] = {}  # context -> turns seen

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        decisions = [d for d in get_data_parts(message.parts) if isinstance(d, dict) and "decision_type" in d]
        if decisions:
            await self._decide(updater, task, str(decisions[0]["decision_type"]))
            return
        text = get_message_text(message)
        turn = self.turns[task.context_id] = self.turns.get(task.context_id, 0) + 1
        await updater.start_work()
        wanted = re.search(r"\bdelete (\S+)", text)
        if wanted:
            await self._ask(updater, wanted.group(1))
            return
        delay = self.slow_delay if "slow" in text else self.delay
        words = f"You said: {text} (turn {turn})".split(" ")
        artifact_id = str(uuid.uuid4())
        for i, word in enumerate(words):  # the answer streams as chunks of one artifact
            await asyncio.sleep(delay)
            chunk = word if i == 0 else " " + word
            await updater.add_artifact(
                [new_text_part(chunk)],
                artifact_id=artifact_id,
                name="answer",
                append=i > 0,
                last_chunk=i == len(words) - 1,
            )
        await updater.complete()

    async def _ask(self, updater: TaskUpdater, thing: str) -> None:
        call = {
            "name": "adk_request_confirmation",
            "id": "confirm-" + uuid.uuid4().hex[:8],
            "args": {
                "originalFunctionCall": {"name": "delete_thing", "args": {"thing": thing}, "id": "call-1"},
                "toolConfirmation": {"hint": f"Delete {thing}?", "confirmed": False},
            },
        }
        part = pb.Part(data=ParseDict(call, struct_pb2.Value()))
        part.metadata.update({"kagent_type": "function_call"})
        await updater.requires_input(updater.new_agent_message([part]))

    async def _decide(self, updater: TaskUpdater, task: pb.Task, decision: str) -> None:
        await updater.start_work()
        thing = "it"
        for m in [*task.history, task.status.message]:
            for d in get_data_parts(m.parts):
                if isinstance(d, dict) and d.get("name") == "adk_request_confirmation":
                    thing = d["args"]["originalFunctionCall"]["args"]["thing"]
        answer = f"Deleted {thing}." if decision == "approve" else f"Kept {thing}."
        await updater.complete(updater.new_agent_message([new_text_part(answer)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        assert task is not None
        await TaskUpdater(event_queue, task.id, task.context_id).cancel(
            pb.Message(role=pb.Role.ROLE_AGENT, message_id=str(uuid.uuid4()), parts=[new_text_part("Stopped.")])
        )


def card(url: str, *, only_03: bool) -> pb.AgentCard:
    versions = ["0.3.0"] if only_03 else ["1.0", "0.3.0"]
    return pb.AgentCard(
        name="echo-sdk-03" if only_03 else "echo-sdk",
        description="an a2a-sdk echo agent (test server)",
        version="1.0.0",
        supported_interfaces=[
            pb.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=v) for v in versions
        ],
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[pb.AgentSkill(id="echo", name="echo", description="echoes", tags=["echo"])],
    )


def card_03(url: str) -> dict[str, Any]:
    """An A2A 0.3 agent card (``protocolVersion``, ``url``; no ``supportedInterfaces``)."""
    return {
        "name": "echo-sdk-03",
        "description": "an a2a-sdk echo agent speaking A2A 0.3 only (test server)",
        "url": url,
        "version": "1.0.0",
        "protocolVersion": "0.3.0",
        "preferredTransport": "JSONRPC",
        "capabilities": {"streaming": True, "pushNotifications": False},
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "skills": [{"id": "echo", "name": "echo", "description": "echoes", "tags": ["echo"]}],
    }


def sdk_app(url: str, *, only_03: bool = False, executor: EchoExecutor | None = None) -> Starlette:
    """The server's ASGI app; ``url`` is where it will be reached (for its agent card)."""
    agent_card = card(url, only_03=only_03)
    handler = DefaultRequestHandler(
        agent_executor=executor or EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=agent_card
    )
    (rpc,) = create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True)
    routes: list[Any] = []
    if only_03:

        async def endpoint_03(request: Request) -> Response:
            try:
                method = json.loads(await request.body()).get("method")
            except (ValueError, AttributeError):
                method = None
            if method not in V03_METHODS or request.headers.get("A2A-Version"):
                error = {"code": -32601, "message": f"Method not found: {method}"}
                return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error})
            return await rpc.endpoint(request)  # type: ignore[attr-defined]

        async def card_endpoint(request: Request) -> Response:
            return JSONResponse(card_03(url))

        routes += [Route("/", endpoint_03, methods=["POST"]), Route("/.well-known/agent-card.json", card_endpoint)]
    else:
        routes += [rpc, *create_agent_card_routes(agent_card)]
    return Starlette(routes=routes)
