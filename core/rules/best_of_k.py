"""Best-of-K + BV (after Thomas & Pal 2026, "greedy multi-path block verification"; reconstructed
in docs/maths.md).  Lossless: the selected path has a known law p*, and BV is lossless for any draft
law it is handed.

At every node rank tokens by q/p descending (ties by token id; p = 0 ranks first).  Paths are ordered
lexicographically by rank and the best of the K drafts is selected.  With
F(u) = 1 − Σ_(j≤|u|) p(u_<j)·Σ_(t ranked above u_j) p(t|u_<j) (the chance that one draft is not better
than u), the selected path extends u with probability P*(u) = F(u)^K − (F(u) − p(u))^K, and its
conditionals are p*(x|u) = P*(u·x)/P*(u).  BV then runs on the selected path with draft law p*.
The law of a selected draft, for this score and any other, is ``core.rules.selection``'s.
"""
from __future__ import annotations

from core.data.coins import Coins
from core.data.levels import node_recursion_cost
from core.data.outcome import Outcome
from core.data.nodes import Node
from core.data.token_tree import TokenTree
from core.rules.base import Verifier
from core.rules.selection import RANK, SelectedDraftLaw, selected_output_law, verify_selected


class BestOfKBV(Verifier):
    name = "best_of_k_bv"
    short = "Best-of-K+BV"
    label = "best draft by q/p ranks, then BV"
    color = "#e69f00"  # orange
    summary = ("Select the best of the K drafts by q/p ranks, then run block verification on it, "
               "with the law of the selected draft as p.")
    source = "after Thomas & Pal 2026 (greedy multi-path block verification), reconstructed"
    walk = "block"
    single_draft = False
    order_invariant = True
    lossless_by_theory = True
    needs_models = False
    closed_form_tau = False
    tested_law = "p*"
    how = ("**How best-of-K + BV tests its block.** It picks one of the K drafts (the best by q/p, node by node) "
           "and runs BV on it, with the law p* of that selected draft in place of p: w_i = min(1, "
           "w_(i−1)·q(x_i)/p*(x_i)); the block passes with h = w, a sub-block with h = A/(A + 1 − w), A = Σ_y "
           "(w·q − p*)₊ at that node.")

    def run_chains(self, block: TokenTree, coins: Coins) -> Outcome:
        law = SelectedDraftLaw(RANK, block.p.__getitem__, block.q.__getitem__, block.V, block.L, block.K)
        return verify_selected(law, block, coins, complete=self.complete_trace)

    def model_output_law(self, draft, target, K: int, L: int) -> tuple[dict[Node, float], int]:
        """Exact output law on toy models: BV's node recursion (``block_output_levels``) with the
        selected path's law p* as the draft law (``core.rules.selection.selected_output_law``).

        This rests on the derivation that the best of K i.i.d. drafts has law P*; the tests check
        it against plain enumeration of draft multisets.  Returns the law and the number of nodes.
        """
        return selected_output_law(SelectedDraftLaw(RANK, draft.cond, target.cond, draft.V, L, K), target)

    model_law_cost = staticmethod(node_recursion_cost)
