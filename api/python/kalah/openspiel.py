"""Adapters for OpenSpiel's ``mancala`` game (Kalah(6,4), this project's ``standard`` rule).

OpenSpiel's board is 14 cells (open_spiel/games/mancala/mancala.cc)::

    cell:   13 12 11 10  9  8        <- player 1's pits, sown 8 -> 13, then its store at 0
          0                    7     <- stores: player 1's at 0, player 0's at 7
             1  2  3  4  5  6        <- player 0's pits, sown 1 -> 6, then its store at 7

Player 0 moves first: it is South here (cells 1..6 are A1..A6, cell 7 South's store);
player 1 is North (cells 8..13 are B1..B6, cell 0 North's store). An action is the cell
of the pit emptied (1..6 or 8..13), so pit i (0-based) of the mover is action i + 1 for
player 0 and i + 8 for player 1. Opposite cells sum to 14 (A1 = 1 faces B6 = 13), as in
rules.md. OpenSpiel leaves the rows unswept at the end; its returns count them as swept.

A state is read through the public pyspiel surface: ``current_player()``,
``observation_tensor(0)`` (the 14 cells, then the player to move and the move number),
``is_terminal()``, ``legal_actions()``, ``returns()``.
"""

from . import legal_moves, normalize, to_tuple

CELLS = 14
SOUTH_STORE = 7
NORTH_STORE = 0


def cells_to_position(cells, player):
    """The project's position (text) of OpenSpiel's 14 cells with ``player`` (0 or 1) to move."""
    cells = [int(c) for c in cells]
    if len(cells) != CELLS:
        raise ValueError("an OpenSpiel mancala board has 14 cells, not {}".format(len(cells)))
    return normalize(((cells[1:7], cells[8:14]), (cells[SOUTH_STORE], cells[NORTH_STORE]),
                      player))


def position_to_cells(position):
    """OpenSpiel's 14 cells and the player to move (0 or 1) of a 6-pit position."""
    (south, north), (store_s, store_n), to_move = to_tuple(position)
    if len(south) != 6:
        raise ValueError("OpenSpiel's mancala has 6 pits a side, not {}".format(len(south)))
    return [store_n] + list(south) + [store_s] + list(north), to_move


def state_to_position(state):
    """The project's position of a pyspiel mancala state (cells and the player to move
    from ``observation_tensor(0)``)."""
    obs = list(state.observation_tensor(0))
    return cells_to_position(obs[:CELLS], int(obs[CELLS]))


def action_to_move(action, player):
    """The move text (``A3``, ``B5``) of an OpenSpiel action by ``player``."""
    if player == 0 and 1 <= action <= 6:
        return "A{}".format(action)
    if player == 1 and 8 <= action <= 13:
        return "B{}".format(action - 7)
    raise ValueError("action {} is not a pit of player {}".format(action, player))


def move_to_action(move):
    """The OpenSpiel action of a move text (``A3`` -> 3, ``B5`` -> 12; a suffix is ignored)."""
    side, pit = move[0], int(move[1])
    if side == "A":
        return pit
    if side == "B":
        return pit + 7
    raise ValueError("a move is A1..A6 or B1..B6, not {!r}".format(move))


class PerfectBot:
    """A perfect player with the shape of ``pyspiel.Bot``: ``step(state)`` returns one of
    the best actions (the first in pit order, or a random one with ``rng``)."""

    def __init__(self, tablebase, rule="standard", rng=None):
        self._tb = tablebase
        self._rule = rule
        self._rng = rng

    def restart_at(self, state):
        pass

    def inform_action(self, state, player_id, action):
        pass

    def provides_policy(self):
        return True

    def _best_actions(self, state):
        return [move_to_action(m) for m in self._tb.best_moves(state_to_position(state),
                                                              self._rule)]

    def step_with_policy(self, state):
        """A uniform policy over the best actions, and the action chosen."""
        best = self._best_actions(state)
        policy = [(a, 1.0 / len(best)) for a in best]
        action = self._rng.choice(best) if self._rng else best[0]
        return policy, action

    def step(self, state):
        return self.step_with_policy(state)[1]


class PerfectEvaluator:
    """An evaluator with the shape of OpenSpiel's MCTS ``Evaluator``
    (open_spiel/python/algorithms/mcts.py): ``evaluate(state)`` returns one value per player,
    ``prior(state)`` (action, probability) pairs.

    ``scale="result"``: +1 / 0 / -1 for a won / drawn / lost game under perfect play, the
    scale of OpenSpiel's ``returns()``. ``scale="margin"``: the final margin divided by the
    48 seeds. The prior is uniform over the best actions."""

    def __init__(self, tablebase, rule="standard", scale="result"):
        if scale not in ("result", "margin"):
            raise ValueError("scale must be 'result' or 'margin'")
        self._tb = tablebase
        self._rule = rule
        self._scale = scale

    def evaluate(self, state):
        v = self._tb.value(state_to_position(state), self._rule)
        if self._scale == "result":
            v = (v > 0) - (v < 0)
        else:
            v = v / 48.0
        return [float(v), float(-v)]

    def prior(self, state):
        position = state_to_position(state)
        if not legal_moves(position):
            return []
        best = [move_to_action(m) for m in self._tb.best_moves(position, self._rule)]
        return [(a, 1.0 / len(best)) for a in best]

