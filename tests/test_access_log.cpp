// The access log of `kalah serve` (serve/access_log.h): a file's log rotated to <path>.1
// past its size cap, and reopened by name after logrotate moved it.
#include <doctest/doctest.h>

#if KALAH_HAS_SERVE
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "serve/access_log.h"

namespace {
std::string contents(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}
}  // namespace

TEST_SUITE("serve") {
    TEST_CASE("access log: bounded by its size cap, reopened by name") {
        namespace fs = std::filesystem;
        const fs::path dir =
            fs::temp_directory_path() / ("kalah_access_log_" + std::to_string(::getpid()));
        fs::remove_all(dir);
        fs::create_directories(dir);
        const fs::path log = dir / "access.log";
        {
            kalah::serve::AccessLog a(log.string(), 100);
            const std::string line = std::string(39, 'a') + "\n";  // 40 bytes
            // 1000 lines of 40 bytes: never more than 100 bytes a file, two files.
            for (int i = 0; i < 1000; ++i) {
                a.write(line);
                CHECK(a.size() <= 100);
            }
            CHECK(fs::file_size(log) <= 100);
            CHECK(fs::file_size(dir / "access.log.1") <= 100);
            CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 2);
            // Lines are whole: each file is lines of the one written.
            CHECK(contents(log).size() % line.size() == 0);
            // logrotate moves the file away, then signals: the next line goes to a new file.
            fs::rename(log, dir / "moved.log");
            a.write("b\n");  // still the moved file
            a.reopen();
            a.write("c\n");
            CHECK(contents(log) == "c\n");
            const std::string moved = contents(dir / "moved.log");
            CHECK(moved.substr(moved.size() - 2) == "b\n");
        }
        // No cap (0): one file, however long; an existing file is appended to.
        {
            kalah::serve::AccessLog a(log.string(), 0);
            for (int i = 0; i < 100; ++i) a.write("0123456789\n");
            CHECK(contents(log).size() == 2 + 100 * 11);
        }
        // A directory that does not exist: an error naming the file.
        CHECK_THROWS_WITH_AS(kalah::serve::AccessLog((dir / "no" / "x.log").string(), 0),
                             doctest::Contains("x.log"), std::runtime_error);
        fs::remove_all(dir);
    }
}
#endif
