"""Model settings from the config file to the server's command line; the sentences for errors
given as plain exceptions (no network)."""

from __future__ import annotations

import email.utils
import time
from pathlib import Path

import pytest

from rewindtui.chat.retry import retry_target
from rewindtui.config.connection import model_options
from rewindtui.config.settings import SettingsError, load_settings
from rewindtui.server.agent.model_errors import describe, retry_after
from rewindtui.server.agent.model_options import ModelOptions, model_problem
from rewindtui.server.process.spawn import server_command


def test_model_settings_from_the_file_reach_the_server_command(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'model = "openai/gpt-4o-mini"\nmodel_base_url = "http://localhost:8000/v1"\n'
        "model_timeout = 45\nstall_timeout = 12.5\n"
    )
    settings = load_settings({"config": str(config)}, env={})
    assert settings.model == "openai/gpt-4o-mini" and settings.model_timeout == 45.0 and settings.stall_timeout == 12.5
    options = model_options(settings)
    assert options == ModelOptions(base_url="http://localhost:8000/v1", timeout=45.0, stall_timeout=12.5)
    cmd = server_command(tmp_path, model=settings.model, model_options=options)
    assert cmd[cmd.index("--model") + 1] == "openai/gpt-4o-mini"
    assert cmd[cmd.index("--model-base-url") + 1] == "http://localhost:8000/v1"
    assert cmd[cmd.index("--model-timeout") + 1] == "45" and cmd[cmd.index("--stall-timeout") + 1] == "12.5"
    # flags win over the file
    assert load_settings({"config": str(config), "model_timeout": "9"}, env={}).model_timeout == 9.0


@pytest.mark.parametrize("bad", ["0", "-3", "soon"])
def test_a_bad_timeout_is_refused(bad: str) -> None:
    with pytest.raises(SettingsError, match="REWINDTUI_MODEL_TIMEOUT: expected a positive number of seconds"):
        load_settings({}, env={"REWINDTUI_MODEL_TIMEOUT": bad})


def test_model_problem() -> None:
    assert model_problem(None) is None and model_problem("demo") is None and model_problem("gemini-2.5-flash") is None
    assert model_problem("openai/gpt-4o-mini") is None  # litellm and mcp are installed for the tests
    assert "expected PROVIDER/MODEL" in (model_problem("openai/") or "")


class FakeRateLimit(Exception):
    def __init__(self, headers: dict[str, str]) -> None:
        super().__init__("Rate limit reached")
        self.status_code = 429
        self.headers = headers


def test_retry_after_in_seconds_milliseconds_and_dates() -> None:
    assert retry_after(FakeRateLimit({"Retry-After": "12"})) == 12.0
    assert retry_after(FakeRateLimit({"retry-after-ms": "1500"})) == 1.5
    when = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 55 <= (retry_after(FakeRateLimit({"Retry-After": when})) or 0) <= 61
    assert retry_after(FakeRateLimit({})) is None
    assert describe(FakeRateLimit({})) == (
        "The model provider is rate-limiting this key or its quota is used up (HTTP 429); try again later."
    )


def test_an_unknown_error_is_left_alone() -> None:
    assert describe(ValueError("something else")) is None


def test_retry_target_needs_a_failed_last_turn() -> None:
    class Item:
        def __init__(self, role: str, text: str, kind: str = "message", task_id: str = "t1") -> None:
            self.role, self.text, self.task_id = role, text, task_id
            self.kind = type("K", (), {"value": kind})()
            self.invocation_id = "e-1" if role == "user" else None
            self.message_ids = ["m-1"] if role == "user" else []

    class Conv:
        turn_state = "failed"
        items = [Item("user", "hello"), Item("system", "The model failed.", "error")]

    target = retry_target(Conv())
    assert target is not None and (target.text, target.invocation_id, target.certain) == ("hello", "e-1", True)
    Conv.turn_state = "completed"
    assert retry_target(Conv()) is None
    Conv.turn_state = "idle"  # read back from the server: the error line says it, the server confirms
    idle = retry_target(Conv())
    assert idle is not None and idle.certain is False and idle.task_id == "t1"
