"""The A2A bindings as one family: :mod:`.base` (what each gives the client), :mod:`.http` (what the
two HTTP ones share), :mod:`.jsonrpc`, :mod:`.rest` (HTTP+JSON), :mod:`.grpc`, and :mod:`.factory`
(which one a card's interface gets)."""
