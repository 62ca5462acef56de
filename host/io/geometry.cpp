// Readers for line-oriented text files: MAT-DiSMech geometry (*Nodes, *Edges, *Triangles),
// Wavefront OBJ and ASCII PLY meshes, and plain rows of numbers (DisMech node coordinates and
// velocities, load tables).

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/input_file.h"
#include "io/text_rows.h"
#include "slender/builder.h"
#include "slender/core/error.h"

namespace slender {

void skip_bom(std::istream& in) {
  char b[3] = {0, 0, 0};
  in.read(b, 3);
  if (in.gcount() == 3 && b[0] == '\xEF' && b[1] == '\xBB' && b[2] == '\xBF') return;
  in.clear();
  in.seekg(0);
}

namespace {

// one line of a text file, without its line break and comment, trimmed
std::string clean_line(std::string s) {
  const size_t hash = s.find('#');
  if (hash != std::string::npos) {
    s.erase(hash);
  }
  const char* space = " \t\r\n\f\v";
  const size_t b = s.find_first_not_of(space);
  if (b == std::string::npos) {
    return {};
  }
  const size_t e = s.find_last_not_of(space);
  return s.substr(b, e - b + 1);
}

std::string lower(std::string s) {
  for (char& c : s) {
    c = char(std::tolower(static_cast<unsigned char>(c)));
  }
  return s;
}

enum Section { kNone = -1, kNodes = 0, kEdges = 1, kTriangles = 2 };
const char* const kSectionName[3] = {"*Nodes", "*Edges", "*Triangles"};

// a node id of the file (1-based, a whole number), not yet range checked
int parse_id_field(const std::string& token, const std::string& file, int line, const char* field) {
  const double x = parse_real_field(token, file, line, field);
  if (x != std::floor(x) || std::fabs(x) > 1e9) {
    throw InputError(file, line, field, "node id must be a whole number, got '" + token + "'");
  }
  return int(x);
}

}  // namespace

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (const char c : line) {
    if (c == '#') {
      break;
    }
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) {
        out.push_back(cur);
      }
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) {
    out.push_back(cur);
  }
  return out;
}

double parse_real_field(const std::string& token,
                        const std::string& file,
                        int line,
                        const std::string& field) {
  // from_chars takes no leading '+', which some writers emit
  const char* first = token.data();
  const char* last = token.data() + token.size();
  if (first != last && *first == '+') {
    ++first;
  }
  double x = 0;
  const auto r = std::from_chars(first, last, x);
  if (r.ec == std::errc::result_out_of_range) {
    throw InputError(file, line, field, "number '" + token + "' is out of range");
  }
  if (r.ec != std::errc() || r.ptr != last || first == last) {
    throw InputError(file, line, field, "'" + token + "' is not a number");
  }
  if (!std::isfinite(x)) {
    throw InputError(file, line, field, "non-finite value '" + token + "'");
  }
  return x;
}

std::vector<std::vector<double>> read_number_table(const std::string& path, int columns) {
  check_input_file(path, kMaxGeometryFileBytes, "file");
  std::ifstream in(path);
  if (!in) {
    throw InputError(path, 0, "", "cannot open file");
  }
  skip_bom(in);
  std::vector<std::vector<double>> rows;
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    const std::vector<std::string> f = split_fields(raw);
    if (f.empty()) continue;
    if (f[0][0] == '*') {
      // a MAT-DiSMech geometry file where a list of points was expected (a rod's shape)
      throw InputError(path, line, "",
                       "this is a geometry file with sections ('" + f[0] +
                           "'), not a list of points: give it as a network (\"networks\": "
                           "[{\"name\": ..., \"file\": ...}]) or as a shell's mesh path");
    }
    if (int(f.size()) != columns) {
      throw InputError(path, line, "",
                       "expected " + std::to_string(columns) + " values per line, got " +
                           std::to_string(f.size()));
    }
    std::vector<double> row(f.size());
    for (size_t k = 0; k < f.size(); ++k) {
      row[k] = parse_real_field(f[k], path, line, "");
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) {
    throw InputError(path, 0, "", "the file has no data rows");
  }
  return rows;
}

