"""``rewindtui card --validate``: the card against the A2A 1.0 schema (generated from a2a-sdk's
compiled a2a.proto) and the A2A 0.3.0 JSON schema; cards served by a2a-sdk's own servers pass,
broken ones fail with every problem at its JSON path and exit 1."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "a2a_servers"))

from binding_servers import card_json_10, card_only_app
from full_servers import full_app

from asgi_thread import ServeInThread
from clirun import isolate, runner
from rewindtui.output.card_validation import claimed_versions, validate


def test_the_shipped_10_schema_is_what_a2a_sdks_proto_makes():
    import generate_card_schema

    assert generate_card_schema.OUT.read_text() == generate_card_schema.text()


def broken_10() -> dict:
    card = card_json_10("http://127.0.0.1:1/")
    del card["skills"][0]["tags"]
    card["capabilities"]["streaming"] = "yes"
    del card["supportedInterfaces"][0]["protocolBinding"]
    card["surprise"] = 1
    return card


def test_every_problem_is_named_at_its_path():
    verdict = validate(broken_10())
    assert verdict.claimed == ["1.0"] and not verdict.ok and verdict.usable == {"1.0": False}
    errors = {(p.path, p.message) for p in verdict.errors}
    assert ("$.skills[0]", "'tags' is a required property") in errors
    assert ("$.supportedInterfaces[0]", "'protocolBinding' is a required property") in errors
    assert any(path == "$.capabilities.streaming" and "boolean" in message for path, message in errors)
    assert [(p.path, p.severity) for p in verdict.problems if p.path == "$.surprise"] == [("$.surprise", "warning")]


def test_a_03_card_is_checked_against_the_03_schema():
    from a2a_servers import card_03

    good = card_03("http://127.0.0.1:1/")
    assert claimed_versions(good) == ["0.3"]
    verdict = validate(good)
    assert verdict.ok and verdict.usable == {"0.3": True} and verdict.unclaimed["1.0"] >= 1
    bad = copy.deepcopy(good)
    del bad["url"]
    bad["skills"] = "echo"
    errors = {(p.path, p.message) for p in validate(bad).errors}
    assert ("$", "'url' is a required property") in errors
    assert any(path == "$.skills" and "array" in message for path, message in errors)


def test_not_a_card_at_all():
    assert not validate([1, 2]).ok
    assert not validate({}).ok and validate({}).errors[0].message.startswith("the card claims no A2A version")


@pytest.mark.slow
@pytest.mark.parametrize("only_03", [False, True])
def test_cards_of_a2a_sdk_servers_pass(only_03, tmp_path, monkeypatch, capsys):
    isolate(tmp_path, monkeypatch)
    served = ServeInThread(factory=lambda url: full_app(url + "/", only_03=only_03)).start()
    try:
        result = runner(capsys, "--url", served.url + "/")("card", "--validate", "--json")
    finally:
        served.stop()
    assert result.rc == 0, result.out
    validation = result.records()[0]["validation"]
    assert validation["valid"] and validation["usable_versions"] == (["0.3"] if only_03 else ["1.0", "0.3"])
    bindings = {(i["binding"], i["rewindtui"]) for i in validation["interfaces"]}
    assert bindings == ({("JSONRPC", True)} if only_03 else {("JSONRPC", True), ("HTTP+JSON", True), ("GRPC", True)})


@pytest.mark.slow
def test_a_broken_card_exits_1_with_its_problems(tmp_path, monkeypatch, capsys):
    isolate(tmp_path, monkeypatch)
    served = ServeInThread(card_only_app(broken_10())).start()
    try:
        run = runner(capsys, "--url", served.url + "/")
        text = run("card", "--validate")
        as_json = run("card", "--validate", "--json")
    finally:
        served.stop()
    assert text.rc == 1 and "validation: NOT valid (claims A2A 1.0)" in text.out
    assert "error (1.0) $.skills[0]: 'tags' is a required property" in text.out
    assert as_json.rc == 1 and not as_json.records()[0]["validation"]["valid"]
