// The JSON writer and the shared pieces of analysis/json.h.
#include "analysis/json.h"

#include "analysis/text.h"

namespace kalah::analysis {

namespace {
void write(const Json& j, std::string& out) {
    // Strings that are not valid UTF-8 (a directory name) are written with U+FFFD.
    if (j.is_object()) {
        out += '{';
        bool first = true;
        for (const auto& [key, value] : j.items()) {
            if (!first) out += ", ";
            first = false;
            out += Json(key).dump(-1, ' ', false, Json::error_handler_t::replace);
            out += ": ";
            write(value, out);
        }
        out += '}';
    } else if (j.is_array()) {
        out += '[';
        for (size_t i = 0; i < j.size(); ++i) {
            if (i) out += ", ";
            write(j[i], out);
        }
        out += ']';
    } else {
        out += j.dump(-1, ' ', false, Json::error_handler_t::replace);
    }
}
}  // namespace

std::string json_line(const Json& j) {
    std::string out;
    write(j, out);
    return out + "\n";
}

std::string json_string(const std::string& s) {
    return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
}

const char* to_move_text(const Board& b) {
    return b.over() ? "none" : b.to_move() == Side::South ? "A" : "B";
}

Json score_json(const Board& b) {
    return Json::array({final_store(b, Side::South), final_store(b, Side::North)});
}

Json move_texts_json(const std::vector<PlayedMove>& moves) {
    Json a = Json::array();
    for (const auto& m : moves) a.push_back(m.text);
    return a;
}

std::string signed_value(int v) {
    std::string s = std::to_string(v);
    if (v > 0) s.insert(s.begin(), '+');  // (not "+" + s: GCC 12 warns -Wrestrict there)
    return s;
}
std::string result_letter(int v) { return v > 0 ? "W" : v < 0 ? "L" : "D"; }
const char* result_word(int margin) { return margin > 0 ? "win" : margin < 0 ? "loss" : "draw"; }

}  // namespace kalah::analysis
