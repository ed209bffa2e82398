"""The example script api/examples/score_game.py against `kalah annotate --json`, and the
examples of docs/api.md compiled and run exactly as written, against the output it shows."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import kalah

KALAH_BIN = os.environ.get("KALAH_BIN", "build/kalah")
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                      "score_game.py")
DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "api.md")
# The build directory (cmake --install of it gives the C example its prefix).
BUILD_DIR = os.environ.get("KALAH_BUILD_DIR", os.path.dirname(os.path.abspath(KALAH_BIN)))


def docs_example(language):
    """The first ```language block of docs/api.md and the ```text block after it (what the
    docs say it prints)."""
    with open(DOCS) as f:
        text = f.read()
    m = re.search(r"```" + language + r"\n(.*?)```.*?```text\n(.*?)```", text, re.S)
    if not m:
        raise AssertionError("docs/api.md: no ```{} block followed by ```text".format(language))
    return m.group(1), m.group(2)


class DocsExamplesTest(unittest.TestCase):
    """docs/api.md's examples beside the database its install step builds."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="kalah-docs-test-")
        # The install step's command: `kalah build-db --pits 4 --max-seeds 14 --db kalah-db`.
        subprocess.run([KALAH_BIN, "build-db", "--pits", "4", "--max-seeds", "14", "--db",
                        "kalah-db", "--quiet"], cwd=cls.work, check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work)

    def test_python_example(self):
        code, expected = docs_example("python")
        with open(os.path.join(self.work, "probe.py"), "w") as f:
            f.write(code)
        out = subprocess.run([sys.executable, "probe.py"], cwd=self.work, check=True,
                             capture_output=True, text=True, env=os.environ).stdout
        self.assertEqual(out, expected)

    def test_c_example(self):
        """Built with the command of its first line against a `cmake --install` prefix,
        with the variables the docs name for a prefix outside the system's paths."""
        for tool in ("cc", "pkg-config", "cmake"):
            if not shutil.which(tool):
                self.skipTest(tool + " not found")
        code, expected = docs_example("c")
        command = re.match(r"/\* (.*) \*/\n", code)
        self.assertIsNotNone(command, "the C example opens with its build command")
        prefix = os.path.join(self.work, "prefix")
        subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", prefix], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(self.work, "probe.c"), "w") as f:
            f.write(code)
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"),
                   LD_LIBRARY_PATH=os.path.join(prefix, "lib"))
        out = subprocess.run(["bash", "-c", command.group(1)], cwd=self.work, env=env,
                             check=True, capture_output=True, text=True).stdout
        self.assertEqual(out, expected)


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
