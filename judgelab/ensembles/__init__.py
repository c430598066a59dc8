"""Several judges, or a judge and humans, together: panels, cascades, confidence signals, human review.

panels (``judgelab.panel``), cascades (``judgelab.cascade``), confidence (agreement signals such as
position consistency and logprob mass), review (the human-review queue). Modules are imported on
first use.
"""

__all__: list[str] = []
