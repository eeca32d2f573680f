"""The headless face: ``rewindtui`` and its commands, ``auth``, ``backup``, ``mcp``, ``web``."""
