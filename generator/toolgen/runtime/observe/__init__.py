# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Observability of runs: OpenTelemetry GenAI spans and metrics, a no-op when OpenTelemetry is not installed."""
