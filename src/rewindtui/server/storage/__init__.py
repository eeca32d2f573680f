"""Storage: the SQLite task store, ADK's session database, integrity and recovery."""
