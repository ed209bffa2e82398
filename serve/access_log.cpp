// The access log's file: appended a line a write, rotated past its size cap, reopened on
// request (serve/access_log.h).
#include "serve/access_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace kalah::serve {

AccessLog::AccessLog(std::string path, uint64_t max_bytes)
    : path_(std::move(path)), max_bytes_(max_bytes) {
    if (path_.empty()) return;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0)
        throw std::runtime_error("cannot open the log " + path_ + ": " + std::strerror(errno));
    struct stat st {};
    size_ = ::fstat(fd_, &st) == 0 ? uint64_t(st.st_size) : 0;
}

AccessLog::~AccessLog() {
    if (fd_ > 2) ::close(fd_);
}

// Opens path_ again; on failure the old descriptor stays (nothing is lost).
void AccessLog::open_locked() {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        const std::string m = "kalah serve: cannot open the log " + path_ + " again (" +
                              std::strerror(errno) + "): writing on to the old file\n";
        (void)!::write(2, m.data(), m.size());
        return;
    }
    ::close(fd_);
    fd_ = fd;
    struct stat st {};
    size_ = ::fstat(fd_, &st) == 0 ? uint64_t(st.st_size) : 0;
}

void AccessLog::rotate_locked() {
    const std::string old = path_ + ".1";
    if (::rename(path_.c_str(), old.c_str()) != 0) {
        const std::string m = "kalah serve: cannot rename the log " + path_ + " to " + old + " (" +
                              std::strerror(errno) + ")\n";
        (void)!::write(2, m.data(), m.size());
    }
    open_locked();
}

void AccessLog::write(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!path_.empty() && max_bytes_ > 0 && size_ > 0 && size_ + line.size() > max_bytes_)
        rotate_locked();
    size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // a full disk: the line is lost, the server goes on
        done += size_t(n);
    }
    if (!path_.empty()) size_ += done;
}

void AccessLog::reopen() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!path_.empty()) open_locked();
}

uint64_t AccessLog::size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return size_;
}

}  // namespace kalah::serve
