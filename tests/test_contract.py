"""The rewind wire contract (``rewindtui.a2a.contract``) is the one place both sides read.

These tests pin the contract's values (a change here is a protocol change: bump the extension
URI), and check that the client and the embedded server both follow it rather than spellings of
their own: the server's card advertises it, the client reads the card's params, honours the
``metadata_key`` a card names, and recognises the effective-history flag.
"""

from __future__ import annotations

import ast
from pathlib import Path

from rewindtui.a2a import contract
from rewindtui.a2a.classify import classify
from rewindtui.client.a2a_client import A2AClient, ServerConfig, capabilities_from_card
from rewindtui.model import Conversation

SRC = Path(__file__).resolve().parents[1] / "src" / "rewindtui"


def test_contract_values_are_the_published_protocol() -> None:
    assert contract.EXTENSION_URI == "urn:rewindtui:ext:rewind:v1"
    assert contract.REWIND_METADATA_KEY == "kagent_rewind_before_invocation_id"
    assert contract.EFFECTIVE_HISTORY_KEY == "rewindtui_effective_history"
    assert contract.REST_REWIND.format(id="S") == "/sessions/S/rewind"
    assert contract.REST_FORK.format(id="S") == "/sessions/S/fork"
    assert contract.REST_BEFORE_FIELD == "rewind_before_invocation_id"


def test_contract_module_is_pure_data() -> None:
    """No imports: the kagent add-on's tests read this file without importing rewindtui."""
    tree = ast.parse((SRC / "a2a" / "contract.py").read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def test_protocol_literals_live_only_in_the_contract() -> None:
    """No module but the contract spells the protocol's names out (a drift would hide there)."""
    literals = {
        contract.EXTENSION_URI,
        contract.REWIND_METADATA_KEY,
        contract.EFFECTIVE_HISTORY_KEY,
        contract.REWOUND_BEFORE_KEY,
        contract.REWIND_INVOCATION_KEY,
        contract.ERROR_CODE_KEY,
        contract.REST_BEFORE_FIELD,
    }
    offenders = []
    for path in SRC.rglob("*.py"):
        if path.name == "contract.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in literals:
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value}")
    assert offenders == []


def _card(params: dict) -> dict:
    return {
        "name": "x",
        "protocolVersion": "0.3.0",
        "capabilities": {"extensions": [{"uri": contract.EXTENSION_URI, "params": params}]},
    }


def test_client_reads_the_extension_params() -> None:
    caps = capabilities_from_card(
        _card(
            {
                contract.PARAM_REWIND: [contract.MODE_REST],
                contract.PARAM_FORK: True,
                contract.PARAM_API: "http://h/api",
            }
        ),
        ServerConfig(url="http://h/"),
    )
    assert caps.rewind_modes == (contract.MODE_REST,)
    assert caps.fork and caps.api == "http://h/api"
    assert caps.metadata_key == contract.REWIND_METADATA_KEY


async def test_client_honours_the_cards_metadata_key() -> None:
    client = A2AClient(ServerConfig(url="http://h/"))
    try:
        client.capabilities = capabilities_from_card(
            _card({contract.PARAM_REWIND: [contract.MODE_A2A], contract.PARAM_METADATA_KEY: "other_rewind_key"}),
            client.config,
        )
        message = client.rewind_message("S", "e-1")
        assert message["metadata"] == {"other_rewind_key": "e-1"}
    finally:
        await client.aclose()


def test_effective_history_flag_replaces_the_whole_view() -> None:
    conv = Conversation("S")
    conv.load_tasks(
        [
            {"id": "t1", "history": [{"messageId": "a", "role": "user", "parts": [{"text": "one"}]}]},
            {"id": "t2", "history": [{"messageId": "b", "role": "user", "parts": [{"text": "two"}]}]},
        ]
    )
    event = classify(
        {
            "kind": "task",
            "id": "t3",
            "contextId": "S",
            "status": {"state": "completed"},
            "metadata": {contract.EFFECTIVE_HISTORY_KEY: True},
            "history": [{"messageId": "a", "role": "user", "parts": [{"text": "one"}]}],
        }
    )
    conv.apply(event)
    assert [item.text for item in conv.items] == ["one"]


def test_embedded_server_card_follows_the_contract() -> None:
    from rewindtui.server.http.card import agent_card_json, build_agent_card

    card = agent_card_json(build_agent_card(agent_url="http://h/a/", api_url="http://h/api", name="demo", model="demo"))
    caps = capabilities_from_card(card, ServerConfig(url="http://h/a/"))
    assert caps.rewind_modes == contract.MODES
    assert caps.fork and caps.api == "http://h/api"
    assert caps.metadata_key == contract.REWIND_METADATA_KEY


async def test_the_embedded_servers_rewind_answer_is_recognised_by_the_flag(tmp_path) -> None:
    """The fallback for unflagged answers must not hide a drift: against our own server (whose card
    advertises the extension) the answer is recognised by the contract's flag, and only by it."""
    from rewindtui.chat import Chat
    from rewindtui.server import EmbeddedServer

    with EmbeddedServer(tmp_path / "data") as srv:
        async with A2AClient(ServerConfig(url=srv.agent_url, api=srv.api_url)) as client:
            chat = Chat(client)
            await chat.open(None)
            for text in ("one", "two"):
                await chat.send(text)
            assert client.capabilities is not None and client.capabilities.advertised
            assert client.capabilities.rewind_mode == contract.MODE_A2A
            await chat.rewind(chat.conversation.turn_invocations()[1])
            assert chat.last_rewind_answer == "flag"
            assert [i.text for i in chat.conversation.items if i.role == "user"] == ["one"]


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def test_server_error_codes_are_the_contracts() -> None:
    """Every error of the server's service layer carries one of the contract's codes, and each code
    the contract names is some error's (a code spelled out by the server alone would drift)."""
    from rewindtui.server.shared.errors import ServiceError

    codes = {v for k, v in vars(contract).items() if k.startswith("CODE_")}
    used = {c.code for c in [ServiceError, *_subclasses(ServiceError)]}
    assert used - codes == set()
    assert codes - used == set()


ADDON_CONTRACT = SRC.parents[1] / "kagent-rewind" / "src" / "kagent_rewind" / "contract.py"


def test_addon_codes_match_the_contract_name_by_name() -> None:
    """The kagent-rewind add-on keeps its own copy of the codes (it installs without rewindtui):
    each one it defines is ours, under the same name, with the same value."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("addon_contract", ADDON_CONTRACT)
    assert spec is not None and spec.loader is not None
    addon = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(addon)
    theirs = {k: v for k, v in vars(addon).items() if k.startswith("CODE_")}
    assert theirs, "the add-on's contract defines no reason codes"
    assert {k: getattr(contract, k, None) for k in theirs} == theirs
