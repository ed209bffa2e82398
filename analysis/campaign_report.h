// What `kalah campaign` prints: the root's moves with their proven bounds, the fields a
// run and --status share, and a run's or a status's result as one JSON line or as text.
// The commands gather the figures; this file only writes them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/json.h"
#include "analysis/reports.h"
#include "campaign/campaign.h"
#include "solver/question.h"

namespace kalah::analysis {

// The root's moves in notation with their proven bounds (South's margin after the move):
// "A1 [-4, +6], A2+ [+2, +2]" as text, [{"move", "lower", "upper"}] as JSON.
std::string root_moves_text(const campaign::ProofTree& tree, Rule rule);
Json root_moves_json(const campaign::ProofTree& tree, Rule rule);
// The root mover's first turns ("A1+ A2 [+2, +68], ..."), extra moves followed as far as
// the tree has expanded them (ProofTree::root_turns); "" when every turn is one move (the
// first moves say it all). The JSON always lists them: [{"turn", "lower", "upper"}].
std::string root_turns_text(const campaign::ProofTree& tree, Rule rule);
Json root_turns_json(const campaign::ProofTree& tree, Rule rule);

// The fields a run's JSON and --status --json share. The ETA (campaign/campaign.h, Eta):
// null while unknown, 0 once the value is exact.
Json campaign_fields(const campaign::Progress& p, const std::string& dir);

// A run of `kalah campaign` as it ended: its question (or the exact value), the tree, the
// progress and the figures of this run.
struct CampaignRun {
    Board start;
    Rule rule = Rule::Standard;
    std::string dir;
    const campaign::ProofTree* tree = nullptr;
    campaign::Progress progress;
    std::optional<Question> question;
    bool proved = false;  // with a question: its answer
    int value = 0;        // without one: the exact value
    SearchFigures figures;
    int ranks = 1;
    uint64_t job_nodes = 0;
    // The cross-check (mpi/ranks.h): the fraction asked for, its sample and its account.
    double cross_check = 0;
    uint64_t cross_check_seed = 0;
    uint64_t cross_checked = 0, cross_check_unsettled = 0;
    std::vector<int> refused_ranks;
};
std::string campaign_run_json(const CampaignRun& r);
std::string campaign_run_text(const CampaignRun& r);

// `kalah campaign --status`: the journal replayed, with the ETA of the pass a run would
// ask now (pass_beta, a threshold on the root's pits value: "v >= pass_beta"; with a
// question, its one pass). JSON "pass_test" says it as a test of South's margin.
struct CampaignStatus {
    campaign::CampaignParams params;
    std::string dir;
    const campaign::ProofTree* tree = nullptr;
    campaign::Progress progress;
    std::optional<Question> question;
    bool decided = false, proved = false;  // the question's answer, once settled
    int pass_beta = 0;
};
std::string campaign_status_json(const CampaignStatus& s);
std::string campaign_status_text(const CampaignStatus& s);

}  // namespace kalah::analysis
