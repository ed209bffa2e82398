// The access log of `kalah serve`: one line per write, to stderr or to a file. A file's
// log is bounded: past max_bytes it is renamed to `<path>.1` (replacing the one before)
// and a new file is begun, so that at most about twice max_bytes is on disk; reopen()
// (SIGHUP or SIGUSR1, for logrotate) starts writing to a new file of the same name.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

namespace kalah::serve {

class AccessLog {
  public:
    // path "": stderr (bounded only by whatever stderr is). Otherwise the file is opened
    // for appending; std::runtime_error naming the cause when it cannot be.
    AccessLog(std::string path, uint64_t max_bytes);
    ~AccessLog();
    AccessLog(const AccessLog&) = delete;
    AccessLog& operator=(const AccessLog&) = delete;

    // Appends `line` (which ends with its newline) whole, in one write; any thread.
    void write(const std::string& line);
    // Closes the file and opens its name again (after logrotate moved it); any thread.
    // A file that cannot be opened again leaves the log on the old one, and says so once
    // on stderr.
    void reopen();
    // Bytes in the current file (0 on stderr).
    uint64_t size() const;

  private:
    void open_locked();
    void rotate_locked();
    mutable std::mutex mu_;
    std::string path_;
    uint64_t max_bytes_;
    int fd_ = 2;
    uint64_t size_ = 0;
};

}  // namespace kalah::serve
