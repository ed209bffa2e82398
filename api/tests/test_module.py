"""Tests of the Python module kalah, against `kalah query --json` (an independent search).

Run by ctest (api-python) with PYTHONPATH at the built module and KALAH_BIN the binary."""

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest

import kalah

KALAH_BIN = os.environ.get("KALAH_BIN", "build/kalah")
RULES = ("standard", "empty-capture")


def query(position, rule, empty_db):
    out = subprocess.run([KALAH_BIN, "query", "--position", position, "--rule", rule,
                          "--db", empty_db, "--json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


class ModuleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="kalah-py-test-")
        cls.db = os.path.join(cls.work, "db")
        cls.empty = os.path.join(cls.work, "none")
        os.mkdir(cls.empty)
        for rule in RULES:
            subprocess.run([KALAH_BIN, "build-db", "--pits", "4", "--max-seeds", "14",
                            "--rule", rule, "--db", cls.db], check=True,
                           stdout=subprocess.DEVNULL)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work)

    def test_game_against_query(self):
        """A 16-move game of Kalah(4,3), both rules: value, move values, best moves."""
        with kalah.open(self.db) as tb:
            for rule in RULES:
                pos = kalah.start(4, 3)
                sources = set()
                for ply in range(16):
                    q = query(pos, rule, self.empty)
                    p = tb.probe(pos, rule)
                    sources.add(p.source)
                    self.assertEqual(p.value, q["value"])
                    self.assertEqual(tb.value(pos, rule), q["value"])
                    mvs = tb.move_values(pos, rule)
                    self.assertEqual({mv.move: mv.value for mv in mvs},
                                     {m["move"]: m["value"] for m in q["moves"]})
                    sign = 1 if q["to_move"] == "A" else -1
                    self.assertEqual([sign * mv.value for mv in mvs],
                                     sorted((sign * mv.value for mv in mvs), reverse=True))
                    self.assertEqual(tb.best_moves(pos, rule), q["best"])
                    if not mvs:
                        break
                    move = mvs[1 if ply % 3 == 2 and len(mvs) > 1 else 0]
                    pos, text = kalah.play(pos, move.move, rule)
                    self.assertEqual(text, move.move)
                self.assertEqual(sources, {"database", "search"})

    def test_path_objects(self):
        import pathlib
        with kalah.open(pathlib.Path(self.db)) as tb:
            self.assertEqual(tb.probe(kalah.start(4, 1)).source, "database")

    def test_solve_known_values(self):
        # rules.md example 7: Kalah(4,3) is +6 (standard), +8 (empty-capture).
        self.assertEqual(kalah.solve(4, 3), 6)
        self.assertEqual(kalah.solve(4, 3, "empty-capture"), 8)
        self.assertEqual(kalah.solve(4, 3, "empty-capture", directory=self.db), 8)

    def test_tuples_and_text(self):
        text = "1,0,2/0,3,1/4,5/B"
        t = kalah.to_tuple(text)
        self.assertEqual(t, (((1, 0, 2), (0, 3, 1)), (4, 5), 1))
        self.assertEqual(kalah.normalize(t), text)
        self.assertEqual(kalah.normalize(([1, 0, 2, 0, 3, 1], (4, 5), "B")), text)
        with kalah.open() as tb:
            self.assertEqual(tb.value(t), tb.value(text))

    def test_budget_keyerror_and_default(self):
        with kalah.open() as tb:
            start = kalah.start(6, 4)
            p = tb.probe(start, node_limit=2000)
            self.assertEqual(p.source, "unknown")
            self.assertIsNone(p.value)
            with self.assertRaises(KeyError):
                tb.value(start, node_limit=2000)
            self.assertEqual(tb.get_value(start, default=-99, node_limit=2000), -99)
            with self.assertRaises(KeyError):
                tb.best_moves(start, node_limit=2000)
            self.assertEqual(tb.get_value(kalah.start(3, 2)), kalah.solve(3, 2))

    def test_errors(self):
        with self.assertRaises(FileNotFoundError):
            kalah.open(os.path.join(self.work, "missing"))
        with self.assertRaises(FileNotFoundError):
            kalah.open(self.empty)
        with kalah.open(self.db) as tb:
            with self.assertRaises(ValueError):
                tb.value("4,4,4/4,4,4/0,0/C")
            with self.assertRaises(ValueError):
                tb.value((((1, -1, 2), (0, 3, 1)), (0, 0), 0))
            with self.assertRaises(ValueError):
                tb.value(kalah.start(3, 2), "no-such-rule")
            with self.assertRaises(ValueError):
                kalah.play("1,0,2/0,3,1/4,5/B", "B1", "standard")  # B1 is empty
        with self.assertRaises(ValueError):
            tb.value(kalah.start(3, 2))  # closed

    def test_version_and_namespace(self):
        """One version everywhere (project(VERSION)); `from kalah import *` shadows no builtin."""
        out = subprocess.run([KALAH_BIN, "--version"], check=True, capture_output=True,
                             text=True).stdout.split()
        self.assertEqual(out[0], "kalah")
        self.assertEqual(kalah.__version__, out[1])
        self.assertRegex(kalah.__version__, r"^[0-9]+\.[0-9]+\.[0-9]+$")
        self.assertNotIn("open", kalah.__all__)
        namespace = {}
        exec("from kalah import *", namespace)
        self.assertNotIn("open", namespace)
        import builtins
        for name in kalah.__all__:
            self.assertFalse(hasattr(builtins, name), name)
        self.assertIs(kalah.open_tablebase, kalah.open)

    def test_damaged_layer_is_an_error_naming_the_file(self):
        """A damaged layer anywhere is DatabaseError naming the file, as `kalah query` says,
        never a silent search past it (db/open.h, the open policy of every command)."""
        position = "3,3,0,0/3,3,0,0/0,0/A"  # 12 seeds in pits: layer 12
        name = "kalah-m4-standard-s12.kdb"

        def damaged(how):
            d = os.path.join(self.work, "damaged-" + how)
            shutil.rmtree(d, ignore_errors=True)
            shutil.copytree(self.db, d)
            path = os.path.join(d, name)
            for twin in [f for f in os.listdir(d) if f.endswith(".kpk")]:
                os.remove(os.path.join(d, twin))  # the packed twins, so that the .kdb is read
            data = bytearray(open(path, "rb").read())
            if how == "flipped":
                for i in range(len(data) // 2, len(data) // 2 + 16):
                    data[i] ^= 0xFF
            elif how == "truncated":
                data = data[: len(data) // 2]
            elif how == "empty":
                data = bytearray()
            with open(path, "wb") as f:
                f.write(data)
            return d

        for how in ("flipped", "truncated", "empty"):
            with self.subTest(how=how):
                with kalah.open(damaged(how)) as tb:
                    with self.assertRaises(kalah.DatabaseError) as caught:
                        tb.value(position)
                    self.assertIn(name, str(caught.exception))
        # The same file whole: the value.
        with kalah.open(self.db) as tb:
            self.assertEqual(tb.value(position), query(position, "standard", self.empty)["value"])

    def test_threads_and_gil(self):
        with kalah.open(self.db) as tb:
            positions = []
            pos = kalah.start(4, 3)
            for _ in range(6):
                positions.append(pos)
                pos, _ = kalah.play(pos, tb.best_moves(pos)[0], "standard")
            expected = [tb.value(p) for p in positions]
            results = {}

            def work(i):
                results[i] = [tb.value(p) for p in positions]

            threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual([results[i] for i in range(4)], [expected] * 4)

        # A search of 0.5 s leaves the GIL to other threads: a counter keeps running.
        ticks = [0]
        stop = threading.Event()

        def count():
            while not stop.is_set():
                ticks[0] += 1
                time.sleep(0.001)

        with kalah.open() as tb:
            t = threading.Thread(target=count)
            t.start()
            time.sleep(0.05)
            before = ticks[0]
            p = tb.probe(kalah.start(6, 4), time_limit=0.5)
            during = ticks[0] - before
            stop.set()
            t.join()
            self.assertEqual(p.source, "unknown")
            self.assertGreater(during, 50)


if __name__ == "__main__":
    unittest.main()
