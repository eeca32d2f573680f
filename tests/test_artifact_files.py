"""A task's artifacts saved to files and copied as text (the task browser's a and c keys),
from the kagent 0.10.4 capture of tasks/get (tests/fixtures/kagent-0.10.4/08_tasks_get.txt) and
A2A 1.0 parts as a2a-sdk 1.3 writes them (``{"data"}``, ``{"raw", "filename"}``)."""

from __future__ import annotations

import base64
import copy
import json

import pytest

from captures import load
from rewindtui.client import artifact_files
from rewindtui.client.artifact_files import artifacts_text, save_artifacts


def captured_task() -> dict:
    return load("kagent-0.10.4/08_tasks_get.txt").json_body["result"]


async def test_text_artifact_is_saved_named_after_it_and_never_over_a_file(tmp_path):
    task = captured_task()
    artifact_id = task["artifacts"][0]["artifactId"]
    first = await save_artifacts(task, tmp_path)
    assert [p.name for p in first.written] == [f"{artifact_id}.txt"] and first.skipped == []
    assert first.written[0].read_text(encoding="utf-8") == task["artifacts"][0]["parts"][0]["text"]
    first.written[0].write_text("the user's own edit", encoding="utf-8")
    second = await save_artifacts(task, tmp_path)
    assert [p.name for p in second.written] == [f"{artifact_id} (1).txt"]  # a free name, not the same file
    assert first.written[0].read_text(encoding="utf-8") == "the user's own edit"


async def test_names_from_the_server_stay_in_the_directory_and_data_and_files_are_saved(tmp_path):
    task = {
        "id": "t-1",
        "artifacts": [
            {"artifactId": "a-1", "name": "../../escape.md", "parts": [{"text": "# hi"}]},
            {
                "artifactId": "a-2",
                "name": "result",
                "parts": [
                    {"data": {"answer": 42}},
                    {"raw": base64.b64encode(b"\x00\x01bytes").decode(), "filename": ".hidden.bin"},
                ],
            },
            "not an artifact",
        ],
    }
    out = tmp_path / "out"
    saved = await save_artifacts(task, out)
    names = sorted(p.name for p in saved.written)
    assert all(p.parent == out for p in saved.written) and not (tmp_path / "escape.md").exists()
    assert "escape.md" in names and "hidden.bin" in names
    data = [p for p in saved.written if p.suffix == ".json"]
    assert len(data) == 1 and json.loads(data[0].read_text()) == {"answer": 42}
    assert (out / "hidden.bin").read_bytes() == b"\x00\x01bytes"


async def test_text_past_the_bound_is_not_written_and_that_is_said(tmp_path, monkeypatch):
    monkeypatch.setattr(artifact_files, "MAX_TEXT_BYTES", 10)
    task = {"id": "t", "artifacts": [{"artifactId": "big", "parts": [{"text": "x" * 11}]}]}
    saved = await save_artifacts(task, tmp_path)
    assert saved.written == [] and "more than 10 B: not saved" in saved.skipped[0]
    assert list(tmp_path.iterdir()) == []


async def test_a_directory_that_cannot_be_made_is_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(artifact_files.AttachmentError):
        await save_artifacts(captured_task(), blocker / "sub")


def test_copy_text_has_each_artifact_and_is_bounded(monkeypatch):
    task = copy.deepcopy(captured_task())
    assert artifacts_text(task) == task["artifacts"][0]["parts"][0]["text"]
    task["artifacts"].append({"artifactId": "b", "name": "second", "parts": [{"kind": "data", "data": {"k": 1}}]})
    text = artifacts_text(task)
    assert (
        text.startswith(f"# {task['artifacts'][0]['artifactId']}\nTool get_weather")
        and '# second\n{\n  "k": 1\n}' in text
    )
    monkeypatch.setattr(artifact_files, "MAX_COPY_CHARS", 20)
    assert artifacts_text(task).endswith("(cut at 20 characters; a saves the artifacts whole)")
    assert artifacts_text({"id": "x"}) == ""
