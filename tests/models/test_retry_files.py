"""``send --retry`` (and the app's /retry, the same ``Chat.retry``) sends a failed turn again whole:
its text and the files and data parts it carried. Against the embedded server on the test model."""

from __future__ import annotations

import base64
import json

import pytest
from openai_double import BAD_KEY, user_texts
from srvkit import Api, texts

from clirun import isolate, runner
from rewindtui.chat.retry import attachments_of
from rewindtui.client.attachments import DataAttachment, FileAttachment

pytestmark = pytest.mark.slow


@pytest.fixture
def run(server, tmp_path, monkeypatch, capsys):
    isolate(tmp_path, monkeypatch)
    return runner(capsys, "--url", server.agent_url, "--api", server.api_url)


def parts_of(message: dict) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for p in message["parts"]:
        if p["kind"] == "text":
            out.append(("text", p["text"]))
        elif p["kind"] == "file":
            out.append(("file", (p["file"].get("name"), base64.b64decode(p["file"]["bytes"]))))
        else:
            out.append((p["kind"], p.get("data")))
    return out


def test_retry_sends_the_failed_turns_files_and_data_again(run, server, double, http, tmp_path):
    note = tmp_path / "note.txt"
    note.write_bytes(b"the words in the file")
    first = run("send", "baseline turn")
    assert first.rc == 0, first.err
    session = first.lines[0].removeprefix("session: ")
    double.queue(BAD_KEY)
    failed = run("send", "--session", session, "--file", str(note), "--data", '{"rows": 3}', "read the file")
    assert failed.rc == 1
    again = run("send", "--session", session, "--retry")
    assert again.rc == 0, again.err

    sent = [("text", "read the file"), ("file", ("note.txt", b"the words in the file")), ("data", {"rows": 3})]
    turns = Api(http, server.api_url).tasks(session)
    retried = [m for t in turns for m in t["history"] if m["role"] == "user"][-1]
    assert parts_of(retried) == sent  # before: [("text", "read the file")] -- the files were dropped
    # the model got the message once, with the file's words in it
    assert user_texts(double.requests[-1])[0] == "baseline turn"
    last_user = [m for m in double.requests[-1]["messages"] if m["role"] == "user"][-1]
    assert "the words in the file" in json.dumps(last_user) and "read the file" in json.dumps(last_user)
    assert sum("read the file" in json.dumps(m) for m in double.requests[-1]["messages"]) == 1
    # the view: one copy of the message, the failed turn among the rewound branches
    history = run("history", "--session", session)
    assert [line for line in history.lines if line.startswith("user: ")] == [
        "user: baseline turn",
        "user: read the file",
    ]
    assert texts(retried) == "read the file"


def test_attachments_of_a_sent_message() -> None:
    message = {
        "parts": [
            {"kind": "text", "text": "hi"},
            {
                "kind": "file",
                "file": {"name": "a.bin", "mimeType": "application/x", "bytes": base64.b64encode(b"\0\1").decode()},
            },
            {
                "kind": "file",
                "file": {"name": "b.pdf", "mimeType": "application/pdf", "uri": "https://example.com/b.pdf"},
            },
            {"kind": "data", "data": {"k": [1, 2]}},
            {"kind": "mystery"},
        ]
    }
    assert attachments_of(message) == (
        FileAttachment("a.bin", "application/x", data=b"\0\1"),
        FileAttachment("b.pdf", "application/pdf", url="https://example.com/b.pdf"),
        DataAttachment({"k": [1, 2]}),
    )
    v1 = {
        "parts": [
            {"text": "hi"},
            {"raw": base64.b64encode(b"xyz").decode(), "filename": "c.txt", "mediaType": "text/plain"},
        ]
    }
    assert attachments_of(v1) == (FileAttachment("c.txt", "text/plain", data=b"xyz"),)
