// The USD series (usd_writer.h): its prims built from the topology, the records spooled, and
// the .usda text written from the spool. The text follows the USD ASCII grammar (.usda,
// "#usda 1.0") as usd-core reads it: stage metadata (units, up axis, time codes), a root Xform,
// then per part a BasisCurves or a Mesh whose static topology is written once and whose
// changing values are time samples. Floats are written in their shortest form that reads back
// to the same float (std::to_chars), so that the text holds exactly the spooled floats.

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "record/part_file.h"
#include "record/usd_writer.h"
#include "slender/core/error.h"

namespace slender {
namespace {

namespace fs = std::filesystem;

constexpr size_t kSpill = size_t(1) << 20;  // bytes of text gathered before a write
constexpr Real kSnapTol = 1e-9;             // relative distance to an integer time code snapped
constexpr const char* kIndent = "        ";

// the 3-vector of node n in an array of nnode x 3
Vec3 node3(const Real* a, int n) {
  const Real* v = a + 3 * size_t(n);
  return vec3(v[0], v[1], v[2]);
}

// the nearest integer where a value lies within kSnapTol (relative) of it: time codes that are
// record counts come out whole, not as 2.9999999999999996
double snapped(double v) {
  const double r = std::round(v);
  return std::fabs(v - r) <= kSnapTol * std::max(1.0, std::fabs(v)) ? r : v;
}

// text gathered in a buffer and written in large pieces
class Text {
 public:
  explicit Text(std::FILE* f) : f_(f) { buf_.reserve(kSpill + 4096); }
  Text(const Text&) = delete;
  Text& operator=(const Text&) = delete;
  ~Text() { flush(); }
  Text& operator<<(const char* s) {
    buf_ += s;
    return spill();
  }
  Text& operator<<(const std::string& s) {
    buf_ += s;
    return spill();
  }
  template <class T>
  Text& num(T v) {
    char tmp[40];
    const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, r.ptr);
    return spill();
  }
  // [a, b, ...] of scalars, or [(a, b, c), ...] of tuples of ncomp values
  template <class T>
  Text& array(const T* v, size_t n, int ncomp) {
    buf_ += '[';
    for (size_t i = 0; i < n; ++i) {
      if (i > 0) buf_ += ", ";
      if (ncomp > 1) buf_ += '(';
      for (int c = 0; c < ncomp; ++c) {
        if (c > 0) buf_ += ", ";
        num(v[i * size_t(ncomp) + size_t(c)]);
      }
      if (ncomp > 1) buf_ += ')';
    }
    buf_ += ']';
    return spill();
  }
  void flush() {
    if (!buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), f_);
    buf_.clear();
  }

 private:
  Text& spill() {
    if (buf_.size() >= kSpill) flush();
    return *this;
  }
  std::FILE* f_;
  std::string buf_;
};

}  // namespace

// a USD string literal: quotes, backslashes and control bytes escaped
std::string usd_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(c));
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

UsdSeries::UsdSeries(UsdTopology top, std::string path)
    : path_(std::move(path)), top_(std::move(top)) {
  auto check_cells = [&](const std::vector<int>& conn, const std::vector<int>& offsets,
                         const std::vector<int>& part, const char* what) {
    if (offsets.size() != part.size()) {
      throw Error(std::string("USD series: the ") + what + " have " +
                  std::to_string(offsets.size()) + " cells but " + std::to_string(part.size()) +
                  " parts");
    }
    int prev = 0;
    for (int o : offsets) {
      if (o <= prev || o > int(conn.size())) {
        throw Error(std::string("USD series: the ") + what + "' offsets do not increase");
      }
      prev = o;
    }
    if (prev != int(conn.size())) {
      throw Error(std::string("USD series: the ") + what + "' offsets end before their ids");
    }
    for (int id : conn) {
      if (id < 0 || id >= top_.nnode) {
        throw Error(std::string("USD series: the ") + what + " name node " + std::to_string(id) +
                    " of " + std::to_string(top_.nnode));
      }
    }
  };
  check_cells(top_.line_conn, top_.line_offsets, top_.line_part, "polylines");
  check_cells(top_.face_conn, top_.face_offsets, top_.face_part, "polygons");
  top_.node_radius.resize(size_t(top_.nnode), 0);
  build_prims();
  head_ = "SLENDER USD SAMPLES 1\n" + std::to_string(record_floats_) + " floats per record\n";
  for (const UsdPrim& p : prims_) {
    head_ += p.name + (p.mesh ? " mesh " : " curves ") + std::to_string(p.node.size()) + " " +
             std::to_string(p.counts.size()) + "\n";
  }
  head_ += "records\n";
}

UsdSeries::~UsdSeries() {
  if (spool_) std::fclose(spool_);
}

