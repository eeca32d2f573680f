"""A deterministic, offline google-adk model for the embedded server.

``DemoLlm`` is a real :class:`google.adk.models.base_llm.BaseLlm`: ADK builds
the request (contents after rewinds are applied, the rendered instruction with
the current session state, the tool declarations) and the demo model answers
from what it *sees* in that request, so a rewind is visible in its answers:

* a plain message -> ``You said: <text> (turn N; history: ['a', 'b']; weather_calls=K)``
  where ``history`` lists the user texts in the request (past 12 of them, the
  middle is shortened to ``…N more…``), ``N`` their count and ``K`` the session
  state value ``weather_calls`` (rendered into the system instruction by ADK's
  ``{weather_calls?}`` template);
* a message containing "weather" -> a ``get_weather(city)`` function call; once
  the tool result is in the request, it answers
  ``Tool get_weather returned: {...} (weather_calls=K)``;
* a message containing "delete" -> a ``delete_file(name)`` function call (the word after
  "delete", else ``scratch.txt``). The tool asks the user to approve first; once its result is
  in the request, it answers ``Tool delete_file returned: {...} (weather_calls=K)``.

When ADK asks for a streaming response, the text is produced as partial deltas
of a few words each (``delay`` seconds apart; a long reply in at most 200 deltas), followed by
the full message.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from rewindtui.server.agent.model_options import DEMO_MODEL_NAME as DEMO_MODEL_NAME  # its one place: light

if TYPE_CHECKING:
    from google.adk.models.llm_request import LlmRequest

#: the demo model, paced: a few words every quarter second
SLOW_DEMO_MODEL_NAME = "demo-slow"
SLOW_DEMO_DELAY = 0.25
WEATHER_TOOL = "get_weather"
DELETE_TOOL = "delete_file"
DEFAULT_FILE = "scratch.txt"
_STATE_RE = re.compile(r"weather_calls=(\S*)")
_CITY_RE = re.compile(r"\b(?:in|for|at)\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)")
_FILE_RE = re.compile(r"\bdelete\s+(?:the\s+)?(?:file\s+)?([\w][\w./-]*\w|\w)", re.IGNORECASE)
_WORDS_PER_DELTA = 3
#: a long reply (an echo of a big paste) streams in at most this many deltas, each longer
_MAX_DELTAS = 200
HISTORY_LIMIT = 12


def extract_city(text: str) -> str:
    """The city a weather question is about ("weather in Tokyo" -> "Tokyo")."""
    match = _CITY_RE.search(text)
    return match.group(1) if match else "Paris"


def extract_file(text: str) -> str:
    """The file a delete request is about ("please delete notes.txt" -> "notes.txt")."""
    match = _FILE_RE.search(text)
    return match.group(1) if match else DEFAULT_FILE


def _system_text(llm_request: LlmRequest) -> str:
    instruction = llm_request.config.system_instruction if llm_request.config else None
    if instruction is None:
        return ""
    if isinstance(instruction, str):
        return instruction
    if isinstance(instruction, types.Content):
        return "".join(p.text or "" for p in instruction.parts or [])
    if isinstance(instruction, types.Part):
        return instruction.text or ""
    if isinstance(instruction, list):
        return "".join(p if isinstance(p, str) else (getattr(p, "text", "") or "") for p in instruction)
    return str(instruction)


def _weather_calls(llm_request: LlmRequest) -> int:
    match = _STATE_RE.search(_system_text(llm_request))
    if not match:
        return 0
    try:
        return int(match.group(1))
    except ValueError:
        return 0


def _read(llm_request: LlmRequest) -> tuple[list[str], int]:
    """The user texts in the request (each user content's non-thought texts joined; empty ones
    left out) and the words of every text in it, thoughts included: one pass over the request."""
    users: list[str] = []
    count = 0
    for content in llm_request.contents:
        parts = content.parts
        if not parts:
            continue
        user = content.role == "user"
        if len(parts) == 1:  # what a chat's history holds
            part = parts[0]
            text = part.text
            if text:
                count += _words(text)
                if user and not part.thought:
                    users.append(text)
            continue
        joined = []
        for part in parts:
            text = part.text
            if text:
                count += _words(text)
                if user and not part.thought:
                    joined.append(text)
        if joined:
            users.append("".join(joined))
    return users, count


def _history(users: list[str]) -> str:
    """``['a', 'b']``; a long history is shortened in the middle to keep answers small."""
    if len(users) <= HISTORY_LIMIT:
        return repr(users)
    head, tail = users[:3], users[-(HISTORY_LIMIT - 4) :]
    skipped = len(users) - len(head) - len(tail)
    return repr(head)[:-1] + f", …{skipped} more…, " + repr(tail)[1:]


@functools.lru_cache(maxsize=1 << 16)
def _words(text: str) -> int:
    """Words in ``text`` (a request repeats the history's texts: each is split once)."""
    return len(text.split())


class DemoLlm(BaseLlm):
    """Offline deterministic model; see the module docstring."""

    model: str = DEMO_MODEL_NAME
    delay: float = 0.0
    """Seconds to wait between streamed deltas (tests use it to keep a turn running)."""

    @classmethod
    def supported_models(cls) -> list[str]:
        return [DEMO_MODEL_NAME]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1] if llm_request.contents else None
        tool_result = None
        if last is not None:
            for part in last.parts or []:
                if part.function_response is not None:
                    tool_result = part.function_response
        weather_calls = _weather_calls(llm_request)
        users, prompt_tokens = _read(llm_request)

        if tool_result is not None:
            text = f"Tool {tool_result.name} returned: {tool_result.response} (weather_calls={weather_calls})"
        else:
            current = users[-1] if users else ""
            call = None
            if "weather" in current.lower() and self._has_tool(llm_request, WEATHER_TOOL):
                call = types.FunctionCall(name=WEATHER_TOOL, args={"city": extract_city(current)})
            elif "delete" in current.lower() and self._has_tool(llm_request, DELETE_TOOL):
                call = types.FunctionCall(name=DELETE_TOOL, args={"name": extract_file(current)})
            if call is not None:
                yield LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(function_call=call)]),
                    partial=False,
                    turn_complete=True,
                    usage_metadata=_usage(prompt_tokens, 1),
                )
                return
            text = f"You said: {current} (turn {len(users)}; history: {_history(users)}; weather_calls={weather_calls})"

        if stream:
            words = text.split(" ")
            step = max(_WORDS_PER_DELTA, -(-len(words) // _MAX_DELTAS))
            for start in range(0, len(words), step):
                if self.delay:
                    await asyncio.sleep(self.delay)
                chunk = " ".join(words[start : start + step])
                if start + step < len(words):
                    chunk += " "
                yield LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text=chunk)]),
                    partial=True,
                )
        elif self.delay:
            await asyncio.sleep(self.delay)
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=text)]),
            partial=False,
            turn_complete=True,
            usage_metadata=_usage(prompt_tokens, len(text.split())),
        )

    @staticmethod
    def _has_tool(llm_request: LlmRequest, name: str) -> bool:
        tools_dict: dict[str, Any] = getattr(llm_request, "tools_dict", {}) or {}
        return name in tools_dict


def _usage(prompt: int, candidates: int) -> types.GenerateContentResponseUsageMetadata:
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        candidates_token_count=candidates,
        total_token_count=prompt + candidates,
    )
