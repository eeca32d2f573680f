"""An app whose conversation is built from the real captures, for snapshot and Pilot tests that
need fixed content (no server: the screens must not depend on generated ids or timing)."""

from __future__ import annotations

from captures import load
from rewindtui.a2a.dialect import Dialect
from rewindtui.chat import Chat
from rewindtui.client.a2a_client import A2AClient, Capabilities, ServerConfig, parse_frame
from rewindtui.tui.app import RewindApp

TURNS = ["02_turn_plain_text", "03_turn_with_tool_call", "04_turn_three"]


def capabilities(rewind: bool = True) -> Capabilities:
    return Capabilities(
        name="echo_agent",
        dialect=Dialect.V03,
        rewind_modes=("a2a",) if rewind else (),
        fork=rewind,
        api=None,
    )


def replay(chat: Chat, name: str, limit: int | None = None) -> None:
    """Send the capture's request message and apply its response frames (the first ``limit``)."""
    capture = load(f"kagent-0.10.4/{name}.txt")
    conv = chat.conversation
    conv.add_user_message(capture.request["params"]["message"])
    for data in capture.data_lines[:limit]:
        conv.apply(parse_frame(data))


def offline_chat(turns: list[str] | None = None, *, rewind: bool = True) -> Chat:
    client = A2AClient(ServerConfig(url="http://127.0.0.1:9/api/a2a/local/demo/"))
    client.capabilities = capabilities(rewind)
    chat = Chat(client)
    chat.conversation.session_id = "s1"
    for name in TURNS if turns is None else turns:
        replay(chat, name)
    return chat


def offline_app(chat: Chat | None = None) -> RewindApp:
    app = RewindApp(chat=chat or offline_chat(), live=False)  # no server to follow
    app.animation_level = "none"
    return app
