"""A team server: two real ``rewindtui serve`` processes on one PostgreSQL database.

Twenty clients send, rewind, redo, fork and edit (rewind-and-send) on a few shared sessions,
each request to either replica at random; then what is stored is counted: every turn a client
saw complete is stored, no session's history is interleaved, both replicas answer every
session's history byte for byte the same, ADK's view (what the model is shown) and the store's
agree, and every refusal is one sentence (never a traceback, never ``StaleSessionError``). Then a
replica is killed (SIGKILL) mid-turn and the other one takes the session over.
"""

from __future__ import annotations

import ast
import asyncio
import json
import random
import re
import threading
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from srvkit import REWIND_KEY, Served, send_body

from rewindtui.a2a import contract
from rewindtui.server.service.jobs import OTHER_REPLICA_BUSY

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

USER = {"X-User-Id": "team"}
#: what a refusal may say (each one sentence): the session is busy here or on the other replica,
#: the rewind target is gone (another client rewound first), there is nothing to redo
REFUSALS = (
    re.escape(OTHER_REPLICA_BUSY),
    r"a (turn|rewind|fork|delete) is running on session '[^']+'; try again when it has finished",
    r".*(not in|no longer in|not an invocation|is not|nothing to redo|no rewind|cannot|already rewound).*",
)


def _replicas(tmp_path: Path, url: str, *extra: str) -> tuple[Served, Served]:
    env = {"REWINDTUI_DATABASE_URL": url}
    a = Served(tmp_path / "a", env=env, extra=list(extra))
    try:
        b = Served(tmp_path / "b", env=env, extra=list(extra))
    except BaseException:
        a.close()
        raise
    return a, b


def _one_sentence(text: str) -> bool:
    text = text.strip()
    return bool(text) and "\n" not in text and "Traceback" not in text and "StaleSession" not in text


class Client:
    """One of the twenty: A2A streams and REST calls, each to a replica picked at random."""

    def __init__(self, http: httpx.AsyncClient, replicas: tuple[Served, Served], rng: random.Random) -> None:
        self.http = http
        self.replicas = replicas
        self.rng = rng
        self.completed: list[tuple[str, str]] = []  # (session, task id) of turns seen completed
        self.refusals: list[str] = []
        self.forks: list[str] = []

    def pick(self) -> Served:
        return self.rng.choice(self.replicas)

    async def stream(self, session: str, text: str, metadata: dict[str, Any] | None = None) -> None:
        body = send_body(session, text, "message/stream", **({"metadata": metadata} if metadata else {}))
        finals: list[dict[str, Any]] = []
        task_id = None
        async with self.http.stream("POST", self.pick().agent_url, json=body, headers=USER) as resp:
            assert resp.status_code == 200
            async for line in resp.aiter_lines():
                if not line.startswith("data:"):
                    continue
                frame = json.loads(line[5:])
                assert "error" not in frame, frame
                result = frame["result"]
                if result.get("kind") == "task" and not (result.get("metadata") or {}).get(contract.REWOUND_BEFORE_KEY):
                    task_id = result["id"]
                if result.get("final"):
                    finals.append(result)
        assert len(finals) == 1, finals
        status = finals[0]["status"]
        if status["state"] == "completed":
            assert task_id is not None
            self.completed.append((session, task_id))
        else:
            assert status["state"] == "failed", status
            self.refusals.append("".join(p.get("text", "") for p in status["message"]["parts"]))

    async def rest(self, session: str, what: str, body: dict[str, Any]) -> dict[str, Any] | None:
        path = {"rewind": contract.REST_REWIND, "redo": contract.REST_REDO, "fork": contract.REST_FORK}[what]
        resp = await self.http.post(self.pick().api_url + path.format(id=session), json=body, headers=USER)
        data = resp.json()
        if resp.status_code < 300:
            return data["data"]
        assert resp.status_code in (400, 404, 409), (resp.status_code, data)
        self.refusals.append(str(data.get("error") or data.get("message")))
        return None

    async def invocations(self, session: str) -> list[str]:
        resp = await self.http.get(self.pick().api_url + f"/sessions/{session}/tasks", headers=USER)
        seen: list[str] = []
        for task in resp.json()["data"]:
            for m in task.get("history", []):
                inv = (m.get("metadata") or {}).get("kagent_invocation_id")
                if inv and inv not in seen:
                    seen.append(inv)
        return seen

    async def work(self, sessions: list[str], ops: int) -> None:
        for n in range(ops):
            await asyncio.sleep(self.rng.uniform(0, 0.8))  # a person between two actions (jittered)
            session = self.rng.choice(sessions)
            op = self.rng.choice(["send", "send", "send", "rewind", "redo", "fork", "edit"])
            if op == "send":
                await self.stream(session, f"{id(self) % 1000}-{n}")
                continue
            if op == "redo":
                await self.rest(session, "redo", {})
                continue
            invocations = await self.invocations(session)
            if len(invocations) < 2:
                await self.stream(session, f"{id(self) % 1000}-{n}")
                continue
            target = self.rng.choice(invocations[1:])
            if op == "rewind":
                await self.rest(session, "rewind", {contract.REST_BEFORE_FIELD: target})
            elif op == "fork":
                row = await self.rest(session, "fork", {contract.REST_BEFORE_FIELD: target})
                if row is not None:
                    self.forks.append(row["id"])
            else:  # edit: rewind before a turn and send its new text, in one request
                await self.stream(session, f"edit-{id(self) % 1000}-{n}", {REWIND_KEY: target})


