"""Hand-written, tested modules copied verbatim into every generated package."""
