// Value-hash manifests: reading them and checking a directory's layers against them.
#include "db/manifest.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <system_error>

#include "core/notation.h"
#include "db/format.h"

namespace kalah::db {

std::vector<ManifestEntry> read_manifest(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw InputError(path + ": cannot read the manifest");
    static const std::regex line_re(
        R"(kalah-m([1-6])-(standard|empty-capture)-s([0-9]{1,3})\.kdb\s+([0-9a-f]{16}))");
    std::vector<ManifestEntry> out;
    std::set<std::string> seen;
    std::string line;
    for (int no = 1; std::getline(in, line); ++no) {
        const auto first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == '#') continue;
        const auto last = line.find_last_not_of(" \t\r");
        const std::string body = line.substr(first, last - first + 1);
        std::smatch mt;
        if (!std::regex_match(body, mt, line_re))
            throw InputError(path + ":" + std::to_string(no) +
                             ": expected '<layer file> <16 hex digits>', e.g. "
                             "'kalah-m6-standard-s27.kdb 6248716eb79a599b'");
        ManifestEntry e;
        e.m = std::stoi(mt[1]);
        e.rule = parse_rule(mt[2]);
        e.s = std::stoi(mt[3]);
        e.value_hash = std::stoull(mt[4], nullptr, 16);
        e.name = layer_file_name(e.m, e.rule, e.s);
        if (!seen.insert(e.name).second)
            throw InputError(path + ":" + std::to_string(no) + ": " + e.name + " listed twice");
        out.push_back(e);
    }
    if (in.bad()) throw InputError(path + ": read error");
    return out;
}

uint64_t layer_value_hash(const std::string& path, int m, Rule rule, int s) {
    const auto file = LayerFile::open(path, m, rule, s);
    const std::vector<int8_t> values = file->read_all();
    return kh64(values.data(), values.size());
}

ManifestCheck check_manifest(const std::string& dir, const std::vector<ManifestEntry>& manifest,
                             int m, std::optional<Rule> rule) {
    ManifestCheck res;
    for (const ManifestEntry& e : manifest) {
        if ((m > 0 && e.m != m) || (rule && e.rule != *rule)) continue;
        const std::string path = (std::filesystem::path(dir) / e.name).string();
        std::error_code ec;
        if (!std::filesystem::exists(path, ec)) {
            ++res.missing;
            continue;
        }
        ++res.checked;
        try {
            const uint64_t h = layer_value_hash(path, e.m, e.rule, e.s);
            if (h != e.value_hash) {
                char buf[80];
                std::snprintf(buf, sizeof buf, ": value hash %016llx, the manifest says %016llx",
                              (unsigned long long)h, (unsigned long long)e.value_hash);
                res.problems.push_back(e.name + buf);
            }
        } catch (const std::exception& ex) {
            res.problems.push_back(e.name + ": " + ex.what());
        }
    }
    return res;
}

}  // namespace kalah::db
