"""Kalah(6,4) through the Python module alone, both rules: the start and the position after
each move of a 10-move game, against what `kalah query --json` said of them
(api/tests/game64_reference.py wrote WORK_DIR/game64-<rule>.txt over the layers in
WORK_DIR/db). Run by ctest (api-python-game64) with PYTHONPATH at the built module.

usage: python3 game64_test.py WORK_DIR"""

import os
import sys
import unittest

import kalah

RULES = {"standard": 8, "empty-capture": 10}  # Kalah(6,4)'s values, reference-values.md
WORK = sys.argv.pop(1) if len(sys.argv) > 1 else os.environ.get("KALAH_GAME64_DIR", "")


def read_reference(rule):
    """[(position, value, {move: value}, [best moves])] from a game64 reference file."""
    rows = []
    with open(os.path.join(WORK, f"game64-{rule}.txt")) as f:
        for line in f:
            position, value, *moves = line.split()
            values, best = {}, []
            for m in moves:
                name, v = m.split("=")
                if v.endswith("*"):
                    best.append(name)
                    v = v[:-1]
                values[name] = int(v)
            rows.append((position, int(value), values, best))
    return rows


class Game64Test(unittest.TestCase):
    def test_game(self):
        # A table of 1 GiB, not the default 64 MiB: the start's searches visit 10^8 nodes.
        with kalah.open(os.path.join(WORK, "db"), tt_mib=1024) as tb:
            for rule, start_value in RULES.items():
                rows = read_reference(rule)
                self.assertEqual(len(rows), 11)  # the start and 10 moves
                self.assertEqual(rows[0][0], kalah.start(6, 4))
                sources = set()
                previous = None
                for position, value, values, best in rows:
                    if previous is not None:
                        # The position follows from the one before by one of its moves.
                        nexts = {kalah.play(previous, m, rule)[0] for m in previous_values}
                        self.assertIn(position, nexts)
                    p = tb.probe(position, rule)
                    sources.add(p.source)
                    self.assertEqual(p.value, value, f"{rule} {position}")
                    mvs = tb.move_values(position, rule)
                    self.assertEqual({mv.move: mv.value for mv in mvs}, values)
                    self.assertEqual(sorted(tb.best_moves(position, rule)), sorted(best))
                    previous, previous_values = position, values
                self.assertEqual(rows[0][1], start_value)
                self.assertIn("search", sources)


if __name__ == "__main__":
    if not WORK:
        sys.exit("usage: game64_test.py WORK_DIR")
    unittest.main(verbosity=2)
