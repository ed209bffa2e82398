"""OpenSpiel's own recorded games of `mancala`, transcribed as test vectors.

Source: google-deepmind/open_spiel, open_spiel/integration_tests/playthroughs/mancala.txt
(Apache-2.0), at two releases. Each playthrough is one game: every action in order, and
the states the file prints in full, each as
(state number = actions applied, CurrentPlayer(), IsTerminal(), ObservationTensor(0),
LegalActions(), Returns()); ObservationTensor(1) is the same in every printed state.
Transcribed by reading the file's `# State N` blocks (History() checked against the
actions); not OpenSpiel code.
"""

PLAYTHROUGHS = {
    "v1.6.15": {
        "version": "v1.6.15",
        "commit": "fcb98881bffd25a324d5505041c837ca9b7ed0bf",
        "file_last_changed": "4f3bfceb (2022-05-26): the file is the same from v1.1.1 to v1.6.15",
        "tensor": "14 cells",
        "actions": [
            2, 12, 4, 9, 8, 3, 12, 13, 6, 8, 5, 12, 9, 4, 11, 4, 8, 1, 12, 8,
            3, 9, 4, 11, 6, 9, 5, 12, 11, 6,
        ],
        "states": [
            (0, 0, False, [0, 4, 4, 4, 4, 4, 4, 0, 4, 4, 4, 4, 4, 4],
             [1, 2, 3, 4, 5, 6], [0, 0]),
            (1, 1, False, [0, 4, 0, 5, 5, 5, 5, 0, 4, 4, 4, 4, 4, 4],
             [8, 9, 10, 11, 12, 13], [0, 0]),
            (2, 0, False, [1, 5, 1, 5, 5, 5, 5, 0, 4, 4, 4, 4, 0, 5],
             [1, 2, 3, 4, 5, 6], [0, 0]),
            (3, 1, False, [1, 5, 1, 5, 0, 6, 6, 1, 5, 5, 4, 4, 0, 5],
             [8, 9, 10, 11, 13], [0, 0]),
            (4, 1, False, [2, 5, 1, 5, 0, 6, 6, 1, 5, 0, 5, 5, 1, 6],
             [8, 10, 11, 12, 13], [0, 0]),
            (5, 0, False, [2, 5, 1, 5, 0, 6, 6, 1, 0, 1, 6, 6, 2, 7],
             [1, 2, 3, 5, 6], [0, 0]),
            (18, 1, False, [6, 0, 4, 3, 1, 4, 4, 5, 1, 2, 11, 0, 2, 5],
             [8, 9, 10, 12, 13], [0, 0]),
            (24, 0, False, [12, 0, 0, 0, 0, 6, 6, 5, 0, 0, 12, 0, 1, 6],
             [5, 6], [0, 0]),
            (30, -4, True, [13, 0, 0, 0, 0, 0, 0, 8, 2, 1, 15, 0, 1, 8],
             [], [-1, 1]),
        ],
    },
    "v2.0.1": {
        "version": "v2.0.1",
        "commit": "112b77704631fc2ce7ad8e4581f6ca09798ce15a",
        "file_last_changed": "40d80321 (2026-06-17): the file is the same in v2.0 and v2.0.1",
        "tensor": "14 cells, current player, move number",
        "actions": [
            6, 11, 4, 12, 1, 5, 10, 1, 9, 3, 10, 1, 9, 5, 13, 3, 8, 4, 13, 10,
            2, 9, 1, 11, 6, 8, 1, 11, 4, 13, 5, 8, 3, 8, 2, 9, 13, 12, 6, 10,
            1, 9, 5, 8, 3, 6, 10, 4, 12, 5, 6, 2, 13, 2, 8, 4, 11, 1, 12, 3,
            13,
        ],
        "states": [
            (0, 0, False, [0, 4, 4, 4, 4, 4, 4, 0, 4, 4, 4, 4, 4, 4, 0, 0],
             [1, 2, 3, 4, 5, 6], [0, 0]),
            (1, 1, False, [0, 4, 4, 4, 4, 4, 0, 1, 5, 5, 5, 4, 4, 4, 1, 1],
             [8, 9, 10, 11, 12, 13], [0, 0]),
            (2, 0, False, [1, 5, 4, 4, 4, 4, 0, 1, 5, 5, 5, 0, 5, 5, 0, 2],
             [1, 2, 3, 4, 5], [0, 0]),
            (3, 1, False, [1, 5, 4, 4, 0, 5, 1, 2, 6, 5, 5, 0, 5, 5, 1, 3],
             [8, 9, 10, 12, 13], [0, 0]),
            (4, 0, False, [2, 6, 5, 5, 0, 5, 1, 2, 6, 5, 5, 0, 0, 6, 0, 4],
             [1, 2, 3, 5, 6], [0, 0]),
            (6, 1, False, [2, 0, 6, 6, 1, 0, 3, 4, 7, 6, 6, 1, 0, 6, 1, 6],
             [8, 9, 10, 11, 13], [0, 0]),
            (20, 0, False, [10, 2, 11, 1, 0, 2, 7, 5, 0, 1, 0, 6, 3, 0, 0, 20],
             [1, 2, 3, 5, 6], [0, 0]),
            (21, 1, False, [10, 2, 0, 2, 1, 3, 8, 6, 1, 2, 1, 7, 4, 1, 1, 21],
             [8, 9, 10, 11, 12, 13], [0, 0]),
            (39, 1, False, [15, 2, 1, 2, 3, 3, 0, 10, 1, 1, 7, 2, 0, 1, 1, 39],
             [8, 9, 10, 11, 13], [0, 0]),
            (42, 0, False, [21, 0, 3, 4, 0, 3, 0, 10, 1, 0, 0, 3, 1, 2, 0, 42],
             [2, 3, 5], [0, 0]),
            (59, 0, False, [23, 0, 1, 3, 0, 0, 0, 19, 0, 0, 0, 0, 0, 2, 0, 59],
             [2, 3], [0, 0]),
            (61, -4, True, [24, 1, 1, 0, 1, 1, 1, 19, 0, 0, 0, 0, 0, 0, 0, 61],
             [], [0, 0]),
        ],
    },
}
