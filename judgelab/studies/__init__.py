"""Reference analyses: a paper's published numbers, and studies redone on released judge data.

- :func:`paper_table1`: Table 1 of Donati, Savino & Torroni ("Do Large Language Models understand how to be judges?") (24 judges' MAE and Spearman rho), as printed.
- :mod:`judgelab.studies.summeval_study`: the paper's meta-evaluation redone on SummEval with the
  released gpt-3.5-turbo and Llama-2 judges (MAE, rho, positive bias, model-to-model agreement).
- :mod:`judgelab.studies.llmbar_study`: LLMBar accuracy, position consistency and length effects.
- :mod:`judgelab.studies.openqa_study`: OpenQA-eval judges vs the human annotators.

Study functions are named for the table they return (``meta_evaluation_table``, ``accuracy_table``,
``agreement_table`` ...), so none shares a name with the :mod:`judgelab.stats` function it calls;
each returns tidy frames (metric, estimate, ci_low, ci_high, p_value, n, method) that
:mod:`judgelab.viz.plots` and :mod:`judgelab.studies.figures` draw and ``judgelab reproduce`` writes
as CSV.
"""

from judgelab.studies.paper import PAPER_CITATION, paper_table1

__all__ = ["PAPER_CITATION", "paper_table1"]
