"""ADK's telemetry settings with every answer its tracing asks for resolved once.

With ADK's stable GenAI conventions (what :func:`rewindtui.server.service.turns.telemetry_config`
picks when nothing records spans), ADK emits one ``gen_ai.user.message`` log record per content of
every model request -- 20,000 at 10,000 turns -- and asks the config, for each, whether content
goes on logs. Each streamed model response asks it again: which conventions, whether content goes
on spans, and (once per experimental feature gate: context cache, grounding, ...) whether that
feature is on. Each such question walks pydantic properties and private attributes (a
``__getattr__`` call each), together about a tenth of a turn's CPU under load. ``TelemetryConfig``
is frozen and resolves its environment fallbacks when it is made, so no answer can change: this
subclass computes each once, with ADK's own property or method, and hands it back. Everything
else is ADK's.
"""

from __future__ import annotations

from typing import Any

from google.adk.telemetry import TelemetryConfig

#: the properties ADK's tracing reads per request or response (``google/adk/telemetry/context.py``)
#: (ADK's own properties read each other: each is resolved after those it reads)
RESOLVED = (
    "resolved_content_capturing_mode",
    "should_use_experimental_genai_semconv",
    "content_capturing_mode_value",
    "should_add_content_to_logs",
    "should_add_content_to_experimental_spans",
    "should_add_content_to_legacy_spans",
    "should_emit_experimental_telemetry",
)


class ResolvedTelemetryConfig(TelemetryConfig):
    """A ``TelemetryConfig`` whose decisions are each read once (the config is frozen)."""

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        private = self.__pydantic_private__
        assert private is not None
        resolved: dict[str, Any] = {}
        private["_resolved"] = resolved
        private["_features"] = {}
        for name in RESOLVED:
            resolved[name] = getattr(TelemetryConfig, name).fget(self)

    def _answer(self, name: str) -> Any:
        return self.__pydantic_private__["_resolved"][name]  # type: ignore[index]

    @property
    def should_use_experimental_genai_semconv(self) -> bool:
        return bool(self._answer("should_use_experimental_genai_semconv"))

    @property
    def resolved_content_capturing_mode(self) -> Any:
        return self._answer("resolved_content_capturing_mode")

    @property
    def content_capturing_mode_value(self) -> str:
        return str(self._answer("content_capturing_mode_value"))

    @property
    def should_add_content_to_logs(self) -> bool:
        return bool(self._answer("should_add_content_to_logs"))

    @property
    def should_add_content_to_experimental_spans(self) -> bool:
        return bool(self._answer("should_add_content_to_experimental_spans"))

    @property
    def should_add_content_to_legacy_spans(self) -> bool:
        return bool(self._answer("should_add_content_to_legacy_spans"))

    @property
    def should_emit_experimental_telemetry(self) -> bool:
        return bool(self._answer("should_emit_experimental_telemetry"))

    def _experimental_feature_enabled(self, feature: Any) -> bool:
        features: dict[Any, bool] = self.__pydantic_private__["_features"]  # type: ignore[index]
        answer = features.get(feature)
        if answer is None:
            answer = features[feature] = bool(TelemetryConfig._experimental_feature_enabled(self, feature))
        return answer
