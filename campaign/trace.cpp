// The job trace of a proof campaign (columns and guarantees in campaign/trace.h).
#include "campaign/trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/regular_file.h"

namespace kalah::campaign {
namespace {

// Writes all of s at the end of fd (opened O_APPEND); false on failure (errno set).
bool write_all(int fd, const std::string& s) {
    size_t done = 0;
    while (done < s.size()) {
        const ssize_t k = ::write(fd, s.data() + done, s.size() - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        done += static_cast<size_t>(k);
    }
    return true;
}

}  // namespace

std::string trace_csv_header() {
    return "record,run_started,submitted,finished,worker,in_flight,pass_beta,beta,kind,result,"
           "seeds,depth,after,nodes,seconds\n";
}

std::string trace_csv_row(const TraceRow& r) {
    char buf[400];
    std::snprintf(buf, sizeof buf, "%llu,%.6f,%.6f,%.6f,%d,%d,%d,%d,%s,%d,%d,%d,%lld,%llu,%.6f\n",
                  static_cast<unsigned long long>(r.record), r.run_started, r.submitted, r.finished,
                  r.worker, r.in_flight, r.pass_beta, r.job.beta,
                  r.job.kind == JobRecord::Kind::Split ? "split" : "bound", r.job.result, r.seeds,
                  r.depth, static_cast<long long>(r.after),
                  static_cast<unsigned long long>(r.job.nodes), r.job.seconds);
    return buf;
}

std::string prepare_csv_log(const std::string& path, const std::string& header) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::string why;
    // Whatever stands under the name must be a regular file (a FIFO would hang the reads
    // and writes below): any entry of that name is opened as one, or refused.
    if (fs::exists(fs::symlink_status(path, ec))) {
        const int fd = open_regular_file(path, O_RDONLY, &why);
        if (fd < 0) return path + ": " + why;
        struct stat st {};
        const uint64_t size = ::fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
        // Only the first line and the last byte are looked at; the rest is a log.
        std::string first(header.size(), '\0');
        char last = '\n';
        const bool same =
            size >= header.size() &&
            ::pread(fd, first.data(), first.size(), 0) == static_cast<ssize_t>(first.size()) &&
            first == header;
        if (same && ::pread(fd, &last, 1, static_cast<off_t>(size - 1)) != 1) last = '\n';
        ::close(fd);
        if (size > 0 && !same) {
            const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
            const std::string aside = path + "." + std::to_string(now) + ".old";
            fs::rename(path, aside, ec);
            if (ec) return path + ": cannot move aside a file of another format: " + ec.message();
        } else if (size > 0) {
            if (last == '\n') return "";
            const int out = open_regular_file(path, O_WRONLY | O_APPEND, &why);
            if (out < 0) return path + ": " + why;
            const bool ok = write_all(out, "\n");
            ::close(out);
            return ok ? "" : path + ": cannot append";
        }
    }
    const int out = open_regular_file(path, O_WRONLY | O_CREAT | O_TRUNC, &why);
    if (out < 0) return path + ": " + why;
    const bool ok = write_all(out, header);
    ::close(out);
    return ok ? "" : path + ": cannot write";
}

TraceWriter::TraceWriter(const std::string& dir)
    : path_((std::filesystem::path(dir) / kTraceName).string()) {
    error_ = prepare_csv_log(path_, trace_csv_header());
    if (!error_.empty()) return;
    std::string why;
    fd_ = open_regular_file(path_, O_WRONLY | O_APPEND, &why);
    if (fd_ < 0) error_ = path_ + ": " + why;
}

TraceWriter::~TraceWriter() {
    if (fd_ >= 0) ::close(fd_);
}

void TraceWriter::append(const TraceRow& r) {
    if (fd_ < 0) return;
    // One write() per line: lines of one run never interleave, a kill tears at most one.
    if (!write_all(fd_, trace_csv_row(r))) {
        error_ = path_ + ": write failed: " + std::strerror(errno);
        ::close(fd_);
        fd_ = -1;
    }
}

}  // namespace kalah::campaign
