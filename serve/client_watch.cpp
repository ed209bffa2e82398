// Watching the clients of running requests (serve/client_watch.h).
#include "serve/client_watch.h"

#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdlib>
#include <vector>

namespace kalah::serve {

ClientWatch::ClientWatch() : thread_([this] { run(); }) {}

ClientWatch::~ClientWatch() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

ClientWatch::Guard::Guard(ClientWatch& w, int fd) : watch_(w), fd_(fd) {
    if (fd_ < 0) return;
    {
        std::lock_guard<std::mutex> lock(watch_.mu_);
        watch_.watched_.emplace(fd_, &gone_);
    }
    watch_.wake_.notify_all();
}

ClientWatch::Guard::~Guard() {
    if (fd_ < 0) return;
    std::lock_guard<std::mutex> lock(watch_.mu_);
    for (auto [it, end] = watch_.watched_.equal_range(fd_); it != end; ++it)
        if (it->second == &gone_) {
            watch_.watched_.erase(it);
            break;
        }
}

void ClientWatch::run() {
    std::unique_lock<std::mutex> lock(mu_);
    std::vector<pollfd> fds;
    while (!stop_) {
        if (watched_.empty()) {
            wake_.wait(lock);
            continue;
        }
        // The lock is held through the poll (timeout 0), so no watched socket is closed
        // by its request's thread while it is looked at: a guard's destructor waits.
        fds.clear();
        for (const auto& [fd, flag] : watched_) fds.push_back({fd, POLLRDHUP, 0});
        if (poll(fds.data(), fds.size(), 0) > 0)
            for (const pollfd& p : fds)
                if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))
                    for (auto [it, end] = watched_.equal_range(p.fd); it != end; ++it)
                        *it->second = true;
        wake_.wait_for(lock, std::chrono::milliseconds(10));
    }
}

namespace {
bool numeric_name(const sockaddr_storage& a, socklen_t len, std::string& host, int& port) {
    char h[NI_MAXHOST], s[NI_MAXSERV];
    if (getnameinfo(reinterpret_cast<const sockaddr*>(&a), len, h, sizeof(h), s, sizeof(s),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        return false;
    host = h;
    port = std::atoi(s);
    return true;
}
}  // namespace

int find_connection_fd(const std::string& addr, int port, int local_port) {
    DIR* dir = opendir("/proc/self/fd");
    if (!dir) return -1;
    int found = -1;
    while (dirent* e = readdir(dir)) {
        char* end = nullptr;
        const long fd = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || fd == dirfd(dir)) continue;
        sockaddr_storage peer{}, local{};
        socklen_t peer_len = sizeof(peer), local_len = sizeof(local);
        if (getpeername(int(fd), reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) continue;
        if (getsockname(int(fd), reinterpret_cast<sockaddr*>(&local), &local_len) != 0) continue;
        std::string peer_host, local_host;
        int peer_port = -1, local_p = -1;
        if (numeric_name(peer, peer_len, peer_host, peer_port) &&
            numeric_name(local, local_len, local_host, local_p) && peer_port == port &&
            local_p == local_port && peer_host == addr) {
            found = int(fd);
            break;
        }
    }
    closedir(dir);
    return found;
}

}  // namespace kalah::serve
