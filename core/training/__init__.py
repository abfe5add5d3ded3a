"""Training of the shipped SmolLM2 draft (``smollm2_draft``), built on the decoding layer."""
