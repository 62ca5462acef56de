#pragma once

// Files written under a temporary name (NAME.part) and renamed when complete, so that a file
// under its final name is always whole: the recorders' outputs and the checkpoints. Internal to
// host/record.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "slender/core/error.h"

namespace slender {

/// opens the temporary file `part` for writing (mode "w" or "wb"); throws Error with the reason
inline std::FILE* open_part(const std::string& part, const char* mode = "w") {
  std::FILE* f = std::fopen(part.c_str(), mode);
  if (!f) throw Error("cannot open '" + part + "' for writing: " + std::strerror(errno));
  return f;
}

/// closes a finished temporary file and gives it its final name. On an error (a failed write,
/// or `failed`: the caller's own writes failed) the temporary file is removed and the reason
/// named (a full disk: "No space left on device"), in an Error
inline void close_and_rename(std::FILE* f,
                             const std::string& part,
                             const std::string& final_name,
                             bool failed = false) {
  const bool bad = failed || std::ferror(f) != 0;
  const int err = errno;
  const bool closed = std::fclose(f) == 0;
  std::error_code ec;
  if (bad || !closed) {
    const int why = bad ? err : errno;
    std::filesystem::remove(part, ec);
    throw Error("cannot write '" + part + "': " + std::strerror(why));
  }
  std::filesystem::rename(part, final_name, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(part, ec);
    throw Error("cannot rename '" + part + "' to '" + final_name + "': " + why);
  }
}

/// closes and removes an unfinished temporary file
inline void discard_part(std::FILE* f, const std::string& part) noexcept {
  std::fclose(f);
  std::error_code ec;
  std::filesystem::remove(part, ec);
}

}  // namespace slender
