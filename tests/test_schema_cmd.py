"""``rewindtui schema``: every command and argument of the parser, the --json records it names
match the functions that write them, and docs/cli.md's reference section is its --markdown."""

from __future__ import annotations

import json
from pathlib import Path

from rewindtui.cli.schema_cmd import OUTPUT, RECORDS, markdown, schema

DOCS = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def walk(commands):
    for c in commands:
        yield c
        yield from walk(c.get("actions", []))


def test_docs_cli_reference_is_the_schema():
    text = DOCS.read_text()
    assert "\n## Reference\n\n" in text, "docs/cli.md has no generated reference section"
    section = text.split("\n## Reference\n\n", 1)[1]
    assert section == markdown(), "docs/cli.md's reference is stale: regenerate it with `rewindtui schema --markdown`"


def test_every_command_and_option_of_the_parser_is_there(capsys):
    from rewindtui.cli.main import main

    assert main(["schema"]) == 0
    doc = json.loads(capsys.readouterr().out)
    names = {c["name"] for c in walk(doc["commands"])}
    assert {"send", "history", "task get", "task list", "push receive", "agents add", "card", "schema"} <= names
    card = next(c for c in doc["commands"] if c["name"] == "card")
    assert {"--json", "--extended", "--validate", "--card-keys"} <= {a["name"] for a in card["arguments"]}
    assert "--url" in {a["name"] for a in doc["connection_options"]}
    for c in walk(doc["commands"]):
        if any(a["name"] == "--json" for a in c.get("arguments", [])):
            assert c["name"] in OUTPUT, f"{c['name']} takes --json but its output is not described"
    for shapes in OUTPUT.values():
        for shape in shapes:
            name = shape.split("*")[0].split(" ")[0]
            assert name.startswith("(") or name in RECORDS, shape


def test_the_records_are_what_the_code_writes():
    from rewindtui.a2a.push_wire import flat_config
    from rewindtui.client.a2a_client import Session
    from rewindtui.config.saved_agents import SavedAgent
    from rewindtui.model.items import Item, ItemKind
    from rewindtui.output.render_text import item_record, session_record

    item = Item(ItemKind.MESSAGE, "k", role="agent", text="hi")
    assert set(item_record(item)) == set(RECORDS["message"])
    assert set(session_record(Session("s"))) == set(RECORDS["session"])
    config = flat_config(
        {"taskId": "t", "id": "c", "url": "http://h/", "token": "x", "authentication": {"scheme": "Bearer"}}
    )
    assert set(config or {}) == set(RECORDS["push_config"])
    agent = SavedAgent("n", "http://h/", "GRPC", "1.0", "p")
    assert set(agent.record()) == set(RECORDS["saved_agent"])
    from rewindtui.kagent1.gen import kagent1_pb2 as pb
    from rewindtui.kagent1.records import checkpoint_record, share_record

    assert set(checkpoint_record(pb.Checkpoint(id="c"))) == set(RECORDS["kagent_checkpoint"])
    assert set(share_record(pb.SessionShare(id="s"))) | {"token"} == set(RECORDS["kagent_share"])


def test_schema_is_json_and_names_exit_statuses():
    doc = schema()
    assert json.loads(json.dumps(doc)) == doc
    assert set(doc["exit_status"]) == {"0", "1", "2", "130"}
