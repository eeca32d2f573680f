"""ADK's telemetry settings for turns: the stable conventions only where nothing records spans."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

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
