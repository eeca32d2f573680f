"""Rewind for kagent agents: the rewind control message of rewindtui, served by kagent-adk.

    from kagent_rewind import enable_rewind
    app = enable_rewind(KAgentApp(...).build())
"""

from kagent_rewind.enable import enable_rewind, install, rewind_lifespan
from kagent_rewind.executor import RewindExecutor

__all__ = ["RewindExecutor", "enable_rewind", "install", "rewind_lifespan"]
