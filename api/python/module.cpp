// The Python module's compiled part, kalah._kalah (pybind11): the oracle of api/oracle.h
// with positions as text or tuples. kalah/__init__.py is the documented surface.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/oracle.h"
#include "core/notation.h"
#include "kalah/version.h"

namespace py = pybind11;
using namespace kalah;

namespace {

// The Python type of obj, for a TypeError's message.
std::string type_name(const py::handle& obj) {
    return py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>();
}

// obj as an int: TypeError when it is not one (a float, a text, None: not rounded or
// parsed), ValueError when it is one out of int's range.
int to_int(const py::handle& obj, const char* what) {
    if (!py::isinstance<py::int_>(obj))
        throw py::type_error(std::string(what) + " must be an int, not " + type_name(obj));
    try {
        return obj.cast<int>();
    } catch (const py::cast_error&) {
        throw py::value_error(std::string(what) + ": " + py::repr(obj).cast<std::string>() +
                              " is out of range");
    }
}

// obj as a sequence (not a text): TypeError otherwise.
py::sequence to_sequence(const py::handle& obj, const char* what) {
    if (!py::isinstance<py::sequence>(obj) || py::isinstance<py::str>(obj) ||
        py::isinstance<py::bytes>(obj))
        throw py::type_error(std::string(what) + " must be a tuple or list, not " + type_name(obj));
    return obj.cast<py::sequence>();
}

std::vector<int> to_ints(const py::handle& obj, const char* what) {
    std::vector<int> out;
    for (const py::handle x : to_sequence(obj, what)) out.push_back(to_int(x, what));
    return out;
}

// A position from the project's text ("4,4,4/4,4,4/0,0/A") or a tuple (pits, stores,
// to_move): pits either the 2m counts A1..Am B1..Bm or a pair of rows, stores
// (south, north), to_move 0/'A'/'S' for South or 1/'B'/'N' for North. An object of
// another type is TypeError; a malformed or impossible position InputError (ValueError).
Board to_board(const py::handle& obj) {
    if (py::isinstance<py::str>(obj)) return parse_position(obj.cast<std::string>());
    if (!py::isinstance<py::sequence>(obj) || py::isinstance<py::bytes>(obj))
        throw py::type_error("a position is a text or a tuple (pits, stores, to_move), not " +
                             type_name(obj));
    if (py::len(obj) != 3)
        throw InputError("a position tuple is (pits, stores, to_move), not " +
                         std::to_string(py::len(obj)) + " items");
    const py::sequence t = obj.cast<py::sequence>();
    std::vector<int> south, north;
    const py::sequence pits = to_sequence(t[0], "position: pits");
    if (py::len(pits) == 2 && py::isinstance<py::sequence>(pits[0]) &&
        !py::isinstance<py::str>(pits[0])) {
        south = to_ints(pits[0], "position: pits");
        north = to_ints(pits[1], "position: pits");
    } else {
        const auto all = to_ints(pits, "position: pits");
        if (all.size() % 2) throw InputError("position: an odd number of pits");
        south.assign(all.begin(), all.begin() + all.size() / 2);
        north.assign(all.begin() + all.size() / 2, all.end());
    }
    if (south.size() != north.size()) throw InputError("position: rows of different lengths");
    const int m = int(south.size());
    if (m < 1 || m > kMaxPits) throw InputError("position: pits per row must be 1..6");
    const auto stores = to_ints(t[1], "position: stores");
    if (stores.size() != 2) throw InputError("position: stores must be (south, north)");
    Side side;
    const py::handle tm = t[2];
    if (py::isinstance<py::str>(tm)) {
        const std::string s = tm.cast<std::string>();
        if (s == "A" || s == "S" || s == "South")
            side = Side::South;
        else if (s == "B" || s == "N" || s == "North")
            side = Side::North;
        else
            throw InputError("position: to_move must be A or B, not '" + s + "'");
    } else {
        const int v = to_int(tm, "position: to_move");
        if (v != 0 && v != 1) throw InputError("position: to_move must be 0 (South) or 1 (North)");
        side = v == 0 ? Side::South : Side::North;
    }
    long total = stores[0] + long(stores[1]);
    for (int i = 0; i < m; ++i) {
        if (south[i] < 0 || north[i] < 0 || stores[0] < 0 || stores[1] < 0)
            throw InputError("position: negative seed count");
        total += long(south[i]) + north[i];
    }
    if (total > kMaxSeeds) throw InputError("position: more than 127 seeds");
    return Board::from_rows(m, south.data(), north.data(), stores[0], stores[1], side);
}

// The calls running without the GIL, and the interpreter's exit. A daemon thread still in
// a call when the interpreter finalizes would take the GIL back there, and CPython ends
// such a thread with pthread_exit: its forced unwinding through our frames (the GIL is
// taken back in a destructor, which is noexcept) calls std::terminate, an abort at exit.
// So an atexit hook, which runs before finalization (after the non-daemon threads are
// joined), makes every running call end at its next poll (within 50 ms, as Ctrl-C does),
// waits, the GIL released, until each holds the GIL again, and refuses new calls.
struct Calls {
    std::mutex mu;
    std::condition_variable done;
    int running = 0;  // calls between releasing the GIL and holding it again
    std::atomic<bool> exiting{false};
};

// Never destroyed: a daemon thread may still return through it after exit's destructors.
Calls& calls() {
    static Calls* c = new Calls;
    return *c;
}

struct Running {
    Running() {
        std::lock_guard<std::mutex> lock(calls().mu);
        ++calls().running;
    }
    ~Running() {
        {
            std::lock_guard<std::mutex> lock(calls().mu);
            --calls().running;
        }
        calls().done.notify_all();
    }
    Running(const Running&) = delete;
    Running& operator=(const Running&) = delete;
};

// The interpreter is exiting: the calling (daemon) thread's call ends with SystemExit,
// which the threading module ends a thread on without a word. Needs the GIL.
[[noreturn]] void raise_exiting() {
    PyErr_SetString(PyExc_SystemExit, "kalah: the interpreter is exiting");
    throw py::error_already_set();
}

// The atexit hook (see Calls). The wait is bounded: a call that does not poll (a
// coverage(open=True) opening every layer) is not waited for past it.
void stop_calls_at_exit() {
    Calls& c = calls();
    c.exiting = true;
    py::gil_scoped_release release;
    std::unique_lock<std::mutex> lock(c.mu);
    c.done.wait_for(lock, std::chrono::seconds(10), [&c] { return c.running == 0; });
}

// A call's budget; Ctrl-C (a signal handler that raises, as SIGINT's default) ends it:
// the search polls Python's signal handlers from the calling thread (they run in the main
// thread only), and the raised exception is rethrown once the GIL is back. The
// interpreter's exit ends it too, without taking the GIL.
api::Budget budget(uint64_t node_limit, double time_limit) {
    if (!(time_limit >= 0)) throw InputError("time_limit must be >= 0 seconds");
    return api::Budget{node_limit, time_limit, [] {
                           if (calls().exiting) return true;
                           py::gil_scoped_acquire gil;
                           return PyErr_CheckSignals() != 0;
                       }};
}

// Runs f without the GIL; a call the caller interrupted raises what the signal handler
// raised (KeyboardInterrupt), one the interpreter's exit ended SystemExit.
template <class F>
auto without_gil(F&& f) {
    if (calls().exiting) raise_exiting();
    const Running running;  // ends after the GIL is held again
    try {
        py::gil_scoped_release release;
        return f();
    } catch (const api::Interrupted&) {
        if (!PyErr_Occurred()) raise_exiting();
        throw py::error_already_set();
    }
}

py::tuple value_tuple(const api::Value& v) {
    return py::make_tuple(
        v.source == api::Source::Unknown ? py::object(py::none()) : py::int_(v.value),
        api::source_name(v.source), v.nodes);
}

}  // namespace

