// Memoised plain minimax over the reference engine: exact values sharing nothing with the
// solver but the rules. Shared by the solver and analysis tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "reference_engine.h"

class BruteForce {
  public:
    BruteForce(int m, kalah::Rule rule) : m_(m), rule_(rule) {}

    // Pits value of p, mover's view: the mover's final store minus the opponent's counting
    // only the seeds now in pits (stores ignored).
    int pits_value(ref::Pos p) {
        p.store_a = p.store_b = 0;
        if (ref::over(p)) {
            int own = 0, opp = 0;
            for (int i = 0; i < m_; ++i) {
                own += p.south_to_move ? p.a[i] : p.b[i];
                opp += p.south_to_move ? p.b[i] : p.a[i];
            }
            return own - opp;
        }
        const Key key = encode(p);
        if (auto it = memo_.find(key); it != memo_.end()) return it->second;
        int best = -1000;
        for (int pit : ref::legal(p)) {
            ref::Pos q = p;
            const ref::Result r = ref::play(q, pit, rule_);
            const int mover_store = p.south_to_move ? q.store_a : q.store_b;
            const int other_store = p.south_to_move ? q.store_b : q.store_a;
            const int gain = mover_store - other_store;
            int v;
            if (r.over)
                v = gain;
            else if (r.extra)
                v = gain + pits_value(q);
            else
                v = gain - pits_value(q);
            best = std::max(best, v);
        }
        memo_.emplace(key, best);
        return best;
    }

    // South's final margin of p, stores included.
    int value(const ref::Pos& p) {
        const int v = pits_value(p);
        return p.store_a - p.store_b + (p.south_to_move ? v : -v);
    }

    // South's margin after each legal pit of the mover (index = pit; -1000 if illegal).
    std::vector<int> move_values(const ref::Pos& p) {
        std::vector<int> out(m_, -1000);
        for (int pit : ref::legal(p)) {
            ref::Pos q = p;
            ref::play(q, pit, rule_);
            out[pit] = value(q);
        }
        return out;
    }

    kalah::Rule rule() const { return rule_; }
    int pits() const { return m_; }

  private:
    // Pit counts, 7 bits each (every count < 128), then the side to move.
    using Key = unsigned __int128;
    struct KeyHash {
        size_t operator()(Key k) const {
            uint64_t h =
                (uint64_t(k) ^ (uint64_t(k >> 64) * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
            return size_t(h ^ (h >> 29));
        }
    };
    Key encode(const ref::Pos& p) const {
        Key acc = p.south_to_move ? 1 : 0;
        for (int i = 0; i < m_; ++i) acc = (acc << 14) | (unsigned(p.a[i]) << 7) | unsigned(p.b[i]);
        return acc;
    }
    int m_;
    kalah::Rule rule_;
    std::unordered_map<Key, int, KeyHash> memo_;
};