ActuationSeries read_series_file(const std::string& path, const std::string& field) {
  check_input_file(path, kMaxGeometryFileBytes, "file");
  std::ifstream in(path);
  if (!in) {
    throw InputError(path, 0, field, "cannot open the series file");
  }
  skip_bom(in);
  ActuationSeries s;
  s.file = path;
  std::string raw;
  int line = 0, width = 0;  // width: the fields of the first row
  bool header_allowed = true;
  while (std::getline(in, raw)) {
    ++line;
    const std::vector<std::string> f = split_fields(raw);
    if (f.empty()) continue;
    // a header (column names) may come before the first row
    const char c0 = f[0][0];
    const bool numeric =
        std::isdigit(static_cast<unsigned char>(c0)) || c0 == '+' || c0 == '-' || c0 == '.';
    if (header_allowed && !numeric) {
      header_allowed = false;
      continue;
    }
    header_allowed = false;
    if (width == 0) {
      if (f.size() < 2) {
        throw InputError(path, line, field,
                         "a row is a time and one value per driven spring: got " +
                             std::to_string(f.size()) + " field");
      }
      width = int(f.size());
      s.columns = width - 1;
      s.first_line = line;
    } else if (int(f.size()) != width) {
      throw InputError(path, line, field,
                       "expected " + std::to_string(width) + " fields (the time and " +
                           std::to_string(width - 1) + " values, as in the first row on line " +
                           std::to_string(s.first_line) + "), got " + std::to_string(f.size()));
    }
    const double t = parse_real_field(f[0], path, line, field + " (time)");
    if (!s.time.empty() && !(t > s.time.back())) {
      throw InputError(path, line, field + " (time)",
                       "times must increase strictly: " + f[0] +
                           " s is not after the previous "
                           "row's " +
                           std::to_string(s.time.back()) + " s");
    }
    s.time.push_back(t);
    for (size_t k = 1; k < f.size(); ++k) {
      s.value.push_back(
          parse_real_field(f[k], path, line, field + " (column " + std::to_string(k) + ")"));
    }
  }
  if (s.time.empty()) {
    throw InputError(path, 0, field, "the series file has no data rows");
  }
  return s;
}

std::vector<Vec3> read_vector_file(const std::string& path) {
  const std::vector<std::vector<double>> rows = read_number_table(path, 3);
  std::vector<Vec3> out;
  out.reserve(rows.size());
  for (const std::vector<double>& r : rows) {
    out.push_back(Vec3{{r[0], r[1], r[2]}});
  }
  return out;
}

