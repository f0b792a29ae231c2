"""Foundations every stage uses: diagnostics, errors, JSON pointers and positions, digests, file stamps."""
