"""The other direction with someone else's client: a2a-sdk's own gRPC client transport
(``a2a.client.transports.grpc.GrpcTransport``) against the embedded server's gRPC port -- it
streams a turn, reads and lists the task, registers a push config, and rewinds with the control
message (ADK's rewind runs: the answer is the rewind Task carrying the effective history)."""

from __future__ import annotations

import uuid

import grpc.aio
import pytest
from a2a.client.client import ClientCallContext
from a2a.client.errors import A2AClientError
from a2a.client.transports.grpc import GrpcTransport as SdkGrpcTransport
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import TaskNotFoundError
from google.protobuf.json_format import MessageToDict

pytestmark = pytest.mark.timeout(90)
TOKEN = "sdk-client-token-0123456789"
REWIND_KEY = "kagent_rewind_before_invocation_id"


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    from rewindtui.server import EmbeddedServer
    from rewindtui.server.http.options import ServerOptions

    with EmbeddedServer(tmp_path_factory.mktemp("sdk-client"), options=ServerOptions(token=TOKEN)) as srv:
        yield srv


def grpc_address(server) -> str:
    import httpx

    card = httpx.get(server.agent_url + ".well-known/agent-card.json").json()
    (address,) = [i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
    return address


def user_message(text: str, context_id: str | None = None, metadata: dict | None = None) -> pb.Message:
    message = pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)])
    if context_id:
        message.context_id = context_id
    if metadata:
        message.metadata.update(metadata)
    return message


async def turn(sdk: SdkGrpcTransport, context: ClientCallContext, text: str, context_id: str | None = None) -> list:
    request = pb.SendMessageRequest(message=user_message(text, context_id))
    return [MessageToDict(e) async for e in sdk.send_message_streaming(request, context=context)]


async def test_a2a_sdk_client_over_the_embedded_grpc_port(embedded):
    channel = grpc.aio.insecure_channel(grpc_address(embedded))
    sdk = SdkGrpcTransport(channel, None)  # type: ignore[arg-type]
    context = ClientCallContext(service_parameters={"authorization": f"Bearer {TOKEN}", "x-user-id": "sdk"})
    try:
        first = await turn(sdk, context, "one")
        task = next(e["task"] for e in first if "task" in e)
        sid, task_id = task["contextId"], task["id"]
        await turn(sdk, context, "two", sid)
        stored = await sdk.get_task(pb.GetTaskRequest(id=task_id), context=context)
        assert stored.status.state == pb.TASK_STATE_COMPLETED
        listed = await sdk.list_tasks(pb.ListTasksRequest(context_id=sid), context=context)
        assert len(listed.tasks) == 2
        second = listed.tasks[0]  # newest first
        invocation = second.metadata["kagent_invocation_id"]
        config = await sdk.create_task_push_notification_config(
            pb.TaskPushNotificationConfig(task_id=task_id, id="c1", url="http://127.0.0.1:9/hook", token="t"),
            context=context,
        )
        assert config.id == "c1" and config.task_id == task_id
        # rewind over gRPC: the same control message as over JSON-RPC
        request = pb.SendMessageRequest(message=user_message("", sid, {REWIND_KEY: invocation}))
        events = [MessageToDict(e) async for e in sdk.send_message_streaming(request, context=context)]
        rewind = next(e["task"] for e in events if "task" in e)
        texts = [p.get("text") for m in rewind["history"] for p in m["parts"] if m["role"] == "ROLE_USER"]
        assert texts == ["one"] and rewind["status"]["state"] == "TASK_STATE_COMPLETED"
        with pytest.raises(TaskNotFoundError):
            await sdk.get_task(pb.GetTaskRequest(id="missing"), context=context)
        with pytest.raises(A2AClientError, match="UNAUTHENTICATED"):
            await sdk.get_task(pb.GetTaskRequest(id=task_id), context=ClientCallContext())
    finally:
        await channel.close()
