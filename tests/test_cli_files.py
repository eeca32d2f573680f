"""Headless files, data, cards and errors: ``send --file/--data/--save-dir``, ``card [--json]``,
``--binding``, auth flags, and failures printed once (a JSON object with ``--json``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kit.servers import embedded_fixture

sys.path.insert(0, str(Path(__file__).resolve().parent / "a2a_servers"))

from binding_servers import REPORT_BYTES, REPORT_NAME, both_bindings_app, card_json_10, card_only_app

from asgi_thread import ServeInThread
from clirun import Result, isolate
from rewindtui.cli import main as cli

server = embedded_fixture("cli-files-data", scope="module")


@pytest.fixture(scope="module")
def both():
    served = ServeInThread(factory=lambda url: both_bindings_app(url + "/")).start()
    yield served
    served.stop()


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path, monkeypatch):
    return isolate(tmp_path, monkeypatch)


@pytest.fixture
def run(capsys):
    def run(*argv: str) -> Result:
        capsys.readouterr()
        rc = cli.main(list(argv))
        captured = capsys.readouterr()
        return Result(rc, captured.out, captured.err)

    return run


def embedded(server) -> list[str]:
    return ["--url", server.agent_url, "--api", server.api_url]


def test_send_files_and_data_to_the_embedded_server(run, server, tmp_path):
    picture = tmp_path / "pixel.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    r = run("send", "--json", *embedded(server), "--file", str(picture), "--data", '{"n": 1}', "look")
    assert r.rc == 0, r.err
    header, user, agent = r.records()
    assert [(p["kind"], p["name"], p["media_type"], p.get("size")) for p in user["parts"]] == [
        ("file", "pixel.png", "image/png", 208),
        ("data", None, "application/json", None),
    ]
    assert user["parts"][1]["data"] == {"n": 1} and user["text"] == "look"
    assert "iVBOR" not in r.out  # the picture's base64 is never printed
    # the server keeps them: history shows the same parts
    h = run("history", "--json", *embedded(server), "--session", header["session"])
    assert h.records()[0]["parts"] == user["parts"]
    text = run("history", *embedded(server), "--session", header["session"])
    assert "    file pixel.png · image/png · 208 B" in text.lines
    assert '        "n": 1' in text.lines  # pretty-printed (a whole number, though the server has 1.0)


def test_files_only_and_the_size_limit(run, server, tmp_path):
    small = tmp_path / "a.txt"
    small.write_text("hello")
    r = run("send", *embedded(server), "--file", str(small))
    assert r.rc == 0 and "    file a.txt · text/plain · 5 B" in r.lines
    big = tmp_path / "big.bin"
    big.write_bytes(bytes(11 * 1024 * 1024))
    before = run("sessions", "--json", *embedded(server)).lines
    r = run("send", *embedded(server), "--file", str(big), "too big")
    assert r.rc == 1 and r.out == ""
    assert r.err == (
        "rewindtui: error: big.bin is 11.0 MB: a message carries at most 10.0 MB of files inline; "
        "send a link to it instead (an http(s) URL is sent by reference)\n"
    )
    assert run("sessions", "--json", *embedded(server)).lines == before  # nothing was sent
    r = run("send", "--json", *embedded(server), "--file", str(tmp_path / "missing.txt"), "x")
    assert r.rc == 1 and json.loads(r.out) == {
        "error": {"code": "attachment", "message": f"{tmp_path / 'missing.txt'}: no such file", "hint": ""}
    }


@pytest.mark.parametrize("binding", ["jsonrpc", "http+json"])
def test_save_dir_writes_the_reply_parts(run, both, tmp_path, binding):
    out = tmp_path / "saved"
    r = run("send", "--url", both.url + "/", "--binding", binding, "--save-dir", str(out), "send me a file")
    assert r.rc == 0, r.err
    assert (out / REPORT_NAME).read_bytes() == REPORT_BYTES
    saved_data = json.loads((out / "data-3.json").read_text())
    assert saved_data == {"received": [], "count": 0}
    assert f"    file {REPORT_NAME} · text/plain · 720 B -> saved to {out / REPORT_NAME}" in r.lines
    assert "    file chart.png · image/png · https://files.example/chart.png" in r.lines
    assert r.err.startswith("rewindtui: note: not saved: chart.png is a link") or "not saved" in r.err
    # saving again never overwrites
    r = run("send", "--url", both.url + "/", "--binding", binding, "--save-dir", str(out), "send me a file")
    assert (out / f"{Path(REPORT_NAME).stem} (1).txt").read_bytes() == REPORT_BYTES


def test_card_of_the_embedded_server(run, server):
    r = run("card", "--json", "--url", server.agent_url)
    assert r.rc == 0, r.err
    record = json.loads(r.out)
    assert record["usable"] and record["binding"] == "JSONRPC" and record["dialect"] == "1.0"
    assert record["endpoint"] == server.agent_url and record["rewind"] == "a2a"
    assert record["card"]["name"] == "demo" and record["warnings"] == []
    text = run("card", "--url", server.agent_url)
    assert text.lines[0] == "Agent" and "Interfaces" in text.lines
    assert any("JSONRPC 1.0 (used)" in line for line in text.lines)
    assert any("HTTP+JSON 1.0" in line for line in text.lines)
    assert any("urn:rewindtui:ext:rewind:v1  rewindtui's rewind extension: " in line for line in text.lines)
    assert any("example" in line and "weather in Tokyo" in line for line in text.lines)
    rest = json.loads(run("card", "--json", "--url", server.agent_url, "--binding", "http+json").out)
    assert rest["binding"] == "HTTP+JSON" and rest["endpoint"] == server.agent_url.rstrip("/")


def test_card_that_contradicts_itself(run):
    card = card_json_10("soap.example:443", binding="SOAP")
    card["capabilities"] = {"streaming": True, "extensions": [{"uri": "urn:x:required", "required": True}]}
    card["securityRequirements"] = [{"schemes": {"oauth": {"list": []}}}]
    del card["skills"]
    with ServeInThread(card_only_app(card)) as served:
        r = run("card", "--json", "--url", served.url + "/")
        plain = run("card", "--url", served.url + "/")
    assert r.rc == 0, r.err
    record = json.loads(r.out)
    assert not record["usable"] and "offers no interface rewindtui can use" in record["problem"]
    assert "no skills" in record["warnings"]
    assert "requires extension urn:x:required, which rewindtui does not implement" in record["warnings"]
    assert "security requirement names scheme 'oauth', which securitySchemes does not declare" in record["warnings"]
    assert "Warnings" in plain.lines and plain.lines[-1].startswith("rewindtui cannot use this agent: ")


def test_errors_are_printed_once_and_structured_with_json(run, server, tmp_path):
    # a session id that tries to climb out of its route is just an unknown session
    r = run("history", "--json", *embedded(server), "--session", "../../x")
    assert r.rc == 1 and r.err == "" and len(r.lines) == 1  # the error is the one JSON object on stdout
    assert json.loads(r.out)["error"]["code"] == "not-found"
    # usage: nothing to send
    r = run("send", "--json", *embedded(server))
    assert r.rc == 2 and json.loads(r.out)["error"] == {
        "code": "usage",
        "message": "nothing to send: give TEXT, --file or --data",
        "hint": "",
    }
    # argparse's own complaints
    r = run("send", "--json", "--no-such-flag", "x")
    assert r.rc == 2 and json.loads(r.out)["error"]["code"] == "usage"
    r = run("send", "--no-such-flag", "x")
    assert r.rc == 2 and r.err.count("rewindtui: error:") == 1 and r.err.startswith("usage: rewindtui")
    # settings: a secret variable that is not set
    r = run("send", "--json", "--url", "http://127.0.0.1:9/", "--bearer-env", "NO_SUCH_VARIABLE", "x")
    assert r.rc == 2 and json.loads(r.out)["error"]["code"] == "settings"
    # connect: one line, hint apart in JSON
    r = run("send", "--json", "--url", "http://127.0.0.1:9/a2a/", "hi")
    error = json.loads(r.out)["error"]
    assert r.rc == 1 and error["code"] == "connect" and "cannot reach the agent" in error["message"]
    assert "is the server running?" in error["hint"] and r.err == "" and len(r.lines) == 1
    r = run("send", "--url", "http://127.0.0.1:9/a2a/", "hi")
    assert r.err.count("\n") == 1 and "is the server running?" in r.err


def test_secrets_never_printed(run, tmp_path, monkeypatch):
    from test_auth import SECRET, _guarded_app

    monkeypatch.setenv("MY_TOKEN", SECRET)
    card = card_json_10("http://placeholder/")
    with ServeInThread(_guarded_app(card)) as served:
        card["supportedInterfaces"][0]["url"] = served.url + "/"
        r = run("send", "--json", "--url", served.url + "/", "--bearer-env", "MY_TOKEN", "hi")
        plain = run("send", "--url", served.url + "/", "--bearer-env", "MY_TOKEN", "hi")
    assert r.rc == 1 and SECRET not in r.err + r.out and SECRET not in plain.err + plain.out
    error = json.loads(r.out.splitlines()[-1])["error"]  # send streams its session line first; the error ends it
    assert error["code"] == "refused" and "***" in error["message"]
    assert plain.err.count("\n") == 1 and "sent: bearer token from $MY_TOKEN" in plain.err
