"""Feature contexts for the chess_commentary rubric, built from a PGN with python-chess.

Per move (ply): evaluation before/after and the swing, win %, check / checkmate, capture and
trade, hanging pieces and their value, promotion, mate threat -- linearised in the
``key: value`` / ``flags: check=no, ...`` form the rubric's prompt shows and its hard-rule check
reads (:func:`judgelab.rubrics.chess_commentary.context_flags`).

Evaluation source, in order: Stockfish (``engine_path``; "auto" finds ``stockfish`` on PATH or
/usr/games/stockfish) at a fixed depth; else the PGN's own ``[%eval ...]`` comments; else NA.
Pass ``engine_path=None`` to skip the engine.

Definitions (stated so that the numbers can be checked):
* eval is in centipawns from White's point of view; a forced mate counts as +/-10000 cp (and is
  also reported as ``mate in N``);
* win % (White) = 50 + 50 * (2 / (1 + exp(-0.00368208 * cp)) - 1), Lichess's formula;
* swings are "for the mover": positive means the move improved the mover's position;
* move quality label from the mover's win % drop, Lichess-style: >= 15 points blunder, >= 10
  mistake, >= 5 inaccuracy (Lichess's 0.3 / 0.2 / 0.1 thresholds on its -1..1 winning-chance scale);
* capture: the move takes a piece (en passant included); trade: the move recaptures, on the same
  square, a piece of the same value as the one captured by the previous move;
* hanging piece: a non-king piece attacked by the opponent and defended by no own piece
  (a simple attack/defence count, not a static exchange evaluation);
* mate threat: after the move, the mover would have a mate in one if it could move again
  (null-move test; NA when the opponent is in check), or the engine reports a forced mate for the mover.
"""

from __future__ import annotations

import io
import math
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import chess
import chess.engine
import chess.pgn

__all__ = [
    "MATE_CP", "PIECE_VALUES", "WIN_PCT_K", "analyse_pgn", "feature_items", "find_stockfish",
    "hanging_pieces", "HangingPiece", "linearise", "move_quality", "MoveFeatures", "read_game",
    "threatens_mate_in_one", "win_percent",
]

PIECE_VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}
MATE_CP = 10000
WIN_PCT_K = 0.00368208


def win_percent(cp: float | None) -> float | None:
    """White's win % from a centipawn eval (Lichess's formula); None for NA."""
    if cp is None:
        return None
    return 50 + 50 * (2 / (1 + math.exp(-WIN_PCT_K * cp)) - 1)


def move_quality(win_pct_drop_for_mover: float | None) -> str | None:
    if win_pct_drop_for_mover is None:
        return None
    d = win_pct_drop_for_mover
    return "blunder" if d >= 15 else "mistake" if d >= 10 else "inaccuracy" if d >= 5 else "ok"


@dataclass
class HangingPiece:
    color: str
    piece: str
    square: str
    value: int


@dataclass
class MoveFeatures:
    ply: int
    move_number: int
    mover: str  # "white" / "black"
    san: str
    uci: str
    description: str
    eval_source: str  # "stockfish depth N", "pgn", or "NA"
    eval_before_cp: float | None
    eval_after_cp: float | None
    mate_before: int | None
    mate_after: int | None
    swing_cp_for_mover: float | None
    win_pct_white_before: float | None
    win_pct_white_after: float | None
    win_pct_swing_for_mover: float | None
    quality: str | None
    check: bool
    checkmate: bool
    capture: bool
    captured_piece: str | None
    captured_value: int | None
    trade: bool
    promotion: bool
    promoted_to: str | None
    hanging_piece: bool
    hanging_pieces: list[HangingPiece] = field(default_factory=list)
    mate_threat: bool | None = None

    def flags(self) -> dict[str, bool | None]:
        return {k: getattr(self, k) for k in
                ("check", "checkmate", "capture", "trade", "promotion", "hanging_piece", "mate_threat")}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------------------ evaluation
class _Evaluator:
    """Gives White-POV (cp, mate) for a position: engine, else PGN comment, else NA."""

    def __init__(self, engine_path: str | None, depth: int) -> None:
        self.depth = depth
        self.engine: chess.engine.SimpleEngine | None = None
        if engine_path:
            self.engine = chess.engine.SimpleEngine.popen_uci(engine_path)

    @property
    def source(self) -> str:
        return f"stockfish depth {self.depth}" if self.engine else "pgn"

    def engine_eval(self, board: chess.Board) -> tuple[float | None, int | None]:
        assert self.engine is not None
        info = self.engine.analyse(board, chess.engine.Limit(depth=self.depth))
        return _score_tuple(info["score"])

    def close(self) -> None:
        if self.engine is not None:
            self.engine.quit()


