"""Tests of kalah.openspiel: OpenSpiel's recorded games of both observation forms, its Bot
and MCTS Evaluator interfaces, budgets and fallback.

pyspiel and OpenSpiel's mcts module are used when they import, else the stand-ins of
openspiel_standin.py (CI has no OpenSpiel); the recorded games are
openspiel_playthroughs.py, transcribed from OpenSpiel's own files. A 6-pit database of
layers 0..10 is built with KALAH_BIN (as test_module.py does)."""

import importlib
import os
import random
import shutil
import subprocess
import tempfile
import unittest

import openspiel_standin
from openspiel_playthroughs import PLAYTHROUGHS

pyspiel, mcts, REAL = openspiel_standin.install()

import kalah  # noqa: E402
import kalah.openspiel  # noqa: E402

openspiel = importlib.reload(kalah.openspiel)  # its base classes from the modules above

KALAH_BIN = os.environ.get("KALAH_BIN", "build/kalah")
DB_SEEDS = 10


def new_state():
    return pyspiel.load_game("mancala").new_initial_state()


def seeds_in_pits(state):
    cells = state.observation_tensor(0)[:14]
    return int(sum(cells[1:7]) + sum(cells[8:14]))


def endgame_states(count, max_seeds, rng):
    """States of random games once at most max_seeds seeds are left in the pits."""
    out = []
    while len(out) < count:
        s = new_state()
        while not s.is_terminal() and seeds_in_pits(s) > max_seeds:
            s.apply_action(rng.choice(s.legal_actions()))
        if not s.is_terminal():
            out.append(s)
    return out


def sign(v):
    return float((v > 0) - (v < 0))


class RecordedState:
    """A state of a recorded playthrough: what OpenSpiel printed, through pyspiel's names."""

    def __init__(self, current_player, is_terminal, tensor, legal, returns):
        self._player, self._terminal, self._tensor = current_player, is_terminal, tensor
        self._legal, self._returns = legal, returns

    def current_player(self):
        return self._player

    def is_terminal(self):
        return self._terminal

    def observation_tensor(self, player=0):
        return [float(x) for x in self._tensor]

    def legal_actions(self, player=None):
        return list(self._legal)

    def returns(self):
        return [float(r) for r in self._returns]


class Recorder:
    """A tablebase that records each probe's budget and the nodes it searched."""

    def __init__(self, tb):
        self.tb, self.calls = tb, []

    def probe(self, position, rule="standard", node_limit=0, time_limit=0.0):
        p = self.tb.probe(position, rule, node_limit, time_limit)
        self.calls.append((node_limit, time_limit, p))
        return p


class StubBot:
    """A fallback bot that records what it was told and plays the last legal action."""

    def __init__(self):
        self.calls = []

    def restart(self):
        self.calls.append("restart")

    def restart_at(self, state):
        self.calls.append("restart_at")

    def inform_action(self, state, player_id, action):
        self.calls.append(("inform", player_id, action))

    def step(self, state):
        self.calls.append("step")
        return state.legal_actions()[-1]


class RandomBot(pyspiel.Bot):
    """A uniformly random opponent, a pyspiel.Bot of this test's own."""

    def __init__(self, rng):
        pyspiel.Bot.__init__(self)
        self._rng = rng

    def restart_at(self, state):
        pass

    def step(self, state):
        return self._rng.choice(state.legal_actions())


class OpenSpielAdapterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="kalah-openspiel-test-")
        cls.db = os.path.join(cls.work, "db")
        subprocess.run([KALAH_BIN, "build-db", "--pits", "6", "--max-seeds", str(DB_SEEDS),
                        "--rule", "standard", "--db", cls.db, "-q"], check=True,
                       stdout=subprocess.DEVNULL)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work)

    def test_start_and_round_trip(self):
        self.assertEqual(openspiel.state_to_position(new_state()), kalah.start(6, 4))
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
        bad = RecordedState(0, False, [0, 4, 4, 4, 4, 4, 4, 0, 4, 4, 4, 4, 4, 4, 1, 0], [], [])
        with self.assertRaises(ValueError):  # the tensor's player disagrees
            openspiel.state_to_position(bad)
        with self.assertRaises(ValueError):
            openspiel.state_to_position(RecordedState(0, False, [4] * 15, [], []))

    def test_recorded_playthroughs(self):
        """OpenSpiel's recorded games (14-cell tensor of v1.6.15, 16 of v2.0.1), replayed
        under this project's standard rule and in the stand-in: every printed state maps to
        the replayed position, with the same legal actions, and the final returns are the
        sign of the final value."""
        with kalah.open() as tb:
            for name, record in PLAYTHROUGHS.items():
                printed = {s[0]: s for s in record["states"]}
                size = len(record["states"][0][3])
                self.assertEqual(size, 14 if name == "v1.6.15" else 16)
                pos, standin = kalah.start(6, 4), openspiel_standin.MancalaState(size)
                for n in range(len(record["actions"]) + 1):
                    if n in printed:
                        _, player, terminal, tensor, legal, returns = printed[n]
                        with self.subTest(version=name, state=n):
                            rec = RecordedState(player, terminal, tensor, legal, returns)
                            self.assertEqual([openspiel.move_to_action(m)
                                              for m in kalah.legal_moves(pos)], legal)
                            self.assertEqual(terminal, not legal)
                            if not terminal:
                                self.assertEqual(openspiel.state_to_position(rec), pos)
                                self.assertEqual(openspiel.position_to_cells(pos)[0],
                                                 tensor[:14])
                            else:  # this project sweeps the rows, OpenSpiel does not
                                v = tb.value(pos)
                                self.assertEqual(tb.value(openspiel.state_to_position(rec)), v)
                                self.assertEqual(returns, [sign(v), -sign(v)])
                            self.assertEqual(standin.observation_tensor(0), tensor)
                            self.assertEqual(standin.current_player(), player)
                            self.assertEqual(standin.legal_actions(), legal)
                            self.assertEqual(standin.returns(), returns)
                    if n < len(record["actions"]):
                        a = record["actions"][n]
                        pos = kalah.play(pos, openspiel.action_to_move(a, standin.player),
                                         "standard")[0]
                        standin.apply_action(a)

    def test_bot_on_recorded_states(self):
        """At every printed state of both recordings, a budgeted bot returns a recorded legal
        action, a best one when it answered exactly."""
        with kalah.open(self.db) as tb:
            bot = openspiel.PerfectBot(tb, time_limit=0.05)
            for name, record in PLAYTHROUGHS.items():
                for n, player, terminal, tensor, legal, returns in record["states"]:
                    rec = RecordedState(player, terminal, tensor, legal, returns)
                    with self.subTest(version=name, state=n):
                        a = bot.step(rec)
                        if terminal:
                            self.assertEqual(a, openspiel.INVALID_ACTION)
                            continue
                        self.assertIn(a, legal)
                        if bot.last_source != "fallback":
                            best = tb.best_moves(openspiel.state_to_position(rec))
                            self.assertIn(a, [openspiel.move_to_action(m) for m in best])
            self.assertGreater(bot.sources["database"] + bot.sources["search"], 0)

    def test_random_games_follow_the_same_rules(self):
        """Every legal action, every successor and every final result of 200 random games
        agree between OpenSpiel's mancala (or the stand-in) and this project's standard
        rule."""
        rng = random.Random(7)
        with kalah.open() as tb:
            for _ in range(200):
                s = new_state()
                while not s.is_terminal():
                    pos = openspiel.state_to_position(s)
                    actions = s.legal_actions()
                    mover = s.current_player()
                    self.assertEqual([openspiel.action_to_move(a, mover) for a in actions],
                                     kalah.legal_moves(pos))
                    a = rng.choice(actions)
                    after, _ = kalah.play(pos, openspiel.action_to_move(a, mover), "standard")
                    s.apply_action(a)
                    if not s.is_terminal():
                        self.assertEqual(openspiel.state_to_position(s), after)
                # The final position: the project's value is the swept margin.
                v = tb.value(openspiel.state_to_position(s))
                self.assertEqual(list(s.returns()), [sign(v), -sign(v)])
                self.assertEqual(v, tb.value(after))

    def test_subclasses_openspiel(self):
        """pyspiel.evaluate_bots and OpenSpiel's MCTS take the adapters as their own
        classes: a look-alike that is not a pyspiel.Bot is refused."""
        self.assertTrue(issubclass(openspiel.PerfectBot, pyspiel.Bot))
        self.assertTrue(issubclass(openspiel.PerfectEvaluator, mcts.Evaluator))
        self.assertTrue(issubclass(openspiel.StoreDifferenceEvaluator, mcts.Evaluator))
        with kalah.open() as tb:
            with self.assertRaises(TypeError):
                pyspiel.evaluate_bots(new_state(), [StubBot(), openspiel.PerfectBot(tb)], 1)

    def test_evaluate_bots(self):
        """pyspiel.evaluate_bots plays perfect bots from endgame states (restart_at): the
        result is the sign of the value; against a random bot never worse than it."""
        rng = random.Random(11)
        with kalah.open(self.db) as tb:
            bots = [openspiel.PerfectBot(tb, rng=random.Random(3)),
                    openspiel.PerfectBot(tb, time_limit=30.0)]
            for start in endgame_states(6, 16, rng):
                v = tb.value(openspiel.state_to_position(start))
                self.assertEqual(pyspiel.evaluate_bots(start.clone(), bots, 5),
                                 [sign(v), -sign(v)])
            for b in bots:
                self.assertEqual(b.sources["fallback"], 0)
            for me in (0, 1):
                s = endgame_states(1, 14, rng)[0]
                promised = sign(tb.value(openspiel.state_to_position(s))) * (1 - 2 * me)
                players = [RandomBot(random.Random(me)), RandomBot(random.Random(me))]
                players[me] = openspiel.PerfectBot(tb)
                self.assertGreaterEqual(pyspiel.evaluate_bots(s, players, 2)[me], promised)

    def test_bot_never_does_worse_than_the_value(self):
        rng = random.Random(11)
        with kalah.open() as tb:
            bot = openspiel.PerfectBot(tb, rng=random.Random(3))
            self.assertTrue(bot.provides_policy())
            for start in endgame_states(12, 16, rng):
                me = start.current_player()
                side = 1 if me == 0 else -1
                promised = side * tb.value(openspiel.state_to_position(start))
                s = start.clone()
                bot.restart_at(s)
                while not s.is_terminal():
                    if s.current_player() == me:
                        policy, a = bot.step_with_policy(s)
                        self.assertIn(a, [p[0] for p in policy])
                        self.assertAlmostEqual(sum(p[1] for p in policy), 1.0)
                        self.assertEqual(bot.get_policy(s), policy)
                        best = [openspiel.move_to_action(m)
                                for m in tb.best_moves(openspiel.state_to_position(s))]
                        self.assertIn(a, best)
                    else:
                        a = rng.choice(s.legal_actions())
                    s.apply_action(a)
                final = side * tb.value(openspiel.state_to_position(s))
                self.assertGreaterEqual(final, promised)
            self.assertEqual(bot.sources["fallback"], 0)

    def test_budget_and_fallback_at_the_start(self):
        """Kalah(6,4)'s start with a 10-seed database and no opening book (books=False: the
        book would answer at once): a step within 0.05 s or 5000 nodes cannot be exact, so
        it falls back: by default to the best store difference at the end of the turn (A3+
        then A4, A5 or A6: 2 seeds; any other opening 1 at most)."""
        s = new_state()
        with kalah.open(self.db, books=False) as tb:
            rec = Recorder(tb)
            for bot in (openspiel.PerfectBot(rec, time_limit=0.05),
                        openspiel.PerfectBot(rec, node_limit=5000)):
                self.assertEqual(bot.step_with_policy(s), ([(3, 1.0)], 3))
                self.assertEqual(bot.last_source, "fallback")
                self.assertEqual(rec.calls[-1][2].source, "unknown")
            self.assertTrue(all(0 < t <= 0.05 or (n, t) == (1, 0.0) for n, t, _ in rec.calls[:-1]))
            self.assertEqual(rec.calls[-1][:2], (5000, 0.0))

            stub = StubBot()
            bot = openspiel.PerfectBot(tb, time_limit=0.05, fallback=stub)
            bot.restart()
            bot.restart_at(s)
            bot.inform_action(s, 1, 8)
            self.assertEqual(bot.step(s), 6)
            self.assertEqual(stub.calls, ["restart", "restart_at", ("inform", 1, 8), "step"])
            self.assertEqual(bot.sources, {"fallback": 1})

            ev = openspiel.PerfectEvaluator(tb, time_limit=0.05)
            self.assertEqual(ev.evaluate(s), [0.0, 0.0])  # stores 0-0
            self.assertEqual(ev.prior(s), [(a, 1 / 6.0) for a in range(1, 7)])
            self.assertEqual(ev.sources, {"fallback": 2})

    def test_budget_is_shared_by_the_moves(self):
        """Each probe of a step gets what the probes before it left of the node budget."""
        rng = random.Random(17)
        with kalah.open() as tb:
            rec = Recorder(tb)
            bot = openspiel.PerfectBot(rec, node_limit=20000)
            for s in endgame_states(20, 16, rng):
                del rec.calls[:]
                bot.step(s)
                spent = 0
                for n, t, p in rec.calls:
                    self.assertEqual((n, t), (max(1, 20000 - spent), 0.0))
                    spent += p.nodes
            self.assertGreater(bot.sources["search"], 0)

    def test_budget_spent_still_reads_the_database(self):
        """Once the budget is spent (1 node, 1 microsecond), positions the database holds
        are still exact."""
        rng = random.Random(13)
        with kalah.open(self.db) as tb:
            for budget in ({"node_limit": 1}, {"time_limit": 1e-6}):
                bot = openspiel.PerfectBot(tb, **budget)
                ev = openspiel.PerfectEvaluator(tb, scale="margin", **budget)
                for s in endgame_states(8, DB_SEEDS, rng):
                    pos = openspiel.state_to_position(s)
                    v = tb.value(pos)
                    best = [openspiel.move_to_action(m) for m in tb.best_moves(pos)]
                    self.assertIn(bot.step(s), best)
                    self.assertEqual(bot.last_source, "database")
                    self.assertEqual(ev.evaluate(s), [v / 48.0, -v / 48.0])
                    self.assertEqual(ev.prior(s), [(a, 1.0 / len(best)) for a in best])
                self.assertEqual(set(ev.sources), {"database"})

    def test_evaluator(self):
        rng = random.Random(5)
        with kalah.open() as tb:
            result = openspiel.PerfectEvaluator(tb)
            margin = openspiel.PerfectEvaluator(tb, scale="margin")
            with self.assertRaises(ValueError):
                openspiel.PerfectEvaluator(tb, scale="seeds")
            for s in endgame_states(10, 14, rng):
                v = tb.value(openspiel.state_to_position(s))
                self.assertEqual(result.evaluate(s), [sign(v), -sign(v)])
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
                self.assertEqual(result.evaluate(t), list(t.returns()))
                self.assertEqual(result.prior(t), [])
            self.assertEqual(result.sources["fallback"], 0)

    @unittest.skipUnless(REAL == {"pyspiel", "mcts"}, "OpenSpiel is not importable")
    def test_real_mcts_with_the_evaluator(self):
        """OpenSpiel's own MCTSBot with the budgeted evaluator plays whole games from the
        start against itself and against a perfect bot."""
        import numpy as np
        game = pyspiel.load_game("mancala")
        with kalah.open(self.db) as tb:
            ev = openspiel.PerfectEvaluator(tb, time_limit=0.01)
            mcts_bot = mcts.MCTSBot(game, 2.0, 50, ev, random_state=np.random.RandomState(1))
            perfect = openspiel.PerfectBot(tb, time_limit=0.05, fallback=mcts_bot)
            result = pyspiel.evaluate_bots(game.new_initial_state(), [perfect, mcts_bot], 3)
            self.assertIn(list(result), [[1.0, -1.0], [0.0, 0.0], [-1.0, 1.0]])
            self.assertGreater(ev.sources["fallback"], 0)
            self.assertGreater(ev.sources["database"], 0)


if __name__ == "__main__":
    unittest.main()
