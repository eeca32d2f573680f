"""The agent service: turns, rewinds, sessions, confirmations, and their errors."""