def _merged(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for task in tasks:
        for m in task.get("history", []):
            if m["messageId"] not in seen:
                seen.add(m["messageId"])
                out.append(m)
    return out


def _not_interleaved(messages: list[dict[str, Any]]) -> bool:
    """Each invocation's messages are together and open with the user's message."""
    done: set[str] = set()
    current = None
    for m in messages:
        inv = (m.get("metadata") or {}).get("kagent_invocation_id")
        if inv != current:
            if inv in done or m["role"] != "user":
                return False
            if current is not None:
                done.add(current)
            current = inv
    return True


def _text(m: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in m.get("parts", []) if p.get("kind") == "text")


def test_twenty_clients_on_two_replicas_lose_nothing_and_interleave_nothing(tmp_path: Path, pg_url: str) -> None:
    a, b = _replicas(tmp_path, pg_url, "--demo-delay", "0.02")
    try:
        sessions = [f"team-{i}" for i in range(10)]

        async def run() -> list[Client]:
            async with httpx.AsyncClient(timeout=120) as http:
                for s in sessions:
                    assert (await http.post(a.api_url + "/sessions", json={"id": s}, headers=USER)).status_code == 201
                clients = [Client(http, (a, b), random.Random(seed)) for seed in range(20)]
                await asyncio.gather(*(c.work(sessions, 8) for c in clients))
                return clients

        clients = asyncio.run(run())
        refusals = [r for c in clients for r in c.refusals]
        completed = [t for c in clients for t in c.completed]
        assert completed, "no turn completed"
        assert any(OTHER_REPLICA_BUSY in r for r in refusals), "the replicas never collided: the test proves nothing"
        for text in refusals:
            assert _one_sentence(text), text
            assert any(re.fullmatch(p, text) for p in REFUSALS), text

        with httpx.Client(timeout=60) as http:
            everything = sessions + [f for c in clients for f in c.forks]
            for s in everything:
                path = f"/sessions/{s}/tasks?{contract.REST_INCLUDE_REWOUND}=true"
                from_a = http.get(a.api_url + path, headers=USER)
                from_b = http.get(b.api_url + path, headers=USER)
                assert from_a.status_code == 200
                assert from_a.content == from_b.content  # byte for byte
                current_a = http.get(a.api_url + f"/sessions/{s}/tasks", headers=USER)
                assert current_a.content == http.get(b.api_url + f"/sessions/{s}/tasks", headers=USER).content
                stored = {t["id"] for t in from_a.json()["data"]}
                lost = [tid for sid, tid in completed if sid == s and tid not in stored]
                assert lost == []  # nothing lost: every completed turn is stored (rewound ones too)
                merged = _merged(current_a.json()["data"])
                assert _not_interleaved(merged), [(m["role"], _text(m)) for m in merged]
                # ADK's view agrees with the store's: the model is shown exactly the stored history
                users = [_text(m) for m in merged if m["role"] == "user"]
                answer = http.post(b.agent_url, json=send_body(s, "final"), headers=USER).json()["result"]
                reply = (
                    _text(answer["status"]["message"]) if "status" in answer and answer["status"].get("message") else ""
                )
                if not reply:
                    reply = _text(answer["history"][-1])
                seen = ast.literal_eval(re.search(r"history: (\[.*?\]);", reply).group(1))  # type: ignore[union-attr]
                assert seen == [*users, "final"], (s, seen, users)
    finally:
        a.close()
        b.close()


def test_a_replica_killed_mid_turn_leaves_the_turn_failed_and_the_session_to_the_other(
    tmp_path: Path, pg_url: str
) -> None:
    a, b = _replicas(tmp_path, pg_url, "--demo-delay", "0.4")
    session = "kill-me"
    try:
        with httpx.Client(timeout=60) as http:
            assert http.post(a.api_url + "/sessions", json={"id": session}, headers=USER).status_code == 201
            # a turn long enough to outlast the steps below
            body = send_body(session, KILL_TEXT, "message/stream", messageId="m-1")
            message = body["params"]["message"]
            streamed = threading.Event()
            got: list[dict[str, Any]] = []

            def follow() -> None:
                try:
                    with httpx.stream("POST", a.agent_url, json=body, headers=USER, timeout=60) as resp:
                        for line in resp.iter_lines():
                            if line.startswith("data:"):
                                got.append(json.loads(line[5:]))
                                if (got[-1].get("result", {}).get("metadata") or {}).get("kagent_adk_partial"):
                                    streamed.set()
                except httpx.HTTPError:
                    pass  # the replica is killed under it

            reader = threading.Thread(target=follow, daemon=True)
            reader.start()
            assert streamed.wait(60), got  # the model has streamed a delta: the turn is running on A
            # B refuses the session while A runs the turn
            second = {**body, "params": {"message": {**message, "messageId": "m-2"}}}
            refused = http.post(b.agent_url, json={**second, "method": "message/send"}, headers=USER).json()
            status = refused["result"]["status"] if "status" in refused.get("result", {}) else refused["result"]
            assert OTHER_REPLICA_BUSY in json.dumps(status)
            # a client follows the turn from B while A runs it: B replays A's events (deltas too)
            cut_id = got[0]["result"]["id"]
            follow = {"jsonrpc": "2.0", "id": 9, "method": "tasks/resubscribe", "params": {"id": cut_id}}
            followed: list[dict[str, Any]] = []
            following = threading.Event()

            def follow_on_b() -> None:
                with httpx.stream("POST", b.agent_url, json=follow, headers=USER, timeout=60) as resp:
                    for line in resp.iter_lines():
                        if line.startswith("data:"):
                            followed.append(json.loads(line[5:])["result"])
                            if (followed[-1].get("metadata") or {}).get("kagent_adk_partial"):
                                following.set()

            follower = threading.Thread(target=follow_on_b, daemon=True)
            follower.start()
            assert following.wait(60), followed  # B's follower has seen a delta of A's turn
            a.kill9()
            reader.join(30)
            # nobody touches the session: B's sweeper finds the turn running with no replica holding
            # its session, finishes it (failed), and the follower's stream ends with that
            follower.join(30)
            assert not follower.is_alive()
            assert followed[0]["status"]["state"] in ("submitted", "working")  # as A left it
            assert followed[-1]["final"] is True and followed[-1]["status"]["state"] == "failed"
            got_task = {"jsonrpc": "2.0", "id": 10, "method": "tasks/get", "params": {"id": cut_id}}
            stored = http.post(b.agent_url, json=got_task, headers=USER).json()["result"]
            assert stored["status"]["state"] == "failed", stored
            # B takes the session over: the cut turn is failed, the next turn runs
            third = {
                **second,
                "params": {"message": {**message, "messageId": "m-3", "parts": [{"kind": "text", "text": "again"}]}},
            }
            done = http.post(b.agent_url, json={**third, "method": "message/send"}, headers=USER).json()["result"]
            assert done["status"]["state"] in ("completed", "TASK_STATE_COMPLETED"), done
            tasks = http.get(
                b.api_url + f"/sessions/{session}/tasks?{contract.REST_INCLUDE_REWOUND}=true", headers=USER
            ).json()["data"]
            states = [t["status"]["state"] for t in tasks if t.get("kind") == "task"]
            assert states[0] == "failed" and states[-1] == "completed", states
            cut = tasks[0]
            assert "stopped before this turn finished" in json.dumps(cut)
            # the user's message of the cut turn is kept, and the new turn's model did not see it as a
            # stray (the failed turn is rewound before the next one, as on a single server)
            assert any(m["messageId"] == "m-1" for m in cut.get("history", []))
    finally:
        a.close()
        b.close()


#: the demo model echoes it a few words every 0.3 s: a turn of several seconds
LONG_TEXT = " ".join(f"word{i}" for i in range(60))
#: the killed turn must still run after the refusal and the resubscribe on B, also on a loaded
#: machine (with 60 words it once ended before the kill); it is killed, so its length costs nothing
KILL_TEXT = " ".join(f"word{i}" for i in range(300))


@pytest.fixture(scope="module")
def slow_pair(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Two replicas whose demo model streams slowly (a turn runs for seconds)."""
    from kit.postgres import new_database

    # --push-allow loopback: the push test's receiver listens on loopback, which a server refuses
    # unless told (server/http/push_screen.py)
    a, b = _replicas(
        tmp_path_factory.mktemp("pair"), new_database("m"), "--demo-delay", "0.3", "--push-allow", "loopback"
    )
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def _start_turn_on(replica: Served, session: str, text: str) -> tuple[threading.Thread, list[dict[str, Any]], str]:
    """A streaming turn on ``replica`` in a thread; returns once its Task has come (its id)."""
    body = send_body(session, text, "message/stream")
    frames: list[dict[str, Any]] = []
    started = threading.Event()

    def run() -> None:
        with httpx.stream("POST", replica.agent_url, json=body, headers=USER, timeout=120) as resp:
            for line in resp.iter_lines():
                if line.startswith("data:"):
                    frames.append(json.loads(line[5:]))
                    if frames[-1].get("result", {}).get("kind") == "task":
                        started.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(60), frames
    return thread, frames, frames[0]["result"]["id"]


def test_a_turn_on_one_replica_is_followed_from_the_other(slow_pair: Any) -> None:
    a, b = slow_pair
    session = f"follow-{uuid.uuid4().hex[:8]}"
    thread, frames, task_id = _start_turn_on(a, session, LONG_TEXT)
    body = {"jsonrpc": "2.0", "id": 2, "method": "tasks/resubscribe", "params": {"id": task_id}}
    followed: list[dict[str, Any]] = []
    with httpx.stream("POST", b.agent_url, json=body, headers=USER, timeout=120) as resp:
        for line in resp.iter_lines():
            if line.startswith("data:"):
                followed.append(json.loads(line[5:])["result"])
    thread.join(60)
    assert followed[0]["kind"] == "task" and followed[0]["id"] == task_id
    assert followed[0]["status"]["state"] in ("submitted", "working")  # it was running when B took it up
    final = followed[-1]
    assert final["kind"] == "status-update" and final["final"] is True and final["status"]["state"] == "completed"
    # what B streamed ends as what A streamed, and B's stored answer is A's
    a_final = [f["result"] for f in frames if f.get("result", {}).get("final")][0]
    assert a_final["status"]["state"] == "completed"
    whole_on_a = [
        _text(r["status"]["message"])
        for r in (f["result"] for f in frames)
        if r.get("kind") == "status-update"
        and r["status"].get("message")
        and r["status"]["message"]["role"] == "agent"
        and not (r.get("metadata") or {}).get("kagent_adk_partial")
    ]
    streamed_on_b = [_text(e["status"]["message"]) for e in followed[1:] if e.get("status", {}).get("message")]
    assert whole_on_a and streamed_on_b[-len(whole_on_a) :] == whole_on_a  # B saw A's whole messages
    # and the deltas as they grew: B replays A's run (a2a-sdk's task_events), event for event, in order
    deltas_on_b = [e for e in followed if (e.get("metadata") or {}).get("kagent_adk_partial")]
    assert len(deltas_on_b) > 3, followed
    assert followed == [f["result"] for f in frames]  # the whole stream, the Task too


def test_a_turn_on_one_replica_is_cancelled_from_the_other(slow_pair: Any) -> None:
    a, b = slow_pair
    session = f"cancel-{uuid.uuid4().hex[:8]}"
    thread, frames, task_id = _start_turn_on(a, session, LONG_TEXT)
    body = {"jsonrpc": "2.0", "id": 3, "method": "tasks/cancel", "params": {"id": task_id}}
    answer = httpx.post(b.agent_url, json=body, headers=USER, timeout=60).json()
    assert answer["result"]["status"]["state"] == "canceled", answer
    thread.join(60)
    a_final = [f["result"] for f in frames if f.get("result", {}).get("final")]
    assert a_final and a_final[-1]["status"]["state"] == "canceled"  # A's own stream ends canceled
    # both replicas now say canceled, and the session takes the next turn on either
    for replica in (a, b):
        got = httpx.post(replica.agent_url, json={**body, "method": "tasks/get"}, headers=USER, timeout=60).json()
        assert got["result"]["status"]["state"] == "canceled"
    next_body = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "message/send",
        "params": {
            "message": {
                "kind": "message",
                "role": "user",
                "messageId": str(uuid.uuid4()),
                "contextId": session,
                "parts": [{"kind": "text", "text": "next"}],
            }
        },
    }
    assert (
        httpx.post(b.agent_url, json=next_body, headers=USER, timeout=120).json()["result"]["status"]["state"]
        == "completed"
    )


def test_a_push_config_registered_on_one_replica_is_notified_when_the_turn_on_the_other_ends(slow_pair: Any) -> None:
    from rewindtui.client.push import PushReceiver

    a, b = slow_pair
    session = f"push-{uuid.uuid4().hex[:8]}"
    thread, frames, task_id = _start_turn_on(a, session, LONG_TEXT)

    async def run() -> dict[str, Any]:
        async with PushReceiver() as receiver:
            body = {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "CreateTaskPushNotificationConfig",
                "params": {"taskId": task_id, "id": "cfg-b", **receiver.config()},
            }
            created = await asyncio.to_thread(
                lambda: httpx.post(b.agent_url, json=body, headers={**USER, "A2A-Version": "1.0"}, timeout=60).json()
            )
            assert created["result"]["id"] == "cfg-b", created
            listed = await asyncio.to_thread(
                lambda: httpx.post(
                    a.agent_url,
                    json={**body, "method": "ListTaskPushNotificationConfigs", "params": {"taskId": task_id}},
                    headers={**USER, "A2A-Version": "1.0"},
                    timeout=60,
                ).json()
            )
            assert [c["id"] for c in listed["result"]["configs"]] == ["cfg-b"]  # A sees B's config
            return await receiver.wait_for(task_id, timeout=120)

    notified = asyncio.run(run())
    thread.join(60)
    assert notified["status"]["state"] == "TASK_STATE_COMPLETED"
    a_final = [f["result"] for f in frames if f.get("result", {}).get("final")]
    assert a_final and a_final[-1]["status"]["state"] == "completed"


def test_turns_alternating_replicas_are_never_refused_when_nobody_collides(slow_pair: Any) -> None:
    """Nobody collides: eight clients, each in a session of its own, each sending its next turn once
    the last has ended, to A and B by turns. The replicas sweep for dead replicas' turns all along
    (every 2 s); a sweep must never hold a live session in the way (it reads pg_locks; it does not
    try the lock, which refused such turns for a moment)."""
    a, b = slow_pair

    async def client(http: httpx.AsyncClient, c: int) -> list[tuple[str, str]]:
        session = f"alt-{c}-{uuid.uuid4().hex[:8]}"
        states = []
        for n in range(8):
            message = {
                "kind": "message",
                "role": "user",
                "messageId": str(uuid.uuid4()),
                "contextId": session,
                "parts": [{"kind": "text", "text": f"turn {n}"}],
            }
            body = {"jsonrpc": "2.0", "id": n, "method": "message/send", "params": {"message": message}}
            resp = await http.post((a, b)[(n + c) % 2].agent_url, json=body, headers=USER)
            status = resp.json()["result"]["status"]
            states.append((status["state"], json.dumps(status.get("message"))[:200]))
        return states

    async def run() -> list[tuple[str, str]]:
        async with httpx.AsyncClient(timeout=120) as http:
            results = await asyncio.gather(*(client(http, c) for c in range(8)))
        return [s for r in results for s in r]

    states = asyncio.run(run())
    assert len(states) == 64 and all(state == "completed" for state, _ in states), states


def test_a_turn_on_one_replica_is_followed_over_grpc_from_the_other(slow_pair: Any) -> None:
    """SubscribeToTask on B's gRPC binding for a turn running on A: the same replay of A's events
    (a2a-sdk's task_events), deltas included, rendered by a2a-sdk's gRPC handler."""
    import grpc
    from a2a.types import a2a_pb2 as pb
    from a2a.types import a2a_pb2_grpc

    a, b = slow_pair
    thread, frames, task_id = _start_turn_on(a, f"grpc-follow-{uuid.uuid4().hex[:8]}", LONG_TEXT)
    # B's card lists its gRPC port once B's agent is up (a read waits for it)
    httpx.post(
        b.agent_url,
        json={"jsonrpc": "2.0", "id": 0, "method": "tasks/get", "params": {"id": task_id}},
        headers=USER,
        timeout=120,
    )
    card = httpx.get(b.agent_url + ".well-known/agent-card.json", timeout=60).json()
    [address] = [i["url"] for i in card["supportedInterfaces"] if i.get("protocolBinding") == "GRPC"]

    async def follow() -> list[Any]:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)
            call = stub.SubscribeToTask(
                pb.SubscribeToTaskRequest(id=task_id), metadata=[("a2a-version", "1.0"), ("x-user-id", "team")]
            )
            return [response async for response in call]

    responses = asyncio.run(follow())
    thread.join(60)
    assert responses[0].WhichOneof("payload") == "task" and responses[0].task.id == task_id
    updates = [r.status_update for r in responses if r.WhichOneof("payload") == "status_update"]
    deltas = [u for u in updates if "kagent_adk_partial" in u.metadata and u.metadata["kagent_adk_partial"]]
    assert len(deltas) > 3
    assert updates[-1].status.state == pb.TASK_STATE_COMPLETED
    # the deltas are A's, in A's order
    on_a = [
        _text(f["result"]["status"]["message"])
        for f in frames
        if (f["result"].get("metadata") or {}).get("kagent_adk_partial")
    ]
    assert ["".join(p.text for p in u.status.message.parts) for u in deltas] == on_a