GeometryFile read_geometry_file(const std::string& path) {
  check_input_file(path, kMaxGeometryFileBytes, "geometry file");
  std::ifstream in(path);
  if (!in) {
    throw InputError(path, 0, "", "cannot open geometry file");
  }
  skip_bom(in);

  GeometryFile g;
  int section = kNone;
  int header_line[3] = {0, 0, 0};
  std::vector<int> edge_line, triangle_line;  // source line of each element
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    const std::string s = clean_line(raw);
    if (s.empty()) continue;

    // section header: *Nodes, *Edges, *Triangles in any case, each once
    if (s[0] == '*') {
      const std::string name = lower(clean_line(s.substr(1)));
      section = kNone;
      for (int k = 0; k < 3; ++k) {
        if (name == lower(kSectionName[k] + 1)) {
          section = k;
        }
      }
      if (section == kNone) {
        throw InputError(path, line, "",
                         "unknown section '" + s + "' (expected *Nodes, *Edges or *Triangles)");
      }
      if (header_line[section] != 0) {
        throw InputError(
            path, line, kSectionName[section],
            "duplicate section (first at line " + std::to_string(header_line[section]) + ")");
      }
      header_line[section] = line;
      continue;
    }
    if (section == kNone) {
      throw InputError(path, line, "",
                       "data before the first section header (*Nodes, *Edges or *Triangles)");
    }

    // data row of the current section
    const char* field = kSectionName[section];
    const std::vector<std::string> f = split_fields(s);
    const size_t want = section == kEdges ? 2 : 3;
    if (f.size() != want) {
      const char* what = section == kNodes ? " values (x, y, z)" : " node ids";
      throw InputError(path, line, field,
                       "expected " + std::to_string(want) + what + ", got " +
                           std::to_string(f.size()) + " values");
    }
    if (section == kNodes) {
      Vec3 x;
      for (int k = 0; k < 3; ++k) {
        x[k] = parse_real_field(f[size_t(k)], path, line, field);
      }
      g.nodes.push_back(x);
    } else if (section == kEdges) {
      g.edges.push_back(
          {parse_id_field(f[0], path, line, field), parse_id_field(f[1], path, line, field)});
      edge_line.push_back(line);
    } else {
      g.triangles.push_back({parse_id_field(f[0], path, line, field),
                             parse_id_field(f[1], path, line, field),
                             parse_id_field(f[2], path, line, field)});
      triangle_line.push_back(line);
    }
  }

  if (g.nodes.empty()) {
    throw InputError(path, header_line[kNodes], "*Nodes",
                     "no nodes (the file needs a *Nodes section with at least one row)");
  }

  // node ids: range and distinctness once all nodes are known; then 1-based -> 0-based
  const int n = int(g.nodes.size());
  auto check_ids = [&](int* ids, int count, int at, const char* field, const char* what) {
    for (int a = 0; a < count; ++a) {
      if (ids[a] < 1 || ids[a] > n) {
        throw InputError(path, at, field,
                         "node id " + std::to_string(ids[a]) + " out of range (the file has " +
                             std::to_string(n) + " nodes, ids 1.." + std::to_string(n) + ")");
      }
      for (int b = 0; b < a; ++b) {
        if (ids[a] == ids[b]) {
          throw InputError(path, at, field,
                           std::string(what) + " uses node " + std::to_string(ids[a]) + " twice");
        }
      }
    }
    for (int a = 0; a < count; ++a) {
      --ids[a];
    }
  };
  for (size_t e = 0; e < g.edges.size(); ++e) {
    check_ids(g.edges[e].data(), 2, edge_line[e], "*Edges", "edge");
  }
  for (size_t t = 0; t < g.triangles.size(); ++t) {
    check_ids(g.triangles[t].data(), 3, triangle_line[t], "*Triangles", "triangle");
  }
  return g;
}

// ---- Wavefront OBJ and ASCII PLY ---------------------------------------------------------

namespace {

// white-space separated words of a line (OBJ and PLY use no commas)
std::vector<std::string> split_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) {
    out.push_back(w);
  }
  return out;
}

// a whole number with nothing else in the token
bool parse_whole(const std::string& s, long long& out) {
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (first != last && *first == '+') {
    ++first;
  }
  const auto r = std::from_chars(first, last, out);
  return first != last && r.ec == std::errc() && r.ptr == last;
}

// counts of the OBJ items defined so far (faces may only refer back)
struct ObjCounts {
  int v = 0, vt = 0, vn = 0;
};

// one 1-based or negative (relative) OBJ index into `count` items -> 0-based
int obj_index(const std::string& token,
              const std::string& part,
              int count,
              const char* items,
              const std::string& file,
              int line,
              const std::string& field) {
  long long i = 0;
  if (!parse_whole(part, i)) {
    throw InputError(file, line, field,
                     "bad index '" + part + "' in '" + token + "' (expected a whole number)");
  }
  if (i == 0) {
    throw InputError(file, line, field,
                     "index 0 in '" + token +
                         "': OBJ indices start at 1 (negative ones count back from the latest)");
  }
  const long long k = i > 0 ? i - 1 : count + i;
  if (k < 0 || k >= count) {
    throw InputError(file, line, field,
                     "index " + part + " in '" + token + "' out of range (" +
                         std::to_string(count) + " " + items + " defined so far)");
  }
  return int(k);
}