def _score_tuple(pov: chess.engine.PovScore | None) -> tuple[float | None, int | None]:
    if pov is None:
        return None, None
    white = pov.white()
    return float(white.score(mate_score=MATE_CP)), white.mate()


def find_stockfish() -> str | None:
    return shutil.which("stockfish") or ("/usr/games/stockfish" if Path("/usr/games/stockfish").exists() else None)


# ------------------------------------------------------------------------------ board features
def hanging_pieces(board: chess.Board) -> list[HangingPiece]:
    out = []
    for square, piece in board.piece_map().items():
        if piece.piece_type == chess.KING:
            continue
        if board.attackers(not piece.color, square) and not board.attackers(piece.color, square):
            out.append(HangingPiece(_color(piece.color), chess.piece_name(piece.piece_type), chess.square_name(square),
                                    PIECE_VALUES[piece.piece_type]))
    return sorted(out, key=lambda h: (-h.value, h.square))


def threatens_mate_in_one(board: chess.Board) -> bool | None:
    """Would the side that just moved mate in one if it could move again? None if in check."""
    if board.is_check() or board.is_game_over():
        return None
    probe = board.copy(stack=False)
    probe.push(chess.Move.null())
    for move in probe.legal_moves:
        probe.push(move)
        mate = probe.is_checkmate()
        probe.pop()
        if mate:
            return True
    return False


def _color(c: bool) -> str:
    return "white" if c == chess.WHITE else "black"


def _captured(board: chess.Board, move: chess.Move) -> chess.Piece | None:
    if board.is_en_passant(move):
        return chess.Piece(chess.PAWN, not board.turn)
    return board.piece_at(move.to_square)


def _describe(board: chess.Board, move: chess.Move, captured: chess.Piece | None) -> str:
    piece = board.piece_at(move.from_square)
    assert piece is not None
    text = f"{_color(piece.color)} {chess.piece_name(piece.piece_type)} from {chess.square_name(move.from_square)}"
    if board.is_castling(move):
        return f"{_color(piece.color)} castles {'kingside' if board.is_kingside_castling(move) else 'queenside'}"
    if captured:
        text += f" takes {chess.piece_name(captured.piece_type)} on {chess.square_name(move.to_square)}"
    else:
        text += f" to {chess.square_name(move.to_square)}"
    if move.promotion:
        text += f", promotes to {chess.piece_name(move.promotion)}"
    return text


# ------------------------------------------------------------------------------ the builder
def read_game(pgn: str | Path | io.TextIOBase, game_index: int = 0) -> chess.pgn.Game:
    """A game from PGN text, a .pgn path, or an open text stream."""
    if isinstance(pgn, Path) or (isinstance(pgn, str) and pgn.endswith(".pgn") and "\n" not in pgn):
        path = Path(pgn)
        if not path.exists():
            raise FileNotFoundError(f"PGN file not found: {path}")
        stream: Any = io.StringIO(path.read_text(encoding="utf-8"))
    elif isinstance(pgn, str):
        stream = io.StringIO(pgn)
    else:
        stream = pgn
    game = None
    for _ in range(game_index + 1):
        game = chess.pgn.read_game(stream)
        if game is None:
            raise ValueError(f"the PGN holds fewer than {game_index + 1} game(s)")
    assert game is not None
    if game.errors:
        raise ValueError(f"the PGN has errors: {game.errors[0]}")
    return game


