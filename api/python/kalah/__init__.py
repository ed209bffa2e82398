"""Exact Kalah(m,n) values: endgame databases made by ``kalah build-db`` and proven searches.

Every value is **South's final margin** (South's final store minus North's, stores
included) under perfect play, whoever is to move: positive is good for South (the A row,
who moves first), negative for North.

Positions are the project's text, ``"A1,..,Am/B1,..,Bm/storeA,storeB/side"`` (e.g.
``"4,4,4,4,4,4/4,4,4,4,4,4/0,0/A"``), or a tuple ``(pits, stores, to_move)``: ``pits`` the
2m counts A1..Am then B1..Bm (or a pair of rows), ``stores`` (south, north), ``to_move``
0 or "A" for South, 1 or "B" for North. Rules: ``"standard"`` or ``"empty-capture"``.

    import kalah
    with kalah.open("kalah-db") as tb:
        print(tb.value(kalah.start(6, 4)))            # +10 under empty-capture ...
        print(tb.move_values("4,4,4/4,4,4/0,0/A"))    # best first for the mover

As python-chess's syzygy module: ``value`` raises ``KeyError`` when it cannot give the
value (the search's budget ran out), ``get_value`` returns a default instead. Searches
release the GIL, so threads can probe one handle at once.
"""

import os
from collections import namedtuple

from ._kalah import (DatabaseError, InputError, NotFoundError, Oracle as _Oracle,
                     __version__, legal_moves, normalize, play, start, to_tuple)

# `open` stays kalah.open, but out of __all__: `from kalah import *` must not shadow the
# builtin open(). open_tablebase is the same function under a name that shadows nothing.
__all__ = ["open_tablebase", "solve", "Tablebase", "MoveValue", "Probe", "start", "play",
           "legal_moves", "normalize", "to_tuple", "DatabaseError", "InputError",
           "NotFoundError", "__version__"]

Probe = namedtuple("Probe", "value source nodes")
Probe.__doc__ = """A value (South's margin; None when unknown), where it came from
("database", "search" or "unknown": the budget ran out) and the nodes searched."""

MoveValue = namedtuple("MoveValue", "move pit value source nodes")
MoveValue.__doc__ = """A legal move: its notation ("A3+"), the mover's pit (0-based), the
value of the position after it (South's margin; None when unknown), its source and nodes."""


class Tablebase:
    """A database directory opened for probing (see ``kalah.open``)."""

    def __init__(self, directory=None, db_memory_mib=4096, tt_mib=64, threads=1,
                 max_solvers=0):
        self._oracle = _Oracle(os.fspath(directory) if directory else "", db_memory_mib,
                               tt_mib, threads, max_solvers)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Releases the database and the search tables; the handle is unusable after."""
        self._oracle = None

    def _o(self):
        if self._oracle is None:
            raise ValueError("the tablebase is closed")
        return self._oracle

    def probe(self, position, rule="standard", node_limit=0, time_limit=0.0):
        """The value of ``position`` as a ``Probe``: exact from the database when it holds
        the position, else a proven search within node_limit nodes / time_limit seconds
        (0: no limit); source "unknown" (value None) when the budget ran out. The budget
        covers the whole call: the database's first opening (which goes on in the
        background: a later call finds it open) and the wait for a free solver included.
        Ctrl-C stops a search (KeyboardInterrupt)."""
        return Probe(*self._o().probe(position, rule, node_limit, time_limit))

    def value(self, position, rule="standard", node_limit=0, time_limit=0.0):
        """South's final margin under perfect play. Raises KeyError when the budget ran out
        before the search proved the value."""
        p = self.probe(position, rule, node_limit, time_limit)
        if p.value is None:
            raise KeyError("value of {} not found within the budget".format(
                normalize(position)))
        return p.value

    def get_value(self, position, rule="standard", default=None, node_limit=0,
                  time_limit=0.0):
        """As ``value``, but ``default`` instead of KeyError."""
        v = self.probe(position, rule, node_limit, time_limit).value
        return default if v is None else v

    def move_values(self, position, rule="standard", node_limit=0, time_limit=0.0):
        """Every legal move as a ``MoveValue``, sorted best first for the side to move
        (South: highest margin first, North: lowest first; ties in pit order; unknown
        values last). Values are South's final margin after the move, whoever moves. One
        budget for the call: once it is spent, the moves left are unknown (but those the
        database holds). Empty when the game is over."""
        return [MoveValue(*mv) for mv in self._o().move_values(position, rule, node_limit,
                                                                time_limit)]

    def best_moves(self, position, rule="standard", node_limit=0, time_limit=0.0):
        """The notation of every best move of the side to move (pit order). Raises KeyError
        when some move's value is unknown within the budget."""
        moves = self.move_values(position, rule, node_limit, time_limit)
        if any(mv.value is None for mv in moves):
            raise KeyError("best moves of {} not found within the budget".format(
                normalize(position)))
        best = [mv for mv in moves if mv.value == moves[0].value]
        return [mv.move for mv in sorted(best, key=lambda mv: mv.pit)]


def open(directory=None, db_memory_mib=4096, tt_mib=64, threads=1, max_solvers=0):  # noqa: A001
    """Opens a database directory made by ``kalah build-db`` (any pit counts and rules);
    None: no database, every value is searched. Raises FileNotFoundError (NotFoundError)
    for a missing directory or one without layer files. Use as a context manager.
    Searches use at most ``max_solvers`` solvers at once (each ``tt_mib`` of table and
    ``threads`` threads; 0: one per core); callers beyond them wait, within their budget."""
    return Tablebase(directory, db_memory_mib, tt_mib, threads, max_solvers)


open_tablebase = open


def solve(pits, seeds, rule="standard", directory=None, tt_mib=1024, threads=1):
    """The value of Kalah(pits, seeds) (South's margin), searched exactly, with the database
    of ``directory`` if given."""
    with Tablebase(directory, tt_mib=tt_mib, threads=threads) as tb:
        return tb.value(start(pits, seeds), rule)
