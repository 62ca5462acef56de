#pragma once

// Helpers of the recorder tests: a hand-made Model and State (no builder needed), a fresh
// temporary folder per test, file reading and a minimal XML reader that checks that a document
// is well formed (every element closed in order) and gives access to elements, attributes and
// the numbers inside them.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "slender/model.h"
#include "slender/state.h"

namespace slender::test {

/// A straight rod of 3 nodes along x (spacing 1 m), 2 edges (radius 0.01 and 0.02 m) and one
/// bend-twist stencil centred at node 1; the first node is fixed.
inline Model make_rod_model() {
  Model m;
  m.nnode = 3;
  m.nedge = 2;
  m.nbend = 1;
  m.ndof = 3 * m.nnode + m.nedge;
  m.npart = 1;
  m.node_x0 = {0, 0, 0, 1, 0, 0, 2, 0, 0};
  m.node_mass = {0.5, 1.0, 0.5};
  m.node_part = {0, 0, 0};
  m.edge_node = {0, 1, 1, 2};
  m.edge_l_bar = {1, 1};
  m.edge_radius = {0.01, 0.02};
  m.edge_part = {0, 0};
  m.bend_node = {0, 1, 2};
  m.bend_edge = {0, 1};
  m.dof_fixed.assign(m.ndof, 0);
  for (int k = 0; k < 3; ++k)
    m.dof_fixed[k] = 1;
  m.plan.nfree = m.ndof - 3;
  m.part_name = {"rod"};
  m.part_node_adr = {0, 3};
  m.part_node = {0, 1, 2};
  m.part_edge_adr = {0, 2};
  m.part_edge = {0, 1};
  m.scene.name = "rod test";
  return m;
}

/// A state of `m` with positions x0 + c * (node, 1, 2), twists 0.1 * (e + 1) and velocities
/// 0.5 * dof index, at time t.
inline State make_state(const Model& m, Real t, Real c) {
  State s;
  s.ndof = m.ndof;
  s.time = t;
  s.q.assign(m.ndof, 0);
  s.u.assign(m.ndof, 0);
  for (int i = 0; i < m.nnode; ++i) {
    for (int k = 0; k < 3; ++k)
      s.q[3 * i + k] = m.node_x0[3 * i + k] + c * (i + k);
  }
  for (int e = 0; e < m.nedge; ++e)
    s.q[3 * m.nnode + e] = 0.1 * (e + 1);
  for (int d = 0; d < m.ndof; ++d)
    s.u[d] = 0.5 * d;
  return s;
}

/// A fresh, empty folder under the system's temporary folder, removed by the destructor (named
/// apart from the io tests' TempDir, so that both helpers may share an executable).
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::random_device rd;
    const std::string name = std::string("slender_") + (info ? info->name() : "test") + "_" +
                             std::to_string(rd()) + std::to_string(rd());
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string str() const { return path_.string(); }
  std::filesystem::path path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

/// lines of a text file, without the empty piece after the final newline
inline std::vector<std::string> read_lines(const std::filesystem::path& p) {
  std::vector<std::string> lines = split(read_text(p), '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

/// names of the files under `dir` whose name ends with `suffix`
inline std::vector<std::string> files_ending(const std::filesystem::path& dir,
                                             const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.size() >= suffix.size() &&
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(n);
    }
  }
  return out;
}

/// One XML element: name, attributes, text directly inside it and child elements.
struct XmlNode {
  std::string name;
  std::map<std::string, std::string> attr;
  std::string text;
  std::vector<std::unique_ptr<XmlNode>> children;

  /// the numbers of the element's text
  std::vector<double> numbers() const {
    std::istringstream is(text);
    std::vector<double> v;
    std::string tok;
    while (is >> tok)
      v.push_back(std::stod(tok));
    return v;
  }
  /// all descendants (and this element) with the given name, in document order
  void find_all(const std::string& n, std::vector<const XmlNode*>& out) const {
    if (name == n) out.push_back(this);
    for (const auto& c : children)
      c->find_all(n, out);
  }
  std::vector<const XmlNode*> find_all(const std::string& n) const {
    std::vector<const XmlNode*> out;
    find_all(n, out);
    return out;
  }
  /// the DataArray child (at any depth) with Name = n, or nullptr
  const XmlNode* array(const std::string& n) const {
    for (const XmlNode* a : find_all("DataArray")) {
      auto it = a->attr.find("Name");
      if (it != a->attr.end() && it->second == n) return a;
    }
    return nullptr;
  }
};

/// Parses the subset of XML the recorders write: a declaration, elements with double-quoted
/// attributes, self-closing elements and text. Throws std::runtime_error where the document
/// is not well formed (unclosed, mismatched or stray tags, bad attributes, two roots).
inline std::unique_ptr<XmlNode> parse_xml(const std::string& s) {
  auto fail = [](const std::string& why) { throw std::runtime_error("bad XML: " + why); };
  auto is_space = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  size_t i = 0;
  std::unique_ptr<XmlNode> root;
  std::vector<XmlNode*> stack;
  while (i < s.size()) {
    if (s[i] != '<') {
      const size_t j = s.find('<', i);
      const std::string text = s.substr(i, j == std::string::npos ? std::string::npos : j - i);
      if (stack.empty()) {
        for (char c : text) {
          if (!is_space(c)) fail("text outside the root element");
        }
      } else {
        stack.back()->text += text;
      }
      if (j == std::string::npos) break;
      i = j;
      continue;
    }
    const size_t close = s.find('>', i);
    if (close == std::string::npos) fail("unterminated tag");
    std::string tag = s.substr(i + 1, close - i - 1);
    i = close + 1;
    if (!tag.empty() && tag[0] == '?') {
      if (root || tag.back() != '?') fail("misplaced declaration");
      continue;
    }
    if (!tag.empty() && tag[0] == '/') {
      if (stack.empty() || stack.back()->name != tag.substr(1)) fail("mismatched </" + tag);
      stack.pop_back();
      continue;
    }
    const bool self_closing = !tag.empty() && tag.back() == '/';
    if (self_closing) tag.pop_back();
    auto node = std::make_unique<XmlNode>();
    size_t k = 0;
    while (k < tag.size() && !is_space(tag[k]))
      node->name += tag[k++];
    if (node->name.empty()) fail("empty tag name");
    while (true) {
      while (k < tag.size() && is_space(tag[k]))
        ++k;
      if (k >= tag.size()) break;
      const size_t eq = tag.find('=', k);
      if (eq == std::string::npos || eq + 1 >= tag.size() || tag[eq + 1] != '"') {
        fail("attribute without a quoted value in <" + node->name);
      }
      const size_t end = tag.find('"', eq + 2);
      if (end == std::string::npos) fail("unterminated attribute value");
      const std::string key = tag.substr(k, eq - k);
      if (node->attr.count(key)) fail("duplicate attribute " + key);
      node->attr[key] = tag.substr(eq + 2, end - eq - 2);
      k = end + 1;
    }
    XmlNode* raw = node.get();
    if (stack.empty()) {
      if (root) fail("second root element");
      root = std::move(node);
    } else {
      stack.back()->children.push_back(std::move(node));
    }
    if (!self_closing) stack.push_back(raw);
  }
  if (!stack.empty()) fail("unclosed <" + stack.back()->name + ">");
  if (!root) fail("no root element");
  return root;
}

}  // namespace slender::test
