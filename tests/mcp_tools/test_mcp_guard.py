"""The pure checks behind the MCP tools and the CLI's id matching (issue 30, item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewindtui.cli.commands.common import unique
from rewindtui.cli.mcp_guard import Refused, allowed_path, require_id, roots_to_dirs
from rewindtui.cli.output import CommandFailed

IDS = ["e-1111", "e-2222"]


@pytest.mark.parametrize("prefix", ["", " ", "\t"])
def test_an_empty_prefix_names_no_id_even_when_only_one_exists(prefix):
    for ids in (IDS, IDS[:1]):
        with pytest.raises(CommandFailed, match="is empty"):
            unique(prefix, ids, "invocation")


def test_unique_prefixes_still_resolve_and_ambiguous_or_unknown_ones_do_not():
    assert unique("e-11", IDS, "invocation") == "e-1111"
    assert unique("22", IDS, "invocation") == "e-2222"
    assert unique("e-9", IDS, "invocation") is None
    with pytest.raises(CommandFailed, match="ambiguous"):
        unique("e-", IDS, "invocation")


def test_require_id():
    assert require_id("before", " e-1 ") == "e-1"
    assert require_id("rewind_task", None, optional=True) is None
    for bad in ("", "  ", None):
        with pytest.raises(Refused, match="`before` is empty"):
            require_id("before", bad)


def test_paths_are_judged_after_symlinks_and_dotdot(tmp_path: Path):
    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.mkdir(), outside.mkdir()
    (outside / "secret").write_text("x")
    (inside / "ok").write_text("y")
    (inside / "link").symlink_to(outside / "secret")
    assert allowed_path("files", str(inside / "ok"), [inside]) == str((inside / "ok").resolve())
    for bad in (outside / "secret", inside / "link", inside / ".." / "out" / "secret"):
        with pytest.raises(Refused, match="outside the directories allowed"):
            allowed_path("files", str(bad), [inside])
    with pytest.raises(Refused, match="no directory is allowed"):
        allowed_path("files", str(inside / "ok"), [])
    assert allowed_path("files", "https://example.org/a.png", []) == "https://example.org/a.png"


def test_only_local_file_roots_are_directories(tmp_path):
    project = tmp_path / "my project"  # a space: escaped in the URI, back in the path
    assert roots_to_dirs([project.as_uri(), "https://x/y", "file://otherhost/z"]) == [project]


def test_data_nested_past_the_bound_is_refused_not_a_recursion_error():
    from rewindtui.client.attachments import AttachmentError, parse_data

    with pytest.raises(AttachmentError, match="nested deeper than 64 levels"):
        parse_data("[" * 100_000 + "]" * 100_000)
    assert parse_data('{"a": [1, {"b": 2}]}').value == {"a": [1, {"b": 2}]}
