// The CLI's common surface: every command's JSON parsed with a real parser and its fields
// checked against each other, one option vocabulary (threads, help, expert options), usage
// errors, and the heartbeat.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "cli_runner.h"
#include "core/notation.h"
#include "random_position.h"

namespace {

using nlohmann::json;

json parse_json(const CliResult& r) {
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.status == 0);
    json j;
    REQUIRE_NOTHROW(j = json::parse(r.out));
    REQUIRE(j.is_object());
    return j;
}

std::vector<std::string> words(const std::string& s) {
    std::istringstream in(s);
    std::vector<std::string> w;
    for (std::string t; in >> t;) w.push_back(t);
    return w;
}

std::string result_of(int v) { return v > 0 ? "W" : v < 0 ? "L" : "D"; }

// ---- One schema of the JSON vocabulary (README, "JSON fields") ------------------------------
// Every key any command prints, with what its value must be; a key means the same in every
// command's object. Objects inside arrays (moves, openings, layers, positions) have their
// own small vocabularies below.
using Check = bool (*)(const json&);
bool is_int(const json& v) { return v.is_number_integer(); }
bool is_count(const json& v) { return v.is_number_unsigned() || (v.is_number_integer() && v >= 0); }
bool is_number(const json& v) { return v.is_number() && v.get<double>() >= 0; }
bool is_string(const json& v) { return v.is_string(); }
bool is_bool(const json& v) { return v.is_boolean(); }
bool is_strings(const json& v) {
    return v.is_array() &&
           std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_string(); });
}
bool is_position(const json& v) {
    // m pits a side, two rows, two stores and the side to move: "a,b/c,d/s,n/A".
    if (!v.is_string()) return false;
    const std::string t = v.get<std::string>();
    return std::count(t.begin(), t.end(), '/') == 3;
}
bool is_rule(const json& v) { return v == "standard" || v == "empty-capture"; }
bool is_result(const json& v) { return v == "W" || v == "D" || v == "L"; }
bool is_to_move(const json& v) { return v == "A" || v == "B" || v == "none"; }
bool is_source(const json& v) { return v == "book" || v == "database" || v == "search"; }
bool is_score(const json& v) {
    return v.is_array() && v.size() == 2 && is_count(v[0]) && is_count(v[1]);
}
bool is_number_or_null(const json& v) { return v.is_null() || is_number(v); }
bool is_string_or_null(const json& v) { return v.is_null() || v.is_string(); }
bool is_bool_or_null(const json& v) { return v.is_null() || v.is_boolean(); }
bool is_array(const json& v) { return v.is_array(); }
bool is_object(const json& v) { return v.is_object(); }
bool is_pits(const json& v) { return is_int(v) && v >= 1 && v <= 6; }
bool is_bound(const json& v) {
    return v.is_string() && (v.get<std::string>()[0] == '>' || v.get<std::string>()[0] == '<');
}