void UsdSeries::build_prims() {
  // the parts that have polylines or polygons, in part order (-1, edges of no part, last)
  std::map<int, std::pair<std::vector<int>, std::vector<int>>> cells;  // part: lines, faces
  for (size_t c = 0; c < top_.line_part.size(); ++c)
    cells[top_.line_part[c]].first.push_back(int(c));
  for (size_t c = 0; c < top_.face_part.size(); ++c)
    cells[top_.face_part[c]].second.push_back(int(c));
  std::vector<std::pair<int, std::pair<std::vector<int>, std::vector<int>>>> order(cells.begin(),
                                                                                   cells.end());
  std::stable_partition(order.begin(), order.end(), [](const auto& e) { return e.first >= 0; });

  std::vector<std::string> taken;
  auto unique_name = [&](std::string n) {
    const std::string base = n;
    for (int k = 2; std::find(taken.begin(), taken.end(), n) != taken.end(); ++k)
      n = base + "_" + std::to_string(k);
    taken.push_back(n);
    return n;
  };
  for (const auto& [part, lf] : order) {
    const std::string own = part < 0                             ? std::string()
                            : part < int(top_.part_names.size()) ? top_.part_names[size_t(part)]
                                                                 : std::string();
    const std::string fallback = part < 0 ? "edges" : "part_" + std::to_string(part);
    const std::string base = usd_identifier(own, fallback);
    const bool both = !lf.first.empty() && !lf.second.empty();
    if (!lf.first.empty()) {
      UsdPrim p;
      p.name = unique_name(both ? base + "_rods" : base);
      p.part_name = own.empty() ? fallback : own;
      for (int c : lf.first) {
        const int b = c == 0 ? 0 : top_.line_offsets[size_t(c) - 1], e = top_.line_offsets[c];
        p.counts.push_back(e - b);
        for (int k = b; k < e; ++k) {
          p.node.push_back(top_.line_conn[size_t(k)]);
          p.widths.push_back(float(2 * top_.node_radius[size_t(top_.line_conn[size_t(k)])]));
        }
      }
      prims_.push_back(std::move(p));
    }
    if (!lf.second.empty()) {
      UsdPrim p;
      p.mesh = true;
      p.name = unique_name(both ? base + "_surface" : base);
      p.part_name = own.empty() ? fallback : own;
      std::vector<int> local(size_t(top_.nnode), -1);
      for (int c : lf.second) {
        const int b = c == 0 ? 0 : top_.face_offsets[size_t(c) - 1], e = top_.face_offsets[c];
        p.counts.push_back(e - b);
        p.face.push_back(c);
        for (int k = b; k < e; ++k) {
          const int n = top_.face_conn[size_t(k)];
          if (local[size_t(n)] < 0) {
            local[size_t(n)] = int(p.node.size());
            p.node.push_back(n);
          }
          p.indices.push_back(local[size_t(n)]);
        }
      }
      prims_.push_back(std::move(p));
    }
  }
  record_floats_ = 0;
  for (UsdPrim& p : prims_) {
    p.offset = record_floats_;
    record_floats_ += floats_of(p);
  }
}

void UsdSeries::begin() {
  abort();
  spool_ = open_part(spool_path(), "w+b");
  nframes_ = 0;
  if (std::fwrite(head_.data(), 1, head_.size(), spool_) != head_.size() ||
      std::fflush(spool_) != 0) {
    const int err = errno;
    abort();
    throw Error("cannot write '" + spool_path() + "': " + std::strerror(err));
  }
}

