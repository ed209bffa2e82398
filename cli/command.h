// Subcommand registry and helpers shared by the `kalah` subcommands.
#pragma once

#include <boost/program_options.hpp>
#include <memory>
#include <string>
#include <vector>

namespace kalah::cli {

// A subcommand registers itself from its own .cpp with a static RegisterCommand.
struct Command {
    const char* name;
    const char* summary;
    int (*run)(const std::vector<std::string>& args);  // args after the command name
};
struct RegisterCommand {
    explicit RegisterCommand(Command c);
};
const std::vector<Command>& commands();

// Exit status for bad input (one line on stderr, see fail()).
constexpr int kExitBadInput = 2;
// Exit status of a search stopped by --time-limit (no value is known).
constexpr int kExitStopped = 3;
// Prints "kalah <cmd>: <message>" to stderr and returns kExitBadInput.
int fail(const std::string& cmd, const std::string& message);

// Parses args against opts (and `expert`, listed only by --help-expert); returns false
// after printing help (--help, --help-expert). Throws boost::program_options::error or
// kalah::InputError on bad input; with bare_is_usage, no arguments at all is such an
// error, naming the usage (for commands that need to be told what to work on).
bool parse_options(const std::string& cmd, const std::string& usage,
                   boost::program_options::options_description& opts,
                   const std::vector<std::string>& args, boost::program_options::variables_map& vm,
                   const boost::program_options::options_description* expert = nullptr,
                   bool bare_is_usage = false);

// Runs body, turning exceptions from bad input into one stderr line and exit 2.
int guarded(const std::string& cmd, int (*body)(const std::vector<std::string>&),
            const std::vector<std::string>& args);

}  // namespace kalah::cli

#include "cli/options.h"
