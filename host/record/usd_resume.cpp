// Resuming a USD series (usd_writer.h) from a checkpoint's mark: from the spool of a run that
// was killed, or from the text of a file that a run completed (an interrupt completes the
// outputs), read back into a spool. The text holds every float in its shortest exact form and
// the records' exact times in its customLayerData, so the spool read back is the one the run
// had written, and the resumed series ends byte for byte as the uninterrupted one.

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "record/part_file.h"
#include "record/usd_writer.h"
#include "slender/core/error.h"

namespace slender {

namespace fs = std::filesystem;

void UsdSeries::resume(std::uint64_t frames) {
  abort();
  const std::string sp = spool_path();
  const std::uint64_t want = head_.size() + frames * record_bytes();
  std::error_code ec;
  // the spool of a run that was killed, else the records of the file a run finished
  const bool spooled = fs::is_regular_file(sp, ec) && fs::file_size(sp, ec) >= want;
  if (!spooled && fs::is_regular_file(path_, ec)) {
    respool(frames);
  } else if (!spooled && !fs::is_regular_file(sp, ec)) {
    throw Error("cannot continue '" + path_ +
                "' from the checkpoint: neither it nor its records '" + sp +
                "' are there, so the folder does not hold the outputs of the checkpoint's run");
  }
  const std::uintmax_t size = fs::file_size(sp, ec);
  if (ec || size < want) {
    throw Error("cannot continue '" + path_ + "' from the checkpoint: its records '" + sp +
                "' hold " + std::to_string(ec ? 0 : size) + " bytes, fewer than the " +
                std::to_string(want) + " the checkpoint's run had written");
  }
  std::FILE* f = std::fopen(sp.c_str(), "r+b");
  if (!f) throw Error("cannot open '" + sp + "': " + std::strerror(errno));
  std::string got(head_.size(), '\0');
  if (std::fread(got.data(), 1, got.size(), f) != got.size() || got != head_) {
    std::fclose(f);
    throw Error("cannot continue '" + sp +
                "' from the checkpoint: it holds the records of another scene or parts");
  }
  std::fclose(f);
  fs::resize_file(sp, want, ec);
  if (ec) throw Error("cannot cut '" + sp + "' back to the checkpoint: " + ec.message());
  spool_ = std::fopen(sp.c_str(), "r+b");
  if (!spool_ || std::fseek(spool_, 0, SEEK_END) != 0) {
    const int err = errno;
    if (spool_) std::fclose(spool_);
    spool_ = nullptr;
    throw Error("cannot open '" + sp + "': " + std::strerror(err));
  }
  nframes_ = frames;
  last_time_ = -INFINITY;
  if (frames > 0) {
    // the last record's time, which the next must follow
    double t = 0;
    const long at = long(want - record_bytes());
    if (std::fseek(spool_, at, SEEK_SET) != 0 || std::fread(&t, sizeof t, 1, spool_) != 1 ||
        std::fseek(spool_, 0, SEEK_END) != 0) {
      throw Error("cannot read '" + sp + "': " + std::strerror(errno));
    }
    last_time_ = t;
  }
}

void UsdSeries::respool(std::uint64_t frames) {
  const std::string sp = spool_path();
  auto refuse = [&](const std::string& why) {
    return Error("cannot continue '" + path_ + "' from the checkpoint: " + why +
                 ", so it does not hold the records of the checkpoint's run");
  };
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw Error("cannot read '" + path_ + "': " + std::strerror(errno));
  const size_t rb = record_bytes();
  std::FILE* f = open_part(sp, "w+b");
  try {
    bool bad = std::fwrite(head_.data(), 1, head_.size(), f) != head_.size();
    auto put = [&](std::uint64_t k, size_t at, const void* data, size_t bytes) {
      bad = bad || std::fseek(f, long(head_.size() + k * rb + at), SEEK_SET) != 0 ||
            std::fwrite(data, 1, bytes, f) != bytes;
    };
    // the numbers of a line's value after `from`: [a, (b, c), ...]
    std::vector<double> values;
    auto parse = [&](const std::string& line, size_t from) {
      values.clear();
      const char* p = line.c_str() + from;
      while (*p) {
        if (std::strchr("[](), \t\r", *p)) {
          ++p;
          continue;
        }
        char* q = nullptr;
        const double v = std::strtod(p, &q);
        if (q == p) break;
        values.push_back(v);
        p = q;
      }
    };
    std::vector<char> found(record_floats_, 0);
    bool have_times = false;
    int prim = -1;                // the prim whose block the lines are in
    const Sampled* at = nullptr;  // the attribute whose samples they are, and where
    size_t at_off = 0;
    std::uint64_t k = 0;
    std::string line;
    const std::string times_decl = std::string("double[] ") + kUsdTimesKey + " = ";
    while (std::getline(in, line)) {
      if (at) {
        if (line.find('}') != std::string::npos) {
          if (k < frames) throw refuse(std::string(at->name) + " has fewer records");
          at = nullptr;
          continue;
        }
        if (k < frames) {
          const size_t colon = line.find(':');
          if (colon == std::string::npos) throw refuse("a sample of " + std::string(at->name));
          parse(line, colon + 1);
          const UsdPrim& p = prims_[size_t(prim)];
          const size_t n = tuples(p, *at) * size_t(at->ncomp);
          if (values.size() != n) throw refuse(p.name + "'s " + at->name + " has other sizes");
          std::vector<float> v(values.begin(), values.end());
          put(k, sizeof(double) + 4 * (p.offset + at_off), v.data(), 4 * n);
        }
        ++k;
        continue;
      }
      const size_t times_at = line.find(times_decl);
      if (times_at != std::string::npos && prim < 0) {
        parse(line, times_at + times_decl.size());
        if (values.size() < frames) throw refuse("it holds fewer records");
        for (std::uint64_t r = 0; r < frames; ++r)
          put(r, 0, &values[r], sizeof(double));
        have_times = true;
        continue;
      }
      if (line.rfind("    def ", 0) == 0) {
        ++prim;
        const std::string want_def =
            std::string("    def ") +
            (size_t(prim) < prims_.size() && prims_[prim].mesh ? "Mesh " : "BasisCurves ") +
            (size_t(prim) < prims_.size() ? usd_string(prims_[prim].name) : std::string());
        if (size_t(prim) >= prims_.size() || line.rfind(want_def, 0) != 0) {
          throw refuse("its prims are not this run's parts");
        }
        continue;
      }
      const size_t ts = line.find(".timeSamples = {");
      if (ts != std::string::npos && prim >= 0) {
        const UsdPrim& p = prims_[size_t(prim)];
        const size_t name_at = line.rfind(' ', ts);
        const std::string name = line.substr(name_at + 1, ts - name_at - 1);
        at_off = 0;
        for (size_t a = 0; a < nattrs_of(p) && !at; ++a) {
          if (name == attrs_of(p)[a].name) {
            at = &attrs_of(p)[a];
          } else {
            at_off += tuples(p, attrs_of(p)[a]) * size_t(attrs_of(p)[a].ncomp);
          }
        }
        if (!at) throw refuse(p.name + " has an attribute " + name + " of no record");
        std::fill(found.begin() + long(p.offset + at_off),
                  found.begin() + long(p.offset + at_off + tuples(p, *at) * size_t(at->ncomp)), 1);
        k = 0;
      }
    }
    if (!have_times) throw refuse("it does not say its records' times");
    if (size_t(prim + 1) != prims_.size() ||
        std::find(found.begin(), found.end(), 0) != found.end()) {
      throw refuse("it lacks some of this run's prims or attributes");
    }
    if (bad || std::fflush(f) != 0)
      throw Error("cannot write '" + sp + "': " + std::strerror(errno));
  } catch (...) {
    discard_part(f, sp);
    throw;
  }
  std::fclose(f);
}

}  // namespace slender
