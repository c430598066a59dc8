"""The chess feature-context builder on a short PGN, with and without Stockfish."""

from __future__ import annotations

import pytest

from judgelab.rubrics.chess_commentary import context_flags
from judgelab.rubrics.chess_features import analyse_pgn, feature_items, find_stockfish, linearise, win_percent
from tests.rubrics.rubric_helpers import EXAMPLES

PGN = EXAMPLES / "chess_short.pgn"  # the Scholar's mate with [%eval] comments


def test_win_percent_formula() -> None:
    assert win_percent(0) == 50
    assert win_percent(None) is None
    assert win_percent(300) == pytest.approx(50 + 50 * (2 / (1 + 2.718281828459045 ** (-0.00368208 * 300)) - 1))
    assert win_percent(-10000) < 0.01


def test_without_stockfish_uses_pgn_evals() -> None:
    moves = analyse_pgn(PGN, engine_path=None)
    assert [m.san for m in moves] == ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]
    qh5, nf6, mate = moves[4], moves[5], moves[6]
    assert qh5.eval_source == "pgn" and qh5.eval_before_cp == 30 and qh5.eval_after_cp == 10
    assert qh5.swing_cp_for_mover == -20 and qh5.mate_threat is True  # Qxf7# is threatened
    assert nf6.swing_cp_for_mover == -440 and nf6.quality == "blunder"  # for Black, the swing is bad
    assert {(h.piece, h.square, h.value) for h in nf6.hanging_pieces} == {("queen", "h5", 9), ("pawn", "e4", 1)}
    assert mate.checkmate and mate.check and mate.capture and mate.captured_piece == "pawn"
    assert mate.eval_after_cp == 10000 and mate.mate_after == 0  # mated position, no engine needed
    assert moves[0].eval_before_cp is None and moves[0].swing_cp_for_mover is None  # start has no comment


def test_without_any_eval_gives_na() -> None:
    moves = analyse_pgn("1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 *", engine_path=None)
    assert all(m.eval_source == "NA" and m.eval_after_cp is None for m in moves)
    assert moves[6].capture and not moves[6].trade and moves[7].trade  # Bxc6 dxc6: bishop for knight
    assert "eval_after_cp: NA" in linearise(moves[0])


def test_promotion_and_linearised_flags_round_trip() -> None:
    moves = analyse_pgn('[FEN "8/4P3/8/8/8/8/k7/4K3 w - - 0 1"]\n[SetUp "1"]\n\n1. e8=Q *', engine_path=None)
    assert moves[0].promotion and moves[0].promoted_to == "queen"
    text = linearise(moves[0])
    assert "promotion: queen" in text
    assert context_flags(text) == moves[0].flags()
    items = feature_items(PGN, engine_path=None)
    assert items[-1]["item_id"] == "move-7" and items[-1]["features"]["checkmate"] is True


def test_bad_pgn_is_a_clear_error() -> None:
    with pytest.raises(FileNotFoundError, match="PGN file not found"):
        analyse_pgn("missing.pgn", engine_path=None)
    with pytest.raises(ValueError, match="PGN has errors"):
        analyse_pgn("1. e4 e5 2. Ke5 *", engine_path=None)


@pytest.mark.skipif(find_stockfish() is None, reason="Stockfish is not installed (apt-get install stockfish)")
def test_with_stockfish() -> None:
    moves = analyse_pgn(PGN, engine_path="auto", depth=6)
    assert all(m.eval_source == "stockfish depth 6" for m in moves)
    assert all(m.eval_before_cp is not None and m.eval_after_cp is not None for m in moves)
    nf6 = moves[5]
    assert nf6.mate_after is not None and nf6.mate_after > 0  # White mates in one after Nf6
    assert nf6.win_pct_white_after == pytest.approx(100, abs=0.01) and nf6.quality == "blunder"
    assert "eval_source: stockfish depth 6" in linearise(nf6)
