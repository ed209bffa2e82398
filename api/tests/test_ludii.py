"""Tests of kalah.ludii's site numbering."""

import unittest

import kalah
from kalah import ludii


class LudiiMappingTest(unittest.TestCase):
    def test_layout(self):
        # Kalah(6,4) after A3 A6 (rules.md examples 1-2): South row 4 4 0 5 5 0, store 2;
        # North row B1..B6 5 5 5 5 4 4, store 0; North to move.
        pos = "4,4,0,5,5,0/5,5,5,5,4,4/2,0/B"
        sites, mover = ludii.position_to_sites(pos)
        self.assertEqual(sites, [0, 4, 4, 0, 5, 5, 0, 4, 4, 5, 5, 5, 5, 2])
        self.assertEqual(mover, 2)
        self.assertEqual(ludii.sites_to_position(sites, mover), pos)
        with self.assertRaises(ValueError):
            ludii.sites_to_position(sites[:-1], 1)
        with self.assertRaises(ValueError):
            ludii.sites_to_position(sites, 0)

    def test_moves_and_columns(self):
        for m in range(1, 7):
            for p in range(1, m + 1):
                self.assertEqual(ludii.site_to_move(ludii.move_to_site("A%d" % p, m), m), "A%d" % p)
                self.assertEqual(ludii.site_to_move(ludii.move_to_site("B%d" % p, m), m), "B%d" % p)
                # A_p faces B_(m+1-p): the site straight above.
                self.assertEqual(ludii.move_to_site("B%d" % (m + 1 - p), m),
                                 ludii.move_to_site("A%d" % p, m) + m)
        with self.assertRaises(ValueError):
            ludii.site_to_move(0, 6)
        with self.assertRaises(ValueError):
            ludii.move_to_site("A7", 6)

    def test_capture_in_site_terms(self):
        # rules.md example 3: A2 holds 1, A3 empty, B4 (facing A3) holds 5; South plays A2
        # and captures 6: in Ludii's terms, site 2 sown into empty site 3, whose column
        # partner site 9 (B4) is emptied.
        pos = "4,1,0,4,4,4/4,4,4,5,4,4/0,0/A"
        sites, _ = ludii.position_to_sites(pos)
        self.assertEqual(sites[9], 5)
        after, text = kalah.play(pos, ludii.site_to_move(2, 6), "standard")
        self.assertEqual(text, "A2x6")
        sites_after, _ = ludii.position_to_sites(after)
        self.assertEqual((sites_after[2], sites_after[3], sites_after[9], sites_after[13]),
                         (0, 0, 0, 6))


if __name__ == "__main__":
    unittest.main()
