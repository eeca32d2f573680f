"""What both the client side and the server use: safe terminal text, where things live on disk."""
