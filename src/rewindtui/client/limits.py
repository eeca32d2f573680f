"""The bounds the client puts on what a server sends, in one place.

A server may answer wrongly, on purpose or by bug: JSON nested ten thousand levels, a message with a
million parts, a page token that never advances, an answer that never ends. Each bound below is
where the client stops believing it; past it the client keeps what it has, shows what it dropped in
words, and never loops or crashes. The defaults are far above anything a real agent sends;
``REWINDTUI_MAX_ANSWER_MB`` and ``REWINDTUI_PAGE_SECONDS`` raise the two a user could need more of
(large inline files; a slow server's big pages). See docs/data-and-backups.md.
"""

from __future__ import annotations

import os

#: JSON values nested deeper than this (counted from the answer's top) are replaced by
#: :data:`TOO_DEEP` -- Python's own parser dies of RecursionError near 1,000 levels.
MAX_JSON_DEPTH = 64
#: A data part's value nested deeper than this is cut (shown as :data:`TOO_DEEP` below that level).
MAX_DATA_DEPTH = 32
#: Parts kept per message; the rest are replaced by one text part that says how many were dropped.
MAX_PARTS_PER_MESSAGE = 1_000
#: Messages kept in one task's history (the newest ones; a rewind's Task holds the whole session).
MAX_MESSAGES_PER_TASK = 100_000
#: Pages read for one session (REST pages or A2A ListTasks pages) before loading stops with an error.
MAX_PAGES = 10_000
#: Bytes of one answer (a unary call's body, or one stream frame). Setting: REWINDTUI_MAX_ANSWER_MB.
DEFAULT_MAX_ANSWER_BYTES = 512 * 1024 * 1024
#: A whole stream (one turn's events) may hold this many answers' worth of bytes (default 2 GiB in
#: all): an endless run of small events stops there. It follows REWINDTUI_MAX_ANSWER_MB.
STREAM_FACTOR = 4
#: Seconds for one page / one unary answer, start to end. Setting: REWINDTUI_PAGE_SECONDS.
DEFAULT_PAGE_SECONDS = 120.0

#: Bytes of one OAuth 2 / OIDC token endpoint or device-authorization answer (a real one is a few
#: hundred bytes; a JWT access token a few KB).
MAX_TOKEN_ANSWER_BYTES = 64 * 1024
#: Characters of one access or refresh token: a longer one is refused and never cached (it would
#: ride in every request's Authorization header).
MAX_TOKEN_CHARS = 8 * 1024
#: Bytes of an OIDC discovery document or a JSON Web Key Set (a signed card's keys).
MAX_DOCUMENT_BYTES = 1024 * 1024
#: Keys read from one key set, and signatures checked on one agent card.
MAX_KEYS = 32
MAX_SIGNATURES = 8
#: Characters of one card signature's ``protected`` header or ``signature`` (a 4096-bit RSA
#: signature is 683).
MAX_SIGNATURE_CHARS = 8 * 1024
#: The push receiver: nesting and bytes of one notification (a task with its history).
MAX_PUSH_DEPTH = MAX_JSON_DEPTH
MAX_PUSH_BYTES = 32 * 1024 * 1024

#: What replaces a value nested too deep.
TOO_DEEP = f"(not shown: nested deeper than {MAX_JSON_DEPTH} levels)"
DATA_TOO_DEEP = f"(not shown: nested deeper than {MAX_DATA_DEPTH} levels)"


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        return default
    return value if value > 0 else default


def max_answer_bytes() -> int:
    """The per-answer byte bound (``REWINDTUI_MAX_ANSWER_MB`` in MiB, default 512)."""
    mb = _env_number("REWINDTUI_MAX_ANSWER_MB", 0)
    return int(mb * 1024 * 1024) if mb else DEFAULT_MAX_ANSWER_BYTES


def page_seconds() -> float:
    """The per-page / per-answer time bound (``REWINDTUI_PAGE_SECONDS``, default 120)."""
    return _env_number("REWINDTUI_PAGE_SECONDS", DEFAULT_PAGE_SECONDS)
