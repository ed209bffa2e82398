"""Ludii's site numbering of a Kalah board, to and from this project's positions.

Ludii's ``(mancalaBoard 2 m)`` with its default outer stores numbers the sites (vertices)
as its graph is assembled (ludii MancalaBoard: left store, bottom row, top row, right
store), rows from left to right as seen from the bottom player::

    site:     m+1   m+2  ...  2m          top row: North (P2)  = Bm ... B1
           0                     2m+1     stores: North's left, South's right
              1     2    ...  m           bottom row: South (P1) = A1 ... Am

So site i (1..m) is A_i, site m+j is B_(m+1-j), site 2m+1 is South's store and site 0
North's store: each player's store on their right, as in rules.md. A pit and the pit
facing it share a column: site i faces site m+i (A_i faces B_(m+1-i)). Players: P1 is
South (moves first), P2 North. A move is the site emptied.
"""

from . import normalize, to_tuple


def sites_to_position(counts, mover):
    """The position (text) of Ludii's 2m+2 site counts with player ``mover`` (1 or 2) to move."""
    counts = [int(c) for c in counts]
    if len(counts) < 4 or len(counts) % 2:
        raise ValueError("a Kalah board has 2m+2 sites, not {}".format(len(counts)))
    if mover not in (1, 2):
        raise ValueError("mover must be 1 (P1, South) or 2 (P2, North), not {}".format(mover))
    m = len(counts) // 2 - 1
    south = counts[1:m + 1]
    north = list(reversed(counts[m + 1:2 * m + 1]))  # B1..Bm
    return normalize(((south, north), (counts[2 * m + 1], counts[0]), mover - 1))


def position_to_sites(position):
    """Ludii's site counts and the player to move (1 or 2) of a position."""
    (south, north), (store_s, store_n), to_move = to_tuple(position)
    return [store_n] + list(south) + list(reversed(north)) + [store_s], to_move + 1


def site_to_move(site, m):
    """The move text (``A3``, ``B5``) of emptying ``site`` on a board of m pits a side."""
    if 1 <= site <= m:
        return "A{}".format(site)
    if m + 1 <= site <= 2 * m:
        return "B{}".format(2 * m + 1 - site)
    raise ValueError("site {} is not a pit of a {}-pit board".format(site, m))


def move_to_site(move, m):
    """The site of a move text (``A3`` -> 3; ``B1`` -> 2m; a suffix is ignored)."""
    side, pit = move[0], int(move[1])
    if not 1 <= pit <= m or side not in "AB":
        raise ValueError("a move is A1..A{0} or B1..B{0}, not {1!r}".format(m, move))
    return pit if side == "A" else 2 * m + 1 - pit
