// The HTTP/1.1 front end of `kalah serve` (serve/http_server.h): the server's event loop,
// its acceptor with the connection caps, and the eviction policy. A connection's state
// machine and the stream writer: serve/connection.h; the handler threads:
// serve/handler_threads.h.
#include "serve/http_server.h"

#include <algorithm>
#include <boost/asio.hpp>
#include <stdexcept>

#include "serve/connection.h"
#include "serve/handler_threads.h"
#include "serve/http_server_impl.h"

namespace kalah::serve {

namespace {

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

}  // namespace

const std::string* HttpRequest::header(std::string_view name) const {
    for (const auto& [k, v] : headers)
        if (iequals(k, name)) return &v;
    return nullptr;
}

std::string log_safe(const std::string& text) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned char c : text.substr(0, 200)) {
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += char(c);
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return text.size() > 200 ? out + "..." : out;
}

std::string connection_key(const std::string& numeric_address) {
    boost::system::error_code ec;
    const asio::ip::address a = asio::ip::make_address(numeric_address, ec);
    if (ec || !a.is_v6()) return numeric_address;
    const asio::ip::address_v6 v6 = a.to_v6();
    if (v6.is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, v6).to_string();
    asio::ip::address_v6::bytes_type b = v6.to_bytes();
    for (size_t i = 8; i < b.size(); ++i) b[i] = 0;
    return asio::ip::address_v6(b).to_string() + "/64";
}

std::optional<std::pair<size_t, size_t>> single_range(const std::string& value, size_t size) {
    if (value.rfind("bytes=", 0) != 0 || size == 0) return std::nullopt;
    const std::string spec = value.substr(6);
    const size_t dash = spec.find('-');
    if (dash == std::string::npos || spec.find_first_not_of("0123456789-") != std::string::npos ||
        spec.find('-', dash + 1) != std::string::npos)
        return std::nullopt;
    const std::string a = spec.substr(0, dash), b = spec.substr(dash + 1);
    if ((a.empty() && b.empty()) || a.size() > 18 || b.size() > 18) return std::nullopt;
    if (a.empty()) {  // the last n bytes
        const size_t n = std::stoull(b);
        if (n == 0) return std::nullopt;
        return std::make_pair(n >= size ? 0 : size - n, size - 1);
    }
    const size_t first = std::stoull(a);
    size_t last = b.empty() ? size - 1 : std::stoull(b);
    if (first >= size || last < first) return std::nullopt;
    if (last >= size) last = size - 1;
    return std::make_pair(first, last);
}

void HttpServer::Impl::accept() {
    acceptor.async_accept(
        [self = shared_from_this()](boost::system::error_code ec, tcp::socket sock) {
            if (self->stopping || !self->acceptor.is_open()) return;
            if (ec) {
                // Out of descriptors (EMFILE) or a connection reset before accept: try again
                // shortly rather than spin.
                self->accept_retry.expires_after(std::chrono::milliseconds(50));
                self->accept_retry.async_wait([self](boost::system::error_code e) {
                    if (!e) self->accept();
                });
                return;
            }
            boost::system::error_code aec;
            const auto remote = sock.remote_endpoint(aec);
            std::string addr = aec ? std::string("?") : remote.address().to_string();
            const std::string key = connection_key(addr);
            // Past a cap the connection is closed at once: no answer costs the server less.
            // At the total cap, a connection waiting for a request makes room first.
            const char* refused = nullptr;
            if (aec)
                refused = "no peer address";
            else if (self->per_address[key] >= self->connection_cap(key))
                refused = "per-client connection cap";
            else if (self->count >= self->opt.max_connections && !self->evict_least_progress())
                refused = "connection cap, every connection busy";
            if (!refused) {
                auto conn = std::make_shared<Connection>(*self, std::move(sock), addr);
                ++self->per_address[key];
                ++self->count;
                self->open.insert(conn.get());
                conn->start();
            } else {
                if (self->per_address[key] == 0) self->per_address.erase(key);
                self->log_connection(HttpLogEntry::Event::Refused, addr, refused);
                sock.close(aec);
            }
            self->accept();
        });
}

