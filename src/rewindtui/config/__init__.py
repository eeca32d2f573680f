"""Settings and the connection they lead to (the embedded server's start/stop entry point)."""