// "v", "v/vt", "v/vt/vn" or "v//vn" (a line element: "v" or "v/vt") -> the 0-based vertex;
// texture and normal indices are checked and dropped
int obj_vertex(const std::string& token,
               const ObjCounts& c,
               bool face,
               const std::string& file,
               int line,
               const std::string& field) {
  std::vector<std::string> parts(1);
  for (const char ch : token) {
    if (ch == '/') {
      parts.emplace_back();
    } else {
      parts.back() += ch;
    }
  }
  if (parts.size() > (face ? 3u : 2u)) {
    throw InputError(file, line, field,
                     "bad vertex reference '" + token + "' (expected " +
                         (face ? "v, v/vt, v/vt/vn or v//vn" : "v or v/vt") + ")");
  }
  const int v = obj_index(token, parts[0], c.v, "vertices", file, line, field);
  if (parts.size() >= 2 && !(parts.size() == 3 && parts[1].empty())) {
    obj_index(token, parts[1], c.vt, "texture coordinates (vt)", file, line, field);
  }
  if (parts.size() == 3) {
    obj_index(token, parts[2], c.vn, "normals (vn)", file, line, field);
  }
  return v;
}

// the next statement: a line joined with the following ones while it ends in a backslash;
// `line` ends at the last line read, `first` is where the statement starts
bool obj_statement(std::istream& in, std::string& text, int& line, int& first) {
  std::string raw;
  if (!std::getline(in, raw)) return false;
  first = ++line;
  text = clean_line(raw);
  while (!text.empty() && text.back() == '\\' && std::getline(in, raw)) {
    ++line;
    text.pop_back();
    text += ' ' + clean_line(raw);
  }
  return true;
}

GeometryFile read_obj_file(const std::string& path) {
  check_input_file(path, kMaxGeometryFileBytes, "mesh file");
  std::ifstream in(path);
  if (!in) {
    throw InputError(path, 0, "", "cannot open mesh file");
  }
  skip_bom(in);
  GeometryFile g;
  ObjCounts c;
  std::string text;
  int line = 0, at = 0;
  while (obj_statement(in, text, line, at)) {
    const std::vector<std::string> w = split_words(text);
    if (w.empty()) continue;
    const std::string& key = w[0];
    const size_t nargs = w.size() - 1;
    if (key == "v") {
      // x y z, optionally w or an r g b colour (checked, unused)
      if (nargs != 3 && nargs != 4 && nargs != 6) {
        throw InputError(
            path, at, key,
            "expected x y z (optionally w, or r g b), got " + std::to_string(nargs) + " values");
      }
      Vec3 x;
      for (size_t k = 1; k < w.size(); ++k) {
        const double value = parse_real_field(w[k], path, at, key);
        if (k <= 3) x[int(k) - 1] = value;
      }
      g.nodes.push_back(x);
      ++c.v;
    } else if (key == "vt" || key == "vn") {
      const bool vt = key == "vt";
      if (nargs < (vt ? 1u : 3u) || nargs > 3) {
        throw InputError(path, at, key,
                         std::string("expected ") + (vt ? "1 to 3 values (u v w)" : "3 values") +
                             ", got " + std::to_string(nargs));
      }
      for (size_t k = 1; k < w.size(); ++k) {
        parse_real_field(w[k], path, at, key);
      }
      ++(vt ? c.vt : c.vn);
    } else if (key == "f" || key == "l") {
      const bool face = key == "f";
      if (nargs < (face ? 3u : 2u)) {
        throw InputError(path, at, key,
                         std::string(face ? "a face needs at least 3" : "a line needs at least 2") +
                             " vertices, got " + std::to_string(nargs));
      }
      std::vector<int> ids;
      for (size_t k = 1; k < w.size(); ++k) {
        const int id = obj_vertex(w[k], c, face, path, at, key);
        const bool repeat = face ? std::find(ids.begin(), ids.end(), id) != ids.end()
                                 : !ids.empty() && ids.back() == id;
        if (repeat) {
          throw InputError(path, at, key,
                           std::string(face ? "face" : "line") + " uses vertex " +
                               std::to_string(id + 1) + " twice" + (face ? "" : " in a row"));
        }
        ids.push_back(id);
      }
      // polygons are split into a fan about their first vertex (right for convex polygons);
      // a line of n vertices is n - 1 rod edges
      if (face) {
        for (size_t k = 1; k + 1 < ids.size(); ++k) {
          g.triangles.push_back({ids[0], ids[k], ids[k + 1]});
        }
      } else {
        for (size_t k = 0; k + 1 < ids.size(); ++k) {
          g.edges.push_back({ids[k], ids[k + 1]});
        }
      }
    } else if (key == "vp" || key == "p" || key == "o" || key == "g" || key == "s" ||
               key == "mtllib" || key == "usemtl") {
      continue;  // parameter vertices, points, names, groups, smoothing, materials
    } else {
      throw InputError(path, at, key,
                       "unsupported OBJ statement '" + key +
                           "' (Slender reads v, f and l, and skips vt, vn, vp, p, o, g, s, "
                           "mtllib and usemtl)");
    }
  }
  if (g.nodes.empty()) {
    throw InputError(path, 0, "v", "no vertices (the file needs 'v x y z' lines)");
  }
  return g;
}

