"""A plain a2a-sdk server that speaks only gRPC, built on a2a-sdk's own classes (not ours):
``DefaultRequestHandler`` + ``InMemoryTaskStore`` behind a2a-sdk's ``GrpcHandler`` on a
``grpc.aio`` server, and a Starlette app serving just its agent card (a2a-sdk's
``create_agent_card_routes``), whose only interface is the gRPC one. No REST API, no rewind.

The agent answers "You said: <text> (turn N)" as one artifact streamed word by word (``slow`` in
the text: a tenth of a second a word, long enough to stop it or to subscribe to it), and stops when
cancelled (a2a-sdk calls ``cancel``).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import grpc.aio
from a2a.helpers.proto_helpers import get_message_text, new_task_from_user_message, new_text_part
from a2a.server.agent_execution.agent_executor import AgentExecutor
from a2a.server.agent_execution.context import RequestContext
from a2a.server.events.event_queue_v2 import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.grpc_handler import GrpcHandler
from a2a.server.routes import create_agent_card_routes
from a2a.server.tasks.inmemory_task_store import InMemoryTaskStore
from a2a.server.tasks.task_updater import TaskUpdater
from a2a.types import a2a_pb2 as pb
from a2a.types import a2a_pb2_grpc
from starlette.applications import Starlette


class WordsExecutor(AgentExecutor):
    def __init__(self) -> None:
        self.turns: dict[str, int] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = get_message_text(message)
        turn = self.turns[task.context_id] = self.turns.get(task.context_id, 0) + 1
        await updater.start_work()
        delay = 0.1 if "slow" in text else 0.005
        words = f"You said: {text} (turn {turn})".split(" ")
        artifact_id = str(uuid.uuid4())
        for i, word in enumerate(words):
            await asyncio.sleep(delay)
            await updater.add_artifact(
                [new_text_part(word if i == 0 else " " + word)],
                artifact_id=artifact_id,
                name="answer",
                append=i > 0,
                last_chunk=i == len(words) - 1,
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        assert task is not None
        await TaskUpdater(event_queue, task.id, task.context_id).cancel()


def grpc_only_card() -> pb.AgentCard:
    return pb.AgentCard(
        name="grpc-only",
        description="an a2a-sdk echo agent on gRPC only (test server)",
        version="1.0.0",
        capabilities=pb.AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[pb.AgentSkill(id="echo", name="echo", description="echoes", tags=["echo"])],
    )


def grpc_only_app(seen_metadata: list[dict[str, str]] | None = None) -> Starlette:
    """The card app; its lifespan runs the gRPC server (on the same event loop) and lists it.
    ``seen_metadata``: each call's metadata is appended there (what reached the server)."""
    card = grpc_only_card()
    handler = DefaultRequestHandler(agent_executor=WordsExecutor(), task_store=InMemoryTaskStore(), agent_card=card)

    class Recording(grpc.aio.ServerInterceptor):
        async def intercept_service(self, continuation, details):  # type: ignore[no-untyped-def]
            if seen_metadata is not None:
                seen_metadata.append({k: v for k, v in details.invocation_metadata if isinstance(v, str)})
            return await continuation(details)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        server = grpc.aio.server(interceptors=[Recording()])
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        card.supported_interfaces.append(
            pb.AgentInterface(url=f"127.0.0.1:{port}", protocol_binding="GRPC", protocol_version="1.0")
        )
        try:
            yield
        finally:
            await server.stop(0.5)

    return Starlette(routes=create_agent_card_routes(card), lifespan=lifespan)
