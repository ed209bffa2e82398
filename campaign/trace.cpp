// The job trace of a proof campaign (columns and guarantees in campaign/trace.h).
#include "campaign/trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

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
    const bool exists = fs::exists(path, ec);
    const uintmax_t size = exists ? fs::file_size(path, ec) : 0;
    if (ec) return path + ": " + ec.message();
    if (size > 0) {
        // Only the first line and the last byte are looked at; the rest is a log.
        std::ifstream in(path, std::ios::binary);
        std::string first(header.size(), '\0');
        in.read(first.data(), static_cast<std::streamsize>(first.size()));
        if (!in || first != header) {
            const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
            const std::string aside = path + "." + std::to_string(now) + ".old";
            fs::rename(path, aside, ec);
            if (ec) return path + ": cannot move aside a file of another format: " + ec.message();
        } else {
            char last = '\n';
            in.seekg(static_cast<std::streamoff>(size - 1));
            in.get(last);
            if (last == '\n') return "";
            std::ofstream out(path, std::ios::app | std::ios::binary);
            out << '\n';
            return out ? "" : path + ": cannot append";
        }
    }
    std::ofstream out(path, std::ios::trunc | std::ios::binary);
    out << header;
    out.flush();
    return out ? "" : path + ": cannot write";
}

TraceWriter::TraceWriter(const std::string& dir)
    : path_((std::filesystem::path(dir) / kTraceName).string()) {
    error_ = prepare_csv_log(path_, trace_csv_header());
    if (!error_.empty()) return;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd_ < 0) error_ = path_ + ": cannot open: " + std::strerror(errno);
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
