"""How the embedded server talks to a real model: endpoint, timeouts, retries (stdlib only).

``serve`` reads them from its command line (``--model-base-url``, ``--model-timeout``,
``--stall-timeout``, ``--model-retries``); ``spawn`` writes that command line from the app's
settings (``model_base_url``, ``model_timeout``, ``stall_timeout`` in the config file, the
environment or flags).

* ``timeout`` -- seconds one model request may take (LiteLLM's ``timeout``; its own default is
  6,000 s). A request that takes longer fails the turn: "The model did not answer within …".
* ``stall_timeout`` -- seconds a turn may go without any event from the agent (a streamed delta,
  a tool call, a tool result) before it fails: "The model stopped sending for … s".
* ``retries`` -- how many times LiteLLM retries a request that failed for a reason worth retrying
  (rate limit, a 5xx, a dropped connection).
* ``base_url`` -- an OpenAI-compatible endpoint (LiteLLM's ``api_base``), e.g. a local vLLM,
  LM Studio or llama.cpp server.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass

#: the offline demo model's name (here, light, for those that name it without loading google-adk)
DEMO_MODEL_NAME = "demo"
DEFAULT_MODEL_TIMEOUT = 300.0
DEFAULT_STALL_TIMEOUT = 120.0
DEFAULT_MODEL_RETRIES = 2
#: LiteLLM fetches its price list from the network when imported unless this is set
LOCAL_COST_MAP_ENV = "LITELLM_LOCAL_MODEL_COST_MAP"


@dataclass(frozen=True)
class ModelOptions:
    base_url: str | None = None
    timeout: float = DEFAULT_MODEL_TIMEOUT
    stall_timeout: float = DEFAULT_STALL_TIMEOUT
    retries: int = DEFAULT_MODEL_RETRIES

    def args(self) -> list[str]:
        """``serve`` options giving these (the defaults left out)."""
        out: list[str] = []
        if self.base_url:
            out += ["--model-base-url", self.base_url]
        if self.timeout != DEFAULT_MODEL_TIMEOUT:
            out += ["--model-timeout", f"{self.timeout:g}"]
        if self.stall_timeout != DEFAULT_STALL_TIMEOUT:
            out += ["--stall-timeout", f"{self.stall_timeout:g}"]
        if self.retries != DEFAULT_MODEL_RETRIES:
            out += ["--model-retries", str(self.retries)]
        return out


def model_problem(name: str | None) -> str | None:
    """Why the model id ``name`` cannot be used here (None: it can), found without importing the
    model libraries: a ``PROVIDER/MODEL`` id needs the ``models`` extra."""
    if not name or "/" not in name:
        return None
    model_id = name.removeprefix("litellm/")
    if not model_id.strip("/") or model_id.startswith("/") or model_id.endswith("/"):
        return f"model {name!r}: expected PROVIDER/MODEL, e.g. openai/gpt-4o-mini"
    for module in ("litellm", "mcp"):
        if importlib.util.find_spec(module) is None:
            return f"model {name!r} needs the models extra ({module} is missing): pip install 'rewindtui[models]'"
    return None


def offline_price_list() -> None:
    """Keep LiteLLM from fetching its price list at import (it blocks start-up offline)."""
    os.environ.setdefault(LOCAL_COST_MAP_ENV, "True")
