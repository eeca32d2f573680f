"""The ADK agent served by the embedded server: an ``LlmAgent`` named ``demo``.

Model selection (``--model NAME`` / ``EmbeddedServer(model=...)``):

* ``None``, ``""`` or ``"demo"`` -- the offline deterministic :class:`DemoLlm`
  (no key, no network). This is the default.
* ``"demo-slow"`` -- the same model, streaming its answer a few words every quarter second
  (to watch a reply stream in, stop it, or cut it).
* ``"<provider>/<model>"`` -- LiteLLM's model id, e.g. ``openai/gpt-4o-mini``,
  ``anthropic/claude-sonnet-4-5``, ``gemini/gemini-2.5-flash``, ``ollama_chat/llama3.2``
  (``litellm/<provider>/<model>`` is the same): ADK's ``LiteLlm`` wrapper. Needs the ``models``
  extra (``pip install 'rewindtui[models]'``) and that provider's usual environment variables
  (``OPENAI_API_KEY``, ...); ``ModelOptions`` gives the endpoint, timeout and retries.
* anything else (no ``/``) -- handed to ADK's model registry as is, e.g.
  ``gemini-2.5-flash`` (set ``GOOGLE_API_KEY``, or the Vertex AI variables
  ``GOOGLE_GENAI_USE_VERTEXAI``/``GOOGLE_CLOUD_PROJECT``/``GOOGLE_CLOUD_LOCATION``).

The real-model paths run exactly the code the demo model runs (same agent,
tool, runner, session service, rewind); only the model differs.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.tool_context import ToolContext

from rewindtui.server.agent import contents_memo, quiet_logs
from rewindtui.server.agent.demo_model import DEMO_MODEL_NAME, SLOW_DEMO_DELAY, SLOW_DEMO_MODEL_NAME, DemoLlm
from rewindtui.server.agent.model_errors import MODEL_ERROR_CODE, describe
from rewindtui.server.agent.model_options import ModelOptions, model_problem, offline_price_list
from rewindtui.server.shared.paths import AGENT_NAME

LITELLM_PREFIX = "litellm/"

INSTRUCTION = (
    "You are a friendly assistant inside a terminal chat client. "
    "When the user asks about the weather, call get_weather with the city. "
    "When the user asks to delete a file, call delete_file with its name; it asks the user "
    "to approve first. "
    "Session state: weather_calls={weather_calls?}"
)
#: session state: the files ``delete_file`` was allowed to delete, in order
DELETED_KEY = "deleted_files"


class ModelConfigError(ValueError):
    """The requested model id cannot be used (e.g. litellm is not installed)."""


def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """Returns the current weather for a city.

    Args:
        city: The city name, e.g. "Tokyo".

    Each call increments the session state value ``weather_calls``; the
    returned dict reports which call this was.
    """
    calls = int(tool_context.state.get("weather_calls") or 0) + 1
    tool_context.state["weather_calls"] = calls
    return {"city": city, "forecast": "sunny", "temp_c": 21, "call_no": calls}


def delete_file(name: str, tool_context: ToolContext) -> dict[str, Any]:
    """Deletes a file (in the session's state only: nothing on disk is touched).

    Args:
        name: The file's name, e.g. "notes.txt".

    Asks the user to approve first (ADK's tool confirmation: the turn waits, ``input-required``,
    until the user answers). Approved, the name is added to the session state value
    ``deleted_files``; rejected, nothing changes.
    """
    confirmation = tool_context.tool_confirmation
    if confirmation is None:
        tool_context.request_confirmation(hint=f"Delete {name}?", payload={"name": name})
        return {"status": "waiting for approval", "name": name}
    if not confirmation.confirmed:
        return {"status": "rejected", "name": name, "deleted_files": list(tool_context.state.get(DELETED_KEY) or [])}
    deleted = [*list(tool_context.state.get(DELETED_KEY) or []), name]
    tool_context.state[DELETED_KEY] = deleted
    return {"status": "deleted", "name": name, "deleted_files": deleted}


def litellm_id(name: str) -> str | None:
    """The LiteLLM model id ``name`` asks for (None: not a LiteLLM model)."""
    if name.startswith(LITELLM_PREFIX):
        return name[len(LITELLM_PREFIX) :]
    return name if "/" in name else None


def resolve_model(name: str | None, demo_delay: float = 0.0, options: ModelOptions | None = None) -> BaseLlm | str:
    """The ADK model object (or registry id) for ``name``; see the module docstring."""
    if not name or name == DEMO_MODEL_NAME:
        return DemoLlm(delay=demo_delay)
    if name == SLOW_DEMO_MODEL_NAME:
        return DemoLlm(delay=demo_delay or SLOW_DEMO_DELAY)
    model_id = litellm_id(name)
    if model_id is None:
        return name
    problem = model_problem(name if name.startswith(LITELLM_PREFIX) else model_id)
    if problem is not None:
        raise ModelConfigError(problem)
    offline_price_list()
    try:
        import litellm  # noqa: F401  (ADK imports it lazily: say now that it is missing)
        import mcp  # noqa: F401  (ADK's LiteLLM path needs it at the first request)
        from google.adk.models.lite_llm import LiteLlm
    except ImportError as exc:
        raise ModelConfigError(
            f"model {name!r} needs the models extra ({exc.name} is missing): pip install 'rewindtui[models]'"
        ) from exc
    options = options or ModelOptions()
    from litellm import RetryPolicy

    # retry what may pass (a rate limit, a provider's 5xx); never what cannot (a bad key, an
    # unknown model, a bad request) nor a timeout (each try may take model_timeout again)
    never = 0
    policy = RetryPolicy(
        BadRequestErrorRetries=never,
        AuthenticationErrorRetries=never,
        NotFoundErrorRetries=never,
        ContentPolicyViolationErrorRetries=never,
        TimeoutErrorRetries=never,
        RateLimitErrorRetries=options.retries,
        InternalServerErrorRetries=options.retries,
        ServiceUnavailableErrorRetries=options.retries,
    )
    extra: dict[str, Any] = {"timeout": options.timeout, "num_retries": options.retries, "retry_policy": policy}
    if options.base_url:
        extra["api_base"] = options.base_url
    return LiteLlm(model=model_id, **extra)


class ModelErrorSayer:
    """ADK's ``on_model_error_callback``: a model failure we know becomes an error response whose
    message is one sentence in the user's words (:mod:`model_errors`); others go on as raised."""

    def __init__(self, model: str, timeout: float | None) -> None:
        self.model = model
        self.timeout = timeout

    def __call__(
        self, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        sentence = describe(error, model=self.model, timeout=self.timeout)
        if sentence is None:
            return None
        return LlmResponse(error_code=MODEL_ERROR_CODE, error_message=sentence)


def build_agent(model: str | None = None, demo_delay: float = 0.0, options: ModelOptions | None = None) -> LlmAgent:
    """The ``demo`` agent with its ``get_weather`` and ``delete_file`` tools."""
    options = options or ModelOptions()
    contents_memo.install()  # ADK's request contents from the events a call adds (same answer)
    quiet_logs.install()  # no per-content log record built when no logger provider can receive it
    return LlmAgent(
        name=AGENT_NAME,
        model=resolve_model(model, demo_delay, options),
        description="rewindtui's local agent (offline demo model unless --model is given)",
        instruction=INSTRUCTION,
        tools=[get_weather, delete_file],
        on_model_error_callback=ModelErrorSayer(model or DEMO_MODEL_NAME, options.timeout),
    )
