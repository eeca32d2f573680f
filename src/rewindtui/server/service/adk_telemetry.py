"""ADK's telemetry settings with the answer its per-message logging asks for resolved once.

With ADK's stable GenAI conventions (what :func:`rewindtui.server.service.turns.telemetry_config`
picks when nothing records spans), ADK emits one ``gen_ai.user.message`` log record per content of
every model request -- 20,000 at 10,000 turns -- and asks the config, for each, whether content
goes on logs. That question walks three pydantic properties and two private attributes each time,
about a sixth of a turn's CPU at 10,000 turns. ``TelemetryConfig`` is frozen and resolves its
environment fallbacks when it is made, so the answer cannot change: this subclass computes it once,
with ADK's own property, and hands it back. Everything else is ADK's.
"""

from __future__ import annotations

from typing import Any

from google.adk.telemetry import TelemetryConfig


class ResolvedTelemetryConfig(TelemetryConfig):
    """A ``TelemetryConfig`` whose ``should_add_content_to_logs`` is read once (the config is frozen)."""

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        self.__pydantic_private__["_content_to_logs"] = bool(TelemetryConfig.should_add_content_to_logs.fget(self))  # type: ignore[attr-defined,index]

    @property
    def should_add_content_to_logs(self) -> bool:
        return bool(self.__pydantic_private__["_content_to_logs"])  # type: ignore[index]
