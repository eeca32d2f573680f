"""Tests that catch the next bug (issue item 8, and item 7's smaller ones): the Origin check
compares scheme, host and port; the inline-file limit is per message; a saved inline file is
streamed to disk; `serve` beyond loopback says where it listens and refuses short tokens;
every test has a timeout."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import httpx
import pytest

from rewindtui.client.attachments import MAX_INLINE_BYTES, AttachmentError, attach, save_parts

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(
    "origin, allowed",
    [
        ("{base}", True),
        ("http://127.0.0.1:{other}", False),  # another port of the same host: another site
        ("https://127.0.0.1:{port}", False),  # another scheme
        ("http://localhost:{port}", False),  # another host name
        ("http://127.0.0.1", False),  # the default port
        ("null", False),
    ],
)
def test_the_origin_check_compares_scheme_host_and_port(server, origin, allowed):
    port = server.port
    value = origin.format(base=server.base_url, port=port, other=port + 1)
    response = httpx.get(server.api_url + "/sessions", headers={"Origin": value}, timeout=10)
    assert (response.status_code != 403) is allowed, (value, response.status_code, response.text)


def test_the_inline_limit_is_per_message(tmp_path):
    """Three files each well under the limit, together past it: the one that crosses is refused."""
    third = MAX_INLINE_BYTES // 3 + 1
    files = []
    for n in range(3):
        path = tmp_path / f"f{n}.bin"
        path.write_bytes(b"x" * third)
        files.append(path)
    taken = [
        attach(str(files[0])),
    ]
    taken.append(attach(str(files[1]), already=taken))
    with pytest.raises(AttachmentError, match="already attached"):
        attach(str(files[2]), already=taken)


async def test_a_large_inline_file_is_streamed_to_disk(tmp_path):
    size = 24 * 1024 * 1024
    part = {"raw": base64.b64encode(os.urandom(1024) * (size // 1024)).decode(), "filename": "big.bin"}
    tracemalloc.start()
    try:
        saved = await save_parts([part], tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    (path,) = saved.written
    assert path.stat().st_size == size
    # beyond the answer already in memory (its base64), saving adds a step, not the file
    assert peak < size // 4, f"peak {peak / 1e6:.1f} MB while saving a {size / 1e6:.1f} MB file"


def test_a_bad_inline_file_leaves_no_partial_file(tmp_path):
    """Its first steps decode and are written; the last is not base64: no half file is left."""
    import asyncio

    part = {"raw": "QUJD" * 300_000 + "QQ", "filename": "bad.bin"}  # > one step, then bad padding
    saved = asyncio.run(save_parts([part], tmp_path))
    assert saved.written == [] and "not valid base64" in saved.skipped[0]
    assert list(tmp_path.iterdir()) == []


def test_serve_beyond_loopback_refuses_a_short_token(tmp_path, monkeypatch, capsys):
    from rewindtui.server.process.serve import main as serve_main

    monkeypatch.setenv("REWINDTUI_SERVER_TOKEN", "x")
    assert serve_main(["--host", "0.0.0.0", "--data-dir", str(tmp_path)]) == 2
    assert "at least 32" in capsys.readouterr().err


def test_serve_beyond_loopback_says_where_it_listens(tmp_path):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rewindtui.server.process.serve",
            "--host",
            "0.0.0.0",
            "--data-dir",
            str(tmp_path / "d"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("REWINDTUI_")},
    )
    try:
        lines = [proc.stdout.readline() for _ in range(4)] if proc.stdout else []
        assert lines[3].startswith("listening on http://0.0.0.0:") and "every interface" in lines[3], lines
    finally:
        proc.terminate()
        proc.wait(30)
        if proc.stdout:
            proc.stdout.close()


def test_every_test_has_a_timeout(request):
    assert float(request.config.getini("timeout")) > 0
    assert Path(__file__).read_text().count("pytest.mark.timeout") >= 1
