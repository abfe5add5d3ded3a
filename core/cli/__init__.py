"""``python -m core {exact,bound,montecarlo,trees,claims,court,decode,bench,sweep} ...``.

``exact``, ``bound`` and ``montecarlo`` (``core.cli.lab``) work on toy models and never import torch,
so they start quickly; ``decode`` and ``bench`` (``core.cli.decode``) load torch and transformers
after checking their arguments; ``sweep`` (``core.cli.sweep``) runs on Dask distributed;
``trees`` (``core.cli.trees``) prints the budget question's table, on toy models; ``claims``
(``core.cli.claims``) prints every registered claim's verdict; ``court`` (``core.cli.court``) every
verdict for one rule, a registered one or one's own (``--rule``).
Every error is one line on stderr, with exit status 2 for a user error; never a traceback.
"""
from __future__ import annotations

import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("decode", "bench"):
        try:
            from core.cli.decode import main as decoding_main
        except ImportError as exc:
            print(f"error: the real decoder is unavailable ({exc})", file=sys.stderr)
            return 2
        return decoding_main(argv)
    if argv and argv[0] == "sweep":
        from core.cli.sweep import main as sweep_main
        return sweep_main(argv)
    if argv and argv[0] == "trees":
        from core.cli.trees import main as trees_main
        return trees_main(argv)
    if argv and argv[0] == "claims":
        from core.cli.claims import main as claims_main
        return claims_main(argv)
    if argv and argv[0] == "court":
        from core.cli.court import main as court_main
        return court_main(argv)
    from core.cli.lab import main as lab_main
    return lab_main(argv)