def analyse_pgn(
    pgn: str | Path | io.TextIOBase,
    *,
    engine_path: str | None = "auto",
    depth: int = 10,
    game_index: int = 0,
) -> list[MoveFeatures]:
    """Features for every move of the game (see the module docstring for the definitions)."""
    game = read_game(pgn, game_index)
    path = find_stockfish() if engine_path == "auto" else engine_path
    evaluator = _Evaluator(path, depth)
    try:
        nodes = list(game.mainline())
        boards = [game.board()]
        for node in nodes:
            boards.append(node.board())
        # White-POV evals for every position: index 0 = start, i = after ply i
        if evaluator.engine:
            evals = [evaluator.engine_eval(b) for b in boards]
            source = evaluator.source
        else:
            pgn_evals = [_score_tuple(game.eval())] + [_score_tuple(n.eval()) for n in nodes]
            has_any = any(cp is not None for cp, _ in pgn_evals)
            evals = pgn_evals
            source = "pgn" if has_any else "NA"
        # a mated position needs no engine: the side to move is lost
        evals = [(-MATE_CP if b.turn == chess.WHITE else MATE_CP, 0) if b.is_checkmate() else e
                 for b, e in zip(boards, evals, strict=True)]
        out: list[MoveFeatures] = []
        prev_capture: tuple[int, int] | None = None  # (square, value) captured by the previous ply
        for i, node in enumerate(nodes):
            before, after = boards[i], boards[i + 1]
            move = node.move
            mover_is_white = before.turn == chess.WHITE
            captured = _captured(before, move) if before.is_capture(move) else None
            captured_value = PIECE_VALUES[captured.piece_type] if captured else None
            trade = bool(captured and prev_capture and prev_capture == (move.to_square, captured_value))
            prev_capture = (move.to_square, captured_value) if captured else None
            (cp_b, mate_b), (cp_a, mate_a) = evals[i], evals[i + 1]
            sign = 1 if mover_is_white else -1
            swing = None if cp_b is None or cp_a is None else sign * (cp_a - cp_b)
            wb, wa = win_percent(cp_b), win_percent(cp_a)
            wswing = None if wb is None or wa is None else sign * (wa - wb)
            hanging = hanging_pieces(after)
            threat = threatens_mate_in_one(after)
            mover_mates = mate_a is not None and mate_a != 0 and (mate_a > 0) == mover_is_white
            if mover_mates and not after.is_checkmate():
                threat = True
            out.append(
                MoveFeatures(
                    ply=i + 1,
                    move_number=before.fullmove_number,
                    mover=_color(before.turn),
                    san=before.san(move),
                    uci=move.uci(),
                    description=_describe(before, move, captured),
                    eval_source=source,
                    eval_before_cp=cp_b,
                    eval_after_cp=cp_a,
                    mate_before=mate_b,
                    mate_after=mate_a,
                    swing_cp_for_mover=swing,
                    win_pct_white_before=wb,
                    win_pct_white_after=wa,
                    win_pct_swing_for_mover=wswing,
                    quality=move_quality(None if wswing is None else -wswing),
                    check=after.is_check(),
                    checkmate=after.is_checkmate(),
                    capture=captured is not None,
                    captured_piece=chess.piece_name(captured.piece_type) if captured else None,
                    captured_value=captured_value,
                    trade=trade,
                    promotion=move.promotion is not None,
                    promoted_to=chess.piece_name(move.promotion) if move.promotion else None,
                    hanging_piece=bool(hanging),
                    hanging_pieces=hanging,
                    mate_threat=threat,
                )
            )
        return out
    finally:
        evaluator.close()


def _fmt(value: float | None, signed: bool = False, digits: int = 0) -> str:
    if value is None:
        return "NA"
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return text


def _yn(value: bool | None) -> str:
    return "NA" if value is None else "yes" if value else "no"


def linearise(f: MoveFeatures) -> str:
    """The feature context text the chess_commentary rubric expects."""
    number = f"{f.move_number}." if f.mover == "white" else f"{f.move_number}..."
    mate_note = "" if f.mate_after is None else " (checkmate)" if f.mate_after == 0 else f" (mate in {f.mate_after})"
    lines = [
        f"move: {number} {f.san} ({f.description})",
        f"eval_source: {f.eval_source}",
        f"eval_before_cp: {_fmt(f.eval_before_cp)} (White's view)",
        f"eval_after_cp: {_fmt(f.eval_after_cp)} (White's view){mate_note}",
        f"eval_swing_cp_for_mover: {_fmt(f.swing_cp_for_mover, signed=True)}",
        f"win_pct_white_before: {_fmt(f.win_pct_white_before, digits=1)}",
        f"win_pct_white_after: {_fmt(f.win_pct_white_after, digits=1)}",
        f"win_pct_swing_for_mover: {_fmt(f.win_pct_swing_for_mover, signed=True, digits=1)}",
        f"move_quality: {f.quality or 'NA'}",
        "flags: " + ", ".join(f"{k}={_yn(v)}" for k, v in f.flags().items()),
        f"captured: {f.captured_piece} (value {f.captured_value})" if f.capture else "captured: none",
        f"promotion: {f.promoted_to}" if f.promotion else "promotion: none",
        "hanging: " + ("; ".join(f"{h.color} {h.piece} on {h.square} (value {h.value})" for h in f.hanging_pieces)
                       if f.hanging_pieces else "none"),
    ]
    return "\n".join(lines)


def feature_items(pgn: str | Path | io.TextIOBase, *, item_prefix: str = "move", **kwargs: Any) -> list[dict[str, Any]]:
    """One dict per move with item_id, ply, san, context (linearised) and features (flags dict).

    Add candidate_a / candidate_b commentaries to these to judge them with chess_commentary.
    """
    return [
        {"item_id": f"{item_prefix}-{f.ply}", "ply": f.ply, "san": f.san, "context": linearise(f),
         "features": f.flags()}
        for f in analyse_pgn(pgn, **kwargs)
    ]
