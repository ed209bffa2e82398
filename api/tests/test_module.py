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
            start = kalah.start(6, 5)  # no built-in book holds it: a search
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

    def test_info_reports_layers_and_damage(self):
        """Tablebase.info: per pit count and rule, the layers used and why they stop; a
        damaged layer reported naming the file, a missing one below higher ones too."""
        with kalah.open(self.db) as tb:
            self.assertEqual([(c.pits, c.rule, c.stop) for c in tb.info(open_all=False)],
                             [(4, r, kalah.Stop.NOT_OPENED) for r in RULES])
            tb.value("1,1,0,0/1,1,0,0/0,0/A")  # opens 4 pits, standard only
            self.assertEqual([c.stop for c in tb.info(open_all=False)],
                             [kalah.Stop.END, kalah.Stop.NOT_OPENED])
            info = tb.info()
            self.assertEqual(len(info), 2)
            for c, rule in zip(info, RULES):
                self.assertIsInstance(c, kalah.Coverage)
                self.assertEqual((c.pits, c.rule, c.max_seeds, c.stop, c.stop_layer, c.file),
                                 (4, rule, 14, "end", 15, "kalah-m4-%s-s15.kdb" % rule))
                self.assertIn("0..14", c.reason)
        with kalah.open() as tb:
            self.assertEqual(tb.info(), [])
        name = "kalah-m4-standard-s12.kdb"
        # flipped-beside-twin: the packed twins kept, which hold the same values and could
        # answer every probe; the damaged .kdb is still an error (docs/api.md).
        for how in ("flipped", "missing", "flipped-beside-twin"):
            d = os.path.join(self.work, "info-" + how)
            shutil.rmtree(d, ignore_errors=True)
            shutil.copytree(self.db, d)
            if how != "flipped-beside-twin":
                for twin in [f for f in os.listdir(d) if f.endswith(".kpk")]:
                    os.remove(os.path.join(d, twin))
            else:
                self.assertIn(name.replace(".kdb", ".kpk"), os.listdir(d))
            path = os.path.join(d, name)
            if how == "missing":
                os.remove(path)
            else:
                data = bytearray(open(path, "rb").read())
                for i in range(len(data) // 2, len(data) // 2 + 64):
                    data[i] ^= 0xFF
                with open(path, "wb") as f:
                    f.write(data)
            with self.subTest(how=how), kalah.open(d) as tb:
                c = tb.info()[0]
                self.assertEqual((c.rule, c.stop_layer, c.file), ("standard", 12, name))
                self.assertIn(name, c.reason)
                if how == "missing":
                    self.assertEqual((c.stop, c.max_seeds), (kalah.Stop.MISSING, 11))
                    self.assertEqual(tb.probe("3,3,0,0/3,3,0,0/0,0/A").source, "search")
                else:
                    self.assertEqual((c.stop, c.max_seeds), (kalah.Stop.DAMAGED, -1))
                    with self.assertRaises(kalah.DatabaseError) as caught:
                        tb.value("1,1,0,0/1,1,0,0/0,0/A")
                    self.assertEqual(str(caught.exception), c.reason)
                self.assertEqual(tb.info()[1].stop, kalah.Stop.END)  # the other rule

    def test_book_answers_kalah_6_4_at_once(self):
        """The first plies of Kalah(6,4) come from the opening books built into the module
        (source "book", no node searched, within a 0.1 s budget), both rules, with the values
        of the book's text in data/book/ (kalah verify-book re-proves it) and of `kalah query`;
        books=False searches them (unknown within the budget)."""
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        for rule, published in (("standard", 8), ("empty-capture", 10)):
            book = {}
            with open(os.path.join(root, "data", "book", "kalah-6-4-%s.book" % rule)) as f:
                for line in f:
                    words = line.split()
                    if len(words) == 2 and not line.startswith("#"):
                        book[words[0]] = int(words[1])
            with kalah.open(self.db) as tb:
                start = kalah.start(6, 4)
                p = tb.probe(start, rule, time_limit=0.1)
                self.assertEqual((p.value, p.source, p.nodes), (published, "book", 0))
                self.assertIs(p.source, kalah.Source.BOOK)
                self.assertEqual(book[start], published)
                mvs = tb.move_values(start, rule, time_limit=0.1)
                self.assertEqual(len(mvs), 6)
                for mv in mvs:
                    after, _ = kalah.play(start, mv.move, rule)
                    self.assertEqual((mv.value, mv.source, mv.nodes),
                                     (book[after], "book", 0), mv.move)
                q = query(start, rule, self.empty)
                self.assertEqual(q["source"], "book")
                self.assertEqual({mv.move: mv.value for mv in mvs},
                                 {m["move"]: m["value"] for m in q["moves"]})
                self.assertEqual(tb.best_moves(start, rule, time_limit=0.1), q["best"])
                # Two plies in: still the book's.
                pos, _ = kalah.play(start, "A1", rule)
                pos, _ = kalah.play(pos, "B2", rule)
                self.assertEqual(tb.probe(pos, rule, node_limit=1).source, "book")
                self.assertEqual(tb.value(pos, rule, node_limit=1), book[pos])
            with kalah.open(books=False) as tb:
                p = tb.probe(kalah.start(6, 4), rule, node_limit=2000)
                self.assertEqual(p.source, "unknown")

    def test_source_and_category(self):
        """source is a Source (still equal to its text); category is win/draw/loss for the
        side to move in the position asked about, for a move the side that plays it."""
        self.assertEqual({s.value for s in kalah.Source},
                         {"database", "search", "unknown", "book"})
        self.assertEqual({c.value for c in kalah.Category}, {"win", "draw", "loss", "unknown"})
        self.assertEqual(str(kalah.Source.SEARCH), "search")
        self.assertEqual("{}".format(kalah.Category.WIN), "win")
        with kalah.open(self.db) as tb:
            p = tb.probe(kalah.start(4, 3))  # +6: South, to move, wins
            self.assertIs(p.source, kalah.Source.SEARCH)
            self.assertEqual(p.source, "search")
            self.assertIs(p.category, kalah.Category.WIN)
            north = "3,3,3,3/3,3,3,3/0,0/B"  # the start with North to move: North wins
            self.assertGreater(tb.value(north), -100)
            q = tb.probe(north)
            self.assertIs(q.category, kalah.Category.WIN if q.value < 0 else
                          kalah.Category.LOSS if q.value > 0 else kalah.Category.DRAW)
            # South's margins +2, 0, +1 (the game over: South sweeps A1), -1.
            for pos, value, category in (("1,0/1,0/0,0/A", 2, kalah.Category.WIN),
                                         ("0,1/0,1/0,0/B", 0, kalah.Category.DRAW),
                                         ("1,0/0,0/0,0/B", 1, kalah.Category.LOSS),
                                         ("0,0/1,0/0,0/A", -1, kalah.Category.LOSS),
                                         ("0,0/1,0/0,0/B", -1, kalah.Category.WIN)):
                self.assertEqual(tb.probe(pos)[::3], (value, category), pos)
            for pos in (kalah.start(4, 3), north):
                south = kalah.to_tuple(pos)[2] == 0
                for mv in tb.move_values(pos):
                    mine = mv.value if south else -mv.value
                    self.assertEqual(mv.category, "win" if mine > 0 else
                                     "loss" if mine < 0 else "draw")
        with kalah.open() as tb:
            p = tb.probe(kalah.start(6, 5), node_limit=2000)
            self.assertIs(p.source, kalah.Source.UNKNOWN)
            self.assertIs(p.category, kalah.Category.UNKNOWN)

    def test_wrong_types_and_values(self):
        """A value of the wrong type is TypeError, a bad value ValueError: never pybind11's
        RuntimeError."""
        with kalah.open() as tb:
            for bad in (3.5, None, b"1/1/0,0/A", (("a", "b"), (0, 0), 0),
                        ((1, 1), (0, 0), 2.5), ((1.0, 1), (0, 0), 0), (5, (0, 0), 0),
                        ("11", (0, 0), 0), ((1, 1), "00", 0)):
                with self.subTest(position=bad):
                    with self.assertRaises(TypeError):
                        tb.probe(bad)
                    with self.assertRaises(TypeError):
                        kalah.normalize(bad)
            for bad in (((10 ** 30, 1), (0, 0), 0), ((1, 1), (0, 0), 2), (1, 2),
                        "4,4/4,4/0,0/C"):
                with self.subTest(position=bad):
                    with self.assertRaises(ValueError):
                        tb.probe(bad)
            with self.assertRaises(ValueError):
                tb.probe("1/1/0,0/A", node_limit=-1)
            with self.assertRaises(ValueError):
                tb.move_values("1/1/0,0/A", time_limit=-0.5)
            with self.assertRaises(TypeError):
                tb.probe("1/1/0,0/A", node_limit="10")
            with self.assertRaises(TypeError):
                tb.probe("1/1/0,0/A", rule=3)
        pos = kalah.start(4, 3)
        for bad in (3.5, None, [0]):
            with self.assertRaises(TypeError):
                kalah.play(pos, bad, "standard")
        with self.assertRaises(ValueError):
            kalah.play(pos, "Z9", "standard")
        with self.assertRaises(ValueError):
            kalah.play(pos, 2 ** 40, "standard")
        with self.assertRaises(ValueError):
            kalah.start(7, 4)
        with self.assertRaises(TypeError):
            kalah.start("6", 4)
        with self.assertRaises(ValueError):
            kalah.open(db_memory_mib=-1)

    def test_compiled_functions_have_names_and_docs(self):
        """Every compiled function: a docstring and named arguments (no arg0)."""
        from kalah import _kalah
        functions = [getattr(_kalah, n) for n in dir(_kalah)
                     if callable(getattr(_kalah, n)) and not isinstance(getattr(_kalah, n), type)]
        functions += [getattr(_kalah.Oracle, n) for n in ("__init__", "probe", "move_values",
                                                          "coverage")]
        self.assertGreater(len(functions), 8)
        for f in functions:
            with self.subTest(function=f.__name__):
                doc = f.__doc__ or ""
                self.assertNotIn("arg0", doc)
                self.assertGreater(len(doc.split("\n", 1)[-1].strip()), 10, doc)
        self.assertEqual(kalah.play(kalah.start(3, 1), move="A1"), ("0,2,1/1,1,1/0,0/B", "A1"))

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
            p = tb.probe(kalah.start(6, 5), time_limit=0.5)
            during = ticks[0] - before
            stop.set()
            t.join()
            self.assertEqual(p.source, "unknown")
            self.assertGreater(during, 50)


if __name__ == "__main__":
    unittest.main()
