// Runs the built `kalah` binary with arguments and captures stdout, stderr and exit status.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

struct CliResult {
    int status = -1;
    std::string out;
    std::string err;
};

inline std::string slurp_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// `args` is appended to the binary path as shell words; stdin may be fed from `input`.
// `wrapper`, if given, is a command the binary runs under (e.g. "timeout -k 1 20").
inline CliResult run_kalah(const std::string& args, const std::string& input = "",
                           const std::string& wrapper = "") {
    static int counter = 0;
    std::string base =
        "/tmp/kalah_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    std::string in_path = base + ".in";
    {
        std::ofstream in(in_path);
        in << input;
    }
    // Run in an empty directory of this test process, so that nothing in the caller's
    // working directory (such as a default kalah-db/) changes what the command does.
    // Removed again when the test process exits (if a command left nothing in it).
    struct EmptyDir {
        std::string path = "/tmp/kalah_cli_cwd_" + std::to_string(::getpid());
        EmptyDir() { ::mkdir(path.c_str(), 0700); }
        ~EmptyDir() { ::rmdir(path.c_str()); }
    };
    static const EmptyDir cwd;
    std::string cmd = "cd " + cwd.path + " && " + wrapper + " " + std::string(KALAH_BIN) + " " +
                      args + " <" + in_path + " >" + base + ".out 2>" + base + ".err";
    int raw = std::system(cmd.c_str());
    CliResult r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp_file(base + ".out");
    r.err = slurp_file(base + ".err");
    std::remove(in_path.c_str());
    std::remove((base + ".out").c_str());
    std::remove((base + ".err").c_str());
    return r;
}

// run_kalah under `timeout`: a run that hangs is killed after `seconds` and its status
// is timeout's (124, or 137 when it had to be killed), never a test that hangs.
inline CliResult run_kalah_within(int seconds, const std::string& args) {
    return run_kalah(args, "", "timeout -k 2 " + std::to_string(seconds));
}

// Starts the built `kalah` binary with `args` (no shell) in a child process whose stdout and
// stderr go to /dev/null, and returns its pid (negative if fork failed): for tests that
// kill it at a chosen moment and reap it themselves.
inline pid_t spawn_kalah_quiet(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>("kalah"));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::dup2(null, 2);
        ::execv(KALAH_BIN, argv.data());
        ::_exit(127);
    }
    return pid;
}
