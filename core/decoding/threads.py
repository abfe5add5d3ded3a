"""How many CPU threads torch gets by default: one, unless cores are idle and more are clearly faster.

Measured on this project's shared 2-core machine (docs/decoder.md, "Threads"): with another job
on the second core, torch's default of two threads made the bundled pair's decoding 15-30x
slower than one thread (a one-token target pass 12-292 ms against 4.6-5.9 ms, SD at 3-8 against
70-138 tokens/s); the tree decoder's benchmark measured 16x (4.0 against 65 tokens/s) and SmolLM2 13x.  Each OpenMP
thread waits for the slowest, so one busy core stalls them all.  On the idle machine two threads
gain at most about 1.4x (SmolLM2's one-token step; the toy pair's tiny layers gain less).  A wrong
"more" costs an order of magnitude and a wrong "one" less than 2x, so more threads must earn it:

1. only on a CPU (elsewhere torch's threads only feed the device);
2. only as many as the cores left idle by the other processes, keeping half a core spare:
   n = ⌊cores − load average − ½⌋ (the one-minute load average; without one, cores − 1);
3. only if n ≥ 2 and n threads run a one-token target pass at least ``MARGIN`` times faster than
   one thread (median of interleaved rounds, ``fastest_threads``).

On a 2-core machine step 2 always leaves one thread.  The command line (``python -m core decode``
without ``--threads``) and the app's live decoder take this default; the benchmarks pin one
thread, so that their ratios compare like with like.
"""
from __future__ import annotations

import os
import statistics
import time
from typing import Callable, Sequence

import torch

#: More threads must be at least this much faster than fewer to be chosen.
MARGIN = 1.25
#: Cores kept free for the other processes when counting idle cores.
SPARE_CORES = 0.5


def idle_cores() -> int:
    """⌊cores − one-minute load average − ``SPARE_CORES``⌋, at least 1 (cores − 1 where the
    system gives no load average)."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return max(1, cores - 1)
    return max(1, int(cores - load - SPARE_CORES))


def fastest_threads(pair, candidates: Sequence[int], repeats: int = 5, margin: float = MARGIN,
                    clock: Callable[[], float] = time.perf_counter) -> int:
    """The fewest threads among ``candidates`` whose one-token target pass takes at most
    ``margin`` times the fastest candidate's, each timed ``repeats`` times in interleaved rounds
    (median, after one warm-up pass each); torch's thread count is restored afterwards."""
    before = torch.get_num_threads()
    ids = torch.tensor([pair.encode("def")[-1:]], device=pair.device)
    seconds: dict[int, list[float]] = {n: [] for n in candidates}
    try:
        with torch.inference_mode():
            for n in candidates:
                torch.set_num_threads(n)
                pair.target(input_ids=ids)
            for _ in range(repeats):
                for n in candidates:
                    torch.set_num_threads(n)
                    t0 = clock()
                    pair.target(input_ids=ids)
                    seconds[n].append(clock() - t0)
    finally:
        torch.set_num_threads(before)
    median = {n: statistics.median(s) for n, s in seconds.items()}
    best = min(median.values())
    return min(n for n in candidates if median[n] <= margin * best)


def default_threads(pair) -> int:
    """The thread count to use for ``pair`` when none is asked for (module docstring)."""
    if pair.device.type != "cpu":
        return torch.get_num_threads()
    n = idle_cores()
    return 1 if n < 2 else fastest_threads(pair, (1, n))
