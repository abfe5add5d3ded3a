"""Analysis of the rules on toy models: seeded drafts from a toy model (``toy_drafts``), exact laws of
τ and of the output (``exact``), Monte Carlo with confidence intervals (``montecarlo``), the reconstruction of
SpecTr-GBV's Algorithm 2 (``compensation``), where a rule gains by depth (``depth_gain``) and a
draft verified with a law other than the one it was sampled from (``mismatch``).  The verdicts on
papers' claims are the layer above, ``core.claims``."""
