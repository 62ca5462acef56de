// The layers of the source tree, as the layout table of docs/backends.md states them, checked on
// every quoted #include of the tree:
// - include/slender/core/ is the bottom layer: it includes only core/;
// - include/slender/stencils/ includes only core/ and stencils/;
// - include/slender/engine/ (the executor-generic engines that run on the host and on the GPU)
//   includes only include/slender/, and none of the front ends (simulator.h, batch.h, run.h,
//   record.h, compare.h, builder.h, info.h);
// - every header under include/ includes only include/slender/ (nothing of host/);
// - kernels/ (the CUDA module) includes only include/slender/ and its own files;
// - the base library's folders (host/model/, host/solvers/, host/runtime/, host/control/)
//   include only include/slender/ and one another.
// And at link level, on the built libraries' dynamic sections and symbol tables (the arrows the
// include lines cannot show: a declaration in include/ defined in host/):
// - libslender_base.so needs no other Slender library;
// - libslender_host.so needs libslender_base.so, and libslender_cuda.so (where built) needs it
//   and not libslender_host.so, which loads it;
// - every Slender symbol a library leaves undefined is defined in a library beneath it.

#include <cxxabi.h>
#include <elf.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <regex>
#include <set>
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

TEST(Layering, TheBaseLibraryIncludesOnlyThePublicTreeAndItsOwnFolders) {
  const std::vector<std::string> base = {"model", "solvers", "runtime", "control"};
  for (const std::string& folder : base) {
    const fs::path here = fs::path(SLENDER_SOURCE_DIR) / "host" / folder;
    const auto bad = violations("host/" + folder, [&](const Include& i) {
      if (starts_with(i.target, "slender/") || fs::exists(here / i.target)) return true;
      for (const std::string& f : base)
        if (starts_with(i.target, f + "/")) return true;
      return false;
    });
    EXPECT_TRUE(bad.empty()) << "host/" << folder
                             << "/ (libslender_base.so) includes beyond include/slender/ and "
                                "the base's folders:"
                             << lines(bad);
  }
}

// ---- link level ------------------------------------------------------------------------------

// What a shared library's dynamic section and dynamic symbol table say.
struct Dynamic {
  std::vector<std::string> needed;  // DT_NEEDED
  std::set<std::string> defined;    // global or weak symbols it defines
  std::set<std::string> undefined;  // symbols it leaves to others
};

// Reads a 64-bit little-endian ELF shared object (the build's); fails the test on anything else.
Dynamic read_dynamic(const std::string& path) {
  Dynamic d;
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof(Elf64_Ehdr)) {
    ADD_FAILURE() << path << ": not readable or too short for an ELF header";
    return d;
  }
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shoff + std::uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr) > bytes.size()) {
    ADD_FAILURE() << path << ": not a 64-bit ELF file with section headers";
    return d;
  }
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), bytes.data() + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
  auto in_file = [&](const Elf64_Shdr& s) { return s.sh_offset + s.sh_size <= bytes.size(); };
  auto str = [&](const Elf64_Shdr& strtab, std::uint64_t off) {
    return off < strtab.sh_size ? std::string(bytes.data() + strtab.sh_offset + off)
                                : std::string();
  };
  for (const Elf64_Shdr& s : sh) {
    if ((s.sh_type != SHT_DYNAMIC && s.sh_type != SHT_DYNSYM) || !in_file(s) ||
        s.sh_link >= sh.size() || !in_file(sh[s.sh_link]))
      continue;
    const Elf64_Shdr& strtab = sh[s.sh_link];
    if (s.sh_type == SHT_DYNAMIC) {
      for (std::uint64_t o = 0; o + sizeof(Elf64_Dyn) <= s.sh_size; o += sizeof(Elf64_Dyn)) {
        Elf64_Dyn e;
        std::memcpy(&e, bytes.data() + s.sh_offset + o, sizeof e);
        if (e.d_tag == DT_NEEDED) d.needed.push_back(str(strtab, e.d_un.d_val));
      }
    } else {
      for (std::uint64_t o = 0; o + sizeof(Elf64_Sym) <= s.sh_size; o += sizeof(Elf64_Sym)) {
        Elf64_Sym y;
        std::memcpy(&y, bytes.data() + s.sh_offset + o, sizeof y);
        const std::string name = str(strtab, y.st_name);
        const int bind = ELF64_ST_BIND(y.st_info);
        if (name.empty() || (bind != STB_GLOBAL && bind != STB_WEAK)) continue;
        (y.st_shndx == SHN_UNDEF ? d.undefined : d.defined).insert(name);
      }
    }
  }
  return d;
}

