// Notices when the client of a running request goes away, so that its search stops
// (serve/server.h, Api::get's cancel flag) instead of running out its budget for nobody.
//
// A watched request names its connection's socket; one thread polls the watched sockets
// every few milliseconds and sets a request's flag when its peer has closed or reset the
// connection (POLLRDHUP, POLLHUP, POLLERR).
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace kalah::serve {

class ClientWatch {
  public:
    ClientWatch();
    ~ClientWatch();
    ClientWatch(const ClientWatch&) = delete;
    ClientWatch& operator=(const ClientWatch&) = delete;

    // Watches `fd` while the returned guard lives: `gone` becomes true once its peer has
    // closed the connection. fd < 0 watches nothing (gone stays false).
    class Guard {
      public:
        Guard(ClientWatch& w, int fd);
        ~Guard();
        Guard(const Guard&) = delete;
        Guard& operator=(const Guard&) = delete;
        const std::atomic<bool>* gone() const { return &gone_; }

      private:
        ClientWatch& watch_;
        int fd_;
        std::atomic<bool> gone_{false};
    };

  private:
    void run();
    std::mutex mu_;
    std::condition_variable wake_;
    std::multimap<int, std::atomic<bool>*> watched_;
    bool stop_ = false;
    std::thread thread_;
};

// The socket of this process connected to the peer `addr`:`port` (numeric, as cpp-httplib
// reports a request's remote address) on local port `local_port`, or -1. cpp-httplib 0.11
// does not hand a handler its connection's socket; a TCP connection is named uniquely by
// its two ends, so the process's sockets are searched for it.
int find_connection_fd(const std::string& addr, int port, int local_port);

}  // namespace kalah::serve