struct PlyProperty {
  std::string name;
  bool list = false;
  bool whole = false;  // an integer type (of the items, for a list)
};

struct PlyElement {
  std::string name;
  long long count = 0;
  int line = 0;  // of its header line
  std::vector<PlyProperty> props;

  // index of the named property, -1 when absent
  int find(const std::string& n) const {
    for (size_t k = 0; k < props.size(); ++k) {
      if (props[k].name == n) return int(k);
    }
    return -1;
  }
};

// a PLY scalar type name; `whole` says whether it holds integers
bool ply_type(const std::string& t, bool& whole) {
  const char* const kWhole[] = {"char", "uchar", "short", "ushort", "int",   "uint",
                                "int8", "uint8", "int16", "uint16", "int32", "uint32"};
  const char* const kReal[] = {"float", "double", "float32", "float64"};
  for (const char* n : kWhole) {
    if (t == n) {
      whole = true;
      return true;
    }
  }
  for (const char* n : kReal) {
    if (t == n) {
      whole = false;
      return true;
    }
  }
  return false;
}

std::vector<PlyElement> read_ply_header(std::istream& in, const std::string& path, int& line) {
  std::string raw;
  if (!std::getline(in, raw) || clean_line(raw) != "ply") {
    throw InputError(path, 1, "header", "not a PLY file (the first line must be 'ply')");
  }
  line = 1;
  bool format = false;
  std::vector<PlyElement> elements;
  while (std::getline(in, raw)) {
    ++line;
    const std::vector<std::string> w = split_words(raw);
    if (w.empty()) continue;
    const std::string& key = w[0];
    if (key == "end_header") {
      if (!format) throw InputError(path, line, "format", "missing 'format ascii 1.0' line");
      return elements;
    }
    if (key == "comment" || key == "obj_info") continue;
    if (key == "format") {
      if (w.size() > 1 && (w[1] == "binary_little_endian" || w[1] == "binary_big_endian")) {
        throw InputError(path, line, key, "binary PLY not supported, save as ASCII");
      }
      if (w.size() != 3 || w[1] != "ascii" || w[2] != "1.0") {
        throw InputError(path, line, key, "expected 'format ascii 1.0'");
      }
      format = true;
    } else if (key == "element") {
      long long count = 0;
      if (w.size() != 3 || !parse_whole(w[2], count) || count < 0) {
        throw InputError(path, line, key, "expected 'element <name> <count>', count >= 0");
      }
      elements.push_back({w[1], count, line, {}});
    } else if (key == "property") {
      if (elements.empty()) {
        throw InputError(path, line, key, "a property before the first element");
      }
      PlyProperty p;
      bool count_whole = false;
      if (w.size() == 5 && w[1] == "list" && ply_type(w[2], count_whole) && count_whole &&
          ply_type(w[3], p.whole)) {
        p.name = w[4];
        p.list = true;
      } else if (w.size() == 3 && ply_type(w[1], p.whole)) {
        p.name = w[2];
      } else {
        throw InputError(path, line, key,
                         "expected 'property <type> <name>' or 'property list <integer type> "
                         "<type> <name>' with PLY types (char, uchar, ..., float, double)");
      }
      elements.back().props.push_back(p);
    } else {
      throw InputError(path, line, "header", "unknown header line starting with '" + key + "'");
    }
  }
  throw InputError(path, line, "header", "the file ends before 'end_header'");
}

