// The layers of the source tree, as the layout table of docs/backends.md states them, checked on
// every quoted #include of the tree:
// - include/slender/core/ is the bottom layer: it includes only core/;
// - include/slender/stencils/ includes only core/ and stencils/;
// - include/slender/engine/ (the executor-generic engines that run on the host and on the GPU)
//   includes only include/slender/, and none of the front ends (simulator.h, batch.h, run.h,
//   record.h, compare.h, builder.h, info.h);
// - every header under include/ includes only include/slender/ (nothing of host/);
// - kernels/ (the CUDA module) includes only include/slender/ and its own files.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <string>
#include <vector>

namespace {
namespace SLENDER_UNITY_ID {

namespace fs = std::filesystem;

struct Include {
  std::string file;  // relative to the source folder
  int line;
  std::string target;  // the quoted path
};

std::vector<Include> quoted_includes(const std::string& folder) {
  const fs::path root(SLENDER_SOURCE_DIR);
  const std::regex inc(R"(^\s*#\s*include\s*"([^"]+)\")");
  std::vector<Include> out;
  for (const auto& e : fs::recursive_directory_iterator(root / folder)) {
    if (!e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    if (ext != ".h" && ext != ".cuh" && ext != ".cpp" && ext != ".cu") continue;
    std::ifstream in(e.path());
    std::string text;
    int n = 0;
    while (std::getline(in, text)) {
      ++n;
      std::smatch m;
      if (std::regex_search(text, m, inc))
        out.push_back({fs::relative(e.path(), root).string(), n, m[1].str()});
    }
  }
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// every include of `folder` that `allowed` refuses, as "file:line: target"
std::vector<std::string> violations(const std::string& folder,
                                    const std::function<bool(const Include&)>& allowed) {
  std::vector<std::string> bad;
  for (const Include& i : quoted_includes(folder))
    if (!allowed(i)) bad.push_back(i.file + ":" + std::to_string(i.line) + ": " + i.target);
  return bad;
}

std::string lines(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v)
    s += "\n  " + x;
  return s;
}

TEST(Layering, TheFoldersFindTheirFiles) {
  // the checks below would pass on an empty tree: they must see the tree's includes
  EXPECT_GT(quoted_includes("include/slender/core").size(), 10u);
  EXPECT_GT(quoted_includes("include/slender/stencils").size(), 20u);
  EXPECT_GT(quoted_includes("include/slender/engine").size(), 20u);
  EXPECT_GT(quoted_includes("kernels").size(), 10u);
}

TEST(Layering, CoreIsTheBottomLayer) {
  const auto bad = violations("include/slender/core", [](const Include& i) {
    return starts_with(i.target, "slender/core/");
  });
  EXPECT_TRUE(bad.empty()) << "core/ includes beyond core/:" << lines(bad);
}

TEST(Layering, StencilsIncludeOnlyCoreAndStencils) {
  const auto bad = violations("include/slender/stencils", [](const Include& i) {
    return starts_with(i.target, "slender/core/") || starts_with(i.target, "slender/stencils/");
  });
  EXPECT_TRUE(bad.empty()) << "stencils/ includes beyond core/ and stencils/:" << lines(bad);
}

TEST(Layering, EnginesIncludeNoFrontEnd) {
  const std::vector<std::string> front = {
      "slender/simulator.h", "slender/batch.h",   "slender/run.h", "slender/record.h",
      "slender/compare.h",   "slender/builder.h", "slender/info.h"};
  const auto bad = violations("include/slender/engine", [&](const Include& i) {
    for (const std::string& f : front)
      if (i.target == f) return false;
    return starts_with(i.target, "slender/");
  });
  EXPECT_TRUE(bad.empty()) << "engine/ includes a front end or host/:" << lines(bad);
}

TEST(Layering, PublicHeadersIncludeNothingOfHost) {
  const auto bad =
      violations("include", [](const Include& i) { return starts_with(i.target, "slender/"); });
  EXPECT_TRUE(bad.empty()) << "include/ includes beyond include/slender/:" << lines(bad);
}

TEST(Layering, KernelsIncludeOnlyThePublicTreeAndTheirOwnFiles) {
  const fs::path kernels = fs::path(SLENDER_SOURCE_DIR) / "kernels";
  const auto bad = violations("kernels", [&](const Include& i) {
    return starts_with(i.target, "slender/") || fs::exists(kernels / i.target);
  });
  EXPECT_TRUE(bad.empty()) << "kernels/ includes beyond include/slender/ and kernels/:"
                           << lines(bad);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
