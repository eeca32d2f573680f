"""The ADK agent the server runs, its models and the fenced private names."""
