"""The claims registry (``core.claims``): each registered claim's verdict and numbers on its fixed
instance, every expected value derived independently (by hand in a comment, or by a second
computation), the family verdicts' counts and worst instances, the command line and the refusal of
an instance too large."""
from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from core.analysis.depth_gain import conditional_acceptance, depth_rows
from core.analysis.exact import exact_analysis
from core.analysis.mismatch import mismatched_law, top_k_model
from core.claims import canonical_decomposition as khisti
from core.claims.base import FAILS, HOLDS, Family, Instance, decide
from core.claims.registry import CLAIMS, SOURCES, claims_of, get_claim
from core.errors import InvalidInput
from toy_models import PRESETS, IIDModel

ROOT = Path(__file__).resolve().parents[1]
TOY = PRESETS["binary-toy"]
P, Q = TOY.draft, TOY.target                       # p = (2/3, 1/3), q = (1/3, 2/3)


def exact(x: Fraction):
    return pytest.approx(float(x), abs=1e-12)


def verdict(key: str):
    return decide(get_claim(key))


def test_the_registry_has_at_least_twelve_claims_from_seven_sources_with_unique_keys():
    assert len(CLAIMS) >= 12 and len(SOURCES) >= 7
    assert len({c.key for c in CLAIMS}) == len(CLAIMS)
    assert {c.source.id for c in claims_of("hu-2025")} == {"hu-2025"}
    with pytest.raises(InvalidInput, match="unknown source"):
        claims_of("nope")


def test_bv_is_the_lp_at_k1_on_the_binary_toy():
    # BV on the binary toy at L = 2: 11/9 (Sun et al.'s worked example, docs/maths.md); the LP is solved apart.
    v = verdict("greedy-multipath/bv-optimal-k1")
    assert v.status == HOLDS
    assert v.numbers["bv_expected_accepted"] == exact(Fraction(11, 9)) and v.numbers["lp_optimum"] == exact(Fraction(11, 9))


def test_greedy_multipath_gains_on_the_toy_but_not_on_every_instance():
    v = verdict("greedy-multipath/greedy-gain")
    # best of 2 drafts by q/p: token 1 (q/p = 2) ranks first.  P*(first = 1) = 1 − (2/3)^2 = 5/9, and the
    # value 131/81 is also the LP optimum at K = 2 (test_claims: E_CIC row), computed independently here.
    assert v.status == HOLDS and v.numbers["best_of_k_expected_accepted"] == exact(Fraction(131, 81))
    from core import bounds
    assert float(bounds.optimal_lp(P, Q, 2, 2).value) == exact(Fraction(131, 81))
    fam = verdict("greedy-multipath/greedy-gain-family")
    n, m = fam.held
    assert m == 32 and 0 < n < m and fam.status == FAILS
    worst = fam.numbers["worst"]
    draft, target = fam.instance.models()           # the worst instance reopens and gives the same numbers
    again = exact_analysis("best_of_k_bv", draft, target, worst["K"], worst["L"]).expected_accepted
    assert again == pytest.approx(worst["best_of_k_expected_accepted"], abs=1e-12) and worst["gain"] < 0


def test_traversal_does_not_dominate_td_optimal_on_the_binary_toy():
    v = verdict("delayed-expansion/traversal-dominates")
    # Traversal 115/81 (docs/findings.md, the traversal family's table, from the rule's definition) and
    # td_optimal 128/81 (core.bounds.top_down's docstring), K = 2, L = 2.
    assert v.status == FAILS
    assert v.numbers["traversal"] == exact(Fraction(115, 81)) and v.numbers["td_optimal"] == exact(Fraction(128, 81))
    assert v.numbers["specinfer"] == exact(Fraction(4, 3)) and v.numbers["best_ot"] == "td_optimal"
    # Against SpecTr and SpecInfer alone, Traversal does dominate here.
    assert v.numbers["traversal"] > max(v.numbers["spectr"], v.numbers["specinfer"])


def test_delayed_trees_are_lossless_but_lose_to_the_root_at_an_equal_budget():
    assert verdict("delayed-expansion/delayed-lossless").held == (12, 12)
    v = verdict("delayed-expansion/delayed-beats-root")
    assert v.held == (0, 16) and v.instance.page == "trees" and v.instance.b == (1, 3)
    assert v.instance.query()["b"] == "1,3" and v.instance.query()["shape"] == "tree"


