"""The app starts its embedded server before it loads (``prespawn``); its connect takes that one."""

from __future__ import annotations

from pathlib import Path

import pytest
from srvkit import gone

from rewindtui.server.process import spawn
from rewindtui.server.process.spawn import SpawnedServer, discard_prespawned, prespawn, spawn_server

pytestmark = pytest.mark.slow  # real server processes


def test_the_connect_takes_the_server_started_early(tmp_path: Path) -> None:
    data = tmp_path / "d"
    prespawn(data)
    early = spawn._early
    assert early is not None
    server = spawn_server(data, timeout=120)
    try:
        assert isinstance(server, SpawnedServer)
        assert server is early.server  # not a second one (which would have attached to it)
        assert spawn._early is None
        discard_prespawned()  # nothing left to discard: the server it took keeps running
        assert server.running
    finally:
        server.stop()


def test_other_arguments_start_their_own_and_an_unclaimed_one_is_stopped(tmp_path: Path) -> None:
    prespawn(tmp_path / "a")
    early = spawn._early
    assert early is not None
    other = spawn_server(tmp_path / "b", timeout=120)  # another data dir: not the early one
    try:
        assert other is not early.server
        assert spawn._early is early and not early.claimed
    finally:
        other.stop()
    assert early.done.wait(120) and early.server is not None
    pid = early.server.pid
    discard_prespawned()
    assert spawn._early is None
    assert gone(pid)


def test_a_failed_early_start_is_the_connects_failure(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    prespawn(blocker / "d")
    with pytest.raises(OSError):
        spawn_server(blocker / "d", timeout=30)
    assert spawn._early is None
