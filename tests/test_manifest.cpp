// verify-db --manifest: a directory's layers against published value hashes
// (db/manifest.h), the committed manifest results/value-hashes.txt included.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"
#include "temp_dir.h"

using json = nlohmann::json;

TEST_SUITE("cli") {
    TEST_CASE("verify-db --manifest: matching, tampered and malformed manifests") {
        test_files::TempDir dir("manifest");
        const std::string d = dir.path.string();
        const CliResult built =
            run_kalah("build-db --pits 3 --max-seeds 6 --json --quiet --db " + d);
        REQUIRE(built.status == 0);
        const json b = json::parse(built.out);
        std::string manifest = "# layers of 3 pits, standard\n\n";
        for (const json& l : b["layers"])
            manifest += "kalah-m3-standard-s" + std::to_string(l["seeds"].get<int>()) + ".kdb " +
                        l["value_hash"].get<std::string>() + "\n";
        const std::string good = d + "/good.txt";
        test_files::spit(good, manifest);

        // Every layer matches: exit 0, all 7 compared.
        CliResult r = run_kalah("verify-db --json --db " + d + " --manifest " + good);
        CHECK(r.status == 0);
        json v = json::parse(r.out);
        CHECK(v["ok"] == true);
        CHECK(v["checked"] == 7);
        CHECK(v["missing"] == 0);

        // One hash changed: exit 1, the layer named on stderr.
        std::string tampered = manifest;
        const std::string h4 = b["layers"][4]["value_hash"];
        const auto at = tampered.find(h4);
        REQUIRE(at != std::string::npos);
        tampered[at] = tampered[at] == '0' ? '1' : '0';
        test_files::spit(d + "/tampered.txt", tampered);
        r = run_kalah("verify-db --db " + d + " --manifest " + d + "/tampered.txt");
        CHECK(r.status == 1);
        CHECK(r.err.find("kalah-m3-standard-s4.kdb: value hash " + h4) != std::string::npos);
        CHECK(r.out.find("FAILED") == 0);

        // The other rule's layers beside them (not in the manifest; --rule selects below).
        r = run_kalah("build-db --pits 3 --max-seeds 6 --quiet --rule empty-capture --db " + d);
        REQUIRE(r.status == 0);
        // Layers of the manifest missing from the directory are counted, not errors;
        // a directory holding none of them fails.
        test_files::spit(d + "/other.txt",
                         manifest + "kalah-m5-standard-s3.kdb 0123456789abcdef\n");
        r = run_kalah("verify-db --json --db " + d + " --manifest " + d + "/other.txt");
        CHECK(r.status == 0);
        v = json::parse(r.out);
        CHECK(v["missing"] == 1);
        test_files::TempDir empty("manifest-empty");
        r = run_kalah("verify-db --db " + empty.path.string() + " --manifest " + good);
        CHECK(r.status == 1);
        CHECK(r.err.find("holds no layer listed in") != std::string::npos);

        // --rule selects: none of the empty-capture layers is in the manifest.
        r = run_kalah("verify-db --db " + d + " --rule empty-capture --manifest " + good);
        CHECK(r.status == 1);

        // Malformed manifests: bad input, exit 2, file and line named.
        test_files::spit(d + "/bad.txt", "# ok\nkalah-m3-standard-s1.kdb 12345\n");
        r = run_kalah("verify-db --db " + d + " --manifest " + d + "/bad.txt");
        CHECK(r.status == 2);
        CHECK(r.err.find(d + "/bad.txt:2:") != std::string::npos);
        test_files::spit(d + "/twice.txt", manifest + manifest);
        r = run_kalah("verify-db --db " + d + " --manifest " + d + "/twice.txt");
        CHECK(r.status == 2);
        CHECK(r.err.find("listed twice") != std::string::npos);
        r = run_kalah("verify-db --db " + d + " --manifest " + d + "/no-such-file.txt");
        CHECK(r.status == 2);
        CHECK(r.err.find("no-such-file.txt: cannot read the manifest") != std::string::npos);
    }

    TEST_CASE("verify-db --manifest: the committed manifest matches layers built here") {
        // results/value-hashes.txt lists, among others, the 5-pit layers 0..8 of both rules.
        const std::string committed = std::string(KALAH_SOURCE_DIR) + "/results/value-hashes.txt";
        test_files::TempDir dir("manifest-committed");
        const std::string d = dir.path.string();
        for (const char* rule : {"standard", "empty-capture"}) {
            REQUIRE(run_kalah(std::string("build-db --pits 5 --max-seeds 8 --quiet --rule ") +
                              rule + " --db " + d)
                        .status == 0);
        }
        const CliResult r = run_kalah("verify-db --json --db " + d + " --manifest " + committed);
        CHECK(r.status == 0);
        const json v = json::parse(r.out);
        CHECK(v["ok"] == true);
        CHECK(v["checked"] == 18);
    }
}
