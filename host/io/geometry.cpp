// Readers for line-oriented text files: MAT-DiSMech geometry (*Nodes, *Edges, *Triangles) and
// plain rows of numbers (DisMech node coordinates and velocities, load tables).

#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>

#include "io/text_rows.h"
#include "slender/builder.h"
#include "slender/core/error.h"

namespace slender {

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
  std::ifstream in(path);
  if (!in) {
    throw InputError(path, 0, "", "cannot open file");
  }
  std::vector<std::vector<double>> rows;
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    const std::vector<std::string> f = split_fields(raw);
    if (f.empty()) continue;
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
  std::ifstream in(path);
  if (!in) {
    throw InputError(path, 0, "", "cannot open geometry file");
  }

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

}  // namespace slender
