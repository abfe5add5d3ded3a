"""Data and randomness, the bottom layer: the draft tree (``tree``), what a rule decides and records
(``outcome``), coin programs that serve seeded sampling and exact enumeration alike (``coins``),
small distribution helpers (``distributions``) and level-wise conditionals of toy models
(``levels``).  Imports numpy and nothing above it."""
