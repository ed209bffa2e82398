// Placeholder until the database layer lands: no database is ever usable.
#include "db/database.h"

namespace kalah::db {

std::unique_ptr<Database> Database::open(const std::string&, int, Rule, size_t, std::string* why) {
    if (why) *why = "endgame databases are not implemented yet";
    return nullptr;
}

}  // namespace kalah::db
