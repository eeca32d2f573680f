"""Helpers of the real-model tests: the model id and an embedded server pointed at the test server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openai_double import OpenAIDouble

from rewindtui.server import EmbeddedServer
from rewindtui.server.agent.model_options import ModelOptions
from rewindtui.server.http.options import ServerOptions

MODEL = "openai/test-model"
KEY = "sk-test-key"


def model_server(data_dir: Path, double: OpenAIDouble, **model: Any) -> EmbeddedServer:
    """An embedded server whose agent reaches ``double`` through LiteLLM (no retries unless asked)."""
    options = ServerOptions(model=ModelOptions(base_url=double.url, **{"retries": 0, **model}))
    return EmbeddedServer(data_dir, model=MODEL, options=options)
