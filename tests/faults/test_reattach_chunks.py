"""Issue item: "after following a running turn, one streamed piece of text was applied twice".

Settled in the reattach code (chat/turns.py ``_resume_stream``): the embedded server takes its
snapshot and subscribes with no ``await`` between them (server/service/turns.py ``follow``), so it
never sends a chunk twice; an a2a-sdk server can (``ActiveTask.subscribe`` taps the event queue,
then reads the task: a chunk that lands in between is in the first Task *and* comes again as an
``append`` artifact update -- A2A chunks carry no offset, so the client cannot tell a repeat from
new text). So a resumed turn ends on the server's Task, read once with GetTask. This property
test drives the real Chat over HTTP against a server that repeats any number of chunks: whatever
the split, the cut, how far the server got and how much it repeats, the turn ends showing its
text exactly once. (It fails when the closing GetTask is left out.)"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from hostile import Lies, hostile_app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asgi_thread import ServeInThread
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, ServerConfig

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def liar() -> Iterator[tuple[ServeInThread, Lies]]:
    lies = Lies(rest=False)
    with ServeInThread(factory=lambda url: hostile_app(url, lies)) as served:
        yield served, lies


def _task(state: str, text: str) -> str:
    artifact = f'{{"artifactId": "a1", "name": "answer", "parts": [{{"text": "{text}"}}]}}'
    user = (
        '{"role": "ROLE_USER", "messageId": "u1", "contextId": "ctx-1", "taskId": "t-run", "parts": [{"text": "hi"}]}'
    )
    return (
        f'{{"id": "t-run", "contextId": "ctx-1", "status": {{"state": "{state}", "timestamp": '
        '"2026-01-01T00:00:00Z"}, '
        f'"history": [{user}], "artifacts": [{artifact}]}}'
    )


def _chunk(text: str, last: bool) -> str:
    return (
        '{"artifactUpdate": {"taskId": "t-run", "contextId": "ctx-1", "append": true, '
        f'"lastChunk": {"true" if last else "false"}, "artifact": {{"artifactId": "a1", "parts": [{{"text": '
        f'"{text}"}}]}}}}}}'
    )


@st.composite
def reattaches(draw) -> tuple[list[str], int, int, int]:
    """(chunks, seen before the open, held by the resumed stream's first Task, repeated after it)."""
    n = draw(st.integers(2, 7))
    chunks = [f"w{i} " for i in range(n)]
    seen = draw(st.integers(1, n - 1))  # the open shows at least one chunk, and the turn runs on
    held = draw(st.integers(seen, n - 1))  # the server went on meanwhile
    repeated = draw(st.integers(0, held))  # chunks tapped from the queue before the Task was read
    return chunks, seen, held, repeated


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(case=reattaches())
def test_a_reattached_turn_ends_with_each_chunk_once(liar, tmp_path_factory, case):
    served, lies = liar
    chunks, seen, held, repeated = case
    full = "".join(chunks)
    lies.listed = _task("TASK_STATE_WORKING", "".join(chunks[:seen]))
    lies.got = _task("TASK_STATE_COMPLETED", full)
    lies.subscribe_frames = [
        '{"task": ' + _task("TASK_STATE_WORKING", "".join(chunks[:held])) + "}",
        *(_chunk(c, last=i == len(chunks) - 1) for i, c in enumerate(chunks) if i >= held - repeated),
        '{"statusUpdate": {"taskId": "t-run", "contextId": "ctx-1", "status": {"state": "TASK_STATE_COMPLETED"}}}',
    ]

    async def follow() -> list[str]:
        store = tmp_path_factory.mktemp("reattach") / "s.db"
        async with A2AClient(ServerConfig(url=served.url + "/", timeout=5, local_store=store)) as client:
            chat = Chat(client)
            await chat.open("ctx-1")
            assert chat.conversation.running_task_id == "t-run"
            await chat.resume()
            return [i.text for i in chat.conversation.items if i.role == "agent" and i.text]

    assert asyncio.run(follow()) == [full], case
