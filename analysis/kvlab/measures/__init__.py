"""Measures of one run: summaries and Student's t intervals (stats), latency histograms
merged across rounds (histograms), steadiness within a window (slices), the declared
comparisons' per-round ratios (declared_ratios), the alternation's paired slices
(alternation) and what an interval decides (ratio_verdicts). Pure functions over
figures and files; no process is started here."""

from __future__ import annotations
