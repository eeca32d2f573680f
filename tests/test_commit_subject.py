"""The commit-message hook: subjects under 72 characters, a blank line before the body."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from commit_subject import LIMIT, SCISSORS, problem

HOOK = Path(__file__).with_name("commit_subject.py")


def test_a_short_subject_with_a_body_after_a_blank_line_passes() -> None:
    assert problem("Move paths to the shared package\n\nThe detail, as long as it needs.\n") is None


def test_a_subject_of_72_characters_is_refused_and_71_passes() -> None:
    assert problem("x" * (LIMIT - 1)) is None
    said = problem("x" * LIMIT)
    assert said is not None and f"{LIMIT} characters" in said


def test_the_body_must_not_follow_the_subject_directly() -> None:
    assert problem("Subject\nbody right under it\n") == "leave a blank line between the subject and the body"


def test_comments_and_the_scissors_part_are_not_the_message() -> None:
    verbose = f"# Please enter the commit message\n\nShort subject\n\n{SCISSORS}\n{'d' * 200}\n"
    assert problem(verbose) is None
    assert problem("# only comments\n\n") == "the message is empty"


def test_the_hook_exits_non_zero_with_the_reason(tmp_path: Path) -> None:
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text("y" * 90 + "\n", encoding="utf-8")
    refused = subprocess.run([sys.executable, str(HOOK), str(message)], capture_output=True, text=True)
    assert refused.returncode == 1 and "90 characters" in refused.stderr
    message.write_text("Fine subject\n", encoding="utf-8")
    assert subprocess.run([sys.executable, str(HOOK), str(message)], capture_output=True).returncode == 0
