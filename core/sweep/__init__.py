"""Research at scale: rule leaderboards over seeded families of toy instances, run on Dask.

==================  ==================================================================================
``config``          what a sweep is (families × V × K × L × n, methods, bounds), checked up front
``instances``       the families; each instance a pure function of (seed, family, V, L, index)
``work``            one batch of instances → rows (exact analysis of every method, the bounds)
``store``           the Parquet results folder: written batch by batch, resumable, never overwritten
``engine``          batches as Dask tasks (a local cluster by default), or a plain serial loop
``ship``            the code travels with the job: a cluster needs the requirements, not this repository
``processes``       a cluster of separate ``dask scheduler``/``dask worker`` processes, for tests and benchmarks
``summary``         the leaderboard: E/LP per rule with confidence intervals, by K, L and family
==================  ==================================================================================

This layer sits beside ``core.bench`` above the analysis; it never imports streamlit or plotly.
"""
