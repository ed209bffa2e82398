// open_regular_file: open with O_NONBLOCK, fstat, refuse what is not a regular file.
#include "core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kalah {
namespace {

// What a file of this type is, for a message ("a directory, not a file").
std::string not_regular(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory, not a file";
    if (S_ISFIFO(mode)) return "not a regular file (a FIFO)";
    if (S_ISSOCK(mode)) return "not a regular file (a socket)";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "not a regular file (a device)";
    return "not a regular file";
}

}  // namespace

int open_regular_file(const std::string& path, int flags, std::string* why) {
    const int fd = ::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) {
        const int err = errno;
        // A FIFO opened for writing without a reader fails (ENXIO), a directory opened for
        // writing too (EISDIR): name what is there rather than the errno.
        struct stat st {};
        if (err == ELOOP)
            *why = "a symbolic link loop (too many levels of symbolic links)";
        else if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
            *why = not_regular(st.st_mode);
        else
            *why = std::string("cannot open: ") + std::strerror(err);
        return -1;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        *why = std::string("cannot stat: ") + std::strerror(errno);
        ::close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = not_regular(st.st_mode);
        ::close(fd);
        return -1;
    }
    const int fl = ::fcntl(fd, F_GETFL);
    if (fl < 0 || ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        *why = std::string("cannot open: ") + std::strerror(errno);
        ::close(fd);
        return -1;
    }
    return fd;
}

}  // namespace kalah
