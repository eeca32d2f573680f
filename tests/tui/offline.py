"""Moved to tests/kit/offline.py. Kept only so that branches written before the move still
import; import from kit.offline, and delete this file once no test imports it."""

from kit.offline import TURNS, capabilities, offline_app, offline_chat, replay

__all__ = ["TURNS", "capabilities", "offline_app", "offline_chat", "replay"]