void UsdSeries::add(const UsdNodeFrame& fr) {
  SLENDER_CHECK(spool_ != nullptr, "USD series: a record before begin()");
  SLENDER_CHECK(fr.x != nullptr, "USD series: a record without positions");
  if (nframes_ > 0 && !(fr.time > last_time_)) {
    throw Error("USD series '" + path_ + "': a record at t = " + std::to_string(fr.time) +
                " s after one at t = " + std::to_string(last_time_) +
                " s (records must follow in time)");
  }
  std::vector<float> rec(record_floats_, 0.0f);
  auto node_value = [](const Real* a, int n) { return a ? float(a[n]) : 0.0f; };
  for (const UsdPrim& p : prims_) {
    float* out = rec.data() + p.offset;
    const size_t np = p.node.size();
    // the area vectors of the faces (fans about their first point) summed at their points:
    // area-weighted vertex normals
    std::vector<Vec3> normal;
    if (p.mesh) {
      normal.assign(np, vec3(0, 0, 0));
      size_t k = 0;
      for (int count : p.counts) {
        const int* idx = p.indices.data() + k;
        auto pt = [&](int i) { return node3(fr.x, p.node[size_t(idx[i])]); };
        Vec3 area = vec3(0, 0, 0);
        for (int i = 1; i + 1 < count; ++i)
          area = area + cross(pt(i) - pt(0), pt(i + 1) - pt(0));
        for (int i = 0; i < count; ++i)
          normal[size_t(idx[i])] = normal[size_t(idx[i])] + area;
        k += size_t(count);
      }
    }
    for (size_t a = 0; a < nattrs_of(p); ++a) {
      const Sampled& at = attrs_of(p)[a];
      const std::string name = at.name;
      if (name == "points" || name == "velocities") {
        const Real* src = name == "points" ? fr.x : fr.v;
        for (size_t i = 0; i < np; ++i)
          for (int c = 0; c < 3; ++c)
            *out++ = src ? float(src[3 * size_t(p.node[i]) + size_t(c)]) : 0.0f;
      } else if (name == "extent") {
        // the points' bounds, widened by the curves' radii
        Real lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (size_t i = 0; i < np; ++i) {
          const Real* x = fr.x + 3 * size_t(p.node[i]);
          const Real r = p.mesh ? Real(0) : Real(p.widths[i]) / 2;
          for (int c = 0; c < 3; ++c) {
            lo[c] = std::min(lo[c], x[c] - r);
            hi[c] = std::max(hi[c], x[c] + r);
          }
        }
        for (int c = 0; c < 3; ++c)
          *out++ = float(lo[c]);
        for (int c = 0; c < 3; ++c)
          *out++ = float(hi[c]);
      } else if (name == "normals") {
        for (size_t i = 0; i < np; ++i) {
          const Real len = norm(normal[i]);
          for (int c = 0; c < 3; ++c)
            *out++ = len > 0 ? float(normal[i][c] / len) : 0.0f;
        }
      } else if (name == "primvars:speed") {
        for (size_t i = 0; i < np; ++i)
          *out++ = fr.v ? float(norm(node3(fr.v, p.node[i]))) : 0.0f;
      } else if (name == "primvars:bending_energy_density") {
        for (int f : p.face)
          *out++ = node_value(fr.face_density, f);
      } else {
        const Real* src = name == "primvars:curvature" ? fr.curvature
                          : name == "primvars:twist"   ? fr.twist
                                                       : fr.twist_angle;
        for (size_t i = 0; i < np; ++i)
          *out++ = node_value(src, p.node[i]);
      }
    }
  }
  const double t = fr.time;
  const bool ok = std::fwrite(&t, sizeof t, 1, spool_) == 1 &&
                  std::fwrite(rec.data(), sizeof(float), rec.size(), spool_) == rec.size() &&
                  std::fflush(spool_) == 0;
  if (!ok) throw Error("cannot write '" + spool_path() + "': " + std::strerror(errno));
  ++nframes_;
  last_time_ = fr.time;
}

void UsdSeries::finish() {
  SLENDER_CHECK(spool_ != nullptr, "USD series: finish() before begin()");
  if (nframes_ == 0) throw Error("no records to write into '" + path_ + "'");
  const std::string part = path_ + ".part";
  std::FILE* f = open_part(part);
  try {
    write_text(f);
  } catch (...) {
    discard_part(f, part);
    throw;
  }
  close_and_rename(f, part, path_);
  std::fclose(spool_);
  spool_ = nullptr;
  std::error_code ec;
  fs::remove(spool_path(), ec);
}

void UsdSeries::abort() noexcept {
  if (spool_) discard_part(spool_, spool_path());
  spool_ = nullptr;
  std::error_code ec;
  fs::remove(path_ + ".part", ec);
}

