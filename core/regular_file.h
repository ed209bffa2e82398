// Opening a path only when it is a regular file: no FIFO, device or directory is read.
#pragma once

#include <string>

namespace kalah {

// Opens `path` with `flags` (O_RDONLY, O_RDWR, O_WRONLY | O_APPEND, ... ; O_CLOEXEC is
// added) if it is a regular file, or a symbolic link to one. The open itself is
// non-blocking (a FIFO cannot hang it), then the descriptor is checked with fstat and
// set back to blocking. Returns the descriptor, or -1 with *why set to the problem
// without the path: "not a regular file (a FIFO)", "a directory, not a file",
// "a symbolic link loop", "cannot open: No such file or directory", ...
int open_regular_file(const std::string& path, int flags, std::string* why);

}  // namespace kalah