// which properties of the vertex, face and edge elements Slender reads
struct PlyRoles {
  int vertex = -1, face = -1, edge = -1;  // element indices
  int x = -1, y = -1, z = -1;             // vertex properties
  int indices = -1;                       // face: vertex_indices (or vertex_index)
  int v1 = -1, v2 = -1;                   // edge: vertex1, vertex2
};

PlyRoles ply_roles(const std::vector<PlyElement>& elements, const std::string& path, int line) {
  PlyRoles r;
  for (size_t k = 0; k < elements.size(); ++k) {
    const std::string& n = elements[k].name;
    int* role = n == "vertex" ? &r.vertex : n == "face" ? &r.face : n == "edge" ? &r.edge : nullptr;
    if (!role) continue;  // other elements are read and skipped
    if (*role >= 0) {
      throw InputError(path, elements[k].line, "element", "duplicate element '" + n + "'");
    }
    *role = int(k);
  }
  if (r.vertex < 0) throw InputError(path, line, "header", "no 'element vertex'");
  const PlyElement& v = elements[size_t(r.vertex)];
  r.x = v.find("x"), r.y = v.find("y"), r.z = v.find("z");
  for (const int k : {r.x, r.y, r.z}) {
    if (k < 0 || v.props[size_t(k)].list) {
      throw InputError(path, v.line, "vertex", "the vertex element needs properties x, y and z");
    }
  }
  if (r.face >= 0) {
    const PlyElement& f = elements[size_t(r.face)];
    r.indices = f.find("vertex_indices") >= 0 ? f.find("vertex_indices") : f.find("vertex_index");
    if (r.indices < 0 || !f.props[size_t(r.indices)].list || !f.props[size_t(r.indices)].whole) {
      throw InputError(path, f.line, "face",
                       "the face element needs a list of integers 'vertex_indices'");
    }
  }
  if (r.edge >= 0) {
    const PlyElement& e = elements[size_t(r.edge)];
    r.v1 = e.find("vertex1"), r.v2 = e.find("vertex2");
    for (const int k : {r.v1, r.v2}) {
      if (k < 0 || e.props[size_t(k)].list || !e.props[size_t(k)].whole) {
        throw InputError(path, e.line, "edge",
                         "the edge element needs integer properties vertex1 and vertex2");
      }
    }
  }
  return r;
}

// one data line of element e: the scalar values by property, and the items of the list
// property `keep` (other lists are checked and dropped)
void ply_row(const std::vector<std::string>& w,
             const PlyElement& e,
             int keep,
             std::vector<double>& scalars,
             std::vector<double>& items,
             const std::string& path,
             int line) {
  size_t pos = 0;
  auto next = [&](const PlyProperty& p, bool whole) {
    const std::string field = e.name + "." + p.name;
    if (pos >= w.size()) {
      throw InputError(
          path, line, field,
          "the line ends early (" + std::to_string(w.size()) + " values): missing " + p.name);
    }
    const double x = parse_real_field(w[pos], path, line, field);
    if (whole && x != std::floor(x)) {
      throw InputError(path, line, field, "'" + w[pos] + "' is not a whole number");
    }
    ++pos;
    return x;
  };
  scalars.assign(e.props.size(), 0);
  items.clear();
  for (size_t k = 0; k < e.props.size(); ++k) {
    const PlyProperty& p = e.props[k];
    if (!p.list) {
      scalars[k] = next(p, p.whole);
      continue;
    }
    const double n = next(p, true);
    if (n < 0 || n > double(w.size())) {
      throw InputError(path, line, e.name + "." + p.name,
                       "list length " + w[pos - 1] + " does not fit the line");
    }
    for (int i = 0; i < int(n); ++i) {
      const double x = next(p, p.whole);
      if (int(k) == keep) items.push_back(x);
    }
  }
  if (pos != w.size()) {
    throw InputError(
        path, line, e.name,
        "expected " + std::to_string(pos) + " values on the line, got " + std::to_string(w.size()));
  }
}

