#pragma once

// Files written under a temporary name (NAME.part) and renamed when complete, so that a file
// under its final name is always whole: the recorders' outputs and the checkpoints. Internal to
// host/record.

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

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

/// pushes what was written to `f` (the temporary file `part`) to disk and returns the file's
/// length, the mark a checkpoint keeps; throws Error with the reason
inline std::uint64_t flush_part(std::FILE* f, const std::string& part) {
  const long at = std::fflush(f) == 0 ? std::ftell(f) : -1;
  if (at < 0) throw Error("cannot write '" + part + "': " + std::strerror(errno));
  return std::uint64_t(at);
}

/// closes and removes an unfinished temporary file
inline void discard_part(std::FILE* f, const std::string& part) noexcept {
  std::fclose(f);
  std::error_code ec;
  std::filesystem::remove(part, ec);
}

/// Continues a file that an earlier run was writing: `final_name` (the run completed it) or its
/// temporary `part` (the run was killed), cut back to its first `bytes`, which must begin with
/// `head`. Returns the temporary file, holding exactly those bytes (copied from the final file
/// when the temporary one is missing or shorter), opened for appending; the final file stays
/// as it was until close_and_rename replaces it. Throws Error naming the file otherwise.
inline std::FILE* continue_part(const std::string& part,
                                const std::string& final_name,
                                std::uint64_t bytes,
                                const std::string& head) {
  namespace fs = std::filesystem;
  auto size_of = [](const std::string& p) -> std::uint64_t {  // 0 for no regular file
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return 0;
    const std::uintmax_t n = fs::file_size(p, ec);
    return ec ? 0 : std::uint64_t(n);
  };
  const std::uint64_t part_size = size_of(part), final_size = size_of(final_name);
  const bool from_part = part_size >= bytes && part_size > 0;
  if (!from_part && !(final_size >= bytes && final_size > 0)) {
    std::error_code ec;
    const bool there = fs::exists(final_name, ec) || fs::exists(part, ec);
    throw Error("cannot continue '" + final_name + "' from the checkpoint: " +
                (there ? "it holds " + std::to_string(std::max(part_size, final_size)) +
                             " bytes, fewer than the " + std::to_string(bytes) +
                             " the checkpoint's run had written"
                       : std::string("it is not there")) +
                ", so the folder does not hold that run's outputs");
  }
  const std::string& src = from_part ? part : final_name;
  // what the file begins with: this recorder's header
  if (bytes < head.size()) {
    throw Error("cannot continue '" + final_name + "' from the checkpoint: its mark of " +
                std::to_string(bytes) + " bytes ends inside the header");
  }
  std::FILE* in = std::fopen(src.c_str(), "rb");
  if (!in) throw Error("cannot read '" + src + "': " + std::strerror(errno));
  std::string got(head.size(), '\0');
  const size_t n = std::fread(got.data(), 1, got.size(), in);
  if (n != head.size() || got != head) {
    std::fclose(in);
    throw Error("cannot continue '" + src +
                "' from the checkpoint: it does not begin as this run's file would (other "
                "columns or another scene)");
  }
  if (from_part) {
    std::fclose(in);
    std::error_code ec;
    fs::resize_file(part, bytes, ec);
    if (ec) throw Error("cannot cut '" + part + "' back to the checkpoint: " + ec.message());
    std::FILE* f = std::fopen(part.c_str(), "a");
    if (!f) throw Error("cannot open '" + part + "' for writing: " + std::strerror(errno));
    return f;
  }
  // the final file's first `bytes`, copied into the temporary one
  std::FILE* out = std::fopen(part.c_str(), "w");
  if (!out) {
    std::fclose(in);
    throw Error("cannot open '" + part + "' for writing: " + std::strerror(errno));
  }
  bool bad = std::fwrite(got.data(), 1, got.size(), out) != got.size();
  std::vector<char> buf(1 << 16);
  for (std::uint64_t left = bytes - head.size(); left > 0 && !bad;) {
    const size_t want = size_t(std::min<std::uint64_t>(left, buf.size()));
    const size_t r = std::fread(buf.data(), 1, want, in);
    bad = r != want || std::fwrite(buf.data(), 1, r, out) != r;
    left -= r;
  }
  std::fclose(in);
  if (bad || std::fflush(out) != 0) {
    const int err = errno;
    discard_part(out, part);
    throw Error("cannot copy '" + final_name + "' into '" + part + "': " + std::strerror(err));
  }
  return out;
}

}  // namespace slender
