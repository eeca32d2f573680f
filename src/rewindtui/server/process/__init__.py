"""Running the server: foreground, a thread, a child process, one per data directory."""
