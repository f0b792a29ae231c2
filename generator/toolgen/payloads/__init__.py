"""Payloads: decoding, encoding and converting provider bodies, and validating recorded ones."""
