// The web page of `kalah serve`, compiled into the binary from the files of web/
// (cmake/embed_web.cmake writes the table from whatever web/ holds): no files to install,
// nothing fetched from elsewhere. serve/routes.h serves each at its path.
#pragma once

#include <cstddef>
#include <string_view>

namespace kalah::web {

struct Asset {
    std::string_view path;  // "/app.js": "/" and the file's name in web/
    std::string_view type;  // media type, from the extension
    std::string_view body;  // the file's bytes
};

extern const Asset kAssets[];  // every file of web/, in name order
extern const size_t kAssetCount;

}  // namespace kalah::web
