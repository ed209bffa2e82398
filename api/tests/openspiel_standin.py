"""A stand-in for the parts of OpenSpiel that kalah.openspiel meets, for machines without it.

``install()`` imports the real ``pyspiel`` and ``open_spiel.python.algorithms.mcts`` when
they import and puts a stand-in in ``sys.modules`` for each that does not (CI has neither).
The stand-ins are written from OpenSpiel's public interface, not copied from it:

- ``pyspiel.Bot``: the methods of the C++ ``Bot`` that pybind11 lets Python override
  (open_spiel/python/pybind11/pybind11.h, ``PyBot``), with the C++ defaults of
  open_spiel/spiel_bots.h: ``step`` abstract; ``restart``, ``inform_action(s)`` no-ops;
  ``restart_at``, ``force_action``, ``get_policy``, ``step_with_policy``, ``clone`` errors;
  ``provides_policy``, ``provides_force_action``, ``is_clonable`` False. As pybind11 does,
  a subclass must call ``pyspiel.Bot.__init__(self)``.
- ``pyspiel.evaluate_bots(state, bots, seed)`` (open_spiel/algorithms/evaluate_bots.cc,
  sequential games): bots that are not initialised ``Bot``s are refused with TypeError
  (pybind11's "incompatible function arguments"); ``restart()`` from the initial state,
  else ``restart_at(state)``; the player to move steps, the others are informed; the
  final ``returns()``.
- ``pyspiel.load_game("mancala")``: ``MancalaState`` below.
- ``mcts.Evaluator`` (open_spiel/python/algorithms/mcts.py): ``evaluate(state)`` and
  ``prior(state)``, both abstract.

``MancalaState`` follows open_spiel/games/mancala/mancala.cc as its source states the
rules: 14 cells, player 0's pits 1..6 and store 7, player 1's pits 8..13 and store 0, the
opponent's store skipped, a capture when the last seed makes an own pit hold 1 and the
opposite cell (14 - i) is non-empty, an extra move when the last seed lands in the mover's
store, the end when either row is empty (or past 1000 moves, a draw).
``observation_tensor`` has OpenSpiel's two forms: the 14 cells (v1.1.1 .. v1.6.15) or the
cells, the player to move and the move number (v2.0 on); openspiel_playthroughs.py pins
both against OpenSpiel's recorded games."""

import copy
import importlib
import sys
import types

TERMINAL = -4  # pyspiel.PlayerId.TERMINAL
INVALID_ACTION = -1  # pyspiel.INVALID_ACTION
MAX_GAME_LENGTH = 1000


class MancalaState:
    def __init__(self, tensor_size=16):
        assert tensor_size in (14, 16)
        self.tensor_size = tensor_size
        self.board = [0] + [4] * 6 + [0] + [4] * 6
        self.player = 0
        self.moves = []

    def clone(self):
        return copy.deepcopy(self)

    def _home(self, player):
        return 7 if player == 0 else 0

    def _own(self, player, cell):
        return 1 <= cell <= 6 if player == 0 else 8 <= cell <= 13

    def history(self):
        return list(self.moves)

    def is_chance_node(self):
        return False

    def is_simultaneous_node(self):
        return False

    def is_terminal(self):
        return (len(self.moves) > MAX_GAME_LENGTH or sum(self.board[1:7]) == 0
                or sum(self.board[8:14]) == 0)

    def current_player(self):
        return TERMINAL if self.is_terminal() else self.player

    def legal_actions(self, player=None):
        if self.is_terminal() or player not in (None, self.player):
            return []
        cells = range(1, 7) if self.player == 0 else range(8, 14)
        return [c for c in cells if self.board[c] > 0]

    def apply_action(self, action):
        if action not in self.legal_actions():
            raise RuntimeError("illegal action {} in\n{}".format(action, self))
        seeds, self.board[action] = self.board[action], 0
        cell = action
        for _ in range(seeds):
            cell = (cell + 1) % 14
            if cell == self._home(1 - self.player):
                cell = (cell + 1) % 14
            self.board[cell] += 1
        opposite = 14 - cell
        if self.board[cell] == 1 and self._own(self.player, cell) and self.board[opposite] > 0:
            self.board[self._home(self.player)] += 1 + self.board[opposite]
            self.board[cell] = self.board[opposite] = 0
        if cell != self._home(self.player):
            self.player = 1 - self.player
        self.moves.append(action)

    def returns(self):
        if not self.is_terminal():
            return [0.0, 0.0]
        p0 = sum(self.board[1:8])
        p1 = sum(self.board[8:14]) + self.board[0]
        return [1.0, -1.0] if p0 > p1 else [-1.0, 1.0] if p0 < p1 else [0.0, 0.0]

    def observation_tensor(self, player=0):
        extra = [self.player, len(self.moves)] if self.tensor_size == 16 else []
        return [float(c) for c in self.board + extra]

    def __str__(self):
        return "{} to move, cells {}".format(self.player, self.board)


