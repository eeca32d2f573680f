"""Rewind for kagent agents: the rewind control message of rewindtui, served by kagent-adk.

    from kagent_rewind import enable_rewind
    app = enable_rewind(KAgentApp(...).build())

Importing this package loads nothing of kagent-adk or a2a-sdk: ``enable_rewind`` (and the other
entry points) first check that their versions are supported (:mod:`kagent_rewind.versions`) and
fail with one sentence when they are not.
"""

from __future__ import annotations

from typing import Any

from kagent_rewind.versions import SUPPORTED_TEXT, UnsupportedVersion, check_supported

__all__ = [
    "SUPPORTED_TEXT",
    "RewindExecutor",
    "UnsupportedVersion",
    "check_supported",
    "enable_rewind",
    "install",
    "rewind_lifespan",
]


def enable_rewind(target: Any) -> Any:
    """Turn rewind on for a ``KAgentApp`` (its later builds) or an app it built; returns it."""
    check_supported()
    from kagent_rewind import enable

    return enable.enable_rewind(target)


def install() -> None:
    """Every ``KAgentApp`` built from now on has rewind (used by ``kagent-rewind-adk``)."""
    check_supported()
    from kagent_rewind import enable

    enable.install()


def rewind_lifespan(app: Any) -> Any:
    """A lifespan that enables rewind at startup (see :func:`kagent_rewind.enable.rewind_lifespan`)."""
    check_supported()
    from kagent_rewind import enable

    return enable.rewind_lifespan(app)


def __getattr__(name: str) -> Any:
    if name == "RewindExecutor":
        check_supported()
        from kagent_rewind.executor import RewindExecutor

        return RewindExecutor
    raise AttributeError(name)


def main() -> None:
    """``kagent-rewind-adk``: kagent's ``kagent-adk`` command with rewind on in every agent it runs."""
    check_supported()
    from kagent_rewind import enable

    enable.main()
