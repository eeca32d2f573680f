"""The front's card (rendered without a2a-sdk) is the card the full app renders with a2a-sdk."""

from __future__ import annotations

import pytest

from rewindtui.server.agent.demo_model import DEMO_MODEL_NAME
from rewindtui.server.http.card import agent_card_json, build_agent_card
from rewindtui.server.http.front_card import plain_agent_card


@pytest.mark.parametrize("needs_token", [False, True])
@pytest.mark.parametrize("users", [False, True])
@pytest.mark.parametrize("model", [DEMO_MODEL_NAME, "openai/gpt-4o-mini"])
def test_plain_card_is_a2a_sdks_card(needs_token: bool, users: bool, model: str) -> None:
    where = {"agent_url": "http://127.0.0.1:8123/api/a2a/local/demo/", "api_url": "http://127.0.0.1:8123/api"}
    expected = agent_card_json(
        build_agent_card(**where, name="demo", model=model, needs_token=needs_token, users=users)
    )
    plain = plain_agent_card(**where, name="demo", model=model, needs_token=needs_token, users=users)
    assert plain == expected
    assert list(plain) == list(expected)  # the same order of fields, too
