"""The example script api/examples/score_game.py against `kalah annotate --json`."""

import json
import os
import subprocess
import sys
import unittest

import kalah

KALAH_BIN = os.environ.get("KALAH_BIN", "build/kalah")
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                      "score_game.py")


class ScoreGameTest(unittest.TestCase):
    def test_matches_annotate(self):
        for rule in ("standard", "empty-capture"):
            # A game of Kalah(4,3) with the worst move every third ply: mistakes and blunders.
            pos, moves = kalah.start(4, 3), []
            with kalah.open() as tb:
                for ply in range(14):
                    mvs = tb.move_values(pos, rule)
                    if not mvs:
                        break
                    mv = mvs[-1] if ply % 3 == 1 else mvs[0]
                    pos, text = kalah.play(pos, mv.move, rule)
                    moves.append(text)
            record = " ".join(moves)
            ours = json.loads(subprocess.run(
                [sys.executable, SCRIPT, "--pits", "4", "--seeds", "3", "--rule", rule,
                 "--json", record], check=True, capture_output=True, text=True,
                env=os.environ).stdout)
            theirs = json.loads(subprocess.run(
                [KALAH_BIN, "annotate", "--pits", "4", "--seeds", "3", "--rule", rule,
                 "--moves", record, "--json"], check=True, capture_output=True,
                text=True).stdout)["moves"]
            self.assertEqual(len(ours), len(moves))
            keys = ("ply", "move", "before", "after", "loss", "mark")
            self.assertEqual([{k: n[k] for k in keys} for n in ours],
                             [{k: n[k] for k in keys} for n in theirs])
            self.assertTrue(any(n["mark"] for n in ours))

    def test_bad_move_is_one_line(self):
        r = subprocess.run([sys.executable, SCRIPT, "--pits", "4", "--seeds", "3", "A3 A9"],
                           capture_output=True, text=True, env=os.environ)
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.startswith("score_game: error:"), r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
