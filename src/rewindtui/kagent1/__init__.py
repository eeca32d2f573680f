"""kagent 1.0's controller client (below chat/, beside client/: it extends the A2A client)."""

#: the rewind mode of the kagent 1.0 profile (``Capabilities.rewind_modes``): rewind is a fork
FORK_MODE = "fork"
