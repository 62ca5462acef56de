// The memory this process may still allocate (host/runtime/memory_budget.h): the kernel's
// MemAvailable, the cgroups' limits less their working sets, the address-space and data rlimits,
// or SLENDER_MEMORY_LIMIT.

#include "runtime/memory_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "slender/core/error.h"

namespace slender {

namespace {

constexpr std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();

// the first number in a file ("max" and the like: none)
bool read_number(const std::string& path, std::uint64_t& v) {
  std::ifstream f(path);
  std::string s;
  if (!(f >> s) || s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  v = std::strtoull(s.c_str(), nullptr, 10);
  return true;
}

// the value of `key` in a "key value" file (memory.stat), 0 when absent
std::uint64_t stat_value(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  std::string k;
  std::uint64_t v = 0;
  while (f >> k >> v)
    if (k == key) return v;
  return 0;
}

// MemAvailable of /proc/meminfo [bytes]; the free pages where the kernel has none
std::uint64_t mem_available() {
  std::ifstream f("/proc/meminfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("MemAvailable:", 0) == 0)
      return std::strtoull(line.c_str() + 13, nullptr, 10) * 1024;
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? std::uint64_t(pages) * std::uint64_t(page) : kUnlimited;
}

struct CgroupMount {
  std::string root;   // the cgroup path the mount shows at its mount point
  std::string point;  // where it is mounted
};

// the mounts of the cgroup v2 hierarchy (v2 = true) or of v1's memory controller
std::vector<CgroupMount> cgroup_mounts(bool v2) {
  std::vector<CgroupMount> out;
  std::ifstream f("/proc/self/mountinfo");
  std::string line;
  while (std::getline(f, line)) {
    // id parent major:minor root point options [optional fields] - fstype source superoptions
    std::istringstream ls(line);
    std::string id, parent, dev, root, point, tok;
    ls >> id >> parent >> dev >> root >> point;
    while (ls >> tok && tok != "-") {
    }
    std::string fstype, source, super;
    ls >> fstype >> source >> super;
    const bool match =
        v2 ? fstype == "cgroup2"
           : fstype == "cgroup" && ("," + super + ",").find(",memory,") != std::string::npos;
    if (match) out.push_back({root, point});
  }
  return out;
}

// for each cgroup level from the process's own up to the mount's root: limit less working set
// (the usage less the inactive file cache, which the kernel reclaims before it fails an
// allocation); kUnlimited where no level has a limit
std::uint64_t cgroup_available(bool v2, const std::string& path, std::string& which) {
  std::uint64_t best = kUnlimited;
  for (const CgroupMount& mt : cgroup_mounts(v2)) {
    // the process's cgroup relative to what the mount shows; a path outside it (another
    // namespace's view) leaves the mount's own top
    std::string rel;
    if (path.rfind(mt.root, 0) == 0) rel = path.substr(mt.root == "/" ? 0 : mt.root.size());
    std::string dir = mt.point + rel;
    if (std::ifstream(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes")).fail()) dir = mt.point;
    for (;;) {
      std::uint64_t limit = 0, usage = 0;
      const bool have = v2 ? read_number(dir + "/memory.max", limit) &&
                                 read_number(dir + "/memory.current", usage)
                           : read_number(dir + "/memory.limit_in_bytes", limit) &&
                                 read_number(dir + "/memory.usage_in_bytes", usage);
      const std::string stat = dir + "/memory.stat";
      const std::uint64_t inactive = stat_value(stat, v2 ? "inactive_file" : "total_inactive_file");
      const std::uint64_t used = usage > inactive ? usage - inactive : 0;
      // a limit less the working set; v1 writes "no limit" as a number near 2^63
      auto consider = [&](std::uint64_t lim, const char* what) {
        if (lim >= (std::uint64_t(1) << 60)) return;
        const std::uint64_t a = lim > used ? lim - used : 0;
        if (a < best) best = a, which = what;
      };
      if (have) {
        consider(limit, v2 ? "the cgroup's memory.max less its memory.current"
                           : "the cgroup's memory.limit_in_bytes less its memory.usage_in_bytes");
        // v1's smallest limit of the hierarchy above
        if (!v2)
          if (const std::uint64_t h = stat_value(stat, "hierarchical_memory_limit"))
            consider(h, "the cgroup's hierarchical_memory_limit less its memory.usage_in_bytes");
      }
      if (dir.size() <= mt.point.size()) break;
      dir = dir.substr(0, dir.rfind('/'));
    }
  }
  return best;
}

// the cgroups the process is in: v2's path and v1's memory controller's
std::uint64_t cgroups_available(std::string& which) {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  std::uint64_t best = kUnlimited;
  while (std::getline(f, line)) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    const bool v2 = controllers.empty();
    if (!v2 && ("," + controllers + ",").find(",memory,") == std::string::npos) continue;
    std::string w;
    const std::uint64_t v = cgroup_available(v2, path, w);
    if (v < best) best = v, which = w;
  }
  return best;
}

// an rlimit less what counts against it now (statm's field `field`, in pages)
std::uint64_t rlimit_available(int resource, int field) {
  rlimit r{};
  if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return kUnlimited;
  std::ifstream f("/proc/self/statm");
  std::uint64_t v[7] = {};
  for (std::uint64_t& x : v)
    f >> x;
  const std::uint64_t used = v[field] * std::uint64_t(sysconf(_SC_PAGESIZE));
  return std::uint64_t(r.rlim_cur) > used ? std::uint64_t(r.rlim_cur) - used : 0;
}

// SLENDER_MEMORY_LIMIT: bytes, or a number with k, M, G or T (powers of 1024; "GiB", "GB" and
// the like read the same)
bool env_limit(std::uint64_t& bytes) {
  const char* s = std::getenv("SLENDER_MEMORY_LIMIT");
  if (!s || !*s) return false;
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  std::string suffix(end);
  double scale = 1;
  if (!suffix.empty()) {
    const char c = char(std::toupper(static_cast<unsigned char>(suffix[0])));
    const std::string units = "KMGT";
    const size_t k = units.find(c);
    if (k != std::string::npos) {
      scale = std::pow(1024.0, double(k + 1));
      suffix.erase(0, 1);
      if (suffix == "iB" || suffix == "B") suffix.clear();
    } else if (suffix == "B") {
      suffix.clear();
    }
  }
  if (end == s || !suffix.empty() || !std::isfinite(v) || v < 0 || v * scale > 1e19)
    throw InputError("<environment>", 0, "SLENDER_MEMORY_LIMIT",
                     std::string("'") + s +
                         "' is not a memory size (bytes, or a number with k, M, G or T: powers "
                         "of 1024, such as 8G)");
  bytes = std::uint64_t(v * scale);
  return true;
}

}  // namespace

AvailableMemory available_memory() {
  AvailableMemory a;
  if (env_limit(a.bytes)) {
    a.limit = "SLENDER_MEMORY_LIMIT";
    return a;
  }
  a.bytes = mem_available();
  a.limit = "MemAvailable";
  std::string which;
  const std::uint64_t cg = cgroups_available(which);
  if (cg < a.bytes) a.bytes = cg, a.limit = which;
  const std::uint64_t as = rlimit_available(RLIMIT_AS, 0);
  if (as < a.bytes) a.bytes = as, a.limit = "RLIMIT_AS less the address space in use";
  const std::uint64_t data = rlimit_available(RLIMIT_DATA, 5);
  if (data < a.bytes) a.bytes = data, a.limit = "RLIMIT_DATA less the data segment";
  return a;
}

std::uint64_t available_memory_bytes() { return available_memory().bytes; }

std::string format_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024 && u < 5)
    bytes /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 || bytes >= 100 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

std::string memory_refusal(const std::string& field,
                           const std::string& what,
                           double need,
                           const std::string& detail,
                           const AvailableMemory& available,
                           const std::string& advice) {
  std::string s = field + ": " + what + " needs about " + format_bytes(need);
  if (!detail.empty()) s += " (" + detail + ")";
  s += ", but " + format_bytes(double(available.bytes)) + " of memory is available (" +
       available.limit + ")";
  if (!advice.empty()) s += "; " + advice;
  return s;
}

void require_memory(const std::string& field,
                    const std::string& what,
                    double need,
                    const std::string& detail,
                    const std::function<std::string(double available)>& advice) {
  const AvailableMemory a = available_memory();
  if (need <= double(a.bytes)) return;
  const std::string how = advice ? advice(double(a.bytes)) : std::string();
  throw MemoryLimitError(field, memory_refusal(field, what, need, detail, a, how), need,
                         double(a.bytes));
}

}  // namespace slender