PYBIND11_MODULE(_kalah, m) {
    m.doc() = "Compiled core of the kalah module (use kalah, not kalah._kalah)";
    m.attr("__version__") = KALAH_VERSION_STRING;
    py::register_exception<api::NotFound>(m, "NotFoundError", PyExc_FileNotFoundError);
    py::register_exception<api::DatabaseError>(m, "DatabaseError", PyExc_OSError);
    py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
    py::module_::import("atexit").attr("register")(py::cpp_function(stop_calls_at_exit));
    // A value of the wrong type that a cast below still meets is a TypeError, not the
    // RuntimeError pybind11 gives it.
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const py::cast_error& e) {
            PyErr_SetString(PyExc_TypeError, e.what());
        }
    });

    py::class_<api::Oracle>(m, "Oracle", "A database directory and its searches (api/oracle.h).")
        .def(py::init([](const std::string& dir, long long db_memory_mib, long long tt_mib,
                         int threads, int max_solvers, bool books) {
                 if (threads < 1) throw InputError("threads must be >= 1");
                 if (tt_mib < 1 || db_memory_mib < 1)
                     throw InputError("memory sizes must be >= 1 MiB");
                 if (max_solvers < 0) throw InputError("max_solvers must be >= 0 (0: one a core)");
                 return std::make_unique<api::Oracle>(
                     dir, api::Options{size_t(db_memory_mib), size_t(tt_mib), threads, max_solvers,
                                       books});
             }),
             py::arg("dir"), py::arg("db_memory_mib"), py::arg("tt_mib"), py::arg("threads"),
             py::arg("max_solvers") = 0, py::arg("books") = true,
             "Opens dir (\"\": no database); NotFoundError when it holds no layer file.")
        .def(
            "probe",
            [](api::Oracle& o, const py::handle& pos, const std::string& rule, uint64_t nodes,
               double seconds) {
                const Board b = to_board(pos);
                const Rule r = parse_rule(rule);
                const api::Budget bu = budget(nodes, seconds);
                return value_tuple(without_gil([&] { return o.value(b, r, bu); }));
            },
            py::arg("position"), py::arg("rule"), py::arg("node_limit"), py::arg("time_limit"),
            "(value or None, source, nodes) of position: South's margin.")
        .def(
            "move_values",
            [](api::Oracle& o, const py::handle& pos, const std::string& rule, uint64_t nodes,
               double seconds) {
                const Board b = to_board(pos);
                const Rule r = parse_rule(rule);
                const api::Budget bu = budget(nodes, seconds);
                const std::vector<api::MoveValue> mv =
                    without_gil([&] { return o.move_values(b, r, bu); });
                py::list out;
                for (const auto& x : mv) {
                    const py::tuple v = value_tuple(x.value);
                    out.append(py::make_tuple(x.text, x.pit, v[0], v[1], v[2]));
                }
                return out;
            },
            py::arg("position"), py::arg("rule"), py::arg("node_limit"), py::arg("time_limit"),
            "[(move, pit, value or None, source, nodes)] of every legal move, best first.")
        .def(
            "coverage",
            [](api::Oracle& o, bool open) {
                const std::vector<api::Coverage> cs = without_gil([&] { return o.coverage(open); });
                py::list out;
                for (const auto& c : cs)
                    out.append(py::make_tuple(c.m, rule_name(c.rule), c.max_seeds,
                                              api::stop_name(c.stop), c.stop_layer, c.file,
                                              c.reason));
                return out;
            },
            py::arg("open"),
            "[(pits, rule, max_seeds, stop, stop_layer, file, reason)] per pit count and rule "
            "with a layer file; open: opens those not opened yet first.");

    m.def(
        "normalize", [](const py::handle& position) { return format_position(to_board(position)); },
        py::arg("position"), "The position (text or tuple) as the project's text.");
    m.def(
        "to_tuple",
        [](const py::handle& position) {
            const Board b = to_board(position);
            py::list south, north;
            for (int i = 0; i < b.pits(); ++i) {
                south.append(b.pit(Side::South, i));
                north.append(b.pit(Side::North, i));
            }
            return py::make_tuple(py::make_tuple(py::tuple(south), py::tuple(north)),
                                  py::make_tuple(b.store(Side::South), b.store(Side::North)),
                                  b.to_move() == Side::South ? 0 : 1);
        },
        py::arg("position"),
        "The position as ((A1..Am, B1..Bm), (store_south, store_north), to_move): to_move 0 "
        "for South, 1 for North.");
    m.def(
        "start",
        [](int pits, int seeds) {
            if (pits < 1 || pits > kMaxPits || seeds < 0 || 2 * pits * seeds > kMaxSeeds)
                throw InputError("Kalah(" + std::to_string(pits) + "," + std::to_string(seeds) +
                                 ") is outside 1..6 pits and 127 seeds");
            return format_position(Board::start(pits, seeds));
        },
        py::arg("pits"), py::arg("seeds"),
        "The start of Kalah(pits, seeds) as text, South to move.");
    m.def(
        "legal_moves",
        [](const py::handle& position) {
            const Board b = to_board(position);
            std::vector<std::string> out;
            if (!b.over())
                for (int p : b.legal_moves()) out.push_back(pit_name(b.to_move(), p));
            return out;
        },
        py::arg("position"),
        "The pits the side to move may play, as notation (\"A1\", ...); empty when the game is "
        "over.");
    m.def(
        "play",
        [](const py::handle& position, const py::handle& move, const std::string& rule) {
            Board b = to_board(position);
            const Rule r = parse_rule(rule);
            if (b.over()) throw InputError("the game is over");
            int pit;
            if (py::isinstance<py::str>(move)) {
                const MoveText mt = parse_move(move.cast<std::string>(), b.pits());
                if (mt.side != b.to_move())
                    throw InputError("move " + move.cast<std::string>() + " out of turn");
                pit = mt.pit;
            } else {
                if (!py::isinstance<py::int_>(move))
                    throw py::type_error("a move is a text (\"A3\") or a 0-based pit, not " +
                                         type_name(move));
                pit = to_int(move, "move");
            }
            if (pit < 0 || pit >= b.pits() || b.own_pit(pit) == 0)
                throw InputError("pit " + std::to_string(pit) + " is not a legal move");
            const Side mover = b.to_move();
            const MoveResult res = b.play(pit, r);
            return py::make_tuple(format_position(b), format_move(mover, pit, res));
        },
        py::arg("position"), py::arg("move"), py::arg("rule") = "standard",
        "(position after it, the move's notation) of playing move (\"A3\", or the mover's "
        "0-based pit) from position under rule.");
}
