"""Benchmarks of the real decoder: speculative against autoregressive decoding, measured side by
side in one run (``decoding``)."""
