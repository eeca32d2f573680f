"""rewindtui: a terminal chat client for A2A agents, built around rewind."""

__version__ = "0.1.0"
