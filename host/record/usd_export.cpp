// `slender export-usd RUN_DIR`: a finished run's VTK series (NAME.pvd and its frames, as
// vtk.cpp writes them) converted into one .usda (usd_writer.h). The reader takes the ASCII
// PolyData that vtk.cpp writes, checks every frame against the first (same points and cells),
// and names the file, line and array of anything it cannot read.

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "io/input_file.h"
#include "record/usd_writer.h"
#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/record.h"

namespace slender {
namespace {

namespace fs = std::filesystem;

constexpr long long kMaxSeriesBytes = 64LL << 20;  // a .pvd: a line per frame

std::string read_whole(const std::string& path, long long max_bytes, const char* what) {
  check_input_file(path, max_bytes, what);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path, 0, "", std::string("cannot open ") + what + ": " + std::strerror(errno));
  std::ostringstream os;
  os << in.rdbuf();
  if (in.bad()) throw InputError(path, 0, "", std::string("cannot read ") + what);
  return os.str();
}

// the line of a position in a text, counted on from the last position asked (positions asked in
// increasing order cost one pass over the text)
class LineCounter {
 public:
  explicit LineCounter(const std::string& text) : text_(text) {}
  int operator()(size_t pos) {
    pos = std::min(pos, text_.size());
    if (pos < at_) {
      at_ = 0;
      line_ = 1;
    }
    line_ += int(std::count(text_.begin() + long(at_), text_.begin() + long(pos), '\n'));
    at_ = pos;
    return line_;
  }

 private:
  const std::string& text_;
  size_t at_ = 0;
  int line_ = 1;
};

// the value of attribute `key` in a tag's text ("" and false when absent)
bool attribute(const std::string& tag, const std::string& key, std::string& value) {
  size_t at = 0;
  while ((at = tag.find(key + "=\"", at)) != std::string::npos) {
    if (at == 0 || tag[at - 1] == ' ' || tag[at - 1] == '\n' || tag[at - 1] == '\t') {
      const size_t b = at + key.size() + 2, e = tag.find('"', b);
      if (e == std::string::npos) return false;
      value = tag.substr(b, e - b);
      return true;
    }
    at += key.size();
  }
  return false;
}

// One frame: its arrays by "Section/Name" and its piece's counts.
struct VtpFrame {
  std::string path;
  std::map<std::string, std::vector<double>> arrays;
  long npoint = -1, nline = -1, npoly = -1;