def test_gain_by_depth_on_the_binary_toy():
    # SD at L = 2: P(τ ≥ 1) = Σ min(p, q) = 1/3 + 1/3 = 2/3, P(τ ≥ 2) = 4/9; a_2 = 2/3.
    sd = exact_analysis("sd", P, Q, 1, 2)
    assert conditional_acceptance(sd) == pytest.approx([2 / 3, 2 / 3], abs=1e-12)
    rows = depth_rows({"bv": exact_analysis("bv", P, Q, 1, 2)}, sd)
    # BV: P(τ ≥ 1) = 2/3 and E[τ] = 11/9, so P(τ ≥ 2) = 11/9 − 2/3 = 5/9 (gain 1/9 at depth 2 only).
    assert [r["P(τ ≥ d)"] for r in rows] == pytest.approx([2 / 3, 5 / 9], abs=1e-12)
    assert [r["gain"] for r in rows] == pytest.approx([0.0, 1 / 9], abs=1e-12)


def test_hu_closed_form_and_without_replacement():
    v = verdict("hu-2025/closed-form")
    # α* at K = 2: A = {0}: 1/3 + 1 − (2/3)^2 = 8/9 is the smallest of {1, 8/9, 14/9, 1}.
    assert v.status == HOLDS and v.numbers["closed_form"] == exact(Fraction(8, 9))
    assert verdict("hu-2025/closed-form-family").held == (36, 36)
    wor = verdict("hu-2025/wor-beats-iid")
    assert wor.status == HOLDS and wor.instance.law == "wor"


def test_khisti_two_step_is_optimal_and_theorem_3_matches_the_lp():
    # On the binary toy, two drafts: the multisets {0,0}, {0,1}, {1,1} have P = 4/9, 4/9, 1/9; selecting
    # token 1 from {0,1} gives r = (4/9, 5/9) and Σ min(r, q) = 1/3 + 5/9 = 8/9 = α*.
    assert khisti.two_step_optimum(P.cond(()), Q.cond(()), 2) == exact(Fraction(8, 9))
    # Theorem 3 over S: S = {0}: 1/3 + (1/3)^2 + 2·(2/3)(1/3) = 8/9.
    assert khisti.two_draft_closed_form(P.cond(()), Q.cond(())) == exact(Fraction(8, 9))
    v = verdict("khisti-2025/two-step-optimal")
    assert v.status == HOLDS and abs(v.numbers["difference"]) < 1e-9
    assert verdict("khisti-2025/two-draft-closed-form").held == (24, 24)


def test_medusa_is_lossy_and_greedy_at_t0():
    lossy = verdict("medusa/lossy")
    assert lossy.status == HOLDS and lossy.numbers["fidelity_tv"] > 0.1
    more = verdict("medusa/accepts-more")
    assert more.status == HOLDS and more.numbers["typical"] == pytest.approx(2.0, abs=1e-12)   # every draft passes
    greedy = verdict("medusa/greedy-lossless")
    assert greedy.held == (24, 24) and greedy.instance.T == 0.0
    # At T = 0 on the binary toy p and q are one-hot at 0 and 1: nothing passes, y = argmax q = 1 = q's
    # one sample: E[τ] = 0 and TV 0, computed apart from the family.
    T0 = exact_analysis("typical", P.with_temperature(0.0), Q.with_temperature(0.0), 2, 2)
    assert T0.expected_accepted == 0.0 and T0.fidelity_tv == pytest.approx(0.0, abs=1e-15)


def test_mismatched_draft_law_tv_by_hand():
    # Drafting the argmax (top-1: token 0) but stating p = (2/3, 1/3): SD accepts 0 with min(1, (1/3)/(2/3))
    # = 1/2, else emits 1.  L = 1: output (1/2, 1/2) against q = (1/3, 2/3): TV = 1/6.  L = 2 (derived in
    # docs/findings.md): TV = 1/6 too; stating the sampled law instead gives TV 0.
    top1 = top_k_model(P, 1)
    assert np.allclose(top1.cond(()), [1.0, 0.0])
    for L in (1, 2):
        _, tv = mismatched_law("sd", top1, P, Q, L)
        assert tv == exact(Fraction(1, 6))
        assert mismatched_law("sd", top1, top1, Q, L)[1] == pytest.approx(0.0, abs=1e-12)
    # BV equals SD at L = 1 (one block of one token).
    assert mismatched_law("bv", top1, P, Q, 1)[1] == exact(Fraction(1, 6))
    # With sampled = stated the law is exact_analysis's own (a second computation).
    e, tv = mismatched_law("bv", P, P, Q, 2)
    assert e == exact(Fraction(11, 9)) and tv == pytest.approx(0.0, abs=1e-12)
    v = verdict("transformers-47932/raw-law-is-lossy")
    assert v.status == HOLDS and v.numbers["largest_tv"] == exact(Fraction(2, 9))
    assert verdict("transformers-47932/sampled-law-repairs").status == HOLDS
    with pytest.raises(InvalidInput):
        mismatched_law("traversal", P, P, Q, 1)