class MancalaGame:
    def __init__(self, tensor_size=16):
        self.tensor_size = tensor_size

    def new_initial_state(self):
        return MancalaState(self.tensor_size)

    def num_players(self):
        return 2

    def observation_tensor_shape(self):
        return [self.tensor_size]


def _make_pyspiel():
    m = types.ModuleType("pyspiel")
    m.__doc__ = "Stand-in for pyspiel (kalah's api/tests/openspiel_standin.py)."
    m.INVALID_ACTION = INVALID_ACTION

    class Bot:
        def __init__(self):
            self._standin_bot_initialised = True

        def step(self, state):
            raise NotImplementedError("Bot.step is pure virtual")

        def restart(self):
            pass

        def restart_at(self, state):
            raise RuntimeError("RestartAt(state) not implemented.")

        def inform_action(self, state, player_id, action):
            pass

        def inform_actions(self, state, actions):
            pass

        def provides_force_action(self):
            return False

        def force_action(self, state, action):
            raise RuntimeError("ForceAction not implemented")

        def provides_policy(self):
            return False

        def get_policy(self, state):
            raise RuntimeError("GetPolicy not implemented")

        def step_with_policy(self, state):
            raise RuntimeError("StepWithPolicy not implemented")

        def is_clonable(self):
            return False

        def clone(self):
            raise RuntimeError("Clone method not implemented.")

    def evaluate_bots(state, bots, seed):
        for bot in bots:
            if not (isinstance(bot, Bot) and getattr(bot, "_standin_bot_initialised", False)):
                raise TypeError("evaluate_bots(): incompatible function arguments: {!r} is "
                                "not an initialised pyspiel.Bot".format(bot))
        if not state.history():
            for bot in bots:
                bot.restart()
        else:
            for bot in bots:
                bot.restart_at(state)
        while not state.is_terminal():
            player = state.current_player()
            action = bots[player].step(state)
            for p, bot in enumerate(bots):
                if p != player:
                    bot.inform_action(state, player, action)
            state.apply_action(action)
        return state.returns()

    def load_game(name):
        if name != "mancala":
            raise RuntimeError("the stand-in pyspiel has only mancala, not " + name)
        return MancalaGame()

    m.Bot = Bot
    m.evaluate_bots = evaluate_bots
    m.load_game = load_game
    return m


def _make_mcts():
    m = types.ModuleType("open_spiel.python.algorithms.mcts")
    m.__doc__ = "Stand-in for OpenSpiel's mcts module (kalah's api/tests/openspiel_standin.py)."

    class Evaluator:
        def evaluate(self, state):
            raise NotImplementedError

        def prior(self, state):
            raise NotImplementedError

    m.Evaluator = Evaluator
    return m


def install():
    """(pyspiel, mcts, real): OpenSpiel's modules when they import, else stand-ins put in
    sys.modules; real is the set of the real ones' names ("pyspiel", "mcts"). Call before
    importing kalah.openspiel, or reload it after."""
    real = {"pyspiel", "mcts"}
    try:
        pyspiel = importlib.import_module("pyspiel")
    except ImportError:
        pyspiel = sys.modules["pyspiel"] = _make_pyspiel()
        real.discard("pyspiel")
    try:
        mcts = importlib.import_module("open_spiel.python.algorithms.mcts")
    except ImportError:
        mcts = _make_mcts()
        for name in ("open_spiel", "open_spiel.python", "open_spiel.python.algorithms"):
            sys.modules.setdefault(name, types.ModuleType(name))
        sys.modules["open_spiel.python.algorithms"].mcts = mcts
        sys.modules["open_spiel.python.algorithms.mcts"] = mcts
        real.discard("mcts")
    return pyspiel, mcts, real
