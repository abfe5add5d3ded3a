"""The verification rules: the ``Verifier`` interface (``base``), one module per rule, and the
registry (``registry``).  A rule class carries its own metadata (short name, colour, summary,
source, what it needs); adding a rule is one module, its tests and one line in ``registry.RULES``."""
