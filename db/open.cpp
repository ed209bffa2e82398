// The shared open policy of db/open.h.
#include "db/open.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "core/notation.h"
#include "core/regular_file.h"
#include "db/format.h"

namespace kalah::db {

Opened open_checked(const OpenRequest& r) {
    Opened o;
    std::string why, damage;
    o.db = Database::open(r.dir, r.m, r.rule, r.memory_bytes, &why, &damage, r.layout,
                          r.raw_top_bytes);
    if (!damage.empty()) {
        // The hint only for a file that build-db would replace: a readable regular file.
        std::string why_not;
        const int fd = open_regular_file(r.dir + "/" + damage.substr(0, damage.find(": ")),
                                         O_RDONLY, &why_not);
        if (fd >= 0) ::close(fd);
        throw FormatError(r.dir + "/" + damage +
                          (fd >= 0 ? " (kalah build-db rebuilds damaged layers)" : ""));
    }
    if (o.db)
        o.warning = why;
    else
        o.why_none = why;
    return o;
}

std::string describe(const Database& d, const std::string& dir) {
    std::string s = "endgame database " + dir + ", layers 0.." + std::to_string(d.max_seeds()) +
                    " seeds (m=" + std::to_string(d.pits()) + ", " + rule_name(d.rule()) + "; ";
    // Each run of layers held alike but one byte an entry (the plain case), bottom up.
    for (int lo = 0, hi; lo <= d.max_seeds(); lo = hi + 1) {
        const char how = d.held_as(lo);
        for (hi = lo; hi < d.max_seeds() && d.held_as(hi + 1) == how;) ++hi;
        const std::string run = "layers " + std::to_string(lo) + ".." + std::to_string(hi);
        if (how == 'p') s += run + " packed, ";
        if (how == 'l') s += run + " in lines, ";
        if (how == 'c')
            s += run + " read through a block cache (they do not fit in --db-memory-gb), ";
    }
    char held[64];
    std::snprintf(held, sizeof held, "%.2f GiB in memory)",
                  double(d.memory_bytes()) / double(1ull << 30));
    return s + held;
}

}  // namespace kalah::db
