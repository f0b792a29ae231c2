"""Validation of recorded payloads: the local run, its summary, and runs on a Dask cluster."""
