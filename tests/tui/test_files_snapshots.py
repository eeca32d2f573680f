"""Snapshots of files, data and the agent card: a file part, a data part (collapsed and shown
whole), the card view, and the composer with attachments waiting to go."""

from __future__ import annotations

import base64

from kit.offline import offline_app, offline_chat
from rewindtui.client.a2a_client import ServerConfig, capabilities_from_card
from rewindtui.client.attachments import DataAttachment, FileAttachment

SIZE = (100, 30)
URL = "http://127.0.0.1:9/api/a2a/local/demo/"

CARD = {
    "name": "demo",
    "description": "rewindtui's local agent (model: demo); rewind and fork supported",
    "version": "0.1.0",
    "provider": {"organization": "Example Org", "url": "https://example.org"},
    "supportedInterfaces": [
        {"url": URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": URL, "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"},
        {"url": URL, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        {"url": "grpc.internal:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
    ],
    "capabilities": {
        "streaming": True,
        "pushNotifications": False,
        "extensions": [
            {
                "uri": "urn:rewindtui:ext:rewind:v1",
                "description": "Rewind a session to before an invocation",
                "params": {"rewind": ["a2a", "rest"], "fork": True, "api": "http://127.0.0.1:9/api"},
            },
            {"uri": "https://example.org/ext/citations/v1", "description": "citations in metadata"},
        ],
    },
    "defaultInputModes": ["text"],
    "defaultOutputModes": ["text", "application/json"],
    "skills": [
        {
            "id": "chat",
            "name": "chat",
            "description": "Answers what you say",
            "tags": ["chat", "weather"],
            "examples": ["hello", "what is the weather in Tokyo?"],
        }
    ],
    "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
    "securityRequirements": [{"schemes": {"bearer": {"list": []}, "mtls": {"list": []}}}],
}


def _meta(invocation: str) -> dict:
    return {"adk_invocation_id": invocation, "adk_author": "demo"}


def files_chat(extra_agent_parts: list[dict]):
    """One turn: a user message with a file, and an agent reply with files or data."""
    chat = offline_chat([])
    picture = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(3000)).decode()
    task = {
        "id": "t1",
        "contextId": "s1",
        "status": {"state": "TASK_STATE_COMPLETED"},
        "metadata": {"adk_invocation_id": "e-1"},
        "history": [
            {
                "messageId": "u1",
                "role": "ROLE_USER",
                "parts": [
                    {"text": "what is in this picture?"},
                    {"raw": picture, "filename": "pixel.png", "mediaType": "image/png"},
                ],
            },
            {
                "messageId": "a1",
                "role": "ROLE_AGENT",
                "metadata": _meta("e-1"),
                "parts": [{"text": "Here is what I found."}, *extra_agent_parts],
            },
        ],
    }
    chat.conversation.load_tasks([task])
    return chat


FILES = [
    {"raw": base64.b64encode(b"col,a\n1,2\n" * 300).decode(), "filename": "table.csv", "mediaType": "text/csv"},
    {"url": "https://files.example/report.pdf", "filename": "report.pdf", "mediaType": "application/pdf"},
    {"raw": base64.b64encode(bytes(2_500_000)).decode(), "mediaType": "application/octet-stream"},
]
DATA = [
    {
        "data": {
            "city": "Tokyo",
            "forecast": [{"day": d, "high_c": 20.0 + d, "rain": d % 2 == 0} for d in range(1, 4)],
            "source": "demo",
        }
    }
]


def test_file_part(snap_compare):
    assert snap_compare(offline_app(files_chat(FILES)), terminal_size=SIZE)


def test_data_part(snap_compare):
    assert snap_compare(offline_app(files_chat(DATA)), terminal_size=SIZE)


def test_data_part_shown_whole(snap_compare):
    app = offline_app(files_chat(DATA))

    async def expand(pilot):
        await pilot.pause()
        # no public path draws this same screen: alt+up alt+t Esc leaves the scrollbar elsewhere, a
        # click moves the focus
        app.chat_screen.transcript._act("tools", app.chat_screen.chat.conversation.items[-1].key)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=expand)


def test_card_view(snap_compare):
    chat = offline_chat()
    chat.client.capabilities = capabilities_from_card(CARD, ServerConfig(url=URL), URL)
    app = offline_app(chat)

    async def open_card(pilot) -> None:
        await pilot.press("f3")
        await pilot.pause()
        await app.workers.wait_for_complete()  # the signature check (no network: the card is not signed)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 40), run_before=open_card)


def test_composer_with_attachments(snap_compare):
    app = offline_app()

    async def attach(pilot):
        await pilot.pause()
        bar = app.chat_screen.files.bar
        bar.add(FileAttachment(name="notes.md", media_type="text/markdown", data=b"# notes\n" * 100))
        bar.add(FileAttachment(name="paper.pdf", media_type="application/pdf", url="https://example.test/paper.pdf"))
        bar.add(DataAttachment({"priority": 2}))
        app.chat_screen.composer.text = "please read these"
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=attach)
