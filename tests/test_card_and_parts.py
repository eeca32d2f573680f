"""Pure pieces: reading a card's interfaces (both card shapes) and choosing one, its security
schemes and warnings; file and data parts in both dialects; names from senders made safe."""

from __future__ import annotations

import asyncio
import base64

import pytest

from rewindtui.a2a.card import NoUsableInterface, card_warnings, choose_interface, interfaces, wanted_schemes
from rewindtui.a2a.dialect import Dialect
from rewindtui.a2a.parts import b64_size, data_part, file_part, part_bytes, part_info, tidy_json
from rewindtui.client.attachments import safe_name, save_parts
from rewindtui.client.transports.base import rest_error
from rewindtui.client.transports.http import segment

HERE = "http://agent.test/a2a/"


def card_03(preferred: str = "JSONRPC", additional: list | None = None, url: str = HERE) -> dict:
    card = {
        "name": "x",
        "description": "d",
        "version": "1",
        "protocolVersion": "0.3.0",
        "url": url,
        "preferredTransport": preferred,
    }
    if additional is not None:
        card["additionalInterfaces"] = additional
    return card


def test_0_3_cards_prefer_their_preferred_transport():
    card = card_03("GRPC", [{"url": "grpc.test:1", "transport": "GRPC"}, {"url": HERE, "transport": "JSONRPC"}])
    assert [i.binding for i in interfaces(card)] == ["GRPC", "GRPC", "JSONRPC"]
    choice = choose_interface(card, HERE)
    assert (choice.binding, choice.dialect, choice.url) == ("JSONRPC", Dialect.V03, HERE)
    # 0.3 over HTTP+JSON is not spoken: a 0.3 card offering only it is a clear error
    with pytest.raises(NoUsableInterface, match="HTTP\\+JSON 0.3.0 at"):
        choose_interface(card_03("HTTP+JSON"), HERE)


def test_1_0_cards_order_versions_and_origins():
    card = {
        "supportedInterfaces": [
            {"url": "http://inside.cluster:8080/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "http://inside.cluster:8080/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": HERE + "rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ]
    }
    choice = choose_interface(card, HERE)
    assert (choice.binding, choice.dialect) == ("JSONRPC", Dialect.V10)  # 1.0 over 0.3 within a binding
    assert choice.url == HERE and "another origin" in choice.note  # the user's URL, where credentials go
    rest = choose_interface(card, HERE, binding="http+json")
    assert (rest.binding, rest.url) == ("HTTP+JSON", HERE + "rest")
    assert choose_interface(card, HERE, dialect=Dialect.V03).dialect is Dialect.V03
    only_grpc = {"supportedInterfaces": [{"url": "g:1", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]}
    assert (choose_interface(only_grpc, HERE).binding, choose_interface(only_grpc, HERE).url) == ("GRPC", "g:1")
    with pytest.raises(NoUsableInterface, match="offers no interface rewindtui can use"):
        choose_interface(
            {"supportedInterfaces": [{"url": "s:1", "protocolBinding": "SOAP", "protocolVersion": "1.0"}]}, HERE
        )
    # no interfaces at all: JSON-RPC where the card was read (what older agents expect)
    assert choose_interface({"name": "old"}, HERE).url == HERE


def test_schemes_and_warnings():
    card = {
        "securitySchemes": {
            "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
            "basic": {"type": "http", "scheme": "basic"},
            "tls": {"type": "mutualTLS"},
        },
        "security": [{"key": []}],
        "capabilities": {"streaming": True},
    }
    assert [s.name for s in wanted_schemes(card)] == ["key"]
    assert wanted_schemes(card)[0].option == "--api-key-env VAR --api-key-header X-Key"
    del card["security"]
    assert [s.kind for s in wanted_schemes(card)] == ["api-key", "basic", "mtls"]
    warnings = card_warnings(card, HERE)
    for expected in (
        "no name",
        "no skills",
        "no defaultInputModes",
        "streaming is claimed but no interface is given to stream on",
    ):
        assert expected in warnings
    other = {
        "name": "n",
        "description": "d",
        "version": "1",
        "skills": [{"id": "s", "name": "s"}],
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "supportedInterfaces": [{"url": HERE, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {
            "extensions": [
                {
                    "uri": "urn:rewindtui:ext:rewind:v1",
                    "params": {"rewind": ["rest"], "api": "http://elsewhere.test/api"},
                }
            ]
        },
    }
    assert card_warnings(other, HERE) == [
        "rewind extension api http://elsewhere.test/api is on another origin: your credentials are not sent there"
    ]


def test_file_and_data_parts_in_both_dialects():
    for dialect in (Dialect.V03, Dialect.V10):
        inline = file_part(dialect=dialect, name="a.bin", media_type="application/x", data=b"\x00\x01\x02\x03\x04")
        linked = file_part(dialect=dialect, name="b.pdf", media_type="application/pdf", url="https://x.test/b.pdf")
        info = part_info(inline)
        assert (info.kind, info.name, info.media_type, info.size, info.inline) == (
            "file",
            "a.bin",
            "application/x",
            5,
            True,
        )
        assert part_bytes(inline) == b"\x00\x01\x02\x03\x04"
        assert part_info(linked).url == "https://x.test/b.pdf" and part_info(linked).size is None
        assert part_bytes(linked) is None
        assert part_info(data_part({"a": 1}, dialect)).data == {"a": 1}
    assert data_part([1, 2], Dialect.V10) == {"data": [1, 2]}
    with pytest.raises(ValueError, match="A2A 0.3 data parts hold a JSON object"):
        data_part([1, 2], Dialect.V03)
    assert b64_size(base64.b64encode(bytes(1000)).decode()) == 1000
    assert tidy_json({"n": 1.0, "x": [2.5, 3.0]}) == {"n": 1, "x": [2.5, 3]}


def test_names_from_senders_are_made_safe(tmp_path):
    assert safe_name("../../.bashrc", "f") == "bashrc"
    assert safe_name("C:\\Windows\\evil.exe", "f") == "evil.exe"
    assert safe_name("\x1b[31mred\x07.txt", "f") == "_[31mred_.txt"
    assert safe_name("..", "fallback.bin") == "fallback.bin"
    parts = [
        {"raw": base64.b64encode(b"one").decode(), "filename": "../x.txt"},
        {"raw": base64.b64encode(b"two").decode(), "filename": "x.txt"},
        {"raw": "%%%not base64%%%", "filename": "broken.bin"},
        {"text": "not saved"},
    ]
    saved = asyncio.run(save_parts(parts, tmp_path))
    assert [p.name for p in saved.written] == ["x.txt", "x (1).txt"]
    assert (tmp_path / "x.txt").read_bytes() == b"one" and (tmp_path / "x (1).txt").read_bytes() == b"two"
    assert saved.skipped == ["broken.bin: its bytes are not valid base64"]
    assert len(list(tmp_path.iterdir())) == 2  # nothing outside the directory, nothing for the text


def test_segments_and_rest_errors():
    assert segment("../../x") == "..%2F..%2Fx" and segment("..") == "%2E%2E" and segment(".") == "%2E"
    assert segment("a b/c?d#e") == "a%20b%2Fc%3Fd%23e"
    body = {
        "error": {
            "code": 404,
            "status": "NOT_FOUND",
            "message": "Task not found",
            "details": [{"reason": "TASK_NOT_FOUND"}],
        }
    }
    assert rest_error(body, 404)["code"] == -32001
    assert rest_error({"error": {"message": "x"}}, 400)["code"] == -32602
    assert rest_error({"error": "plain"}, 500) is None