  const std::vector<double>* find(const std::string& key) const {
    auto it = arrays.find(key);
    return it == arrays.end() ? nullptr : &it->second;
  }
  // an array of `tuples` x `ncomp` numbers; `required` or null where absent
  const std::vector<double>* get(const std::string& key,
                                 long tuples,
                                 int ncomp,
                                 bool required) const {
    const std::vector<double>* a = find(key);
    if (!a) {
      if (required) throw InputError(path, 0, key, "the array is missing");
      return nullptr;
    }
    if (long(a->size()) != tuples * ncomp) {
      throw InputError(path, 0, key,
                       "has " + std::to_string(a->size()) + " numbers, expected " +
                           std::to_string(tuples * ncomp) + " (" + std::to_string(tuples) + " x " +
                           std::to_string(ncomp) + ")");
    }
    return a;
  }
};

VtpFrame read_vtp(const std::string& path) {
  const std::string text = read_whole(path, kMaxGeometryFileBytes, "VTK frame");
  LineCounter line_at(text);
  VtpFrame fr;
  fr.path = path;
  static const char* kSections[] = {"FieldData", "PointData", "CellData",
                                    "Points",    "Lines",     "Polys"};
  std::string section;
  bool saw_root = false;
  size_t pos = 0;
  while ((pos = text.find('<', pos)) != std::string::npos) {
    const size_t close = text.find('>', pos);
    if (close == std::string::npos) {
      throw InputError(path, line_at(pos), "", "an unterminated tag: the file is cut short");
    }
    const std::string tag = text.substr(pos + 1, close - pos - 1);
    const int line = line_at(pos);
    pos = close + 1;
    if (tag.empty() || tag[0] == '?' || tag[0] == '!') continue;
    const bool end_tag = tag[0] == '/';
    const size_t name_end = tag.find_first_of(" \t\n/", end_tag ? 1 : 0);
    const std::string name =
        tag.substr(end_tag ? 1 : 0, name_end == std::string::npos ? std::string::npos
                                                                  : name_end - (end_tag ? 1 : 0));
    if (name == "VTKFile" && !end_tag) {
      std::string type;
      if (!attribute(tag, "type", type) || type != "PolyData") {
        throw InputError(path, line, "VTKFile", "not a VTK PolyData file (type \"" + type + "\")");
      }
      saw_root = true;
    }
    const bool is_section =
        std::find_if(std::begin(kSections), std::end(kSections),
                     [&](const char* s) { return name == s; }) != std::end(kSections);
    if (is_section) {
      if (end_tag) {
        section.clear();
      } else if (tag.back() != '/') {
        section = name;
      }
      continue;
    }
    if (name == "Piece" && !end_tag) {
      auto count = [&](const char* key) {
        std::string v;
        if (!attribute(tag, key, v))
          throw InputError(path, line, std::string("Piece.") + key, "missing");
        char* endp = nullptr;
        const long n = std::strtol(v.c_str(), &endp, 10);
        if (v.empty() || *endp != '\0' || n < 0 || n > (1L << 31)) {
          throw InputError(path, line, std::string("Piece.") + key, "not a count: \"" + v + "\"");
        }
        return n;
      };
      if (fr.npoint >= 0) throw InputError(path, line, "Piece", "a second piece (one is read)");
      fr.npoint = count("NumberOfPoints");
      fr.nline = count("NumberOfLines");
      fr.npoly = count("NumberOfPolys");
      continue;
    }
    if (name != "DataArray" || end_tag) continue;
    std::string array_name;
    if (!attribute(tag, "Name", array_name))
      throw InputError(path, line, section, "a DataArray without a Name");
    const std::string key = (section.empty() ? std::string("?") : section) + "/" + array_name;
    std::string format;
    if (attribute(tag, "format", format) && format != "ascii") {
      throw InputError(path, line, key, "format \"" + format + "\": only ASCII arrays are read");
    }
    std::vector<double>& values = fr.arrays[key];
    if (tag.back() == '/') continue;
    const size_t end = text.find("</DataArray>", pos);
    if (end == std::string::npos)
      throw InputError(path, line, key, "the array is not closed: the file is cut short");
    // the numbers
    const char* p = text.c_str() + pos;
    const char* stop = text.c_str() + end;
    while (true) {
      while (p < stop && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
        ++p;
      if (p >= stop) break;
      char* q = nullptr;
      const double v = std::strtod(p, &q);
      if (q == p || q > stop ||
          !(*q == ' ' || *q == '\n' || *q == '\t' || *q == '\r' || *q == '<')) {
        const std::string word(p, std::min<size_t>(size_t(stop - p), 20));
        throw InputError(path, line_at(size_t(p - text.c_str())), key,
                         "not a number: \"" + word.substr(0, word.find_first_of(" \n")) + "\"");
      }
      values.push_back(v);
      p = q;
    }
    pos = end + 12;
  }
  if (!saw_root)
    throw InputError(path, 0, "", "not a VTK PolyData file (no <VTKFile type=\"PolyData\">)");
  if (fr.npoint < 0) throw InputError(path, 0, "Piece", "the file has no piece");
  return fr;
}

// cells of a frame as ids and offsets, checked
void cells(const VtpFrame& fr,
           const char* section,
           long ncell,
           std::vector<int>& conn,
           std::vector<int>& offsets) {
  const std::string s = section;
  const std::vector<double>* c = fr.find(s + "/connectivity");
  const std::vector<double>* o = fr.get(s + "/offsets", ncell, 1, ncell > 0);
  conn.clear();
  offsets.clear();
  if (ncell == 0) return;
  if (!c) throw InputError(fr.path, 0, s + "/connectivity", "the array is missing");
  for (double v : *c) {
    if (!(v >= 0 && v < double(fr.npoint)) || v != double(long(v))) {
      throw InputError(
          fr.path, 0, s + "/connectivity",
          "holds " + std::to_string(v) + ", not a point of the " + std::to_string(fr.npoint));
    }
    conn.push_back(int(v));
  }
  double prev = 0;
  for (double v : *o) {
    if (!(v > prev) || v > double(conn.size()) || v != double(long(v))) {
      throw InputError(
          fr.path, 0, s + "/offsets",
          "do not increase within the connectivity's " + std::to_string(conn.size()) + " ids");
    }
    offsets.push_back(int(v));
    prev = v;
  }
  if (offsets.back() != int(conn.size())) {
    throw InputError(fr.path, 0, s + "/offsets",
                     "end at " + std::to_string(offsets.back()) + ", before the connectivity's " +
                         std::to_string(conn.size()) + " ids");
  }
}

// the .pvd of a run folder (or the file itself)
std::string find_series(const std::string& run) {
  std::error_code ec;
  if (fs::is_regular_file(run, ec)) {
    if (fs::path(run).extension() != ".pvd")
      throw InputError(run, 0, "", "not a .pvd series (give the run's output folder)");
    return run;
  }
  if (!fs::is_directory(run, ec)) throw InputError(run, 0, "", "no such run folder");
  std::vector<std::string> found, unfinished;
  for (const auto& e : fs::directory_iterator(run, ec)) {
    const std::string n = e.path().filename().string();
    if (e.path().extension() == ".pvd") found.push_back(n);
    if (n.size() > 9 && n.compare(n.size() - 9, 9, ".pvd.part") == 0) unfinished.push_back(n);
  }
  if (ec) throw InputError(run, 0, "", "cannot list the folder: " + ec.message());
  std::sort(found.begin(), found.end());
  if (found.empty()) {
    if (!unfinished.empty()) {
      throw InputError(run, 0, "",
                       "its series '" + unfinished[0] +
                           "' is unfinished (the run was stopped at once): resume the run "
                           "(--resume) or export another");
    }
    throw InputError(run, 0, "",
                     "no .pvd series in this folder: no frames to export (is it the --out folder "
                     "of a run with VTK output on, \"output\": {\"vtk\": true}?)");
  }
  if (found.size() > 1) {
    std::string names;
    for (const std::string& n : found)
      names += (names.empty() ? "" : ", ") + n;
    throw InputError(run, 0, "",
                     "several .pvd series (" + names + "): give one of them instead of the folder");
  }
  return (fs::path(run) / found[0]).string();
}

// the frames of a series: time and path of each
std::vector<std::pair<double, std::string>> read_series(const std::string& pvd) {
  const std::string text = read_whole(pvd, kMaxSeriesBytes, "VTK series");
  LineCounter line_at(text);
  if (text.find("<VTKFile") == std::string::npos ||
      text.find("type=\"Collection\"") == std::string::npos) {
    throw InputError(pvd, 0, "", "not a VTK Collection (.pvd) file");
  }
  std::vector<std::pair<double, std::string>> frames;
  const fs::path base = fs::path(pvd).parent_path();
  size_t pos = 0;
  while ((pos = text.find("<DataSet", pos)) != std::string::npos) {
    const size_t close = text.find('>', pos);
    const int line = line_at(pos);
    if (close == std::string::npos)
      throw InputError(pvd, line, "DataSet", "an unterminated tag: the file is cut short");
    const std::string tag = text.substr(pos, close - pos);
    pos = close;
    std::string ts, file;
    if (!attribute(tag, "timestep", ts)) throw InputError(pvd, line, "DataSet.timestep", "missing");
    if (!attribute(tag, "file", file) || file.empty())
      throw InputError(pvd, line, "DataSet.file", "missing");
    char* endp = nullptr;
    const double t = std::strtod(ts.c_str(), &endp);
    if (ts.empty() || *endp != '\0' || !std::isfinite(t))
      throw InputError(pvd, line, "DataSet.timestep", "not a time: \"" + ts + "\"");
    if (!frames.empty() && !(t > frames.back().first)) {
      throw InputError(pvd, line, "DataSet.timestep",
                       "t = " + ts + " s does not follow the frame before (at " +
                           std::to_string(frames.back().first) + " s)");
    }
    frames.emplace_back(t, (base / file).string());
  }
  if (frames.empty()) throw InputError(pvd, 0, "Collection", "lists no frames: nothing to export");
  return frames;
}

}  // namespace

UsdExportResult export_usd(const std::string& run, const UsdExportOptions& opt) {
  const std::string pvd = find_series(run);
  const auto frames = read_series(pvd);

  // the scene, for the parts' names and gravity
  SceneSpec scene;
  const bool has_scene = !opt.scene.empty();
  if (has_scene) scene = read_scene_file(opt.scene);
  if (opt.up_axis != 0 && opt.up_axis != 'Y' && opt.up_axis != 'Z') {
    throw InputError("<options>", 0, "up_axis",
                     std::string("must be Y or Z, got '") + opt.up_axis + "'");
  }

  // the topology of the first frame, which every frame must share
  VtpFrame first = read_vtp(frames[0].second);
  UsdTopology top;
  top.nnode = int(first.npoint);
  cells(first, "Lines", first.nline, top.line_conn, top.line_offsets);
  cells(first, "Polys", first.npoly, top.face_conn, top.face_offsets);
  const std::vector<double>* part =
      first.get("CellData/part", first.nline + first.npoly, 1, first.nline + first.npoly > 0);
  for (long c = 0; c < first.nline + first.npoly; ++c) {
    const int p = int((*part)[size_t(c)]);
    (c < first.nline ? top.line_part : top.face_part).push_back(p);
  }
  if (const std::vector<double>* r = first.get("PointData/radius", first.npoint, 1, false))
    top.node_radius.assign(r->begin(), r->end());
  const std::string stem = fs::path(pvd).stem().string();
  if (has_scene) {
    for (const PartSpec& p : scene.parts)
      top.part_names.push_back(p.name);
    top.root_name = scene.name;
  } else {
    top.root_name = stem;
  }
  top.up_axis = opt.up_axis != 0 ? opt.up_axis
                : has_scene      ? usd_up_axis(scene.forces.gravity)
                                 : 'Z';
  top.frame_interval = 0;  // the records' median spacing

  const std::string out =
      !opt.out.empty() ? opt.out : (fs::path(pvd).parent_path() / (stem + ".usda")).string();
  UsdSeries series(top, out);
  series.begin();
  try {
    for (size_t k = 0; k < frames.size(); ++k) {
      VtpFrame fr = k == 0 ? std::move(first) : read_vtp(frames[k].second);
      if (k > 0) {
        std::vector<int> conn, offsets;
        const bool same_points = fr.npoint == top.nnode && fr.nline == long(top.line_part.size()) &&
                                 fr.npoly == long(top.face_part.size());
        if (same_points) cells(fr, "Lines", fr.nline, conn, offsets);
        bool same = same_points && conn == top.line_conn && offsets == top.line_offsets;
        if (same) cells(fr, "Polys", fr.npoly, conn, offsets);
        same = same && conn == top.face_conn && offsets == top.face_offsets;
        if (!same) {
          throw InputError(fr.path, 0, "Piece",
                           "its points or cells differ from those of the first frame '" +
                               frames[0].second + "'");
        }
      }
      const long n = fr.npoint;
      UsdNodeFrame f;
      f.time = frames[k].first;
      f.x = fr.get("Points/position", n, 3, true)->data();
      auto field = [&](const char* key, int ncomp) {
        const std::vector<double>* a = fr.get(key, n, ncomp, false);
        return a ? a->data() : nullptr;
      };
      f.v = field("PointData/velocity", 3);
      f.curvature = field("PointData/curvature", 1);
      f.twist = field("PointData/twist", 1);
      f.twist_angle = field("PointData/twist_angle", 1);
      // per cell, lines first: the polygons' part
      if (const std::vector<double>* d =
              fr.get("CellData/bending_energy_density", fr.nline + fr.npoly, 1, false))
        f.face_density = d->data() + fr.nline;
      series.add(f);
    }
    series.finish();
  } catch (...) {
    series.abort();
    throw;
  }
  return UsdExportResult{out, frames.size()};
}

}  // namespace slender
