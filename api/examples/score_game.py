#!/usr/bin/env python3
"""Scores the moves of a game record for mistakes and blunders with the kalah module.

    PYTHONPATH=build/python python3 api/examples/score_game.py --db kalah-db \\
        --pits 6 --seeds 4 "A3+ A6 B2 A2 ..."

A record is moves in notation separated by white space (a file name works too); ';'
starts a comment to the end of the line and move numbers such as '12.' are ignored. For
each move: the value before it (the best move's), after it (South's margin), the seeds it
gave away from the mover's view, and a mark: '?' a mistake (seeds lost, same result for
the mover), '??' a blunder (the result for the mover changed), as `kalah annotate`."""

import argparse
import json
import os
import re
import sys

import kalah


def read_record(text):
    if os.path.isfile(text):
        with open(text) as f:
            text = f.read()
    text = "\n".join(line.split(";", 1)[0] for line in text.splitlines())
    return [t for t in text.split() if not re.fullmatch(r"\d+\.", t)]


def sign(v):
    return (v > 0) - (v < 0)


def score(tb, position, moves, rule):
    """One dict a move: ply, side, move, before, after, loss, mark, best."""
    notes = []
    for ply, move in enumerate(moves, 1):
        side = kalah.to_tuple(position)[2]
        mvs = tb.move_values(position, rule)
        before = mvs[0].value if mvs else None
        best = sorted((m for m in mvs if m.value == before), key=lambda m: m.pit)
        position, text = kalah.play(position, move, rule)
        after = tb.value(position, rule)
        mover = 1 if side == 0 else -1
        loss = mover * (before - after)
        mark = "" if loss == 0 else "??" if sign(mover * before) != sign(mover * after) else "?"
        notes.append({"ply": ply, "side": "AB"[side], "move": text, "before": before,
                      "after": after, "loss": loss, "mark": mark,
                      "best": [m.move for m in best]})
    return notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("record", help="the moves, or a file holding them")
    ap.add_argument("--db", help="endgame database directory (kalah build-db)")
    ap.add_argument("--rule", default="standard")
    ap.add_argument("--pits", type=int, default=6)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--position", help="start position text (instead of --pits/--seeds)")
    ap.add_argument("--json", action="store_true", help="one JSON object a move")
    args = ap.parse_args()
    try:
        start = args.position or kalah.start(args.pits, args.seeds)
        with kalah.open(args.db) as tb:
            notes = score(tb, start, read_record(args.record), args.rule)
    except (ValueError, OSError) as e:
        print("score_game: error: {}".format(e), file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(notes))
        return 0
    for n in notes:
        print("{:3d}. {:7s} {:3s} value {:+d} -> {:+d}  loss {:2d}  best {}".format(
            n["ply"], n["move"], n["mark"], n["before"], n["after"], n["loss"],
            " ".join(n["best"])))
    for side in "AB":
        mine = [n for n in notes if n["side"] == side]
        print("{}: {} moves, {} mistakes, {} blunders, {} seeds lost".format(
            side, len(mine), sum(n["mark"] == "?" for n in mine),
            sum(n["mark"] == "??" for n in mine), sum(n["loss"] for n in mine)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
