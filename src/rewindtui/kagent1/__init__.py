"""kagent 1.0: its controller over gRPC / gRPC-Web, checkpoints and forks."""
