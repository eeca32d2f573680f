"""A model's failure in the user's words: one sentence per kind of trouble.

The exceptions come from LiteLLM (OpenAI-style classes: ``AuthenticationError``, ``RateLimitError``,
...) or from google-genai (``ClientError`` / ``ServerError`` with a ``code``). They are told apart by
class name and HTTP status, so this module imports neither library.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Mapping
from typing import Any

from rewindtui.base.textsafe import sanitize_line

_DETAIL_LIMIT = 160
#: the ``error_code`` of a model failure already said in the user's words (``error_message``)
MODEL_ERROR_CODE = "REWINDTUI_MODEL_ERROR"


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _chain_names(exc: BaseException) -> set[str]:
    """Class names of the exceptions that led to ``exc`` (LiteLLM reports a refused connection as
    an ``InternalServerError`` caused by openai's ``APIConnectionError``)."""
    names: set[str] = set()
    seen: set[int] = set()
    cause: BaseException | None = exc.__cause__ or exc.__context__
    while cause is not None and id(cause) not in seen and len(seen) < 10:
        seen.add(id(cause))
        names |= _names(cause)
        cause = cause.__cause__ or cause.__context__
    return names


_TIMEOUTS = {"Timeout", "APITimeoutError", "ReadTimeout", "TimeoutException", "ServerTimeoutError", "TimeoutError"}


def _timed_out(exc: BaseException, names: set[str]) -> bool:
    """A request that took too long (mid-stream too: LiteLLM then raises a
    ``MidStreamFallbackError`` caused by httpx's ``ReadTimeout``)."""
    return bool(_TIMEOUTS & (names | _chain_names(exc)))


def _network(exc: BaseException, names: set[str]) -> bool:
    if {"APIConnectionError", "ConnectError", "ConnectionError"} & (names | _chain_names(exc)):
        return True
    return isinstance(exc, ConnectionError) or "connection error" in str(exc).lower()


def _status(exc: BaseException) -> int | None:
    for attr in ("status_code", "code", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and 100 <= value <= 599:
            return value
    return None


def _headers(exc: BaseException) -> Mapping[str, str]:
    for attr in ("litellm_response_headers", "headers"):
        value = getattr(exc, attr, None)
        if isinstance(value, Mapping) and value:
            return value
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    return headers if isinstance(headers, Mapping) else {}


def retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked us to wait (``Retry-After``: seconds or an HTTP date), if it said."""
    headers = {str(k).lower(): str(v) for k, v in _headers(exc).items()}
    raw = headers.get("retry-after") or headers.get("retry-after-ms")
    if raw is None:
        return None
    try:
        seconds = float(raw)
        return seconds / 1000 if "retry-after" not in headers else seconds
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _detail(exc: BaseException) -> str:
    text = sanitize_line(str(exc)) or type(exc).__name__
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 1] + "…"


def _reason(exc: BaseException) -> str:
    """The innermost cause's words (e.g. "All connection attempts failed"), else ``exc``'s."""
    inner: BaseException = exc
    seen: set[int] = set()
    while (inner.__cause__ or inner.__context__) is not None and id(inner) not in seen and len(seen) < 10:
        seen.add(id(inner))
        inner = inner.__cause__ or inner.__context__  # type: ignore[assignment]
    return _detail(inner)


def _context_too_long(exc: BaseException, names: set[str]) -> bool:
    if "ContextWindowExceededError" in names:
        return True
    text = str(exc).lower()
    return any(
        needle in text
        for needle in ("context length", "context_length", "context window", "maximum context", "too many tokens")
    )


def describe(exc: BaseException, *, model: str = "", timeout: float | None = None) -> str | None:
    """One sentence saying what went wrong with the model and what to do; None if ``exc`` is not a
    model failure this module knows."""
    names = _names(exc)
    status = _status(exc)
    which = f"the model {model}" if model else "the model"
    if _timed_out(exc, names):
        within = f" within {timeout:g} s" if timeout else ""
        return f"{which[0].upper()}{which[1:]} did not answer{within}; try again, or raise model_timeout."
    if "AuthenticationError" in names or status == 401:
        return (
            f"The model provider refused the API key for {model or 'the model'} (HTTP 401): check the key "
            "(e.g. OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY) and try again."
        )
    if "PermissionDeniedError" in names or status == 403:
        return f"The model provider does not allow this key to use {model or 'the model'} (HTTP 403)."
    if "RateLimitError" in names or status == 429:
        wait = retry_after(exc)
        when = f"retry after {wait:.0f} s" if wait is not None else "try again later"
        return f"The model provider is rate-limiting this key or its quota is used up (HTTP 429); {when}."
    if _context_too_long(exc, names):
        return (
            "The conversation is too long for the model's context window: rewind to an earlier turn, "
            "or fork a shorter session."
        )
    if "NotFoundError" in names or status == 404:
        return f"The model provider does not know {model or 'this model'} (HTTP 404): check the model id."
    if _network(exc, names):
        return f"Cannot reach the model provider ({_reason(exc)}): check the network or the model's base URL."
    if status is not None and status >= 500 or {"InternalServerError", "ServiceUnavailableError"} & names:
        code = f" (HTTP {status})" if status else ""
        return f"The model provider failed{code}; try again in a moment."
    if "BadRequestError" in names or status == 400:
        return f"The model provider rejected the request (HTTP 400): {_detail(exc)}"
    return None


def describe_event_error(code: Any, message: Any, *, model: str = "") -> str:
    """An error ADK put on an event (``error_code`` / ``error_message``) as one sentence."""
    text = sanitize_line(str(message or ""))
    code_text = str(code or "").strip()
    if code_text.upper() in ("MAX_TOKENS",):
        return "The model stopped: its answer reached the maximum length."
    if code_text.upper() in ("SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION"):
        return f"The model refused to answer ({code_text.lower()})."
    return (
        f"The model failed ({code_text or 'error'}): {text}" if text else f"The model failed ({code_text or 'error'})."
    )