def test_spectr_gbv_entries_keep_their_verdicts():
    assert verdict("spectr-gbv/lossless").status == FAILS
    opt = verdict("spectr-gbv/optimal")
    assert opt.status == FAILS and opt.numbers["expected_accepted"] == exact(Fraction(4, 3))
    assert verdict("spectr-gbv/monotone").status == HOLDS


def test_an_instance_too_large_is_refused_in_one_sentence():
    big = Instance(4, 4, draft=IIDModel([0.5, 0.5]).to_json(), target=IIDModel([0.5, 0.5]).to_json())
    with pytest.raises(InvalidInput, match="draft outcomes"):
        big.check()
    with pytest.raises(InvalidInput, match="drafts 21 tokens"):
        Instance(1, 3, preset="binary-toy", b=(1, 4, 4)).check()
    with pytest.raises(InvalidInput, match="past 4,096 draft outcomes"):
        Family(Vs=(2, 5), Ks=(3,), Ls=(2,)).check()                 # 5^6 = 15,625
    with pytest.raises(InvalidInput, match="unknown family 'gauss'"):
        Family(("gauss",)).check()


def test_family_keys_and_link_query():
    fam = Family(("iid",), Vs=(2,), Ks=(1, 2), Ls=(2,), n=2)
    assert len(fam.keys()) == 4
    q = Instance(2, 2, preset="binary-toy", methods=("bv",)).query()
    assert q == {"source": "Preset", "preset": "binary-toy", "K": "2", "L": "2", "T": "1", "methods": "bv"}
    inst = Instance.of(P, Q, 1, 2)
    assert json.loads(inst.query()["p"]) == P.to_json()