const std::map<std::string, Check>& vocabulary() {
    static const std::map<std::string, Check> v = {
        {"position", is_position},
        {"start", is_position},
        {"end", is_position},
        {"position_after", is_position},
        {"pits", is_pits},
        {"seeds", is_count},
        {"rule", is_rule},
        {"value", is_int},
        {"result", is_result},
        {"source", is_source},
        {"best", is_strings},
        {"best_turn", is_string},
        {"pv", is_string},
        {"moves", is_array},
        {"turns", is_array},
        {"score", is_score},
        {"to_move", is_to_move},
        {"over", is_bool},
        {"nodes", is_count},
        {"seconds", is_number},
        {"nodes_per_second", is_count},
        {"cpu_seconds", is_number},
        {"threads", is_count},
        {"tt_mib", is_number},
        {"tt_budget_mib", is_count},
        {"db_seeds", is_int},
        {"bound", is_bound},
        {"question", is_string},
        {"proved", is_bool_or_null},
        {"lower", is_int},
        {"upper", is_int},
        {"move", is_string_or_null},
        {"move_keeps", is_string_or_null},
        {"openings", is_array},
        {"fairest", is_strings},
        {"pie_value", is_int},
        {"summary", is_object},
        {"dir", is_string},
        {"jobs", is_count},
        {"jobs_run", is_count},
        {"splits", is_count},
        {"open_jobs", is_count},
        {"tree_positions", is_count},
        {"campaign_nodes", is_count},
        {"job_seconds", is_number},
        {"eta_lo_seconds", is_number_or_null},
        {"eta_hi_seconds", is_number_or_null},
        {"eta_pass_jobs", is_array},
        {"eta_workers", is_count},
        {"pass_beta", is_int},
        {"pass_test", is_string},
        {"line", is_string},
        {"ranks", is_count},
        {"job_nodes", is_count},
        {"passes", is_count},
        {"db", is_string},
        {"max_seeds", is_count},
        {"layers", is_array},
        {"entries", is_count},
        {"bytes", is_count},
        {"ok", is_bool},
        {"files", is_count},
        {"twins", is_count},
        {"problems", is_strings},
        {"positions", is_array},
        {"level", is_string},
        {"cross_check", is_number},
        {"cross_check_seed", is_count},
        {"cross_checked", is_count},
        {"cross_check_unsettled", is_count},
        {"refused_ranks", is_array},
        {"near_root_depth", is_int},
    };
    return v;
}
// The objects in arrays: query's and annotate's moves, the campaign's root moves, pie's
// openings, build-db's layers, bench's positions.
const std::map<std::string, Check>& item_vocabulary() {
    static const std::map<std::string, Check> v = {
        {"move", is_string},
        {"value", is_int},
        {"ply", is_count},
        {"side", [](const json& x) { return x == "A" || x == "B"; }},
        {"before", is_int},
        {"after", is_int},
        {"loss", is_count},
        {"mark", [](const json& x) { return x == "" || x == "?" || x == "??"; }},
        // query: whether the move is best; annotate: the best moves.
        {"best", [](const json& x) { return x.is_boolean() || is_strings(x); }},
        {"lower", is_int},
        {"upper", is_int},
        {"opening", is_string},
        {"turn", is_string},
        {"north", [](const json& x) { return x == "keep" || x == "swap" || x == "either"; }},
        {"pie_value", is_int},
        {"seeds", is_count},
        {"entries", is_count},
        {"bytes", is_count},
        {"seconds", is_number},
        {"cpu_seconds", is_number},
        {"reused", is_bool},
        {"value_hash", is_string},
        {"name", is_string},
        {"nodes", is_count},
    };
    return v;
}
// annotate's summary of each side.
const std::map<std::string, Check>& summary_vocabulary() {
    static const std::map<std::string, Check> v = {
        {"moves", is_count},
        {"best", is_count},
        {"accuracy", is_number},
        {"mistakes", is_count},
        {"blunders", is_count},
        {"total_loss", is_count},
        {"biggest_mistake", [](const json& x) { return x.is_null() || x.is_object(); }},
    };
    return v;
}

void check_keys(const json& j, const std::map<std::string, Check>& vocab) {
    REQUIRE(j.is_object());
    for (const auto& [key, value] : j.items()) {
        CAPTURE(key);
        CAPTURE(value.dump());
        const auto it = vocab.find(key);
        CHECK_MESSAGE(it != vocab.end(), "a key outside the vocabulary");
        if (it != vocab.end()) CHECK(it->second(value));
    }
}

// j against the vocabulary, with these keys required; the objects in its arrays against
// theirs; and what ties fields together wherever they appear.
void check_schema(const json& j, const std::vector<std::string>& required) {
    check_keys(j, vocabulary());
    for (const std::string& key : required) {
        CAPTURE(key);
        CHECK(j.contains(key));
    }
    for (const char* list : {"moves", "turns", "openings", "layers", "positions"})
        if (j.contains(list)) {
            for (const json& item : j[list]) {
                if (item.is_object())
                    check_keys(item, item_vocabulary());
                else
                    CHECK(item.is_string());  // show: the moves played
            }
        }
    if (j.contains("summary"))
        for (const auto& [side, summary] : j["summary"].items()) {
            CHECK((side == "A" || side == "B"));
            check_keys(summary, summary_vocabulary());
        }
    if (j.contains("value") && j.contains("result") && j["value"].is_number_integer())
        CHECK(j["result"] == result_of(j["value"].get<int>()));
    if (j.contains("to_move") && j.contains("over"))
        CHECK((j["to_move"] == "none") == (j["over"] == true));
    if (j.contains("lower") && j.contains("upper") && j["lower"].is_number_integer())
        CHECK(j["lower"].get<int>() <= j["upper"].get<int>());
}

}  // namespace

