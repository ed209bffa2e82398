"""Reference answers for the Kalah(6,4) game tests of the C library and the Python module.

usage: game64_reference.py KALAH_BIN WORK_DIR

Builds 6-pit endgame layers 0..20 of both rules in WORK_DIR/db (resumed if present), then for
each rule plays a 10-move game from Kalah(6,4)'s start (the mover's best move, the second best
every third move, so the game leaves the main line) and writes what `kalah query --json` says
of the start and of the position after every move, one line a position, to
WORK_DIR/game64-<rule>.txt:

    <position> <value> <move>=<value>[*] ...

(`*` marks a best move; moves in pit order). The C test (probe_test.c --game64) and the
Python test (test_game64.py) value the same positions through the API alone and compare."""

import json
import os
import subprocess
import sys

RULES = ("standard", "empty-capture")
MOVES = 10


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: game64_reference.py KALAH_BIN WORK_DIR")
    kalah_bin, work = sys.argv[1], sys.argv[2]
    db = os.path.join(work, "db")
    os.makedirs(db, exist_ok=True)
    for rule in RULES:
        subprocess.run([kalah_bin, "build-db", "--pits", "6", "--max-seeds", "20", "--rule",
                        rule, "--db", db, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    for rule in RULES:
        lines = []
        played = []
        for ply in range(MOVES + 1):
            cmd = [kalah_bin, "query", "--pits", "6", "--seeds", "4", "--rule", rule, "--db", db,
                   "--json", "--quiet"]
            if played:
                cmd += ["--moves", " ".join(played)]
            q = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                          text=True).stdout)
            moves = " ".join(f"{m['move']}={m['value']}{'*' if m['best'] else ''}"
                             for m in q["moves"])
            lines.append(f"{q['position']} {q['value']} {moves}".rstrip())
            if ply == MOVES or not q["moves"]:
                break
            # The mover's moves best first (South maximises South's margin, North minimises).
            sign = 1 if q["to_move"] == "A" else -1
            ranked = sorted(q["moves"], key=lambda m: -sign * m["value"])
            played.append(ranked[1 if ply % 3 == 2 and len(ranked) > 1 else 0]["move"])
        if len(lines) != MOVES + 1:
            sys.exit(f"game64_reference: the {rule} game ended after {len(lines) - 1} moves")
        path = os.path.join(work, f"game64-{rule}.txt")
        with open(path + ".tmp", "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(path + ".tmp", path)
        print(f"{rule}: {' '.join(played)}")


if __name__ == "__main__":
    main()