std::string library(const std::string& name) {
  return (fs::path(SLENDER_LIBRARY_DIR) / name).string();
}

bool needs(const Dynamic& d, const std::string& lib) {
  for (const std::string& n : d.needed)
    if (n == lib) return true;
  return false;
}

// Slender's own symbols (functions, members, vtables, type infos of namespace slender)
bool slenders(const std::string& sym) {
  for (const char* p : {"_ZN7slender", "_ZNK7slender", "_ZTVN7slender", "_ZTIN7slender",
                        "_ZTSN7slender", "_ZTTN7slender"})
    if (starts_with(sym, p)) return true;
  return false;
}

std::string demangled(const std::string& sym) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(
      abi::__cxa_demangle(sym.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : sym;
}

// the Slender symbols `user` leaves undefined that none of `beneath` defines
std::vector<std::string> unresolved(const Dynamic& user,
                                    const std::vector<const Dynamic*>& beneath) {
  std::vector<std::string> out;
  for (const std::string& u : user.undefined) {
    if (!slenders(u)) continue;
    bool found = false;
    for (const Dynamic* b : beneath)
      found = found || b->defined.count(u) > 0;
    if (!found) out.push_back(demangled(u));
  }
  return out;
}

TEST(Layering, TheLibrariesLinkOnlyDownward) {
  const Dynamic base = read_dynamic(library("libslender_base.so"));
  const Dynamic host = read_dynamic(library("libslender_host.so"));
  // the reader sees the libraries: each defines hundreds of Slender symbols
  auto count = [](const Dynamic& d) {
    size_t n = 0;
    for (const std::string& s : d.defined)
      n += slenders(s) ? 1 : 0;
    return n;
  };
  EXPECT_GT(count(base), 100u);
  EXPECT_GT(count(host), 100u);

  for (const std::string& n : base.needed)
    EXPECT_FALSE(starts_with(n, "libslender_")) << "libslender_base.so needs " << n;
  EXPECT_TRUE(needs(host, "libslender_base.so"));
  EXPECT_FALSE(needs(host, "libslender_cuda.so")) << "the CUDA module is loaded on first use";
  const std::vector<std::string> base_open = unresolved(base, {});
  EXPECT_TRUE(base_open.empty()) << "libslender_base.so uses Slender symbols it does not define:"
                                 << lines(base_open);
  const std::vector<std::string> host_open = unresolved(host, {&base});
  EXPECT_TRUE(host_open.empty())
      << "libslender_host.so uses Slender symbols that libslender_base.so does not define:"
      << lines(host_open);

  if (!fs::exists(library("libslender_cuda.so"))) return;  // a build without CUDA
  const Dynamic cuda = read_dynamic(library("libslender_cuda.so"));
  EXPECT_TRUE(needs(cuda, "libslender_base.so"));
  EXPECT_FALSE(needs(cuda, "libslender_host.so")) << "the CUDA module reaches back up";
  const std::vector<std::string> cuda_open = unresolved(cuda, {&base});
  EXPECT_TRUE(cuda_open.empty())
      << "libslender_cuda.so uses Slender symbols that libslender_base.so does not define:"
      << lines(cuda_open);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
