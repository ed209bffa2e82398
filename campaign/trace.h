// The job trace of a proof campaign: one CSV line per finished job, for a simulator.
#pragma once

// A campaign directory D holds `trace.csv` beside the journal. It is a log, not state:
// nothing is ever read back from it by `kalah campaign`, a run appends one line per record
// it journals (written and flushed right after the journal's fsync, not synced itself), and
// a kill between the two leaves a record without its line. A torn last line is possible;
// a run that finds the file not ending in a newline ends that line first, so a reader
// skips one bad line and reads on (scripts/campaign/campaign_sim.py does).
//
// Times are absolute UNIX seconds (system clock at the run's start, then the run's steady
// clock), so that the lines of several runs (resumes) order on one axis and the gaps
// between runs show; runs on several machines are only as comparable as their clocks.
//
// Columns (header line first):
//   record       the record's index in journal.kcj (0-based): joins the two files
//   run_started  UNIX time the run that journaled it began (one value per run)
//   submitted    UNIX time the manager handed the job out
//   finished     UNIX time the manager received its record (the job ran during the
//                `seconds` before, on the worker)
//   worker       the MPI rank that ran it; 0 for the in-process worker
//   in_flight    jobs out right after it was handed out, itself included (1: ran alone)
//   pass_beta    the pass it was chosen for: the root question "v(root) >= pass_beta";
//                a job still out when its pass ended finishes during the next
//   beta         the job's own question "v(position) >= beta" (as the journal's)
//   kind         bound or split (as the journal's)
//   result       the bound (kind bound; 0 for a split)
//   seeds        seeds in the position's pits
//   depth        least moves from the root to the position in the manager's tree
//   after        the record whose split put the position in the tree (-1: the root): the
//                job could not be chosen before that record was
//   nodes        nodes searched (as the journal's)
//   seconds      the job's time measured by the worker (as the journal's)
//
// Version history: this header line is the first; a run that finds another first line in
// trace.csv moves that file aside (trace.csv.<UNIX time>.old) and starts a new one.

#include <cstdint>
#include <string>

#include "campaign/journal.h"

namespace kalah::campaign {

constexpr const char* kTraceName = "trace.csv";

struct TraceRow {
    uint64_t record = 0;
    double run_started = 0, submitted = 0, finished = 0;
    int worker = 0;
    int in_flight = 1;
    int pass_beta = 0;
    JobRecord job;
    int seeds = 0;
    int depth = 0;
    int64_t after = -1;
};

std::string trace_csv_header();  // with its newline
std::string trace_csv_row(const TraceRow& r);

// Makes `path` a log with this header: created with it when missing or empty; moved aside
// (path.<UNIX time>.old) when its first line is another; a newline appended when its last
// line is torn. Returns "" or what failed (one line).
std::string prepare_csv_log(const std::string& path, const std::string& header);

// Appends rows to dir/trace.csv. A failure to write does not stop the campaign (the trace
// is not state): the first one is kept in error() and nothing more is written.
class TraceWriter {
  public:
    explicit TraceWriter(const std::string& dir);
    ~TraceWriter();
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;
    void append(const TraceRow& r);
    const std::string& error() const { return error_; }

  private:
    int fd_ = -1;
    std::string path_;
    std::string error_;
};

}  // namespace kalah::campaign
