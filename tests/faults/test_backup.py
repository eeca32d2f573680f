"""Issue item on backups: ``rewindtui backup`` while the server runs, ``rewindtui restore``
refusing a running server's data, and a restored directory serving the backed-up sessions."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from rewindtui.chat import Chat
from rewindtui.cli import main as cli
from rewindtui.client.a2a_client import A2AClient, ServerConfig
from rewindtui.server import EmbeddedServer

pytestmark = pytest.mark.timeout(90)


async def _users(srv: EmbeddedServer, sid: str | None, *send: str) -> tuple[str, list[str]]:
    client = A2AClient(ServerConfig(url=srv.agent_url, api=srv.api_url, timeout=10))
    try:
        await client.connect()
        chat = Chat(client)
        await chat.open(sid)
        for text in send:
            await chat.send(text)
        assert chat.session_id
        return chat.session_id, [i.text for i in chat.conversation.items if i.role == "user"]
    finally:
        await client.aclose()


async def test_backup_while_serving_then_restore(tmp_path, capsys):
    data, out = tmp_path / "data", tmp_path / "backup"
    with EmbeddedServer(data) as srv:
        sid, _ = await _users(srv, None, "one", "two")
        assert cli.main(["backup", "--data-dir", str(data), str(out)]) == 0  # the server runs
        # restore is refused while it serves the directory, and changes nothing
        before = (data / "rewindtui.db").stat().st_mtime_ns
        assert cli.main(["restore", "--data-dir", str(data), str(out)]) == 1
        assert "in use by a running server" in capsys.readouterr().err
        assert (data / "rewindtui.db").stat().st_mtime_ns == before
        await _users(srv, sid, "three")  # after the backup: not in it
    for name in ("rewindtui.db", "adk_sessions.db", "push_configs.db"):  # push configs too (a server made it)
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o600
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    assert cli.main(["restore", "--data-dir", str(data), str(out)]) == 0
    said = capsys.readouterr().out
    assert "replaced files are in" in said
    aside = Path(said.rsplit("replaced files are in ", 1)[1].strip())
    assert (aside / "rewindtui.db").exists() and (aside / "push_configs.db").exists()  # nothing deleted
    assert (data / "push_configs.db").is_file()
    with EmbeddedServer(data) as srv:
        _, users = await _users(srv, sid)
    assert users == ["one", "two"]


def test_backup_refuses_a_non_empty_target_and_an_empty_source(tmp_path, capsys):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("x")
    assert cli.main(["backup", "--data-dir", str(tmp_path / "nothing"), str(tmp_path / "o2")]) == 1
    assert "no databases" in capsys.readouterr().err
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "rewindtui.db").write_bytes(b"")
    assert cli.main(["backup", "--data-dir", str(tmp_path / "d"), str(tmp_path / "out")]) == 1
    assert "not empty" in capsys.readouterr().err
