"""Fixtures for the real-model tests: an OpenAI-compatible test server on loopback and embedded
servers whose agent reaches it through LiteLLM (``--model openai/test-model``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))  # srvkit

from modelkit import KEY, model_server
from openai_double import OpenAIDouble
from srvkit import A2A, Api

from rewindtui.server import EmbeddedServer


@pytest.fixture(scope="module")
def double() -> Iterator[OpenAIDouble]:
    with OpenAIDouble() as served:
        yield served


@pytest.fixture(autouse=True)
def _fresh(request: pytest.FixtureRequest) -> None:
    if "double" in request.fixturenames:
        request.getfixturevalue("double").clear()


@pytest.fixture(scope="module")
def _api_key() -> Iterator[None]:
    """LiteLLM reads the provider key from the environment of the server's process (this one)."""
    old = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = KEY
    yield
    if old is None:
        os.environ.pop("OPENAI_API_KEY", None)
    else:
        os.environ["OPENAI_API_KEY"] = old


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, double: OpenAIDouble, _api_key: None) -> Iterator[EmbeddedServer]:
    """An embedded server on the test model: model timeout 2 s, stall timeout 30 s, no retries."""
    with model_server(tmp_path_factory.mktemp("model-server"), double, timeout=2.0, stall_timeout=30.0) as srv:
        yield srv


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client


@pytest.fixture
def a2a(server: EmbeddedServer, http: httpx.Client) -> A2A:
    return A2A(http, server.agent_url, "0.3")


@pytest.fixture
def api(server: EmbeddedServer, http: httpx.Client) -> Api:
    return Api(http, server.api_url)
