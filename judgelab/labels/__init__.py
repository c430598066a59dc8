"""Human labels collected in the notebook: questions, an append-only label store, and a labelling session.

questions (``Question``: a score on a scale with anchors, a label from a set, a pairwise winner, a note;
``read_questions`` reads a rubric or small mappings), store (``LabelStore``: the append-only SQLite file of
labelling events, safe for several annotators and across kernel restarts), session (``LabelSession``: label,
undo, skip, resume, and the labels as a judgments table), feedback (``live_feedback``: the corrected mean, judge-human
kappa, annotators' alpha and labels needed after each label), simulation (coverage of the selection strategies), adjudication (the queue of items annotators disagree on; the
adjudicated labels as their own rater), replay (a simulated annotator replaying released labels; the corrected
estimate after the first k labels). ``judgelab.viz.Labeler`` is the widget over a session.
"""

from judgelab.labels.adjudication import ADJUDICATED, adjudicated_labels, adjudication_queue
from judgelab.labels.feedback import feedback_html, live_feedback
from judgelab.labels.questions import LabelError, Question, read_questions
from judgelab.labels.replay import estimate_path, replay_labels
from judgelab.labels.session import LabelSession, human_judge
from judgelab.labels.store import STORE_VERSION, LabelStore, LabelStoreError

__all__ = ["ADJUDICATED", "STORE_VERSION", "LabelError", "LabelSession", "LabelStore", "LabelStoreError", "Question",
           "adjudicated_labels", "adjudication_queue", "estimate_path", "feedback_html", "human_judge", "live_feedback", "read_questions", "replay_labels"]
