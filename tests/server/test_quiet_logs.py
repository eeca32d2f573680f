"""``server/agent/quiet_logs.py``: ADK's per-content log records of a model request are skipped
only when they would reach OpenTelemetry's no-op logger; a logger provider, set up front or later
(the API's proxy logger picks it up), or any real logger, receives every record ADK emits --
compared with ADK's own function on random requests."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.models.llm_request import LlmRequest
from google.adk.telemetry import TelemetryConfig, tracing
from google.genai import types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry._logs import _internal as logs_internal
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

from rewindtui.server.agent import quiet_logs

ORIGINAL = quiet_logs.install()
assert ORIGINAL is not None


def _request(texts: list[tuple[str, str]]) -> LlmRequest:
    contents = [types.Content(role=role, parts=[types.Part(text=text)]) for role, text in texts]
    config = types.GenerateContentConfig(system_instruction="be brief", top_p=0.5)
    return LlmRequest(model="demo", contents=contents, config=config)


def _records(span_fn: Any, request: LlmRequest, config: TelemetryConfig) -> list[tuple[Any, Any, Any]]:
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(logs_internal, "_LOGGER_PROVIDER", provider)  # as set_logger_provider leaves it
        mp.setattr(tracing, "otel_logger", logs_internal.ProxyLogger("gcp.vertex.agent"))  # ADK's kind
        assert not quiet_logs.logs_dropped()
        with span_fn(request, {"k": "v"}, {"user.id": "u"}, config):
            pass
    got = []
    for record in exporter.get_finished_logs():
        log = getattr(record, "log_record", record)
        got.append((log.event_name, log.body, dict(log.attributes or {})))
    return got


def test_installed_in_adks_module():
    assert tracing._use_native_generate_content_span_stable_semconv is not ORIGINAL
    assert tracing._use_native_generate_content_span_stable_semconv.__wrapped__ is ORIGINAL
    assert quiet_logs.install() is ORIGINAL  # once


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(
        st.tuples(st.sampled_from(("user", "model")), st.sampled_from(("hi", "ok", "a b c", ""))), max_size=8
    ),
    content_to_logs=st.booleans(),
)
def test_a_configured_provider_gets_every_record_adk_emits(texts, content_to_logs, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true" if content_to_logs else "false")
    config = TelemetryConfig(genai_semconv_stability_opt_in="stable")
    request = _request(texts)
    ours = _records(tracing._use_native_generate_content_span_stable_semconv, request, config)
    adks = _records(ORIGINAL, request, config)
    assert ours == adks
    assert [r[0] for r in ours].count("gen_ai.user.message") == len(texts)  # one per content


def test_a_real_logger_gets_every_record(monkeypatch):
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    monkeypatch.setattr(tracing, "otel_logger", provider.get_logger("gcp.vertex.agent"))
    assert not quiet_logs.logs_dropped()
    with tracing._use_native_generate_content_span_stable_semconv(_request([("user", "hi")] * 3), {}):
        pass
    assert len(exporter.get_finished_logs()) == 1 + 3


def test_no_provider_builds_no_record_per_content(monkeypatch):
    assert type(tracing.otel_logger) is logs_internal.ProxyLogger  # ADK's, no provider set in tests
    assert logs_internal._LOGGER_PROVIDER is None
    assert quiet_logs.logs_dropped()
    built: list[str | None] = []
    real = tracing.LogRecord

    def counting(*args: Any, **kwargs: Any) -> Any:
        built.append(kwargs.get("event_name"))
        return real(*args, **kwargs)

    monkeypatch.setattr(tracing, "LogRecord", counting)
    request = _request([("user", "hi"), ("model", "ok")] * 5)
    with tracing._use_native_generate_content_span_stable_semconv(request, {}) as span:
        assert span is not None
    assert built == ["gen_ai.system.message"]  # what reaches NoOpLogger.emit: the system record alone
    assert len(request.contents) == 10  # the request itself untouched
    built.clear()
    with ORIGINAL(request, {}):
        pass
    assert built == ["gen_ai.system.message", *["gen_ai.user.message"] * 10]  # ADK: built, then dropped


def test_a_provider_set_later_is_picked_up(monkeypatch):
    logger = logs_internal.ProxyLogger("gcp.vertex.agent")
    monkeypatch.setattr(tracing, "otel_logger", logger)
    assert quiet_logs.logs_dropped()
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    monkeypatch.setattr(logs_internal, "_LOGGER_PROVIDER", provider)
    assert not quiet_logs.logs_dropped()
    with tracing._use_native_generate_content_span_stable_semconv(_request([("user", "hi")] * 2), {}):
        pass
    assert len(exporter.get_finished_logs()) == 3