TEST_SUITE("cli") {
    TEST_CASE("json: solve, query, show, pie and annotate share one vocabulary") {
        const json s = parse_json(run_kalah("solve --pits 4 --seeds 3 --json --tt-mb 16"));
        CHECK(s["pits"] == 4);
        CHECK(s["seeds"] == 3);
        CHECK(s["position"] == "3,3,3,3/3,3,3,3/0,0/A");
        CHECK(s["rule"] == "standard");
        REQUIRE(s["value"].is_number_integer());
        const int value = s["value"];
        CHECK(s["result"] == result_of(value));
        REQUIRE(s["best"].is_array());
        REQUIRE(s["best"].size() == 1);
        const auto pv = words(s["pv"].get<std::string>());
        REQUIRE(!pv.empty());
        CHECK(s["best"][0] == pv[0]);
        const auto turn = words(s["best_turn"].get<std::string>());
        REQUIRE(!turn.empty());
        CHECK(std::equal(turn.begin(), turn.end(), pv.begin()));
        REQUIRE(s["score"].is_array());
        CHECK(s["score"][0].get<int>() - s["score"][1].get<int>() == value);
        CHECK(s["score"][0].get<int>() + s["score"][1].get<int>() == 24);
        CHECK(s["nodes"].get<uint64_t>() > 0);
        CHECK(s["seconds"].is_number());
        CHECK(s["nodes_per_second"].is_number());
        CHECK(s["threads"] == omp_get_max_threads());
        CHECK(s["cpu_seconds"].is_number());
        CHECK(s["tt_mib"].is_number());
        CHECK(s["tt_budget_mib"] == 16);
        CHECK(s["db_seeds"] == -1);  // no database: the run gives no --db

        // query of the same start: the same value; `best` = the moves whose value is it,
        // and solve's best move is among them.
        const json q = parse_json(run_kalah("query --pits 4 --seeds 3 --json --tt-mb 16"));
        CHECK(q["position"] == s["position"]);
        CHECK(q["rule"] == "standard");
        CHECK(q["value"] == value);
        CHECK(q["result"] == result_of(value));
        CHECK(q["to_move"] == "A");
        CHECK(q["over"] == false);
        std::set<std::string> best;
        REQUIRE(q["moves"].is_array());
        CHECK(q["moves"].size() == 4);
        for (const json& m : q["moves"]) {
            REQUIRE(m["move"].is_string());
            REQUIRE(m["value"].is_number_integer());
            CHECK(m["best"] == (m["value"] == value));
            if (m["value"] == value) best.insert(m["move"].get<std::string>());
        }
        std::set<std::string> listed;
        for (const json& b : q["best"]) listed.insert(b.get<std::string>());
        CHECK(listed == best);
        CHECK(best.count(s["best"][0].get<std::string>()) == 1);
        CHECK(q["nodes"].get<uint64_t>() > 0);
        CHECK(q["seconds"].is_number());

        // show: the position after the moves, and the moves played.
        const json sh = parse_json(run_kalah("show --pits 4 --seeds 3 --moves \"A2+ A4\" --json"));
        CHECK(sh["rule"] == "standard");
        CHECK(sh["to_move"] == "B");
        CHECK(sh["moves"] == json::array({"A2+", "A4"}));
        const json q2 = parse_json(run_kalah(
            "query --position " + sh["position"].get<std::string>() + " --json --tt-mb 16"));
        CHECK(q2["value"] == value);  // A2+ A4 is the principal variation's first turn

        // pie: the plain value is the start's value; every opening has a value.
        const json p = parse_json(run_kalah("pie --pits 4 --seeds 3 --json --tt-mb 16"));
        CHECK(p["value"] == value);
        CHECK(p["rule"] == "standard");
        REQUIRE(p["openings"].is_array());
        int top = -1000;
        for (const json& o : p["openings"]) top = std::max(top, o["value"].get<int>());
        CHECK(top == value);
        CHECK(p["nodes"].get<uint64_t>() > 0);
        CHECK(p["seconds"].is_number());

        // annotate the principal variation: every move is best and keeps the value.
        const json a = parse_json(run_kalah("annotate --pits 4 --seeds 3 --moves \"" +
                                            s["pv"].get<std::string>() + "\" --json --tt-mb 16"));
        REQUIRE(a["moves"].is_array());
        CHECK(a["moves"].size() == pv.size());
        for (const json& m : a["moves"]) {
            CHECK(m["before"] == value);
            CHECK(m["after"] == value);
            CHECK(m["mark"] == "");
            REQUIRE(m["best"].is_array());
            CHECK(std::find(m["best"].begin(), m["best"].end(), m["move"]) != m["best"].end());
        }
        CHECK(a["over"] == true);
        CHECK(a["score"] == s["score"]);
    }

    TEST_CASE("json: every command's object against the one schema of the vocabulary") {
        const std::string d = (std::filesystem::temp_directory_path() /
                               ("kalah_cli_schema_" + std::to_string(::getpid())))
                                  .string();
        std::filesystem::remove_all(d);
        const std::string db = " --tt-mb 16 -q --db " + d;
        const std::vector<std::string> position = {"position", "rule"};
        auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
            a.insert(a.end(), b.begin(), b.end());
            return a;
        };
        const std::vector<std::string> figures = {"nodes",        "seconds",     "nodes_per_second",
                                                  "threads",      "cpu_seconds", "tt_mib",
                                                  "tt_budget_mib"};
        struct Case {
            std::string cmd;
            std::vector<std::string> required;
        };
        const std::vector<Case> cases = {
            {"build-db --pits 3 --max-seeds 6 --json -q --db " + d,
             {"pits", "rule", "db", "max_seeds", "layers", "entries", "bytes", "seconds"}},
            {"verify-db --json -q --db " + d,
             {"db", "ok", "files", "twins", "entries", "problems"}},
            {"solve --pits 3 --seeds 2 --json" + db,
             with(with({"pits", "seeds", "value", "result", "source", "best", "best_turn", "pv",
                        "score", "db_seeds"},
                       position),
                  figures)},
            {"solve --pits 3 --seeds 2 --prove win --json" + db,
             with(with({"pits", "seeds", "bound", "question", "proved", "lower", "upper", "move",
                        "move_keeps", "db_seeds"},
                       position),
                  figures)},
            {"query --position 0,2,1/1,0,2/3,4/B --prove 'v>=0' --json" + db,
             with(with({"pits", "bound", "question", "proved", "lower", "upper", "move",
                        "move_keeps", "db_seeds"},
                       position),
                  figures)},
            {"query --pits 3 --seeds 2 --moves A1 --json" + db,
             with({"to_move", "over", "value", "result", "moves", "best", "source", "nodes",
                   "seconds"},
                  position)},
            {"query --position 0,0,0/0,0,1/5,6/A --json" + db,
             with({"to_move", "over", "value", "result", "moves", "best", "source", "score"},
                  position)},
            {"show --pits 3 --seeds 2 --moves \"A1 B2\" --json",
             with({"moves", "to_move", "over"}, position)},
            {"show --position 0,0,0/0,0,1/5,6/A --json",
             with({"moves", "to_move", "over", "score"}, position)},
            {"pie --pits 3 --seeds 2 --json" + db,
             {"pits", "start", "rule", "openings", "fairest", "pie_value", "value", "nodes",
              "seconds"}},
            {"annotate --pits 3 --seeds 2 --moves \"A1 B1 A2\" --json" + db,
             {"start", "rule", "moves", "summary", "end", "over", "value"}},
            {"campaign --pits 3 --seeds 2 --json --job-nodes 1000 --dir " + d + "/c" + db,
             with(with({"pits", "seeds", "value", "result", "best", "ranks", "job_nodes", "passes",
                        "dir", "jobs", "lower", "upper", "eta_lo_seconds"},
                       position),
                  figures)},
            {"campaign --pits 3 --seeds 2 --prove win --json --job-nodes 1000 --dir " + d + "/cq" +
                 db,
             with(with({"pits", "seeds", "bound", "proved", "moves", "ranks", "dir", "jobs",
                        "lower", "upper"},
                       position),
                  figures)},
            {"campaign --status --json --dir " + d + "/c" + db,
             {"pits", "seeds", "rule", "dir", "jobs", "lower", "upper", "moves", "value",
              "result"}},
            {"bench --threads 1 --json",
             {"threads", "tt_budget_mib", "positions", "nodes", "seconds", "nodes_per_second"}},
        };
        for (const Case& c : cases) {
            CAPTURE(c.cmd);
            const json j = parse_json(run_kalah(c.cmd));
            check_schema(j, c.required);
        }
        // The finished game of show and query: nobody is to move.
        CHECK(parse_json(run_kalah("show --position 0,0,0/0,0,1/5,6/A --json"))["to_move"] ==
              "none");
        std::filesystem::remove_all(d);
    }

    TEST_CASE("json: build-db and verify-db") {
        const std::string d = (std::filesystem::temp_directory_path() /
                               ("kalah_cli_json_db_" + std::to_string(::getpid())))
                                  .string();
        std::filesystem::remove_all(d);
        const json b = parse_json(run_kalah("build-db --pits 3 --max-seeds 8 --json --db " + d));
        CHECK(b["pits"] == 3);
        CHECK(b["rule"] == "standard");
        CHECK(b["db"] == d);
        CHECK(b["max_seeds"] == 8);
        REQUIRE(b["layers"].is_array());
        REQUIRE(b["layers"].size() == 9);
        uint64_t entries = 0, bytes = 0;
        for (int s = 0; s <= 8; ++s) {
            const json& l = b["layers"][s];
            CHECK(l["seeds"] == s);
            CHECK(l["reused"] == false);
            CHECK(l["bytes"].get<uint64_t>() > 0);
            entries += l["entries"].get<uint64_t>();
            bytes += l["bytes"].get<uint64_t>();
        }
        CHECK(b["entries"] == entries);
        CHECK(b["bytes"] == bytes);
        // A second build reuses every layer.
        const json again =
            parse_json(run_kalah("build-db --pits 3 --max-seeds 8 --json --db " + d));
        for (const json& l : again["layers"]) CHECK(l["reused"] == true);
        // The value hashes do not depend on the file's block size or compression level.
        const json other =
            parse_json(run_kalah("build-db --pits 3 --max-seeds 8 --json "
                                 "--block-entries 1024 --zstd-level 3 --db " +
                                 d + "-other"));
        std::set<std::string> hashes;
        for (int s = 0; s <= 8; ++s) {
            const std::string h = b["layers"][s]["value_hash"];
            CHECK(h.size() == 16);
            CHECK(h.find_first_not_of("0123456789abcdef") == std::string::npos);
            CHECK(again["layers"][s]["value_hash"] == h);
            CHECK(other["layers"][s]["value_hash"] == h);
            hashes.insert(h);
        }
        CHECK(hashes.size() == 9);
        std::filesystem::remove_all(d + "-other");
        const json v = parse_json(run_kalah("verify-db --json --db " + d));
        CHECK(v["ok"] == true);
        CHECK(v["files"] == 9);
        CHECK(v["entries"] == entries);
        CHECK(v["problems"] == json::array());
        // The older name of --db still works.
        CHECK(parse_json(run_kalah("verify-db --json --dir " + d))["files"] == 9);
        std::filesystem::resize_file(d + "/kalah-m3-standard-s8.kdb", 100);
        const auto bad = run_kalah("verify-db --json --db " + d);
        CHECK(bad.status == 1);
        const json vb = json::parse(bad.out);
        CHECK(vb["ok"] == false);
        REQUIRE(vb["problems"].size() == 1);
        CHECK(vb["problems"][0].get<std::string>().find("kalah-m3-standard-s8.kdb: ") == 0);
        std::filesystem::remove_all(d);
    }

    TEST_CASE("options: required positions, one --threads default, expert options apart") {
        for (const char* bare : {"solve", "query", "pie", "annotate", "build-db"}) {
            CAPTURE(bare);
            const auto r = run_kalah(bare);
            CHECK(r.status == 2);
            CHECK(r.out.empty());
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
            CHECK(r.err.find("usage: kalah " + std::string(bare)) != std::string::npos);
        }
        for (const char* partial : {"solve --pits 6", "query --rule standard", "pie --json"}) {
            CAPTURE(partial);
            const auto r = run_kalah(partial);
            CHECK(r.status == 2);
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        }
        const std::string all = "--threads arg (=" + std::to_string(omp_get_max_threads()) + ")";
        for (const char* cmd :
             {"solve", "query", "pie", "annotate", "play", "build-db", "verify-db"}) {
            CAPTURE(cmd);
            const auto h = run_kalah(std::string(cmd) + " --help");
            CHECK(h.status == 0);
            CHECK(h.out.find(all) != std::string::npos);
            const bool searches = std::string(cmd).find("-db") == std::string::npos;
            CHECK((h.out.find("--tt-mb") != std::string::npos) == searches);
            CHECK(h.out.find("ablate") == std::string::npos);
            CHECK(h.out.find("--dir") == std::string::npos);  // the directory is --db
            CHECK(h.out.find("--db ") != std::string::npos);
        }
        CHECK(run_kalah("bench --help").out.find("--threads arg (=1)") != std::string::npos);
        // Memory flags are checked before anything is allocated or built.
        for (const char* bad : {"--db-memory-gb nan", "--db-memory-gb 0", "--db-memory-gb -1",
                                "--tt-mb 0", "--db-raw-gb -1", "--db-raw-gb nan"}) {
            CAPTURE(bad);
            const auto r = run_kalah("solve --pits 6 --seeds 4 " + std::string(bad));
            CHECK(r.status == 2);
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        }
        const auto expert = run_kalah("solve --help-expert");
        CHECK(expert.status == 0);
        CHECK(expert.out.find("--heartbeat-seconds") != std::string::npos);
        // The search's switches are the experiments build's (bench/ablate/), not the product's.
        CHECK(expert.out.find("ablate") == std::string::npos);
        CHECK(run_kalah("solve --pits 3 --seeds 2 --ablate etc --json").status == 2);
    }

    TEST_CASE("heartbeat: long searches show they are alive; --quiet silences them") {
        const auto r = run_kalah("solve --pits 6 --seeds 3 --threads 1 --heartbeat-seconds 0.001");
        CHECK(r.status == 0);
        CHECK(r.err.find("pass 1: testing v >= ") != std::string::npos);
        CHECK(r.err.find(" M nodes/s, table ") != std::string::npos);
        const auto q =
            run_kalah("solve --pits 6 --seeds 3 --threads 2 --heartbeat-seconds 0.001 -q");
        CHECK(q.status == 0);
        CHECK(q.err.find("pass ") == std::string::npos);
        auto value_line = [](const std::string& out) {
            const size_t at = out.find("value: ");
            return at == std::string::npos ? std::string()
                                           : out.substr(at, out.find('\n', at) - at);
        };
        CHECK(!value_line(q.out).empty());
        CHECK(value_line(q.out) == value_line(r.out));
    }

    // query --prove's one null-window test against its slow twin, the exact value of
    // query: on random positions of both rules, either side to move, bounds on both sides
    // of the value and both questions' directions.
    TEST_CASE("query --prove agrees with query's exact value on random positions") {
        std::mt19937 rng(20261205);
        for (int i = 0; i < 24; ++i) {
            const int m = 3 + i % 3;
            const kalah::Board b = random_position(rng, m, 6 + int(rng() % 12));
            const std::string rule = i % 2 ? "empty-capture" : "standard";
            const std::string base = "query --position " + kalah::format_position(b) + " --rule " +
                                     rule + " --db /nonexistent --tt-mb 16 -q --json";
            CAPTURE(base);
            const json exact = parse_json(run_kalah(base));
            const int v = exact["value"].get<int>();
            const int bound = v + int(rng() % 7) - 3;
            for (const std::string op : {">=", "<="}) {
                const json a =
                    parse_json(run_kalah(base + " --prove 'v" + op + std::to_string(bound) + "'"));
                CAPTURE(op);
                CAPTURE(bound);
                CHECK(a["proved"].get<bool>() == (op == ">=" ? v >= bound : v <= bound));
                CHECK(a["lower"].get<int>() <= v);
                CHECK(a["upper"].get<int>() >= v);
                CHECK(a["position"] == exact["position"]);
                CHECK(!a.contains("seeds"));
            }
        }
        const auto bad = run_kalah("query --position 0,2,1/1,0,2/3,4/B --prove 'v=>2'");
        CHECK(bad.status == 2);
        CHECK(bad.err.find("--prove") != std::string::npos);
    }

    TEST_CASE("solve --time-limit: a search past it stops, exit 3 and one line; bad limits") {
        // Kalah(6,6) without any database is hours of search; the limit stops it.
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = run_kalah(
            "solve --pits 6 --seeds 6 --time-limit 0.5 --db /nonexistent --memory-db off "
            "--tt-mb 64 -q --json");
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        CAPTURE(r.err);
        CHECK(r.status == 3);
        CHECK(r.out.empty());
        CHECK(r.err.find("not finished within --time-limit") != std::string::npos);
        CHECK(r.err.find("error") == std::string::npos);
        CHECK(secs < 30);  // not a timing test: only that the search did stop
        // A search within the limit is unchanged.
        const json s = parse_json(run_kalah("solve --pits 4 --seeds 3 --time-limit 60 --json -q"));
        CHECK(s["value"] == 6);
        for (const char* bad : {"--time-limit 0", "--time-limit -1", "--time-limit nan"}) {
            CAPTURE(bad);
            const auto b = run_kalah("solve --pits 4 --seeds 3 " + std::string(bad));
            CHECK(b.status == 2);
            CHECK(b.err.find("--time-limit") != std::string::npos);
        }
    }
}
