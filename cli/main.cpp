// `kalah`: the command-line front end; dispatches to the registered subcommands.
#include <algorithm>
#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command.h"

namespace {
void usage(std::ostream& os) {
    os << "kalah " KALAH_VERSION " - solver and endgame databases for Kalah(m,n)\n\n"
       << "usage: kalah <command> [options]    (kalah <command> --help for its options)\n\n"
       << "commands:\n";
    // The summaries start in one column, two spaces past the longest command name.
    size_t width = 0;
    for (const auto& c : kalah::cli::commands())
        width = std::max(width, std::string(c.name).size());
    for (const auto& c : kalah::cli::commands())
        os << "  " << c.name << std::string(width + 2 - std::string(c.name).size(), ' ')
           << c.summary << "\n";
}
}  // namespace

int main(int argc, char** argv) {
    // Past a file-size limit (ulimit -f) a write then fails with EFBIG, which the writers
    // report, instead of SIGXFSZ killing the process mid-file.
    std::signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(std::cerr);
        return kalah::cli::kExitBadInput;
    }
    std::string cmd = argv[1];
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        usage(std::cout);
        return 0;
    }
    if (cmd == "--version") {
        std::cout << "kalah " KALAH_VERSION "\n";
        return 0;
    }
    std::vector<std::string> args(argv + 2, argv + argc);
    for (const auto& c : kalah::cli::commands())
        if (cmd == c.name) return c.run(args);
    std::cerr << "kalah: unknown command '" << cmd << "' (kalah --help lists them)\n";
    return kalah::cli::kExitBadInput;
}
