// Subcommand registry, option parsing and error reporting shared by all subcommands.
#include "cli/command.h"

#include <unistd.h>

#include <iostream>
#include <new>

#include "core/notation.h"
#include "db/database.h"
#include "db/format.h"
#include "solver/solver.h"

namespace kalah::cli {
namespace po = boost::program_options;

namespace {
std::vector<Command>& registry() {
    static std::vector<Command> r;
    return r;
}
}  // namespace

RegisterCommand::RegisterCommand(Command c) { registry().push_back(c); }
const std::vector<Command>& commands() { return registry(); }

int fail(const std::string& cmd, const std::string& message) {
    std::cerr << "kalah " << cmd << ": " << message << "\n";
    return kExitBadInput;
}

bool parse_options(const std::string& cmd, const std::string& usage, po::options_description& opts,
                   const std::vector<std::string>& args, po::variables_map& vm,
                   const po::options_description* expert, bool bare_is_usage) {
    if (bare_is_usage && args.empty())
        throw InputError("usage: kalah " + cmd + " " + usage.substr(0, usage.find('\n')) +
                         " (kalah " + cmd + " --help lists the options)");
    opts.add_options()("help,h", "show this help");
    if (expert) opts.add_options()("help-expert", "show this help and the expert options");
    // No command takes positional arguments: a stray word is an error, not silently dropped.
    po::options_description all;
    all.add(opts);
    if (expert) all.add(*expert);
    all.add_options()("stray-words", po::value<std::vector<std::string>>());
    po::positional_options_description stray;
    stray.add("stray-words", -1);
    po::store(po::command_line_parser(args).options(all).positional(stray).run(), vm);
    if (vm.count("stray-words"))
        throw InputError("unexpected argument '" +
                         vm["stray-words"].as<std::vector<std::string>>().front() +
                         "' (options start with --)");
    if (vm.count("help") || vm.count("help-expert")) {
        std::cout << "usage: kalah " << cmd << " " << usage << "\n\n" << opts << "\n";
        if (expert && vm.count("help-expert")) std::cout << *expert << "\n";
        return false;
    }
    po::notify(vm);
    return true;
}

int guarded(const std::string& cmd, int (*body)(const std::vector<std::string>&),
            const std::vector<std::string>& args) {
    try {
        return body(args);
    } catch (const po::error& e) {
        return fail(cmd, e.what());
    } catch (const InputError& e) {
        return fail(cmd, e.what());
    } catch (const std::invalid_argument& e) {
        return fail(cmd, e.what());
    } catch (const SearchStopped& e) {
        std::cerr << "kalah " << cmd << ": not finished within --time-limit (" << e.what()
                  << "); no value is known\n";
        return kExitStopped;
    } catch (const std::bad_alloc&) {
        std::cerr << "kalah " << cmd
                  << ": error: out of memory (a smaller --tt-mb, --db-memory-gb or --memory-gb "
                     "may fit)\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "kalah " << cmd << ": error: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace kalah::cli
