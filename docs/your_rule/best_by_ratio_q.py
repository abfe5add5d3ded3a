"""Best-by-ratio + BV with a deliberate mistake: the correction is drawn from q(·|s) instead of the
residual, so the output law is no longer q's (docs/your_rule.md, the lossy example)."""
import math

from core.data.outcome import Outcome
from core.rules.base import Verifier
from core.rules.selection import SelectedDraftLaw, selected_output_law, verify_selected


def ratio(path, p_cond, q_cond):   # the selection score: q(x)/p(x) of the whole block x
    return math.prod(q_cond(path[:i])[t] / p_cond(path[:i])[t] for i, t in enumerate(path))


class BestByRatioQ(Verifier):
    name = "best_by_ratio_q"
    short = "Ratio+BV, y ~ q"
    label = "the draft of largest q(x)/p(x), its correction drawn from the target"
    summary = "Keep the draft of largest q(x)/p(x), verify it against p* and draw the next token from q."
    source = "docs/your_rule.md, an example of a lossy rule"
    single_draft = False
    order_invariant = False
    lossless_by_theory = False
    needs_models = True
    closed_form_tau = False

    def __init__(self, draft, target, K, L):
        self.selection = SelectedDraftLaw(ratio, draft.cond, target.cond, draft.V, L, K)

    def run_chains(self, block, coins):
        out = verify_selected(self.selection, block, coins)
        return Outcome(out.accepted, out.draft, block.q[out.accepted], out.trace)

    def model_output_law(self, draft, target, K, L):
        law, nodes = selected_output_law(self.selection, target)
        accepted = {}
        for u, mass in law.items():              # P(s) = Σ_y P(O = s·y): the same blocks are kept
            accepted[u[:-1]] = accepted.get(u[:-1], 0.0) + mass
        return {s + (y,): m * target.cond(s)[y] for s, m in accepted.items() for y in range(target.V)}, nodes