def test_the_command_line_prints_every_verdict_as_json():
    out = subprocess.run([sys.executable, "-m", "core", "claims", "--json"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert len(rows) == len(CLAIMS) and len({r["source"] for r in rows}) >= 7
    assert all(r["verdict"] and r["numbers"] is not None for r in rows)
    regimes = {r["claim"]: r["regime"] for r in rows}
    assert regimes["delayed-expansion/delayed-beats-root-premise"].startswith("the source's premise")
    assert regimes["medusa/lossy"] is None                     # one instance: no regime
    one = subprocess.run([sys.executable, "-m", "core", "claims", "--source", "medusa"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert one.returncode == 0 and "medusa/lossy: holds here" in one.stdout
    assert "medusa/greedy-lossless: holds on 24 of 24 instances [every pair:" in one.stdout
    bad = subprocess.run([sys.executable, "-m", "core", "claims", "--source", "x"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "unknown source" in bad.stderr


def test_the_generic_trials_decide_a_new_rule_claim_in_one_entry():
    """``lossless_trial`` and ``beats_trial``, the building blocks a new rule's claims take: BV is
    lossless and beats SD on the binary toy (11/9 against 10/9, +1/9); SpecTr-GBV is not lossless at
    K = 1 (TV 1/9, test_claims)."""
    from core.claims.base import beats_trial, lossless_trial, trial_check

    assert lossless_trial("bv")(P, Q, 1, 2).holds
    gbv = lossless_trial("spectr_gbv")(P, Q, 1, 2)
    assert not gbv.holds and gbv.numbers["fidelity_tv"] == exact(Fraction(1, 9))
    t = beats_trial("bv", "sd", 1)(P, Q, 1, 2)
    assert t.holds and t.margin == exact(Fraction(1, 9))
    status, numbers = trial_check(beats_trial("sd", "bv", 1))(Instance(1, 2, preset="binary-toy"))
    assert status == FAILS and numbers["gain"] == exact(Fraction(-1, 9))


def test_traversal_gains_over_specinfer_deeper_than_the_root():
    """On the binary toy (K = 2, L = 2) SpecInfer and Traversal both accept the first token with 7/9
    (SpecInfer: 2/3·1/2 + 1/3 = 2/3 on the first draft, then the residual (0, 1) takes a second draft
    of 1: + 1/3·1/3), so the root gains nothing; at depth 2 Traversal's a_2 = (115/81 − 7/9)/(7/9) =
    52/63 against SpecInfer's (4/3 − 7/9)/(7/9) = 5/7: a gain of 1/9."""
    from core.claims.delayed_expansion import deeper_gain_trial

    t = deeper_gain_trial(P, Q, 2, 2)
    assert t.holds and t.numbers["gain_by_depth"] == pytest.approx([0.0, 1 / 9], abs=1e-12)
    assert verdict("delayed-expansion/traversal-gains-deeper").held == (16, 16)


# ------------------------------------------------------------------------------------------------
# Regimes, and the verdicts over families shipped with the code
# ------------------------------------------------------------------------------------------------

def test_the_confident_family_shares_its_first_token_with_probability_096():
    """The sweep's ``confident`` family: a Markov pair whose first token is one token c with
    probability 0.96 under both models, the other first tokens sharing the rest, transitions as the
    ``markov`` family draws them (the same seed gives the same transitions)."""
    from core.sweep.config import InstanceKey
    from core.sweep.instances import CONFIDENT_SHARE, instance_models
    for i in range(5):
        draft, target, mix = instance_models(InstanceKey("confident", 3, 2, 2, i), 0)
        c = int(np.argmax(target.initial))
        assert target.initial[c] == pytest.approx(CONFIDENT_SHARE, abs=1e-15) == draft.initial[c]
        assert draft.initial.sum() == pytest.approx(1.0) and target.initial.sum() == pytest.approx(1.0)
        assert 0 <= mix <= 1 and target.transition.shape == (3, 3)


def test_delayed_branching_is_tested_in_its_sources_regime_first_and_wins_there():
    """The issue's measurement, recomputed here with both rules: on 20 pairs of the source's premise
    (V = 3 Markov, first token shared with probability 0.96, random transitions) the tree b = (1, 3)
    beats 2 × 2 chains at the same budget of 4 tokens on 20 of 20 instances, with rrs and with
    traversal; on the generic family it wins on none.  The premise's verdict comes first, and each
    family says which regime it is."""
    from core.claims.base import GENERIC, PREMISE
    from core.claims.delayed_expansion import delayed_beats_root_trial
    from core.sweep.config import InstanceKey
    from core.sweep.instances import instance_models

    for rule in ("rrs", "traversal"):
        wins = [delayed_beats_root_trial(*instance_models(InstanceKey("confident", 3, 2, 2, i), 0)[:2], 2, 2, rule).holds
                for i in range(20)]
        assert sum(wins) == 20, rule
    keys = [c.key for c in CLAIMS]
    premise, generic = (get_claim(f"delayed-expansion/delayed-beats-root{end}") for end in ("-premise", ""))
    assert keys.index(premise.key) < keys.index(generic.key)
    assert (premise.family.regime, generic.family.regime) == (PREMISE, GENERIC)
    assert premise.family.families == ("confident",) and premise.statement == generic.statement
    assert decide(premise).held == (20, 20) and decide(generic).held == (0, 16)
    assert premise.family.regime_words().startswith("the source's premise: a first token")


def test_every_family_claim_names_its_regime():
    """Every family says what it is to its claim: the source's premise (with the premise in words), a
    generic family beside a premise of the same source's statement, or every pair; a generic family
    never stands without the premise beside it."""
    from core.claims.base import GENERIC, PREMISE, REGIMES
    families = [c for c in CLAIMS if c.family is not None]
    assert families
    for c in families:
        assert c.family.regime in REGIMES and c.family.regime_words()
        if c.family.regime == GENERIC:
            assert any(o.family and o.family.regime == PREMISE and o.statement == c.statement for o in families), c.key


def test_the_shipped_family_verdicts_are_the_labs_own():
    """The claims page shows every family verdict at once from ``core/claims/families.json``: each
    shipped verdict is what ``decide`` reaches now (count, status, instance, every number to 1e-7).  A
    rule or trial that moves a verdict fails here: ``python -m core claims --ship`` writes the file
    again."""
    from core.claims import shipped
    families = shipped.family_claims()
    assert set(shipped.load()) == {c.key for c in families}

    def close(a, b, where):
        if isinstance(a, dict):
            assert set(a) == set(b), where
            for k in a:
                close(a[k], b[k], f"{where}.{k}")
        elif isinstance(a, (list, tuple)):
            assert len(a) == len(b), where
            for i, (x, y) in enumerate(zip(a, b)):
                close(x, y, f"{where}[{i}]")
        elif isinstance(a, float) or isinstance(b, float):
            # an LP's optimum from another solve (another form of the LP, another HiGHS) moves by ~1e-10
            assert a == pytest.approx(b, abs=1e-7), where
        else:
            assert a == b, where

    for claim in families:
        kept = shipped.verdict(claim)
        assert kept is not None, f"{claim.key}: not shipped for the claim as it is; run python -m core claims --ship"
        now = decide(claim)
        assert (kept.status, kept.held, kept.words) == (now.status, now.held, now.words), claim.key
        assert kept.instance.query() == now.instance.query(), claim.key
        close(json.loads(json.dumps(now.to_json()["numbers"])), kept.to_json()["numbers"], claim.key)


def test_a_shipped_verdict_is_not_shown_for_a_claim_that_changed(tmp_path, monkeypatch):
    from dataclasses import replace

    from core.claims import shipped
    claim = get_claim("delayed-expansion/delayed-beats-root-premise")
    assert shipped.verdict(claim) is not None
    assert shipped.verdict(replace(claim, family=replace(claim.family, n=19))) is None
    assert shipped.verdict(replace(claim, statement="Something else.")) is None
