// The campaign journal (campaign/journal.*): records round-trip byte-exact; a torn or
// damaged tail, bad headers and a second manager are refused or cut off, never used.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "campaign/journal.h"
#include "random_position.h"
#include "temp_dir.h"

using namespace kalah;
using namespace kalah::campaign;
using test_files::TempDir;

TEST_SUITE("campaign") {
    TEST_CASE("journal: records round-trip byte-exact through a file") {
        TempDir dir("journal");
        const CampaignParams p{5, 4, Rule::EmptyCapture};
        std::mt19937 rng(3);
        std::vector<JobRecord> written;
        {
            std::string damage;
            Journal j = Journal::open(dir.path.string(), p, damage);
            for (int i = 0; i < 100; ++i) {
                JobRecord r;
                const Board b = random_position(rng, 5, 2 + int(rng() % 39)).without_stores();
                const int s = b.seeds_in_pits();
                r.kind = rng() % 2 ? JobRecord::Kind::Bound : JobRecord::Kind::Split;
                r.key = b.pits_key();
                r.beta = -s + int(rng() % (2 * s + 1));
                r.result = r.kind == JobRecord::Kind::Bound ? -s + int(rng() % (2 * s + 1)) : 0;
                r.nodes = (uint64_t(rng()) << 20) + rng();
                r.seconds = double(rng()) / 1000.0;
                j.append(r);
                written.push_back(r);
            }
        }
        const std::string path = (dir.path / kJournalName).string();
        const JournalContents c = read_journal(path);
        INFO(c.damage);
        CHECK(c.damage.empty());
        CHECK(c.params == p);
        REQUIRE(c.records.size() == written.size());
        for (size_t i = 0; i < written.size(); ++i) {
            CHECK(c.records[i].kind == written[i].kind);
            CHECK(c.records[i].key == written[i].key);
            CHECK(c.records[i].beta == written[i].beta);
            CHECK(c.records[i].result == written[i].result);
            CHECK(c.records[i].nodes == written[i].nodes);
            CHECK(c.records[i].seconds == written[i].seconds);
            CHECK(board_of_key(5, written[i].key).pits_key() == written[i].key);
        }
        CHECK(test_files::slurp(path).size() == kJournalHeaderBytes + 100 * kRecordBytes);
        CHECK(test_files::slurp(path).substr(0, kJournalHeaderBytes) == journal_header(p));
    }

    TEST_CASE("journal: a torn or damaged tail is reported and cut off, never used") {
        const CampaignParams p{4, 4, Rule::Standard};
        auto make = [&](TempDir& dir, int n) {
            std::string damage;
            Journal j = Journal::open(dir.path.string(), p, damage);
            std::mt19937 rng(5);
            for (int i = 0; i < n; ++i) {
                JobRecord r;
                r.key = random_position(rng, 4, 8 + i % 20).without_stores().pits_key();
                r.beta = i % 5;
                r.result = i % 7;
                j.append(r);
            }
            return (dir.path / kJournalName).string();
        };
        SUBCASE("a torn last record") {
            for (const size_t cut : {size_t(1), size_t(20), kRecordBytes - 1}) {
                TempDir dir("torn");
                const std::string path = make(dir, 10);
                std::filesystem::resize_file(path, kJournalHeaderBytes + 10 * kRecordBytes - cut);
                std::string damage;
                Journal j = Journal::open(dir.path.string(), p, damage);
                CHECK(damage.find("torn record at the end") != std::string::npos);
                CHECK(damage.find("truncated to 9 good records") != std::string::npos);
                CHECK(j.records().size() == 9);
                CHECK(std::filesystem::file_size(path) == kJournalHeaderBytes + 9 * kRecordBytes);
                // Appending after the cut gives a clean journal.
                JobRecord r;
                r.key = Board::start(4, 4).pits_key();
                j.append(r);
                const JournalContents c = read_journal(path);
                CHECK(c.damage.empty());
                CHECK(c.records.size() == 10);
            }
        }
        SUBCASE("any flipped byte of a record ends the good part there") {
            std::mt19937 rng(9);
            for (int t = 0; t < 30; ++t) {
                TempDir dir("flip");
                const std::string path = make(dir, 10);
                std::string bytes = test_files::slurp(path);
                const size_t rec = rng() % 10, at = rng() % kRecordBytes;
                bytes[kJournalHeaderBytes + rec * kRecordBytes + at] ^= char(1 + rng() % 255);
                test_files::spit(path, bytes);
                std::string damage;
                Journal j = Journal::open(dir.path.string(), p, damage);
                CHECK(damage.find("record " + std::to_string(rec + 1) + " of 10 is damaged") !=
                      std::string::npos);
                CHECK(j.records().size() == rec);
            }
        }
        SUBCASE("a record moved to another place does not check out") {
            TempDir dir("swap");
            const std::string path = make(dir, 3);
            std::string bytes = test_files::slurp(path);
            std::swap_ranges(bytes.begin() + kJournalHeaderBytes,
                             bytes.begin() + kJournalHeaderBytes + kRecordBytes,
                             bytes.begin() + kJournalHeaderBytes + kRecordBytes);
            test_files::spit(path, bytes);
            CHECK(read_journal(path).records.empty());
        }
        SUBCASE("a checksummed record of an impossible position is refused") {
            JobRecord r;
            r.key = Board::start(4, 4).pits_key() | (Cells(1) << (8 * 4));  // a store byte set
            unsigned char buf[kRecordBytes];
            encode_record(r, 42, 0, buf);
            JobRecord back;
            CHECK(decode_record(buf, 42, 0, p, back).find("bad position") != std::string::npos);
            r.key = Board::start(4, 4).pits_key();
            r.result = 40;  // more than the 32 seeds
            encode_record(r, 42, 0, buf);
            CHECK(decode_record(buf, 42, 0, p, back) == "result out of range");
            r.result = 0;
            encode_record(r, 42, 0, buf);
            CHECK(decode_record(buf, 42, 0, p, back) == "");
        }
    }

    TEST_CASE("journal: bad headers, other parameters and a second manager are refused") {
        TempDir dir("header");
        const CampaignParams p{4, 3, Rule::Standard};
        const std::string path = (dir.path / kJournalName).string();
        std::string damage;
        {
            Journal j = Journal::open(dir.path.string(), p, damage);
            CHECK_THROWS_AS(Journal::open(dir.path.string(), p, damage), JournalError);
        }
        CHECK_THROWS_AS(
            Journal::open(dir.path.string(), CampaignParams{4, 4, Rule::Standard}, damage),
            JournalMismatch);
        CHECK_THROWS_AS(
            Journal::open(dir.path.string(), CampaignParams{4, 3, Rule::EmptyCapture}, damage),
            JournalMismatch);
        const std::string good = test_files::slurp(path);
        for (size_t at = 0; at < kJournalHeaderBytes; ++at) {
            std::string bad = good;
            bad[at] ^= 0x10;
            test_files::spit(path, bad);
            CHECK_THROWS_AS(read_journal(path), JournalError);
        }
        test_files::spit(path, good.substr(0, 30));
        CHECK_THROWS_AS(read_journal(path), JournalError);
        test_files::spit(path, good);
        CHECK_NOTHROW(Journal::open(dir.path.string(), p, damage));
    }

}  // TEST_SUITE
