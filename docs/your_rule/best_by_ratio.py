"""Best-by-ratio + BV: the draft of largest q(x)/p(x), verified against its own law p* (lossless)."""
import math

from core.rules.base import Verifier
from core.rules.selection import SelectedDraftLaw, selected_output_law, verify_selected


def ratio(path, p_cond, q_cond):   # the selection score: q(x)/p(x) of the whole block x
    return math.prod(q_cond(path[:i])[t] / p_cond(path[:i])[t] for i, t in enumerate(path))


class BestByRatio(Verifier):
    name = "best_by_ratio"
    short = "Ratio+BV"
    label = "the draft of largest q(x)/p(x), verified against its own law"
    summary = "Keep the draft whose block has the largest q(x)/p(x) and verify it by block verification against p*."
    source = "docs/your_rule.md, an example"
    single_draft = False
    order_invariant = False       # equal scores go to the first draft: the order matters
    lossless_by_theory = True
    needs_models = True           # p* of this score reads every path of the models
    closed_form_tau = False

    def __init__(self, draft, target, K, L):
        self.selection = SelectedDraftLaw(ratio, draft.cond, target.cond, draft.V, L, K)

    def run_chains(self, block, coins):
        return verify_selected(self.selection, block, coins)

    def model_output_law(self, draft, target, K, L):
        return selected_output_law(self.selection, target)
