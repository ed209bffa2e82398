// The web page of `kalah serve`, compiled into the binary from the files of web/
// (cmake/embed_web.cmake writes the definitions): no files to install, nothing fetched
// from elsewhere.
#pragma once

namespace kalah::web {
extern const char* const kIndexHtml;  // web/index.html
extern const char* const kAppJs;      // web/app.js
extern const char* const kStyleCss;   // web/style.css
}  // namespace kalah::web
