"""Budgets of the Python module: one budget a call (the database's opening, the wait for a
solver and every move's search count), Ctrl-C, and the cap on the solver pool.

Run by ctest (api-python) with PYTHONPATH at the built module and KALAH_BIN the binary.
No assertion times anything: nodes, sources and exceptions are what is checked."""

import os
import signal
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import kalah

KALAH_BIN = os.environ.get("KALAH_BIN", "build/kalah")


class BudgetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="kalah-py-budget-")
        cls.db = os.path.join(cls.work, "db")
        subprocess.run([KALAH_BIN, "build-db", "--pits", "4", "--max-seeds", "12", "--db",
                        cls.db, "-q"], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work)

    def test_move_values_one_budget_for_every_move(self):
        """node_limit bounds the nodes of all moves together, not of each (the beat checks
        every 256 nodes under a small limit, and a search stops at its next check)."""
        limit = 3000
        with kalah.open() as tb:
            moves = tb.move_values(kalah.start(6, 5), node_limit=limit)
        self.assertEqual(len(moves), 6)
        self.assertLessEqual(sum(mv.nodes for mv in moves), limit + 2 * 256)
        self.assertIn(None, [mv.value for mv in moves])

    def test_opening_counts_in_the_budget(self):
        """The first probe of a (pits, rule) opens its layers in the background: a budget
        that ends first gives unknown at once, and a later call finds the database open."""
        position = "3,3,0,0/3,3,0,0/0,0/A"  # 12 seeds: the database holds it
        with kalah.open(self.db) as tb:
            first = tb.probe(position, time_limit=1e-9)
            self.assertEqual(first.source, "unknown")
            self.assertEqual(first.nodes, 0)
            self.assertEqual(tb.probe(position).source, "database")
            self.assertEqual(tb.probe(position, time_limit=1e-9).source, "database")

    def test_pool_cap_makes_callers_wait(self):
        """With max_solvers=1 a second caller waits for the one solver, within its budget:
        unknown without a node searched while the first holds it; then it gets it."""
        start = kalah.start(6, 5)
        with kalah.open(max_solvers=1) as tb:
            holding = threading.Event()
            done = threading.Event()
            first = []

            def hold():
                holding.set()
                first.append(tb.probe(start, time_limit=6))
                done.set()

            t = threading.Thread(target=hold)
            t.start()
            holding.wait()
            time.sleep(1.0)  # the first caller is in its search by then
            waited = tb.probe(start, time_limit=0.2)
            still_searching = not done.is_set()
            t.join()
            if still_searching:
                self.assertEqual(waited.source, "unknown")
                self.assertEqual(waited.nodes, 0)
            self.assertEqual(first[0].source, "unknown")
            self.assertGreater(tb.probe(start, node_limit=1000).nodes, 0)
        with self.assertRaises(ValueError):
            kalah.open(max_solvers=-1)

    def test_ctrl_c_stops_a_search(self):
        """SIGINT during a search without a budget (minutes long) raises KeyboardInterrupt,
        in a search and while waiting for a solver; the handle stays usable."""
        program = r"""
import sys, threading, kalah
tb = kalah.open(max_solvers=1)
start = kalah.start(6, 5)
if sys.argv[1] == "wait":
    threading.Thread(target=lambda: tb.probe(start, time_limit=8), daemon=True).start()
    import time; time.sleep(0.5)
print("searching", flush=True)
try:
    tb.probe(start)
    print("finished")
except KeyboardInterrupt:
    print("interrupted")
    print(tb.value(kalah.start(3, 2)))
"""
        for mode in ("search", "wait"):
            with self.subTest(mode=mode):
                child = subprocess.Popen([sys.executable, "-c", program, mode],
                                         stdout=subprocess.PIPE, text=True)
                self.assertEqual(child.stdout.readline().strip(), "searching")
                time.sleep(0.5)
                child.send_signal(signal.SIGINT)
                try:
                    out, _ = child.communicate(timeout=120)
                except subprocess.TimeoutExpired:
                    child.kill()
                    self.fail("the search went on after SIGINT")
                self.assertEqual(out.split(), ["interrupted", str(kalah.solve(3, 2))])
                self.assertEqual(child.returncode, 0)

    def test_exit_with_daemon_threads_in_calls(self):
        """The interpreter exits normally while daemon threads are in calls (one in a search
        without a budget, the others waiting for the one solver): they end quietly, not
        with std::terminate (a thread that takes the GIL back during finalization is ended
        by pthread_exit, whose unwinding through a noexcept frame aborts the process)."""
        program = r"""
import threading, time, kalah
tb = kalah.open(max_solvers=1)
start = kalah.start(6, 5)
for _ in range(16):
    threading.Thread(target=lambda: tb.probe(start), daemon=True).start()
time.sleep(0.5)
print("exiting", flush=True)
"""
        for _ in range(3):
            child = subprocess.run([sys.executable, "-c", program], capture_output=True,
                                   text=True, timeout=120)
            self.assertEqual(child.stdout.split(), ["exiting"])
            self.assertEqual(child.stderr, "")
            self.assertEqual(child.returncode, 0)


if __name__ == "__main__":
    unittest.main()
