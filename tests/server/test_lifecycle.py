"""Starting and stopping: EmbeddedServer (thread), serve.main (foreground), spawn_server (child)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from srvkit import A2A, Api, Turn, normalize_result

from rewindtui.server import EmbeddedServer
from rewindtui.server.process.serve import main as serve_main
from rewindtui.server.process.spawn import ServerStartError, default_data_dir, spawn_server

POSIX = sys.platform != "win32"


def test_start_stop_leaves_no_threads(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    server = EmbeddedServer(tmp_path / "d")
    server.start()
    assert server.running
    assert server.base_url == f"http://127.0.0.1:{server.port}"
    assert server.agent_url == server.base_url + "/api/a2a/local/demo/"
    assert server.api_url == server.base_url + "/api"
    card = httpx.get(server.agent_url + ".well-known/agent-card.json").json()
    assert card["url"] == server.agent_url
    server.stop()
    server.stop()  # twice is fine
    assert not server.running
    assert set(threading.enumerate()) - before == set()  # (a thread of an earlier test may end meanwhile)
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.base_url + "/api/sessions")


def test_context_manager_and_two_servers(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    with EmbeddedServer(tmp_path / "a") as a, EmbeddedServer(tmp_path / "b") as b:
        assert a.port != b.port
        assert httpx.get(a.api_url + "/sessions").json() == {
            "error": False,
            "data": [],
            "message": "Successfully listed sessions",
        }
        assert httpx.get(b.agent_url + ".well-known/agent-card.json").status_code == 200
    assert set(threading.enumerate()) - before == set()  # (a thread of an earlier test may end meanwhile)


def test_agent_card(tmp_path: Path) -> None:
    with EmbeddedServer(tmp_path / "d") as srv:
        cards = [
            httpx.get(url).json()
            for url in (
                srv.agent_url + ".well-known/agent-card.json",
                srv.agent_url + ".well-known/agent.json",
                srv.base_url + "/.well-known/agent-card.json",
                srv.base_url + "/.well-known/agent.json",
            )
        ]
    card = cards[0]
    assert all(c == card for c in cards)
    assert card["name"] == "demo"
    assert card["capabilities"]["streaming"] is True
    (ext,) = card["capabilities"]["extensions"]
    assert ext["uri"] == "urn:rewindtui:ext:rewind:v1"
    assert ext["params"] == {
        "rewind": ["a2a", "rest"],
        "fork": True,
        "redo": True,
        "api": srv.api_url,
        "metadata_key": "kagent_rewind_before_invocation_id",
        "newest_task": True,
        "state": True,
    }
    *http, grpc = card["supportedInterfaces"]
    assert http == [
        {"url": srv.agent_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": srv.agent_url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"},
        {"url": srv.agent_url.rstrip("/"), "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ]
    # the gRPC binding, on a second port of the same loopback host
    assert (grpc["protocolBinding"], grpc["protocolVersion"]) == ("GRPC", "1.0")
    assert grpc["url"].startswith("127.0.0.1:") and grpc["url"] != f"127.0.0.1:{srv.port}"
    assert card["protocolVersion"] == "0.3.0"
    assert card["url"] == srv.agent_url and card["preferredTransport"] == "JSONRPC"


def test_stop_during_a_turn_cancels_it(tmp_path: Path) -> None:
    data_dir = tmp_path / "d"
    srv = EmbeddedServer(data_dir, demo_delay=0.2).start()
    try:
        body = {
            "jsonrpc": "2.0",
            "id": "1",
            "method": "message/stream",
            "params": {
                "message": {
                    "kind": "message",
                    "role": "user",
                    "messageId": "m-stop",
                    "contextId": "stopping",
                    "parts": [{"kind": "text", "text": "a message long enough to stream for a while"}],
                }
            },
        }
        events = []
        with httpx.stream("POST", srv.agent_url, json=body, timeout=30) as resp:
            lines = resp.iter_lines()
            for line in lines:
                if line.startswith("data:"):
                    events.append(normalize_result(json.loads(line[5:])["result"]))
                    break
            stopper = threading.Thread(target=srv.stop)
            stopper.start()
            try:
                for line in lines:
                    if line.startswith("data:"):
                        events.append(normalize_result(json.loads(line[5:])["result"]))
            except httpx.HTTPError:
                pass
            stopper.join(30)
            assert not stopper.is_alive()
        assert events[-1]["status"]["state"] == "canceled"
    finally:
        srv.stop()
    with EmbeddedServer(data_dir) as again:
        (task,) = Api(httpx.Client(), again.api_url).tasks("stopping")
        assert task["status"]["state"] == "canceled"
        assert task["history"][0]["messageId"] == "m-stop"


def test_serve_main_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert serve_main(["--port", "70000"]) == 2
    with pytest.raises(SystemExit):
        serve_main(["--no-such-option"])


def test_default_data_dir() -> None:
    path = default_data_dir()
    assert path.is_absolute() and "rewindtui" in path.parts[-1].lower()


def test_spawn_and_sigterm(tmp_path: Path) -> None:
    server = spawn_server(tmp_path / "d", timeout=120)
    try:
        assert server.running
        assert server.base_url.startswith("http://127.0.0.1:")
        assert server.agent_url == server.base_url + "/api/a2a/local/demo/"
        assert server.api_url == server.base_url + "/api"
        assert server.token and server.token not in " ".join(server.process.args)  # by environment, not argv
        assert httpx.get(server.api_url + "/sessions").status_code == 401
        with httpx.Client(timeout=30, headers={"Authorization": f"Bearer {server.token}"}) as http:
            turn = Turn(A2A(http, server.agent_url, "1.0").stream("hello from a child", "spawned"))
            assert turn.final["status"]["state"] == "completed"
    finally:
        code = server.stop()
    assert code == 0
    assert not server.running
    server.stop()  # idempotent


@pytest.mark.skipif(not POSIX, reason="SIGINT to a child process is POSIX-only here")
def test_serve_ctrl_c_exits_zero(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rewindtui.server.process.serve", "--port", "0", "--data-dir", str(tmp_path / "d")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline()
        assert first.startswith("serving on http://127.0.0.1:"), first + proc.stderr.read()
        url = first.split("serving on ", 1)[1].strip()
        assert httpx.get(url + "/api/sessions").status_code == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_spawn_failure_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ServerStartError, match="did not start"):
        spawn_server(tmp_path / "d", command=[sys.executable, "-c", "print('something else')"], timeout=30)


def test_light_imports() -> None:
    code = (
        "import sys, rewindtui.server, rewindtui.server.process.spawn; "
        "heavy = [m for m in ('google.adk', 'a2a', 'uvicorn', 'starlette', 'textual') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_front_answers_without_google_adk() -> None:
    """What ``serve`` imports before it says ``serving on`` -- its own module, the front and the
    front's REST routes (which build on the service's context) -- leaves google-adk (seconds to
    import) to the agent's loader thread, and a2a-sdk's protos with protobuf (0.03 s of the front's
    0.16 s of CPU; the front's store writes with ``wire.py``'s plain helpers) to their first use."""
    heavy = ("google.adk", "a2a", "google.protobuf")
    code = (
        "import sys, rewindtui.server.process.serve, rewindtui.server.http.front, rewindtui.server.http.rest; "
        f"print([m for m in sys.modules if any(m == h or m.startswith(h + '.') for h in {heavy!r})])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_serve_leaves_the_collector_on() -> None:
    """``serve`` pauses the cyclic collector over the front's start (serve.py's ``main``); a start
    refused early (a bad port) still leaves it on for the process it runs in."""
    import gc

    assert gc.isenabled()
    assert serve_main(["--port", "70000"]) == 2
    assert gc.isenabled()


@pytest.mark.skipif(not POSIX, reason="uses SIGKILL")
def test_killed_mid_turn_is_marked_failed_on_restart(tmp_path: Path) -> None:
    data_dir = tmp_path / "d"
    child = spawn_server(data_dir, demo_delay=0.3, timeout=120)
    try:
        body = {
            "jsonrpc": "2.0",
            "id": "1",
            "method": "message/stream",
            "params": {
                "message": {
                    "kind": "message",
                    "role": "user",
                    "messageId": "m-killed",
                    "contextId": "killed",
                    "parts": [{"kind": "text", "text": "this turn will never finish"}],
                }
            },
        }
        auth = {"Authorization": f"Bearer {child.token}"}
        with httpx.stream("POST", child.agent_url, json=body, headers=auth, timeout=30) as resp:
            for line in resp.iter_lines():
                if line.startswith("data:"):
                    break
            child.process.send_signal(signal.SIGKILL)
            child.process.wait(30)
    finally:
        child.stop()
    with EmbeddedServer(data_dir) as srv:
        (task,) = Api(httpx.Client(), srv.api_url).tasks("killed")
        assert task["status"]["state"] == "failed"
        assert "stopped before this turn finished" in task["status"]["message"]["parts"][0]["text"]


@pytest.mark.skipif(not POSIX, reason="uses SIGKILL")
def test_spawned_server_does_not_outlive_its_parent(tmp_path: Path) -> None:
    """The app may die without stopping its server: the child notices (stdin EOF) and exits."""
    parent_code = (
        "import sys, time; from pathlib import Path; "
        "from rewindtui.server.process.spawn import spawn_server; "
        f"s = spawn_server(Path({str(tmp_path / 'd')!r}), timeout=120); "
        "print(s.pid, s.base_url, s.token, flush=True); time.sleep(600)"
    )
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE, text=True)
    try:
        pid_text, base_url, token = parent.stdout.readline().split()
        child_pid = int(pid_text)
        assert httpx.get(base_url + "/api/sessions", headers={"Authorization": f"Bearer {token}"}).status_code == 200
        parent.kill()
        parent.wait(30)
        # the child shuts itself down; wait for it to be gone (it is not our child: poll)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(child_pid, 0)
            except ProcessLookupError:
                break
            if _is_zombie(child_pid):
                break
            time.sleep(0.05)
        else:
            os.kill(child_pid, signal.SIGKILL)
            pytest.fail("the spawned server outlived its parent")
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        parent.stdout.close()


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] == "Z"
    except OSError:
        return False
