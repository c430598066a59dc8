"""Donati, Savino & Torroni's published Table 1, transcribed: 24 judges' MAE and Spearman rho against one expert.

Source: N. Donati, G. Savino, P. Torroni, "Do Large Language Models understand how to be judges?",
Table 1 ("Meta-Evaluation result of the tested models"): 250 evaluations (50 Italian news summaries
x 5 criteria), each judge's 1-5 scores against one expert annotator's, pooled over criteria.
These are the paper's printed numbers (not data the project computed); ``paper_table1.csv`` holds
them exactly as printed and a test checks every value against the text of the paper.

Transcription notes:
- ``size_b`` (billions of parameters) is read from the model name; the GPT models' sizes are not
  published, so theirs is empty and they are left out of size plots.
- The paper's text (as extracted) prints "GPT 40 mini" (an OCR slip for "GPT 4o mini"); ``printed_as`` keeps it.
- The paper's prose disagrees with its table in places (it calls the row with MAE 1.04 and
  rho 0.277 "GPT-4o-mini", while the table labels it "GPT o4 mini"); the table is taken as printed.
- The paper reports no intervals, only two-sided p-values; p printed as 0.000 means p < 0.0005.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["PAPER_CITATION", "PAPER_N", "PAPER_SHORT", "TABLE1_CSV", "paper_table1"]

TABLE1_CSV = Path(__file__).with_name("paper_table1.csv")
PAPER_CITATION = ("Donati, Savino & Torroni, \"Do Large Language Models understand how to be judges?\", "
                  "Table 1 (250 evaluations: 50 summaries x 5 criteria, one expert annotator)")
PAPER_SHORT = "Donati et al."  # how captions name the paper
PAPER_N = 250


def paper_table1() -> pd.DataFrame:
    """The paper's Table 1: model, family, size_b, mae, spearman_rho, p_value, printed_as, n, source."""
    table = pd.read_csv(TABLE1_CSV, dtype={"model": str, "family": str, "printed_as": str})
    table["printed_as"] = table["printed_as"].fillna("")
    table["n"] = PAPER_N
    table["source"] = PAPER_CITATION
    return table
