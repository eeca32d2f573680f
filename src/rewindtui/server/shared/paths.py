"""Where the embedded server serves its agent: names and URL paths, in one place.

Standard library only, so ``spawn`` (which must stay light to import) can read it too.
"""

AGENT_NAME = "demo"
AGENT_NAMESPACE = "local"
#: kagent's ``namespace/name`` agent reference.
AGENT_REF = f"{AGENT_NAMESPACE}/{AGENT_NAME}"
#: kagent's ADK app name for an agent: ``namespace__NS__name``.
APP_NAME = f"{AGENT_NAMESPACE}__NS__{AGENT_NAME}"
#: The A2A endpoint, as kagent's controller proxies an agent: ``/api/a2a/{namespace}/{name}/``.
AGENT_PATH = f"/api/a2a/{AGENT_NAMESPACE}/{AGENT_NAME}/"
#: The kagent-style REST base.
API_PATH = "/api"
#: The server's own routes (``http/control.py`` serves them, ``process/instance.py`` calls them):
#: its self-description (token-protected) and the apps attached to it, relative to its base URL.
SERVER_PATH = "/api/server"
CLIENTS_PATH = "/api/server/clients"

#: The databases in a data directory: the task store, ADK's sessions.
STORE_FILE = "rewindtui.db"
ADK_FILE = "adk_sessions.db"
DATA_FILES = (STORE_FILE, ADK_FILE)
#: the push-notification configs (server/storage/push_store.py): backed up and restored with the
#: two databases when present; a server that never had a push config has none
PUSH_FILE = "push_configs.db"