int pick_eviction(const std::vector<EvictionView>& conns) {
    using P = EvictionView::Phase;
    int best = -1;
    for (size_t i = 0; i < conns.size(); ++i) {
        const EvictionView& c = conns[i];
        if (c.phase == P::Computing) continue;
        if (best < 0) {
            best = int(i);
            continue;
        }
        const EvictionView& b = conns[size_t(best)];
        const bool c_lingers = c.phase == P::Lingering, b_lingers = b.phase == P::Lingering;
        if (c_lingers != b_lingers ? c_lingers : c.progress < b.progress) best = int(i);
    }
    return best;
}

// The connection that has made least progress for longest (pick_eviction) is closed;
// false when every connection is computing an answer.
bool HttpServer::Impl::evict_least_progress() {
    std::vector<Connection*> conns(open.begin(), open.end());
    std::vector<EvictionView> views;
    views.reserve(conns.size());
    for (Connection* c : conns) views.push_back(c->view());
    const int i = pick_eviction(views);
    if (i < 0) return false;
    static const char* const why[] = {
        "connection cap: waited longest for a request", "connection cap: its body stalled longest",
        "", "connection cap: its answer unread longest", "connection cap: lingering longest"};
    Connection* victim = conns[size_t(i)];
    log_connection(HttpLogEntry::Event::Evicted, victim->address,
                   why[static_cast<int>(views[size_t(i)].phase)]);
    victim->close();
    return true;
}

void HttpServer::Impl::do_stop() {
    if (stopping) return;
    stopping = true;
    boost::system::error_code ec;
    acceptor.close(ec);
    accept_retry.cancel();
    // Closing a connection cancels its request; its worker's answer is then dropped.
    std::vector<Connection*> all(open.begin(), open.end());
    for (Connection* c : all) c->close();
}

HttpServer::HttpServer(HttpOptions options, HttpHandler handler)
    : impl_(std::make_shared<Impl>(std::move(options), std::move(handler))) {}

HttpServer::~HttpServer() = default;

int HttpServer::listen(const std::string& host, int port) {
    boost::system::error_code ec;
    tcp::resolver resolver(impl_->io);
    const auto found =
        resolver.resolve(host, std::to_string(port), tcp::resolver::numeric_service, ec);
    if (ec || found.empty())
        throw std::runtime_error("cannot listen on " + host + " port " + std::to_string(port) +
                                 " (not an address of this machine)");
    const tcp::endpoint at = found.begin()->endpoint();
    tcp::acceptor& a = impl_->acceptor;
    a.open(at.protocol(), ec);
    // SO_REUSEADDR: a restart binds at once past TIME_WAIT; no SO_REUSEPORT, with which a
    // second server on the same port would start and take half the connections.
    if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) a.bind(at, ec);
    // A burst of clients past a short backlog has its SYNs dropped and waits 1 s, then
    // 3 s, to try again (results/serve.md, "Robustness"); capped by net.core.somaxconn.
    if (!ec) a.listen(1024, ec);
    if (ec) {
        a.close();
        throw std::runtime_error("cannot listen on " + host + " port " + std::to_string(port) +
                                 " (in use, or not an address of this machine: " + ec.message() +
                                 ")");
    }
    return a.local_endpoint().port();
}

void HttpServer::run() {
    impl_->pool = std::make_unique<HandlerThreads>(impl_->opt.workers);
    impl_->accept();
    impl_->io.run();
    impl_->pool->join();
}

void HttpServer::stop() {
    asio::post(impl_->io, [impl = impl_] { impl->do_stop(); });
}

int HttpServer::connections() const { return impl_->count; }

uint64_t HttpServer::head_work() const { return impl_->head_work; }

}  // namespace kalah::serve