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
release the GIL, so threads can probe one handle at once. Each result also carries a
``category`` (``Category.WIN``/``DRAW``/``LOSS``, as lichess's tablebase) from the view of
the side to move in the position asked about. A value of the wrong type is ``TypeError``,
a malformed or impossible one ``ValueError`` (``InputError``). Types: the package ships
``.pyi`` stubs and ``py.typed``.
"""

import enum
import os
from typing import Any, NamedTuple, Optional, Sequence, Union

from ._kalah import (DatabaseError, InputError, NotFoundError, Oracle as _Oracle,
                     __version__, legal_moves, normalize, play, start, to_tuple)

# `open` stays kalah.open, but out of __all__: `from kalah import *` must not shadow the
# builtin open(). open_tablebase is the same function under a name that shadows nothing.
__all__ = ["open_tablebase", "solve", "Tablebase", "MoveValue", "Probe", "Coverage",
           "Source", "Category", "Stop", "Position", "start", "play", "legal_moves", "normalize",
           "to_tuple", "DatabaseError", "InputError", "NotFoundError", "__version__"]

# A position, for annotations: the text, or the tuple (pits, stores, to_move) above.
Position = Union[str, Sequence[Any]]


class _StrEnum(str, enum.Enum):
    """An enum whose members are their texts: ``Source.DATABASE == "database"``, and
    ``str()`` and format give the text (enum.StrEnum of Python 3.11, on older ones too)."""

    __str__ = str.__str__
    __format__ = str.__format__


class Source(_StrEnum):
    """Where a value came from."""

    DATABASE = "database"  #: exact, read from the database (or the game is over)
    SEARCH = "search"  #: exact, proven by a search within the budget
    UNKNOWN = "unknown"  #: the budget ran out: no value
    BOOK = "book"  #: exact, from an opening book built into the module (Kalah(6,4)'s first plies)


class Category(_StrEnum):
    """The result under perfect play for one side (as lichess's tablebase ``category``):
    for the side to move in the position asked about."""

    WIN = "win"
    DRAW = "draw"
    LOSS = "loss"
    UNKNOWN = "unknown"  #: the budget ran out


class Stop(_StrEnum):
    """Why the layers a database uses stop where they do (``Coverage.stop``)."""

    END = "end"  #: no file for the next layer nor above: the database as built
    MISSING = "missing"  #: the next layer's file is missing below a higher layer's
    DAMAGED = "damaged"  #: a layer file is damaged or unreadable: nothing used, probes fail
    NOT_OPENED = "not-opened"  #: not opened (``info(open_all=False)``): not yet, or refused


def _category(value: Optional[int], south_to_move: bool) -> Category:
    if value is None:
        return Category.UNKNOWN
    mine = value if south_to_move else -value
    return Category.WIN if mine > 0 else Category.LOSS if mine < 0 else Category.DRAW


class Probe(NamedTuple):
    """A position's value and where it came from."""

    value: Optional[int]  #: South's final margin; None when unknown
    source: Source
    nodes: int  #: searched for it
    category: Category  #: win/draw/loss for the side to move


class MoveValue(NamedTuple):
    """A legal move and the value of the position after it."""

    move: str  #: notation, e.g. "A3+"
    pit: int  #: the mover's pit, 0-based
    value: Optional[int]  #: South's final margin after the move; None when unknown
    source: Source
    nodes: int
    category: Category  #: win/draw/loss for the side that plays the move


class Coverage(NamedTuple):
    """What the database directory holds for one pit count and rule (``Tablebase.info``)."""

    pits: int
    rule: str  #: "standard" or "empty-capture"
    max_seeds: int  #: layers 0..max_seeds (seeds in pits) are used; -1: none
    stop: Stop  #: why they stop there
    stop_layer: int  #: the layer the run stops at (max_seeds + 1, or the damaged one); -1: none
    file: str  #: that layer's file name, without the directory ("" if none)
    reason: str  #: one line for a person; for DAMAGED the DatabaseError's message


def _south_to_move(position) -> bool:
    return to_tuple(position)[2] == 0


def _check_budget(node_limit: int, time_limit: float) -> None:
    if isinstance(node_limit, int) and node_limit < 0:
        raise ValueError("node_limit must be >= 0 (0: no limit), not {}".format(node_limit))
    if isinstance(time_limit, (int, float)) and not time_limit >= 0:
        raise ValueError("time_limit must be >= 0 seconds (0: no limit), not {}".format(
            time_limit))


class Tablebase:
    """A database directory opened for probing (see ``kalah.open``)."""

    def __init__(self, directory=None, db_memory_mib=4096, tt_mib=64, threads=1,
                 max_solvers=0, books=True):
        self._oracle = _Oracle(os.fspath(directory) if directory else "", db_memory_mib,
                               tt_mib, threads, max_solvers, bool(books))

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
        """The value of ``position`` as a ``Probe``: exact from an opening book built into
        the module (source "book": the first plies of Kalah(6,4), at once) or the database
        when one holds the position, else a proven search within node_limit nodes / time_limit seconds
        (0: no limit); source "unknown" (value None) when the budget ran out. The budget
        covers the whole call: the database's first opening (which goes on in the
        background: a later call finds it open) and the wait for a free solver included.
        Ctrl-C stops a search (KeyboardInterrupt)."""
        _check_budget(node_limit, time_limit)
        value, source, nodes = self._o().probe(position, rule, node_limit, time_limit)
        return Probe(value, Source(source), nodes, _category(value, _south_to_move(position)))

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
        _check_budget(node_limit, time_limit)
        moves = self._o().move_values(position, rule, node_limit, time_limit)
        south = _south_to_move(position) if moves else True
        return [MoveValue(move, pit, value, Source(source), nodes, _category(value, south))
                for move, pit, value, source, nodes in moves]

    def best_moves(self, position, rule="standard", node_limit=0, time_limit=0.0):
        """The notation of every best move of the side to move (pit order). Raises KeyError
        when some move's value is unknown within the budget."""
        moves = self.move_values(position, rule, node_limit, time_limit)
        if any(mv.value is None for mv in moves):
            raise KeyError("best moves of {} not found within the budget".format(
                normalize(position)))
        best = [mv for mv in moves if mv.value == moves[0].value]
        return [mv.move for mv in sorted(best, key=lambda mv: mv.pit)]


    def info(self, open_all=True):
        """What the directory holds and uses: a ``Coverage`` per pit count and rule that has
        a layer file there, by pit count then rule (empty without a directory). open_all:
        those not opened yet are opened first, as their first probe would, with the same
        checks (every file's header and index, and the layers held in memory); a damaged
        layer is then reported (``Stop.DAMAGED``, the file named) rather than raised. It can
        take the time and memory of opening every database there. open_all=False opens
        nothing: those not opened yet are ``Stop.NOT_OPENED``."""
        return [Coverage(pits, rule, max_seeds, Stop(stop), stop_layer, file, reason)
                for pits, rule, max_seeds, stop, stop_layer, file, reason
                in self._o().coverage(bool(open_all))]


def open(directory=None, db_memory_mib=4096, tt_mib=64, threads=1, max_solvers=0,  # noqa: A001
         books=True):
    """Opens a database directory made by ``kalah build-db`` (any pit counts and rules);
    None: no database, every value is searched. Raises FileNotFoundError (NotFoundError)
    for a missing directory or one without layer files. Use as a context manager.
    Searches use at most ``max_solvers`` solvers at once (each ``tt_mib`` of table and
    ``threads`` threads; 0: one per core); callers beyond them wait, within their budget.
    The first plies of Kalah(6,4) are answered at once from opening books built into the
    module (source "book"); ``books=False`` searches them instead."""
    return Tablebase(directory, db_memory_mib, tt_mib, threads, max_solvers, books)


open_tablebase = open


def solve(pits, seeds, rule="standard", directory=None, tt_mib=1024, threads=1):
    """The value of Kalah(pits, seeds) (South's margin), searched exactly, with the database
    of ``directory`` if given."""
    with Tablebase(directory, tt_mib=tt_mib, threads=threads) as tb:
        return tb.value(start(pits, seeds), rule)
