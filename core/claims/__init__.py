"""Claims from papers and trackers, each with a verdict computed here, never assumed.

============================  ============================================================================
``base``                      a claim's parts (source, instance, family) and how a verdict is reached
``registry``                  every claim, grouped by source
``spectr_gbv``                SpecTr-GBV (Lin et al. 2026), with its seeded counterexample search
``greedy_multipath``          Thomas & Pal, arXiv 2602.16961
``delayed_expansion``         Thomas, Kitanovski, Goldblum & Pal, arXiv 2602.16994
``optimal_multidraft``        Hu et al., ICLR 2025, arXiv 2502.18779
``canonical_decomposition``   Khisti et al., ICLR 2025, arXiv 2410.18234
``typical_acceptance``        Medusa's typical acceptance (arXiv 2401.10774; vLLM issue 5015)
``mismatched_draft``          verifying with a law other than the one sampled (transformers issue 47932)
``hierarchical_speculative``  Zhou et al., ICLR 2026, arXiv 2601.05724, as released
``eagle_verification``        EAGLE's released sampling verification (SafeAILab/EAGLE; issues 110, 93)
``exact_match_acceptance``    exact-match acceptance at T > 0 (llama.cpp PR 27694, mlx-swift-lm PR 459)
============================  ============================================================================

This layer sits above ``core.analysis`` and ``core.sweep`` (family verdicts run on the sweep engine)
and below ``core.cli``; it never imports streamlit or plotly.
"""