void UsdSeries::write_text(std::FILE* f) {
  const size_t rb = record_bytes();
  auto seek = [&](std::uint64_t frame, size_t floats) {
    const std::uint64_t at = head_.size() + frame * rb + sizeof(double) + 4 * floats;
    if (std::fseek(spool_, long(at), SEEK_SET) != 0) {
      throw Error("cannot read '" + spool_path() + "': " + std::strerror(errno));
    }
  };
  // the records' times, and their time codes: one per output interval
  std::vector<double> times(nframes_);
  for (std::uint64_t k = 0; k < nframes_; ++k) {
    seek(k, 0);
    if (std::fseek(spool_, -long(sizeof(double)), SEEK_CUR) != 0 ||
        std::fread(&times[k], sizeof(double), 1, spool_) != 1) {
      throw Error("cannot read '" + spool_path() + "': the file was cut short");
    }
  }
  double interval = top_.frame_interval;
  if (!(interval > 0) && nframes_ > 1) {
    std::vector<double> gaps;
    for (size_t k = 1; k < times.size(); ++k)
      gaps.push_back(times[k] - times[k - 1]);
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    interval = gaps[gaps.size() / 2];
  }
  if (!(interval > 0) || !std::isfinite(1 / interval)) interval = 1;
  const double tcps = snapped(1 / interval);
  std::vector<double> codes(nframes_);
  for (size_t k = 0; k < codes.size(); ++k) {
    codes[k] = snapped(times[k] * tcps);
    if (k > 0 && !(codes[k] > codes[k - 1])) {
      throw Error("USD series '" + path_ + "': records " + std::to_string(k - 1) + " and " +
                  std::to_string(k) + " fall on one time code");
    }
  }

  Text out(f);
  const std::string root = usd_identifier(top_.root_name, "scene");
  out << "#usda 1.0\n(\n    customLayerData = {\n        double[] " << kUsdTimesKey << " = ";
  out.array(times.data(), times.size(), 1)
      << "\n    }\n    defaultPrim = " << usd_string(root) << "\n    doc = "
      << usd_string("Slender run '" + top_.root_name + "': " + std::to_string(nframes_) +
                    " records, one per time code unit")
      << "\n    endTimeCode = ";
  out.num(codes.back())
      << "\n    framesPerSecond = 24\n    metersPerUnit = 1\n    startTimeCode = ";
  out.num(codes.front()) << "\n    timeCodesPerSecond = ";
  out.num(tcps) << "\n    upAxis = " << usd_string(std::string(1, top_.up_axis)) << "\n)\n\n";
  out << "def Xform " << usd_string(root)
      << " (\n    doc = " << usd_string("Slender scene '" + top_.root_name + "'") << "\n)\n{\n";
  out.flush();
  for (size_t i = 0; i < prims_.size(); ++i) {
    if (i > 0) std::fputs("\n", f);
    write_prim(f, prims_[i], codes);
  }
  std::fputs("}\n", f);
}

void UsdSeries::write_prim(std::FILE* f, const UsdPrim& p, const std::vector<double>& codes) {
  Text out(f);
  const char* in = kIndent;
  out << "    def " << (p.mesh ? "Mesh " : "BasisCurves ") << usd_string(p.name) << " (\n"
      << in << "doc = " << usd_string("part '" + p.part_name + "'") << "\n    )\n    {\n";
  // topology, once
  if (p.mesh) {
    out << in << "uniform token subdivisionScheme = \"none\"\n";
    out << in << "uniform token orientation = \"rightHanded\"\n";
    out << in << "uniform bool doubleSided = 1\n";
    out << in << "int[] faceVertexCounts = ";
    out.array(p.counts.data(), p.counts.size(), 1) << "\n";
    out << in << "int[] faceVertexIndices = ";
    out.array(p.indices.data(), p.indices.size(), 1) << "\n";
  } else {
    out << in << "uniform token type = \"linear\"\n";
    out << in << "uniform token wrap = \"nonperiodic\"\n";
    out << in << "int[] curveVertexCounts = ";
    out.array(p.counts.data(), p.counts.size(), 1) << "\n";
    out << in << "float[] widths = ";
    out.array(p.widths.data(), p.widths.size(), 1) << " (\n"
                                                   << in << "    interpolation = \"vertex\"\n"
                                                   << in << ")\n";
  }
  out << in << "int[] primvars:node = ";
  out.array(p.node.data(), p.node.size(), 1) << " (\n"
                                             << in << "    interpolation = \"vertex\"\n"
                                             << in << ")\n";
  // the records, attribute by attribute
  const size_t rb = record_bytes();
  std::vector<float> buf;
  size_t off = p.offset;
  for (size_t a = 0; a < nattrs_of(p); ++a) {
    const Sampled& at = attrs_of(p)[a];
    const size_t n = tuples(p, at), nf = n * size_t(at.ncomp);
    if (at.interpolation) {
      out << in << at.type << " " << at.name << " (\n"
          << in << "    interpolation = " << usd_string(at.interpolation) << "\n"
          << in << ")\n";
    }
    out << in << at.type << " " << at.name << ".timeSamples = {\n";
    buf.resize(nf);
    for (size_t k = 0; k < codes.size(); ++k) {
      const std::uint64_t pos = head_.size() + k * rb + sizeof(double) + 4 * off;
      if (std::fseek(spool_, long(pos), SEEK_SET) != 0 ||
          std::fread(buf.data(), sizeof(float), nf, spool_) != nf) {
        throw Error("cannot read '" + spool_path() + "': the file was cut short");
      }
      out << in << "    ";
      out.num(codes[k]) << ": ";
      out.array(buf.data(), n, at.ncomp) << ",\n";
    }
    out << in << "}\n";
    off += nf;
  }
  out << "    }\n";
}

}  // namespace slender
