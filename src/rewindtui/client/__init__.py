"""The network side: transports (JSON-RPC, HTTP+JSON, gRPC), the A2A client, auth, push."""
