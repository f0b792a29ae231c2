"""Helpers the tests share: throwaway projects, local servers, MCP peers, stream oracles and the corpora."""
