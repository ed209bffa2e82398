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
Its draw past move 1000 is not modelled.

A state is read through the public pyspiel surface: ``current_player()``,
``observation_tensor(0)``, ``legal_actions()``. The tensor has two forms, both read:
the 14 cells (OpenSpiel v1.1.1 .. v1.6.15) and the 14 cells, the player to move and the
move number (v2.0 on, OpenSpiel commit 40d80321). The player to move comes from
``current_player()`` in both (a finished game has none; its value does not depend on it).
api/tests/openspiel_playthroughs.py holds OpenSpiel's recorded games of both forms.

When ``pyspiel`` imports, ``PerfectBot`` is a ``pyspiel.Bot`` (``pyspiel.evaluate_bots``
and OpenSpiel's C++ bots code take it); when ``open_spiel.python.algorithms.mcts`` imports,
the evaluators subclass ``mcts.Evaluator`` (for ``mcts.MCTSBot``). Without them they are
plain classes with the same methods.

**Budgets and fallback.** A step, an evaluation or a prior values positions exactly from
the database, else by a proven search, within ``node_limit`` nodes and ``time_limit``
seconds for the whole call (0: none), shared by the moves it values. Once the budget is
spent, the remaining moves are still looked up in the database (one node each). A node
budget counts search nodes, not the database reads they make: with a large database on
disk only ``time_limit`` bounds the time (results/api.md, "OpenSpiel"). When a value is
still unknown the call falls back: ``PerfectBot`` to its ``fallback`` bot (any object with
``step(state)``, e.g. OpenSpiel's ``MCTSBot``), else to the move whose whole turn leaves
the mover the best store difference; the evaluators to their ``fallback`` evaluator, by
default ``StoreDifferenceEvaluator``. Each counts in ``sources`` how its calls were
answered: "database", "book" (some value came from the opening books built into the
module, none needed a search), "search" (some value needed a search) or "fallback".
"""

import collections
import time

from . import legal_moves, normalize, play, to_tuple

try:
    import pyspiel as _pyspiel

    _BotBase = _pyspiel.Bot
except ImportError:
    _BotBase = object
try:
    from open_spiel.python.algorithms.mcts import Evaluator as _EvaluatorBase
except ImportError:
    _EvaluatorBase = object

CELLS = 14
SOUTH_STORE = 7
NORTH_STORE = 0
SEEDS = 48
INVALID_ACTION = -1  # pyspiel.INVALID_ACTION: a bot's action in a finished game


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
    """The project's position of a pyspiel mancala state: the cells from
    ``observation_tensor(0)`` (either form), the player to move from ``current_player()``."""
    obs = [int(x) for x in state.observation_tensor(0)]
    if len(obs) not in (CELLS, CELLS + 2):
        raise ValueError("an OpenSpiel mancala observation has 14 or 16 numbers, not {}".format(
            len(obs)))
    player = state.current_player()
    if player not in (0, 1):  # a finished game (-4): 2.x still records the last turn
        player = obs[CELLS] if len(obs) > CELLS else 0
    elif len(obs) > CELLS and obs[CELLS] != player:
        raise ValueError("observation says player {} moves, current_player() {}".format(
            obs[CELLS], player))
    return cells_to_position(obs[:CELLS], player)


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


def _mover_sign(position):
    return 1 if to_tuple(position)[2] == 0 else -1


def _store_difference(position):
    """South's store minus North's."""
    _, (south, north), _ = to_tuple(position)
    return south - north


def _turn_score(position, rule, sign):
    """The best store difference a turn can leave the mover (sign: +1 South, -1 North, its
    view) when the turn passes, following its extra moves; a finished game's final margin."""
    (south, north), (store_s, store_n), to_move = to_tuple(position)
    moves = legal_moves(position)
    if not moves:
        return sign * (store_s + sum(south) - store_n - sum(north))
    if (1 if to_move == 0 else -1) != sign:
        return sign * (store_s - store_n)
    return max(_turn_score(play(position, m, rule)[0], rule, sign) for m in moves)


class _Budget:
    """node_limit nodes and time_limit seconds (0: none) shared by the probes of one call.
    Once spent, a probe gets one node: the database and a finished game still answer."""

    def __init__(self, node_limit, time_limit):
        self._nodes_left = node_limit
        self._limited = node_limit > 0
        self._deadline = time.monotonic() + time_limit if time_limit > 0 else None

    def probe(self, tablebase, position, rule):
        nodes, seconds = (max(1, self._nodes_left) if self._limited else 0), 0.0
        if self._deadline is not None:
            seconds = self._deadline - time.monotonic()
            if seconds <= 0:
                nodes, seconds = 1, 0.0
        p = tablebase.probe(position, rule, nodes, seconds)
        self._nodes_left -= p.nodes
        return p


def _exact_best_actions(tablebase, position, rule, budget):
    """The best actions of ``position`` (pit order) and "database", "book" (some move's
    value came from the opening book) or "search" (some move needed a search); (None,
    "unknown") as soon as a move's value is unknown."""
    sign, values, searched, booked = _mover_sign(position), [], False, False
    for move in legal_moves(position):
        p = budget.probe(tablebase, play(position, move, rule)[0], rule)
        if p.value is None:
            return None, "unknown"
        searched = searched or p.source == "search"
        booked = booked or p.source == "book"
        values.append((sign * p.value, move_to_action(move)))
    best = max(v for v, _ in values)
    return [a for v, a in values if v == best], ("search" if searched else
                                                 "book" if booked else "database")


class PerfectBot(_BotBase):
    """A perfect player for OpenSpiel's mancala, a ``pyspiel.Bot`` when pyspiel imports.

    ``step(state)`` returns one of the best actions (the first in pit order, or a random
    one with ``rng``) when every move is valued within the budget of the step (see the
    module's docstring), else the action of ``fallback`` (a bot; its restart and inform
    calls are passed on), else, without one, the move whose turn (its extra moves played
    greedily) leaves the mover the best store difference, the first in pit order (or a
    random one with ``rng``). ``last_source`` and ``sources`` say how steps were answered."""

    def __init__(self, tablebase, rule="standard", rng=None, node_limit=0, time_limit=0.0,
                 fallback=None):
        _BotBase.__init__(self)
        self._tb = tablebase
        self._rule = rule
        self._rng = rng
        self._node_limit = node_limit
        self._time_limit = time_limit
        self._fallback = fallback
        self.last_source = None
        self.sources = collections.Counter()

    def restart(self):
        if self._fallback is not None and hasattr(self._fallback, "restart"):
            self._fallback.restart()

    def restart_at(self, state):
        if self._fallback is not None and hasattr(self._fallback, "restart_at"):
            self._fallback.restart_at(state)

    def inform_action(self, state, player_id, action):
        if self._fallback is not None and hasattr(self._fallback, "inform_action"):
            self._fallback.inform_action(state, player_id, action)

    def provides_policy(self):
        return True

    def _choose(self, best):
        return self._rng.choice(best) if self._rng else best[0]

    def _fallback_step(self, state, position):
        if self._fallback is not None:
            if getattr(self._fallback, "provides_policy", lambda: False)():
                return self._fallback.step_with_policy(state)
            action = self._fallback.step(state)
            return [(action, 1.0)], action
        sign = _mover_sign(position)
        scores = [(_turn_score(play(position, m, self._rule)[0], self._rule, sign),
                   move_to_action(m)) for m in legal_moves(position)]
        top = max(s for s, _ in scores)
        best = [a for s, a in scores if s == top]
        return [(a, 1.0 / len(best)) for a in best], self._choose(best)

    def step_with_policy(self, state):
        """A uniform policy over the best actions and the action chosen, or the fallback's."""
        position = state_to_position(state)
        if not legal_moves(position):
            return [], INVALID_ACTION
        budget = _Budget(self._node_limit, self._time_limit)
        best, source = _exact_best_actions(self._tb, position, self._rule, budget)
        if best is None:
            self.last_source = "fallback"
            policy, action = self._fallback_step(state, position)
        else:
            self.last_source = source
            policy, action = [(a, 1.0 / len(best)) for a in best], self._choose(best)
        self.sources[self.last_source] += 1
        return policy, action

    def get_policy(self, state):
        return self.step_with_policy(state)[0]

    def step(self, state):
        return self.step_with_policy(state)[1]


class StoreDifferenceEvaluator(_EvaluatorBase):
    """The fallback evaluator: the store difference so far over the 48 seeds (player 0's
    view first), and a uniform prior over the legal actions."""

    def evaluate(self, state):
        v = _store_difference(state_to_position(state)) / float(SEEDS)
        return [v, -v]

    def prior(self, state):
        actions = state.legal_actions()
        return [(a, 1.0 / len(actions)) for a in actions]


class PerfectEvaluator(_EvaluatorBase):
    """An evaluator for OpenSpiel's MCTS (open_spiel/python/algorithms/mcts.py), an
    ``mcts.Evaluator`` when that imports: ``evaluate(state)`` returns one value per player,
    ``prior(state)`` (action, probability) pairs, exact within the budget of each call (see
    the module's docstring), else ``fallback``'s (default ``StoreDifferenceEvaluator()``).

    ``scale="result"``: +1 / 0 / -1 for a won / drawn / lost game under perfect play, the
    scale of OpenSpiel's ``returns()``. ``scale="margin"``: the final margin divided by the
    48 seeds. The exact prior is uniform over the best actions."""

    def __init__(self, tablebase, rule="standard", scale="result", node_limit=0,
                 time_limit=0.0, fallback=None):
        if scale not in ("result", "margin"):
            raise ValueError("scale must be 'result' or 'margin'")
        _EvaluatorBase.__init__(self)
        self._tb = tablebase
        self._rule = rule
        self._scale = scale
        self._node_limit = node_limit
        self._time_limit = time_limit
        self._fallback = fallback if fallback is not None else StoreDifferenceEvaluator()
        self.sources = collections.Counter()

    def evaluate(self, state):
        budget = _Budget(self._node_limit, self._time_limit)
        p = budget.probe(self._tb, state_to_position(state), self._rule)
        if p.value is None:
            self.sources["fallback"] += 1
            return self._fallback.evaluate(state)
        self.sources[p.source] += 1
        v = p.value
        if self._scale == "result":
            v = (v > 0) - (v < 0)
        else:
            v = v / float(SEEDS)
        return [float(v), float(-v)]

    def prior(self, state):
        position = state_to_position(state)
        if not legal_moves(position):
            return []
        budget = _Budget(self._node_limit, self._time_limit)
        best, source = _exact_best_actions(self._tb, position, self._rule, budget)
        if best is None:
            self.sources["fallback"] += 1
            return self._fallback.prior(state)
        self.sources[source] += 1
        return [(a, 1.0 / len(best)) for a in best]
