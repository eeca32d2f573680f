"""What answers on the wire: the A2A handler, gRPC, REST, the card, the guard, the front."""
