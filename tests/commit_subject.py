"""The commit-message hook (``.pre-commit-config.yaml``, stage ``commit-msg``): a subject line
under 72 characters, the detail in the body after a blank line.

``python tests/commit_subject.py FILE`` (pre-commit passes the message file) exits 1 with the reason
when the subject is empty, 72 characters or longer, or runs straight into the body. Lines git
strips (``#`` comments, the scissors line and what follows) are not the message.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: the subject's limit: shorter than this
LIMIT = 72
SCISSORS = "# ------------------------ >8 ------------------------"


def message_lines(text: str) -> list[str]:
    """The message as git keeps it: without comment lines, nothing from the scissors line on."""
    lines = []
    for line in text.splitlines():
        if line.startswith(SCISSORS):
            break
        if not line.startswith("#"):
            lines.append(line.rstrip())
    while lines and not lines[0].strip():
        lines.pop(0)
    return lines


def problem(text: str) -> str | None:
    """What is wrong with the message's subject, or None."""
    lines = message_lines(text)
    if not lines:
        return "the message is empty"
    subject = lines[0]
    if len(subject) >= LIMIT:
        return f"the subject is {len(subject)} characters; keep it under {LIMIT} and put the detail in the body"
    if len(lines) > 1 and lines[1].strip():
        return "leave a blank line between the subject and the body"
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tests/commit_subject.py COMMIT_MESSAGE_FILE", file=sys.stderr)
        return 2
    why = problem(Path(argv[0]).read_text(encoding="utf-8"))
    if why is not None:
        print(f"commit message: {why}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
