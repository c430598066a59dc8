"""The judge-corrected family: what a judge's scores on every item say once a few gold labels correct them.

means (``corrected_mean`` / ``corrected_difference``: classical, PPI, PPI++, Rogan-Gladen and calibrated
estimates of a pass rate, mean score or win rate, read from a judgments table), ppi (prediction-powered
inference on arrays, stratified and clustered; ``CorrectionError``), rogan_gladen (a binary pass rate
corrected by the judge's error rates), calibrated_mean (cross-fitted isotonic calibration, then PPI),
label_budget (how many gold labels a target interval width needs), ltt (Learn-then-Test thresholds and
cascades with a guaranteed agreement rate), conformal (split-conformal intervals for judge scores),
alt_test (can this judge replace the human annotators?).

The public names are exported by :mod:`judgelab.stats` (``stats.corrected_mean``, ``stats.label_budget``,
``stats.alt_test``, ...), which guards their arguments; this package re-exports nothing, so each module
stays reachable by its own path (``judgelab.stats.corrected.alt_test`` is the module, not the function).
"""

__all__: list[str] = []
