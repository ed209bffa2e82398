// What `kalah campaign` prints (analysis/campaign_report.h).
#include "analysis/campaign_report.h"

#include <algorithm>
#include <sstream>

namespace kalah::analysis {
namespace {

using campaign::Progress;
using campaign::ProofTree;

struct RootMove {
    std::string text;
    int lo, hi;
};
// Nothing before the root is expanded: no moves. Bounds as South's margin at the start
// (the root's frame applied), moves in the notation of the side to move at the root.
std::vector<RootMove> root_moves(const ProofTree& tree, Rule rule) {
    std::vector<RootMove> out;
    const campaign::RootFrame& f = tree.frame();
    for (const auto& mb : tree.root_moves()) {
        Board b = tree.root();
        const MoveResult r = b.play(mb.pit, rule);
        const auto [lo, hi] = f.margins(mb.lo, mb.hi);
        out.push_back({format_move(f.board.to_move(), mb.pit, r), lo, hi});
    }
    return out;
}

// The root mover's first turns in notation ("A1+ A2"), with their bounds.
std::vector<RootMove> root_turns(const ProofTree& tree, Rule rule) {
    std::vector<RootMove> out;
    const campaign::RootFrame& f = tree.frame();
    for (const auto& tb : tree.root_turns()) {
        Board b = tree.root();
        std::string text;
        for (const int pit : tb.pits) {
            const MoveResult r = b.play(pit, rule);
            if (!text.empty()) text += ' ';
            text += format_move(f.board.to_move(), pit, r);
        }
        const auto [lo, hi] = f.margins(tb.lo, tb.hi);
        out.push_back({text, lo, hi});
    }
    return out;
}

// "A1+ [-4, +6], A2 +2": moves or turns with their bounds (one value where exact).
std::string bounds_list_text(const std::vector<RootMove>& list) {
    std::string out;
    for (const RootMove& mv : list)
        out += (out.empty() ? "" : ", ") + mv.text + " " +
               (mv.lo == mv.hi ? signed_value(mv.lo)
                               : "[" + signed_value(mv.lo) + ", " + signed_value(mv.hi) + "]");
    return out;
}

// The root's proven best moves in notation ("A2+"), of the side to move at the root.
std::vector<std::string> best_move_texts(const ProofTree& tree, Rule rule) {
    std::vector<std::string> out;
    const Board& root = tree.frame().board;
    for (const int pit : tree.best_moves()) {
        Board b = root;
        const MoveResult r = b.play(pit, rule);
        out.push_back(format_move(root.to_move(), pit, r));
    }
    return out;
}

// The root's line in notation, "" at the start.
std::string line_of(const ProofTree& tree) { return campaign::line_text(tree.params()); }

// The figures of a run that its JSON carries, whether it answered a question or found
// the value.
void add_run_figures(Json& j, const CampaignRun& r) {
    add_search_figures(j, r.figures);
    j["ranks"] = r.ranks;
    j["job_nodes"] = r.job_nodes;
    j["cross_check"] = r.cross_check;
    j["cross_check_seed"] = r.cross_check_seed;
    j["cross_checked"] = r.cross_checked;
    j["cross_check_unsettled"] = r.cross_check_unsettled;
    j["refused_ranks"] = r.refused_ranks;
}

// "campaign: 12 jobs (3 this run), 2 split, tree 40 positions"
std::string jobs_text(const Progress& p) {
    return "campaign: " + std::to_string(p.jobs) + " jobs (" + std::to_string(p.run_jobs) +
           " this run), " + std::to_string(p.splits) + " split, tree " +
           std::to_string(p.tree_positions) + " positions";
}

// "nodes: N, seconds: S, nodes/s: R (this run; the journal holds T nodes)"
std::string run_nodes_text(const CampaignRun& r) {
    return search_figures_text(r.figures) + " (this run; the journal holds " +
           std::to_string(r.progress.nodes) + " nodes)";
}

}  // namespace

std::string root_moves_text(const ProofTree& tree, Rule rule) {
    return bounds_list_text(root_moves(tree, rule));
}

std::string root_turns_text(const ProofTree& tree, Rule rule) {
    const std::vector<RootMove> turns = root_turns(tree, rule);
    const bool longer = std::any_of(turns.begin(), turns.end(), [](const RootMove& t) {
        return t.text.find(' ') != std::string::npos;
    });
    return longer ? bounds_list_text(turns) : std::string();
}

Json root_turns_json(const ProofTree& tree, Rule rule) {
    Json out = Json::array();
    for (const RootMove& t : root_turns(tree, rule))
        out.push_back({{"turn", t.text}, {"lower", t.lo}, {"upper", t.hi}});
    return out;
}

Json root_moves_json(const ProofTree& tree, Rule rule) {
    Json out = Json::array();
    for (const RootMove& mv : root_moves(tree, rule))
        out.push_back({{"move", mv.text}, {"lower", mv.lo}, {"upper", mv.hi}});
    return out;
}

Json campaign_fields(const Progress& p, const std::string& dir) {
    Json o = {{"dir", dir},
              {"jobs", p.jobs},
              {"jobs_run", p.run_jobs},
              {"splits", p.splits},
              {"open_jobs", p.open_jobs},
              {"tree_positions", p.tree_positions},
              {"campaign_nodes", p.nodes},
              {"job_seconds", p.job_seconds},
              {"lower", p.root_lo},
              {"upper", p.root_hi}};
    if (p.eta.known) {
        o["eta_lo_seconds"] = p.eta.lo;
        o["eta_hi_seconds"] = p.eta.hi;
        o["eta_pass_jobs"] = Json::array({p.eta.jobs_least, p.eta.jobs_most});
        o["eta_workers"] = p.eta.workers;
    } else {
        o["eta_lo_seconds"] = nullptr;
        o["eta_hi_seconds"] = nullptr;
    }
    return o;
}

std::string campaign_run_json(const CampaignRun& r) {
    const Progress& p = r.progress;
    Json j = {{"pits", r.start.pits()},
              {"seeds", r.start.own_pit(0)},
              {"position", format_position(r.tree->frame().board)},
              {"line", line_of(*r.tree)},
              {"rule", rule_name(r.rule)}};
    if (r.question) {
        j["bound"] = r.question->text();
        j["proved"] = r.proved;
        j["moves"] = root_moves_json(*r.tree, r.rule);
        j["turns"] = root_turns_json(*r.tree, r.rule);
    } else {
        Json best = Json::array();
        for (const auto& b : best_move_texts(*r.tree, r.rule)) best.push_back(b);
        j["value"] = r.value;
        j["result"] = result_letter(r.value);
        j["best"] = best;
    }
    add_run_figures(j, r);
    if (!r.question) j["passes"] = p.passes;
    j.update(campaign_fields(p, r.dir));
    return json_line(j);
}

std::string campaign_run_text(const CampaignRun& r) {
    const Progress& p = r.progress;
    std::ostringstream out;
    out << campaign::params_text(r.tree->params()) << "\n";
    if (r.question) {
        out << "question: " << question_text(*r.question) << "\n"
            << "answer: " << (r.proved ? "proved" : "refuted") << "; proven: v in ["
            << signed_value(p.root_lo) << ", " << signed_value(p.root_hi) << "]\n";
        if (const std::string moves = root_moves_text(*r.tree, r.rule); !moves.empty())
            out << "first moves: " << moves << "\n";
        if (const std::string turns = root_turns_text(*r.tree, r.rule); !turns.empty())
            out << "first turns: " << turns << "\n";
        out << jobs_text(p) << "\n" << run_nodes_text(r) << "\n";
        return out.str();
    }
    std::string best;
    for (const auto& b : best_move_texts(*r.tree, r.rule)) best += (best.empty() ? "" : " ") + b;
    out << "value: " << signed_value(r.value) << " (" << result_letter(r.value) << " for South)\n"
        << "best first moves: " << (best.empty() ? "(not separated by the campaign)" : best) << "\n"
        << jobs_text(p) << ", " << p.passes << " passes this run\n"
        << run_nodes_text(r) << "\n"
        << "threads: " << r.figures.threads << ", job budget: " << r.job_nodes << " nodes"
        << (r.ranks > 1 ? ", workers: " + std::to_string(r.ranks - 1) + " MPI ranks" : "") << "\n";
    if (r.cross_check > 0) {
        out << "cross-check: " << r.cross_checked << " records agreed on another worker, "
            << r.cross_check_unsettled << " checks without a verdict (over a budget)";
        for (size_t i = 0; i < r.refused_ranks.size(); ++i)
            out << (i ? ", " : "; refused: rank ") << r.refused_ranks[i];
        out << "\n";
    }
    return out.str();
}

std::string campaign_status_json(const CampaignStatus& s) {
    const Progress& p = s.progress;
    const bool exact = p.root_lo == p.root_hi;
    Json j = {{"pits", s.params.m},
              {"seeds", s.params.n},
              {"rule", rule_name(s.params.rule)},
              {"line", campaign::line_text(s.params)},
              {"position", format_position(s.tree->frame().board)}};
    j.update(campaign_fields(p, s.dir));
    if (!exact) {
        j["pass_beta"] = s.pass_beta;
        j["pass_test"] = std::string("v ") + (p.frame.sign > 0 ? ">= " : "<= ") +
                         signed_value(p.frame.margin(s.pass_beta));
    }
    if (s.question) {
        j["bound"] = s.question->text();
        j["proved"] = s.decided ? Json(s.proved) : Json(nullptr);
    }
    j["moves"] = root_moves_json(*s.tree, s.params.rule);
    j["turns"] = root_turns_json(*s.tree, s.params.rule);
    if (exact) {
        j["value"] = p.root_lo;
        j["result"] = result_letter(p.root_lo);
    }
    return json_line(j);
}

std::string campaign_status_text(const CampaignStatus& s) {
    const Progress& p = s.progress;
    const bool exact = p.root_lo == p.root_hi;
    std::ostringstream out;
    out << "campaign in " << s.dir << ": " << campaign::params_text(s.params) << "\n"
        << "jobs: " << p.jobs << " (" << p.splits << " split), " << p.open_jobs << " open; tree "
        << p.tree_positions << " positions, " << p.expanded << " expanded\n"
        << "nodes: " << p.nodes << ", job seconds: " << p.job_seconds << "\n"
        << "root: "
        << (exact ? "value " + signed_value(p.root_lo) + " (" + result_letter(p.root_lo) +
                        " for South)"
                  : "value in [" + signed_value(p.root_lo) + ", " + signed_value(p.root_hi) + "]")
        << "\n";
    if (const std::string moves = root_moves_text(*s.tree, s.params.rule); !moves.empty())
        out << "first moves: " << moves << "\n";
    if (const std::string turns = root_turns_text(*s.tree, s.params.rule); !turns.empty())
        out << "first turns: " << turns << "\n";
    if (s.question)
        out << "question: " << question_text(*s.question) << ": "
            << (s.decided ? (s.proved ? "proved" : "refuted") : "open") << "\n";
    // A settled question needs no more work even while the value stays open: say which.
    if (exact)
        out << campaign::eta_text(p.eta, true) << "\n";
    else if (s.decided)
        out << "ETA 0 (question " << (s.proved ? "proved" : "refuted") << ")\n";
    else
        out << campaign::eta_text(p.eta, false) << " for the pass v "
            << (p.frame.sign > 0 ? ">= " : "<= ") << signed_value(p.frame.margin(s.pass_beta))
            << "\n";
    return out.str();
}

}  // namespace kalah::analysis
