"""An a2a-sdk server (a2a-sdk's own ``DefaultRequestHandler``, ``InMemoryTaskStore`` and
``create_jsonrpc_routes``) whose agent asks for a form, as the A2A samples' expense agent does
(a2aproject/a2a-samples ``samples/python/agents/adk_expense_reimbursement/agent.py``, ``return_form``,
commit c6062c44733e5edf6a283c458ab81717b2f9b02a): a message saying ``expense`` is answered with a
data part ``{"type": "form", "form": <JSON schema>, "form_data": {...}, "instructions"}``; a
message carrying a data part with ``amount`` and ``purpose`` is answered "Reimbursed AMOUNT for
PURPOSE (date DATE)."""

from __future__ import annotations

import uuid

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

FORM = {
    "type": "form",
    "form": {
        "type": "object",
        "properties": {
            "date": {"type": "string", "format": "date", "description": "Date of expense", "title": "Date"},
            "amount": {"type": "string", "format": "number", "description": "Amount of expense", "title": "Amount"},
            "purpose": {"type": "string", "description": "Purpose of expense", "title": "Purpose"},
            "request_id": {"type": "string", "description": "Request id", "title": "Request ID"},
        },
        "required": ["date", "amount", "purpose", "request_id"],
    },
    "form_data": {
        "request_id": "request_id_1234567",
        "date": "<transaction date>",
        "amount": "<transaction dollar amount>",
        "purpose": "<business justification/purpose of the transaction>",
    },
    "instructions": "Fill in the expense.",
}


class FormExecutor(AgentExecutor):
    def __init__(self) -> None:
        self.received: list[dict] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        task = context.current_task or new_task_from_user_message(message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        answers = [d for d in get_data_parts(message.parts) if isinstance(d, dict) and "amount" in d]
        if answers:
            self.received.append(answers[0])
            a = answers[0]
            text = f"Reimbursed {a['amount']} for {a['purpose']} (date {a['date']})."
            await updater.complete(updater.new_agent_message([new_text_part(text)]))
            return
        if "expense" in get_message_text(message):
            part = pb.Part(data=ParseDict(FORM, struct_pb2.Value()))
            await updater.add_artifact([part], artifact_id=str(uuid.uuid4()), name="form")
            await updater.complete()
            return
        await updater.complete(updater.new_agent_message([new_text_part("Say 'expense' to get a form.")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        assert task is not None
        await TaskUpdater(event_queue, task.id, task.context_id).cancel()


def form_app(url: str, executor: FormExecutor) -> Starlette:
    card = pb.AgentCard(
        name="form-sdk",
        description="an a2a-sdk agent that asks for a form (test server)",
        version="1.0.0",
        supported_interfaces=[pb.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text", "application/json"],
        default_output_modes=["text", "application/json"],
        skills=[pb.AgentSkill(id="expense", name="expense", description="expenses", tags=["form"])],
    )
    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card)
    (rpc,) = create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True)
    return Starlette(routes=[rpc, *create_agent_card_routes(card)])
