// The proof tree of a campaign (campaign/tree.*): its split logic against brute force,
// where leaf growth and budget growth send the next job, and select() with jobs in flight.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

#include "brute_force.h"
#include "campaign/campaign.h"
#include "campaign/journal.h"
#include "campaign/tree.h"
#include "campaign_fixtures.h"
#include "oracle_workers.h"
#include "random_position.h"

using namespace kalah;
using namespace kalah::campaign;
using test_campaign::no_job_twice;
using test_campaign::OracleWorkers;

TEST_SUITE("campaign") {
    TEST_CASE("split logic: proof trees over random positions reach the brute-force value") {
        std::mt19937 rng(20261201);
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int m = 2; m <= 4; ++m) {
                BruteForce bf(m, rule);
                for (int t = 0; t < 40; ++t) {
                    const int seeds = 4 + int(rng() % (m == 4 ? 10 : 12));
                    const Board pos = random_position(rng, m, seeds).without_stores();
                    const int want = bf.pits_value(ref::from_board(pos));
                    ProofTree tree(CampaignParams{m, 10, rule}, nullptr, pos);
                    // Any choice reaches the value: pit or engine order, with or without
                    // stickiness.
                    tree.set_engine_order(rng() % 2);
                    tree.set_stickiness(double(rng() % 3) * 2);
                    OracleWorkers oracle(bf, rng(), int(rng() % 4));
                    oracle.capacity_ = 1 + int(rng() % 3);  // several jobs in flight, out of order
                    std::vector<JobRecord> records;
                    const int guess = int(rng() % 9) - 4;
                    const int got = solve_tree(
                        tree, oracle, guess,
                        [&](const JobRecord& r, const Dispatch&) { records.push_back(r); }, {});
                    INFO("m ", m, " ", format_position(pos), " rule ", rule_name(rule));
                    CHECK(got == want);
                    CHECK(tree.root_lo() == want);
                    CHECK(tree.root_hi() == want);
                    CHECK(no_job_twice(records));
                    // Every bound the tree holds is true.
                    for (const auto& r : records) {
                        const Board b = board_of_key(m, r.key);
                        const auto [lo, hi] = tree.bounds(b);
                        const int v = bf.pits_value(ref::from_board(b));
                        CHECK(lo <= v);
                        CHECK(v <= hi);
                    }
                    // Each first turn's bounds hold the brute-force worth of the position
                    // after it (the root mover's stores plus the pits' value), and a turn
                    // goes on after an extra move exactly while the tree expanded it.
                    const auto turns = tree.root_turns();
                    CHECK(turns.size() >= tree.root_moves().size());
                    for (const auto& turn : turns) {
                        Board b = pos;
                        const Side mover = b.to_move();
                        bool extra = false;
                        for (const int pit : turn.pits) {
                            REQUIRE((b.legal_mask() >> pit & 1u));
                            extra = b.play(pit, rule).extra;
                        }
                        int worth = b.store(mover) - b.store(other(mover));
                        if (!b.over()) {
                            const int pv = bf.pits_value(ref::from_board(b));
                            worth += b.to_move() == mover ? pv : -pv;
                        }
                        CAPTURE(turn.pits.size());
                        CHECK(turn.lo <= worth);
                        CHECK(worth <= turn.hi);
                        if (extra) {  // cut at an extra move: its position not expanded
                            bool expanded = false;
                            for (size_t i = 0; i < tree.size(); ++i)
                                if (tree.node(int(i)).pos.pits_key() == b.pits_key())
                                    expanded = tree.node(int(i)).expanded;
                            CHECK(!expanded);
                        }
                    }
                    // The records alone rebuild the same tree.
                    ProofTree again(CampaignParams{m, 10, rule}, nullptr, pos);
                    for (const auto& r : records) again.apply(r);
                    CHECK(again.root_lo() == want);
                    CHECK(again.root_hi() == want);
                    CHECK(again.size() == tree.size());
                }
            }
        }
    }

    TEST_CASE("leaf growth: the choice goes into the open move with the fewest seeds") {
        // After one split, every open move is a job of its own; weighed by growth^seeds, the
        // most-proving job is at the child with the fewest seeds in pits (deep before wide),
        // where every job weighing one takes the first open move.
        std::mt19937 rng(17);
        int differ = 0;
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int t = 0; t < 300; ++t) {
                const Board pos = random_position(rng, 5, 8 + int(rng() % 8)).without_stores();
                ProofTree tree(CampaignParams{5, 10, rule}, nullptr, pos);
                tree.set_leaf_growth(4);
                JobRecord split;
                split.kind = JobRecord::Kind::Split;
                split.key = pos.pits_key();
                tree.apply(split);
                int least = 1000, first = -1;
                for (const int pit : pos.legal_moves()) {
                    Board c = pos;
                    if (c.play(pit, rule).over || c.without_stores().over()) continue;
                    least = std::min(least, c.seeds_in_pits());
                    if (first < 0) first = c.seeds_in_pits();
                }
                const int beta = tree.next_beta(0);
                if (least == 1000 || tree.decided(beta)) continue;
                const std::optional<Job> job = tree.select(beta);
                REQUIRE(job);
                INFO(format_position(pos), " beta ", beta);
                CHECK(job->pos.seeds_in_pits() == least);
                differ += first != least;
            }
        }
        CHECK(differ > 20);  // positions where the weights change the choice
    }

    TEST_CASE("engine order: ties go to the move the solver would search first") {
        // The solver's static order, stated here on its own: a move that banks 8 or more
        // seeds without an extra move first (more banked first), then extra moves, then
        // the other moves by what they bank, moves that bank nothing last; among equals the
        // pit nearest the store (the highest pit) first.
        auto rank = [](const MoveStep& st, int pit) {
            if (st.gain >= 8 && !st.extra) return 3000 + 80 * st.gain + pit;
            if (st.extra) return 2000 + pit;
            if (st.gain > 0) return 1000 + 80 * st.gain + pit;
            return pit;
        };
        std::mt19937 rng(29);
        int differ = 0;
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int t = 0; t < 300; ++t) {
                const Board pos = random_position(rng, 5, 8 + int(rng() % 12)).without_stores();
                for (const bool engine : {true, false}) {
                    ProofTree tree(CampaignParams{5, 12, rule}, nullptr, pos);
                    tree.set_engine_order(engine);  // every job weighs one: all moves tie
                    JobRecord split;
                    split.kind = JobRecord::Kind::Split;
                    split.key = pos.pits_key();
                    tree.apply(split);
                    const int beta = tree.next_beta(0);
                    if (tree.decided(beta)) continue;
                    // The open moves: their child's question is not decided by its bounds.
                    int want = -1, want_rank = -1, first = -1;
                    Board want_child, first_child;
                    for (const int pit : pos.legal_moves()) {
                        Board c = pos;
                        const MoveStep st = play_step_from_pits(c, pit, rule);
                        if (st.over) continue;
                        c = c.without_stores();
                        const int cb = round_up(c.seeds_in_pits(), st.child_beta(beta));
                        const auto [lo, hi] = tree.bounds(c);
                        if (lo >= cb || hi < cb) continue;
                        if (first < 0) first = pit, first_child = c;
                        if (rank(st, pit) > want_rank)
                            want = pit, want_rank = rank(st, pit), want_child = c;
                    }
                    if (want < 0) continue;
                    const std::optional<Job> job = tree.select(beta);
                    REQUIRE(job);
                    INFO(format_position(pos), " beta ", beta, " engine ", engine);
                    CHECK(job->pos.pits_key() == (engine ? want_child : first_child).pits_key());
                    differ += engine && want != first;
                }
            }
        }
        CHECK(differ > 50);  // positions where the engine's order changes the choice
    }

    TEST_CASE("stickiness: the choice stays in the move it split last") {
        // After the root's split and a split of the move chosen first, that move weighs
        // more than its unexpanded siblings: without stickiness the next job goes to a
        // sibling, with it into the split move's own moves.
        std::mt19937 rng(31);
        int moved = 0, stayed = 0;
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int t = 0; t < 300; ++t) {
                const Board pos = random_position(rng, 5, 10 + int(rng() % 12)).without_stores();
                for (const double eps : {0.0, 1000.0}) {
                    ProofTree tree(CampaignParams{5, 12, rule}, nullptr, pos);
                    tree.set_stickiness(eps);
                    JobRecord split;
                    split.kind = JobRecord::Kind::Split;
                    split.key = pos.pits_key();
                    tree.apply(split);
                    const int beta = tree.next_beta(0);
                    if (tree.decided(beta)) continue;
                    const std::optional<Job> first = tree.select(beta);
                    REQUIRE(first);
                    split.key = first->pos.pits_key();
                    tree.apply(split);
                    const auto [lo, hi] = tree.bounds(first->pos);
                    if (tree.decided(beta) || lo >= first->beta || hi < first->beta) continue;
                    const std::optional<Job> next = tree.select(beta);
                    REQUIRE(next);
                    // Is the next job one of the first job's moves?
                    bool inside = false;
                    for (const int pit : first->pos.legal_moves()) {
                        Board c = first->pos;
                        if (!play_step_from_pits(c, pit, rule).over &&
                            c.without_stores().pits_key() == next->pos.pits_key())
                            inside = true;
                    }
                    INFO(format_position(pos), " beta ", beta, " eps ", eps);
                    if (eps > 0) {
                        CHECK(inside);
                        stayed += inside;
                    } else {
                        moved += !inside;
                    }
                }
            }
        }
        CHECK(moved > 50);  // without stickiness the choice left the split move
        CHECK(stayed > 50);
    }

    TEST_CASE("split logic: expanding a position and its exact moves gives its value") {
        // One level by hand: expand, then make every child exact with two bound records.
        std::mt19937 rng(7);
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            BruteForce bf(4, rule);
            for (int t = 0; t < 200; ++t) {
                const Board pos = random_position(rng, 4, 4 + int(rng() % 14)).without_stores();
                ProofTree tree(CampaignParams{4, 10, rule}, nullptr, pos);
                JobRecord split;
                split.kind = JobRecord::Kind::Split;
                split.key = pos.pits_key();
                tree.apply(split);
                for (const int pit : pos.legal_moves()) {
                    Board c = pos;
                    if (c.play(pit, rule).over) continue;
                    const Board child = c.without_stores();
                    const int v = bf.pits_value(ref::from_board(child));
                    JobRecord lo, hi;
                    lo.key = hi.key = child.pits_key();
                    lo.beta = lo.result = v;         // v >= v: succeeds with v
                    hi.beta = v + 1, hi.result = v;  // v >= v + 1: fails with v
                    tree.apply(lo);
                    tree.apply(hi);
                }
                INFO(format_position(pos));
                CHECK(tree.root_lo() == bf.pits_value(ref::from_board(pos)));
                CHECK(tree.root_hi() == tree.root_lo());
            }
        }
    }

    TEST_CASE(
        "split logic: a job chosen with others in flight is the one chosen after their hopes") {
        // The twin of select()'s assumption: a copy of the tree given the last job's hoped
        // answer as a record (it stays in flight in the copy, as does the other job out)
        // makes the same choice, unless that answer settles the question or either choice
        // had to speculate past the hopes.
        std::mt19937 rng(20261202);
        int compared = 0, settled = 0, closer = 0, speculated = 0, two_out = 0;
        for (const Rule rule : {Rule::Standard, Rule::EmptyCapture}) {
            for (int m = 3; m <= 4; ++m) {
                BruteForce bf(m, rule);
                for (int t = 0; t < 600; ++t) {
                    const int seeds = 6 + int(rng() % (m == 4 ? 10 : 8));
                    const Board pos = random_position(rng, m, seeds).without_stores();
                    ProofTree tree(CampaignParams{m, 10, rule}, nullptr, pos);
                    OracleWorkers oracle(bf, rng(), 2);
                    const int beta = int(rng() % 9) - 4;
                    const bool expect = rng() % 2;
                    // Grow the tree: mostly splits, some true bounds.
                    for (int k = int(rng() % 16); k > 0 && !tree.decided(beta); --k) {
                        const std::optional<Job> job = tree.select(beta, expect);
                        REQUIRE(job);
                        oracle.submit(*job);
                        JobRecord r = oracle.wait();
                        if (rng() % 4) r.kind = JobRecord::Kind::Split;
                        tree.apply(r);
                    }
                    if (tree.decided(beta)) continue;
                    // One or two jobs out; the copy is given the last one's hoped answer.
                    std::vector<Job> out;
                    for (int j = 1 + int(rng() % 2); j > 0; --j) {
                        const std::optional<Job> job = tree.select(beta, expect);
                        if (!job) break;
                        tree.set_in_flight(*job);
                        out.push_back(*job);
                    }
                    REQUIRE(!out.empty());
                    two_out += out.size() == 2;
                    const Job& last = out.back();
                    const std::optional<Job> next = tree.select(beta, expect);
                    INFO("m ", m, " ", format_position(pos), " rule ", rule_name(rule), " beta ",
                         beta, " expect ", expect, " last out ", format_position(last.pos));
                    for (const Job& o : out)
                        if (next) CHECK(next->pos.pits_key() != o.pos.pits_key());

                    // The tree after the last job's answer, hoped or not (nothing when the
                    // tree's own bounds rule that answer out).
                    auto answered = [&](bool yes) -> std::optional<ProofTree> {
                        ProofTree copy = tree;
                        JobRecord r;
                        r.key = last.pos.pits_key();
                        r.beta = last.beta;
                        r.result = yes ? last.beta : last.beta - 1;
                        try {
                            copy.apply(r);
                        } catch (const ContradictionError&) {
                            return std::nullopt;
                        }
                        return copy;
                    };
                    std::optional<ProofTree> hoped = answered(last.hoped);
                    const std::optional<ProofTree> other = answered(!last.hoped);
                    // The hoped answer leaves the root's number towards the expected answer
                    // (the jobs it still takes) no larger than the other answer would.
                    if (hoped && other) {
                        auto toward = [&](const ProofTree& answered_tree) {
                            const auto [pn, dn] = answered_tree.proof_numbers(beta);
                            return expect ? pn : dn;
                        };
                        CHECK(toward(*hoped) <= toward(*other));
                        closer += toward(*hoped) < toward(*other);
                    }
                    if (!hoped) continue;  // the hope is impossible by what the tree knows
                    if (hoped->decided(beta)) {
                        ++settled;
                        continue;
                    }
                    const std::optional<Job> twin = hoped->select(beta, expect);
                    if (!next || next->speculative || !twin || twin->speculative) {
                        ++speculated;
                        continue;
                    }
                    ++compared;
                    CHECK(format_position(next->pos) == format_position(twin->pos));
                    CHECK(next->beta == twin->beta);
                    CHECK(next->hoped == twin->hoped);
                }
            }
        }
        CHECK(compared > 400);
        CHECK(settled > 300);
        CHECK(closer > 800);
        CHECK(two_out > 300);
        CHECK(speculated > 20);
    }

    TEST_CASE("budgets that grow towards the root: each job gets base x growth^seeds") {
        const CampaignParams p{4, 4, Rule::Standard};
        ProofTree tree(p, nullptr);
        CHECK(tree.job_budget(Board::start(4, 4)) == 0);  // no growth: the worker's own
        tree.set_budget_growth(2, 1000);
        // No database: seeds count from 40 below the root's 32, i.e. from 0.
        CHECK(tree.job_budget(Board::start(4, 4)) == 1000ull << 32);
        Board b = Board::start(4, 4);
        b.play(0, Rule::Standard);
        CHECK(tree.job_budget(b.without_stores()) == 1000ull << b.seeds_in_pits());
        tree.set_budget_growth(4, 1000);
        CHECK(tree.job_budget(Board::start(4, 4)) == uint64_t(1) << 50);  // the cap
        const std::optional<Job> job = tree.select(0);
        REQUIRE(job);
        CHECK(job->budget == tree.job_budget(job->pos));
    }

}  // TEST_SUITE
