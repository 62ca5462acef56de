#pragma once

// The check every reader of an input file makes before it opens the file: that the path names a
// regular file (not a device such as /dev/zero, a FIFO, a socket or a folder, which would be
// read without end or block) no longer than the reader's limit.

#include <string>

namespace slender {

/// Limits of the files the readers take [bytes] (docs/failures.md). A scene file's is in
/// io/json.h (kMaxSceneFileBytes, 64 MiB).
constexpr long long kMaxGeometryFileBytes = 1LL << 30;  ///< geometry, network, rod text; OBJ; PLY
constexpr long long kMaxCheckpointFileBytes = 16LL << 30;  ///< a checkpoint

/// Checks that `path` is a regular file (symbolic links followed) of at most max_bytes and
/// returns its size; throws InputError naming the file, `what` ("scene file", "OBJ file", ...)
/// and, for a file too long, its size and the limit. (The check is made on the name before
/// the file is opened: a file swapped for a FIFO in between is not caught.)
long long check_input_file(const std::string& path, long long max_bytes, const char* what);

}  // namespace slender
