// HandlerThreads: the fixed pool of threads on which the HTTP front end (serve/http_server.h)
// runs its handlers, never on the io thread, so that a handler may block (a search).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kalah::serve {

// A fixed set of threads taking jobs in order. Bounded by its users: each connection has
// at most one request on it.
class HandlerThreads {
  public:
    explicit HandlerThreads(int n) {
        for (int i = 0; i < n; ++i) threads_.emplace_back([this] { work(); });
    }
    ~HandlerThreads() { join(); }
    void push(std::function<void()> job) {
        {
            std::lock_guard<std::mutex> lock(mu_);
            jobs_.push_back(std::move(job));
        }
        wake_.notify_one();
    }
    // Runs what is queued, then ends the threads.
    void join() {
        {
            std::lock_guard<std::mutex> lock(mu_);
            stop_ = true;
        }
        wake_.notify_all();
        for (auto& t : threads_)
            if (t.joinable()) t.join();
    }

  private:
    void work() {
        for (;;) {
            std::function<void()> job;
            {
                std::unique_lock<std::mutex> lock(mu_);
                wake_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
                if (jobs_.empty()) return;
                job = std::move(jobs_.front());
                jobs_.pop_front();
            }
            job();
        }
    }
    std::mutex mu_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> jobs_;
    bool stop_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace kalah::serve
