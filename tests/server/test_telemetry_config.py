"""ADK's telemetry settings for turns: the stable conventions only where nothing records spans."""

from __future__ import annotations

from typing import get_args

from google.adk.telemetry import TelemetryConfig
from google.adk.telemetry.context import ContentCapturingMode, _ExperimentalFeature
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from rewindtui.server.service.adk_telemetry import RESOLVED, ResolvedTelemetryConfig
from rewindtui.server.service.turns import telemetry_config


def test_without_tracing_the_cheaper_stable_conventions():
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)  # nothing set up in tests
    config = telemetry_config({})
    assert config.genai_semconv_stability_opt_in == "stable"
    assert not config.should_use_experimental_genai_semconv


def test_a_choice_in_the_environment_is_kept():
    for name, value in (
        ("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental"),
        ("ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN", "2"),
    ):
        config = telemetry_config({name: value})
        assert config.genai_semconv_stability_opt_in is None  # ADK reads the environment itself


def test_with_tracing_set_up_adks_defaults(monkeypatch):
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: TracerProvider())
    config = telemetry_config({})
    assert config.genai_semconv_stability_opt_in is None
    assert config.should_use_experimental_genai_semconv  # ADK's default schema


# the environment ADK's TelemetryConfig reads when it is made (google/adk/telemetry/context.py and
# _schema_version.py of google-adk 2.13), and values each can take
_ENV = {
    "OTEL_SEMCONV_STABILITY_OPT_IN": ["", "gen_ai_latest_experimental", "http"],
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": ["", "NO_CONTENT", "EVENT_ONLY", "SPAN_ONLY", "true"],
    "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS": ["", "false", "true"],
    "ADK_EXPERIMENTAL_TELEMETRY": ["", "true", "false"],
    "ADK_EXPERIMENTAL_TELEMETRY_FEATURES": ["", "grounding", "context_cache,mcp"],
    "ADK_TELEMETRY_IGNORE_RUN_CONFIG": ["", "true"],
    "ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": ["", "2"],
}
_FEATURES = sorted(get_args(_ExperimentalFeature))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    env=st.fixed_dictionaries({name: st.sampled_from(values) for name, values in _ENV.items()}),
    fields=st.fixed_dictionaries(
        {},
        optional={
            "genai_semconv_stability_opt_in": st.sampled_from(["stable", "experimental"]),
            "capture_message_content": st.sampled_from(list(ContentCapturingMode)),
            "adk_experimental_telemetry_opt_in": st.booleans(),
            "experimental_features_opt_in": st.sets(st.sampled_from(_FEATURES)).map(frozenset),
        },
    ),
)
def test_resolved_answers_are_adks(monkeypatch, env, fields):
    """Every decision the resolved config hands back is what ADK's own config answers, for any
    fields and environment (both made under the same environment), asked twice."""
    for name, value in env.items():
        monkeypatch.setenv(name, value) if value else monkeypatch.delenv(name, raising=False)
    ours, adks = ResolvedTelemetryConfig(**fields), TelemetryConfig(**fields)
    for _ in range(2):
        for name in RESOLVED:
            assert getattr(ours, name) == getattr(adks, name), name
        for feature in _FEATURES:
            assert ours._experimental_feature_enabled(feature) == adks._experimental_feature_enabled(feature)
