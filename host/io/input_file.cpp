// The readers' file check (io/input_file.h).

#include "io/input_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "slender/core/error.h"

namespace slender {

long long check_input_file(const std::string& path, long long max_bytes, const char* what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    // (no such file: the readers' message as it was; another reason named)
    const int err = errno;
    throw InputError(path, 0, "",
                     std::string("cannot open ") + what +
                         (err == ENOENT ? std::string() : std::string(": ") + std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISDIR(st.st_mode)    ? "a folder"
                       : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    throw InputError(path, 0, "",
                     std::string(what) + " is " + kind + ", not a regular file: refused");
  }
  const long long size = static_cast<long long>(st.st_size);
  if (size > max_bytes) {
    throw InputError(path, 0, "",
                     std::string(what) + " of " + std::to_string(size) +
                         " bytes is larger than the " + std::to_string(max_bytes >> 20) +
                         " MiB such a file may be");
  }
  return size;
}

}  // namespace slender
