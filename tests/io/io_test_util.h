#pragma once

// Helpers for the scene-input tests: test data paths, a scratch folder for files the tests
// write, and catching an InputError to look at its file, line and field.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "error_util.h"
#include "slender/core/error.h"

namespace slender::test {

/// a file in tests/data
inline std::string data_path(const std::string& name) {
  return std::string(SLENDER_TEST_DATA_DIR) + "/" + name;
}

/// a fresh folder under the system temp folder, removed with everything in it at the end
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("slender_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path() const { return path_.string(); }
  /// writes `text` to `name` inside the folder and returns the file's path
  std::string write(const std::string& name, const std::string& text) const {
    const std::filesystem::path p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace slender::test