// a whole number as the file wrote it: digits while a long long holds it exactly, else %g (a
// cast of 1e300 to an integer is undefined)
std::string whole_number_text(double x) {
  if (std::fabs(x) < 9e15) return std::to_string((long long)x);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

// a PLY vertex index (0-based) -> checked int
int ply_index(double x, long long n, const std::string& path, int line, const char* field) {
  if (!(x >= 0 && x < double(n))) {
    throw InputError(path, line, field,
                     "vertex index " + whole_number_text(x) + " out of range (the file has " +
                         std::to_string(n) + " vertices, indices 0.." + std::to_string(n - 1) +
                         ")");
  }
  return int(x);
}

GeometryFile read_ply_file(const std::string& path) {
  check_input_file(path, kMaxGeometryFileBytes, "mesh file");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(path, 0, "", "cannot open mesh file");
  }
  skip_bom(in);
  int line = 0;
  const std::vector<PlyElement> elements = read_ply_header(in, path, line);
  const PlyRoles r = ply_roles(elements, path, line);

  // data: one line per element instance, elements in header order; index lists are checked
  // once all vertices are known (a face element may come first)
  GeometryFile g;
  std::vector<std::vector<double>> faces, edges;
  std::vector<int> face_line, edge_line;
  std::vector<double> scalars, items;
  std::string raw;
  for (size_t k = 0; k < elements.size(); ++k) {
    const PlyElement& e = elements[k];
    const int keep = int(k) == r.face ? r.indices : -1;
    for (long long i = 0; i < e.count; ++i) {
      std::vector<std::string> w;
      while (w.empty()) {
        if (!std::getline(in, raw)) {
          throw InputError(path, line, e.name,
                           "the file ends after " + std::to_string(i) + " of " +
                               std::to_string(e.count) + " " + e.name + " lines");
        }
        ++line;
        w = split_words(raw);
      }
      ply_row(w, e, keep, scalars, items, path, line);
      if (int(k) == r.vertex) {
        g.nodes.push_back(Vec3{{scalars[size_t(r.x)], scalars[size_t(r.y)], scalars[size_t(r.z)]}});
      } else if (int(k) == r.face) {
        if (items.size() < 3) {
          throw InputError(path, line, "face",
                           "a face needs at least 3 vertices, got " + std::to_string(items.size()));
        }
        faces.push_back(items);
        face_line.push_back(line);
      } else if (int(k) == r.edge) {
        edges.push_back({scalars[size_t(r.v1)], scalars[size_t(r.v2)]});
        edge_line.push_back(line);
      }
    }
  }
  while (std::getline(in, raw)) {
    ++line;
    if (!split_words(raw).empty()) {
      throw InputError(path, line, "", "unexpected data after the last element of the header");
    }
  }
  if (g.nodes.empty()) {
    throw InputError(path, elements[size_t(r.vertex)].line, "vertex", "no vertices");
  }

  // faces (fan-triangulated) and edges: ids in range and distinct
  const long long n = (long long)g.nodes.size();
  for (size_t f = 0; f < faces.size(); ++f) {
    std::vector<int> ids;
    for (const double x : faces[f]) {
      const int id = ply_index(x, n, path, face_line[f], "face");
      if (std::find(ids.begin(), ids.end(), id) != ids.end()) {
        throw InputError(path, face_line[f], "face",
                         "face uses vertex " + std::to_string(id) + " twice");
      }
      ids.push_back(id);
    }
    for (size_t k = 1; k + 1 < ids.size(); ++k) {
      g.triangles.push_back({ids[0], ids[k], ids[k + 1]});
    }
  }
  for (size_t e = 0; e < edges.size(); ++e) {
    const int a = ply_index(edges[e][0], n, path, edge_line[e], "edge");
    const int b = ply_index(edges[e][1], n, path, edge_line[e], "edge");
    if (a == b) {
      throw InputError(path, edge_line[e], "edge",
                       "edge joins vertex " + std::to_string(a) + " to itself");
    }
    g.edges.push_back({a, b});
  }
  return g;
}

}  // namespace

GeometryFile read_mesh_file(const std::string& path) {
  const std::string ext = lower(std::filesystem::path(path).extension().string());
  if (ext == ".obj") return read_obj_file(path);
  if (ext == ".ply") return read_ply_file(path);
  if (ext == ".txt") return read_geometry_file(path);
  throw InputError(path, 0, "",
                   "unknown mesh file type '" + ext + "' (expected .obj, .ply or .txt)");
}

}  // namespace slender
