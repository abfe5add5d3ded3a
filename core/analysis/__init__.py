"""Analysis of the rules on toy models: seeded sampling (``sampling``), exact laws of τ and of the
output (``exact``), Monte Carlo with confidence intervals (``montecarlo``), the reconstruction of
SpecTr-GBV's Algorithm 2 (``compensation``) and the verdicts on the paper's claims (``claims``)."""
