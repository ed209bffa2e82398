"""Tests of kalah.openspiel against a stand-in for pyspiel's mancala state.

The stand-in copies the interface the adapters read (current_player, observation_tensor,
legal_actions, apply_action, is_terminal, returns, clone) and the rules of OpenSpiel's
mancala.cc as its public source states them: 14 cells, player 0's pits 1..6 and store 7,
player 1's pits 8..13 and store 0, the opponent's store skipped, a capture when the last
seed makes an own pit hold 1 and the opposite cell (14 - i) is non-empty, an extra move
when the last seed lands in the mover's store, the end when either row is empty."""

import copy
import random
import unittest

import kalah
from kalah import openspiel


class StandInMancalaState:
    def __init__(self):
        self.board = [0] + [4] * 6 + [0] + [4] * 6
        self.player = 0
        self.moves = 0

    def clone(self):
        return copy.deepcopy(self)

    def _home(self, player):
        return 7 if player == 0 else 0

    def _own(self, player, cell):
        return 1 <= cell <= 6 if player == 0 else 8 <= cell <= 13

    def is_terminal(self):
        return sum(self.board[1:7]) == 0 or sum(self.board[8:14]) == 0

    def current_player(self):
        return -4 if self.is_terminal() else self.player

    def legal_actions(self):
        if self.is_terminal():
            return []
        cells = range(1, 7) if self.player == 0 else range(8, 14)
        return [c for c in cells if self.board[c] > 0]

    def apply_action(self, action):
        assert action in self.legal_actions()
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
        self.moves += 1

    def returns(self):
        if not self.is_terminal():
            return [0.0, 0.0]
        p0 = sum(self.board[1:8])
        p1 = sum(self.board[8:14]) + self.board[0]
        return [1.0, -1.0] if p0 > p1 else [-1.0, 1.0] if p0 < p1 else [0.0, 0.0]

    def observation_tensor(self, player=0):
        return [float(c) for c in self.board] + [float(self.player), float(self.moves)]


def seeds_in_pits(state):
    return sum(state.board[1:7]) + sum(state.board[8:14])


class OpenSpielAdapterTest(unittest.TestCase):
    def test_start_and_round_trip(self):
        s = StandInMancalaState()
        self.assertEqual(openspiel.state_to_position(s), kalah.start(6, 4))
        pos = "1,2,3,4,5,6/7,8,9,0,1,2/3,4/B"
        cells, player = openspiel.position_to_cells(pos)
        self.assertEqual(cells, [4, 1, 2, 3, 4, 5, 6, 3, 7, 8, 9, 0, 1, 2])
        self.assertEqual(player, 1)
        self.assertEqual(openspiel.cells_to_position(cells, player), pos)
        self.assertEqual(openspiel.move_to_action("A3+"), 3)
        self.assertEqual(openspiel.move_to_action("B5"), 12)
        self.assertEqual(openspiel.action_to_move(12, 1), "B5")
        with self.assertRaises(ValueError):
            openspiel.action_to_move(7, 0)
        with self.assertRaises(ValueError):
            openspiel.position_to_cells(kalah.start(4, 3))

    def test_random_games_follow_the_same_rules(self):
        """Every legal action, every successor and every final result of 200 random games
        agree between the stand-in and this project's standard rule."""
        rng = random.Random(7)
        with kalah.open() as tb:
            for _ in range(200):
                s = StandInMancalaState()
                while not s.is_terminal():
                    pos = openspiel.state_to_position(s)
                    actions = s.legal_actions()
                    self.assertEqual([openspiel.action_to_move(a, s.player) for a in actions],
                                     kalah.legal_moves(pos))
                    a = rng.choice(actions)
                    after, _ = kalah.play(pos, openspiel.action_to_move(a, s.player), "standard")
                    s.apply_action(a)
                    if not s.is_terminal():
                        self.assertEqual(openspiel.state_to_position(s), after)
                # The final position: the project's value is the swept margin.
                v = tb.value(openspiel.state_to_position(s))
                self.assertEqual(s.returns(), [float((v > 0) - (v < 0)), float((v < 0) - (v > 0))])
                self.assertEqual(v, tb.value(after))

    def endgame_states(self, count, max_seeds, rng):
        """States of random games once at most max_seeds seeds are left in the pits."""
        out = []
        while len(out) < count:
            s = StandInMancalaState()
            while not s.is_terminal() and seeds_in_pits(s) > max_seeds:
                s.apply_action(rng.choice(s.legal_actions()))
            if not s.is_terminal():
                out.append(s)
        return out

    def test_bot_never_does_worse_than_the_value(self):
        rng = random.Random(11)
        with kalah.open() as tb:
            bot = openspiel.PerfectBot(tb, rng=random.Random(3))
            self.assertTrue(bot.provides_policy())
            for start in self.endgame_states(12, 16, rng):
                me = start.player
                sign = 1 if me == 0 else -1
                promised = sign * tb.value(openspiel.state_to_position(start))
                s = start.clone()
                bot.restart_at(s)
                while not s.is_terminal():
                    if s.player == me:
                        policy, a = bot.step_with_policy(s)
                        self.assertIn(a, [p[0] for p in policy])
                        self.assertAlmostEqual(sum(p[1] for p in policy), 1.0)
                        best = [openspiel.move_to_action(m)
                                for m in tb.best_moves(openspiel.state_to_position(s))]
                        self.assertIn(a, best)
                    else:
                        a = rng.choice(s.legal_actions())
                    s.apply_action(a)
                final = sign * tb.value(openspiel.state_to_position(s))
                self.assertGreaterEqual(final, promised)

    def test_evaluator(self):
        rng = random.Random(5)
        with kalah.open() as tb:
            result = openspiel.PerfectEvaluator(tb)
            margin = openspiel.PerfectEvaluator(tb, scale="margin")
            with self.assertRaises(ValueError):
                openspiel.PerfectEvaluator(tb, scale="seeds")
            for s in self.endgame_states(10, 14, rng):
                v = tb.value(openspiel.state_to_position(s))
                sign = float((v > 0) - (v < 0))
                self.assertEqual(result.evaluate(s), [sign, -sign])
                self.assertEqual(margin.evaluate(s), [v / 48.0, -v / 48.0])
                prior = result.prior(s)
                self.assertAlmostEqual(sum(p for _, p in prior), 1.0)
                for a, _ in prior:
                    self.assertIn(a, s.legal_actions())
                    t = s.clone()
                    t.apply_action(a)
                    self.assertEqual(tb.value(openspiel.state_to_position(t)), v)
                # A finished game: the evaluator agrees with returns().
                t = s.clone()
                while not t.is_terminal():
                    t.apply_action(rng.choice(t.legal_actions()))
                self.assertEqual(result.evaluate(t), t.returns())
                self.assertEqual(result.prior(t), [])


if __name__ == "__main__":
    unittest.main()
