// Shell topology of a model: triangles, their unique edges (stretching springs), hinges with
// natural angles, lumped masses and displaced volumes (seed 000 §3.1, §3.3.1).

#include <cmath>
#include <map>
#include <sstream>

#include "model/model_internal.h"
#include "slender/core/error.h"
#include "slender/stencils/shell_hinge.h"

namespace slender {

namespace {

Vec3 node_at(const Model& m, int n) {
  return vec3(m.node_x0[3 * n], m.node_x0[3 * n + 1], m.node_x0[3 * n + 2]);
}

}  // namespace

void build_shells(Model& m) {
  const SceneSpec& scene = m.scene;
  Real extent = 1;
  for (Real v : m.node_x0)
    extent = std::max(extent, std::fabs(v));

  // triangles in global node ids; shell masses and displaced volumes, h A / 3 per node
  std::vector<Real> tri_E, tri_h;  // Young's modulus and thickness per triangle
  for (int p = 0; p < m.npart; ++p) {
    const PartSpec& part = scene.parts[p];
    const Material& mat = scene.materials[part.material];
    for (size_t t = 0; t < part.triangles.size(); ++t) {
      int n[3];
      for (int k = 0; k < 3; ++k)
        n[k] = m.part_node[m.part_node_adr[p] + part.triangles[t][k]];
      const Vec3 a = node_at(m, n[0]), b = node_at(m, n[1]), c = node_at(m, n[2]);
      const Real area = 0.5 * norm(cross(b - a, c - a));
      if (n[0] == n[1] || n[1] == n[2] || n[0] == n[2] || !(area > 1e-12 * extent * extent)) {
        std::ostringstream os;
        os << "triangle " << t << " (nodes " << part.triangles[t][0] << ", " << part.triangles[t][1]
           << ", " << part.triangles[t][2] << ") has zero area"
           << (n[0] == n[1] || n[1] == n[2] || n[0] == n[2] ? " after joints merged its nodes"
                                                            : "");
        throw InputError(part.loc.file, part.loc.line, part.loc.field, os.str());
      }
      for (int k = 0; k < 3; ++k) {
        m.tri_node.push_back(n[k]);
        m.node_mass[n[k]] += mat.density * part.thickness * area / 3;
        m.node_volume[n[k]] += part.thickness * area / 3;
      }
      m.tri_area_bar.push_back(area);
      m.tri_part.push_back(p);
      tri_E.push_back(mat.youngs_modulus);
      tri_h.push_back(part.thickness);
      ++m.ntri;
    }
  }

  // unique edges: edge k of a triangle is the one opposite its node k
  std::map<std::pair<int, int>, int> edge_of;
  std::vector<std::vector<int>> edge_tris;
  m.tri_edge.assign(3 * size_t(m.ntri), -1);
  for (int t = 0; t < m.ntri; ++t)
    for (int k = 0; k < 3; ++k) {
      const int a = m.tri_node[3 * t + (k + 1) % 3], b = m.tri_node[3 * t + (k + 2) % 3];
      const auto key = std::make_pair(std::min(a, b), std::max(a, b));
      auto it = edge_of.find(key);
      if (it == edge_of.end()) {
        it = edge_of.emplace(key, m.nsedge++).first;
        m.sedge_node.insert(m.sedge_node.end(), {a, b});
        m.sedge_l_bar.push_back(norm(node_at(m, b) - node_at(m, a)));
        edge_tris.emplace_back();
      }
      m.tri_edge[3 * t + k] = it->second;
      edge_tris[it->second].push_back(t);
    }

  // stretching springs, k_s = sqrt(3)/4 E h l_bar (seed 000 §3.1), averaged over the triangles
  // that share the edge (they may belong to different parts)
  m.sedge_EA.assign(m.nsedge, 0);
  for (int e = 0; e < m.nsedge; ++e) {
    Real Eh = 0;
    for (int t : edge_tris[e])
      Eh += tri_E[t] * tri_h[t];
    Eh /= Real(edge_tris[e].size());
    m.sedge_EA[e] = std::sqrt(Real(3)) / 4 * Eh * m.sedge_l_bar[e];
  }

  // hinges at interior edges of hinge-bending parts: x0 -> x1 runs as in triangle A
  for (int e = 0; e < m.nsedge; ++e) {
    if (edge_tris[e].size() != 2) continue;
    const int tA = edge_tris[e][0], tB = edge_tris[e][1];
    if (scene.parts[m.tri_part[tA]].bending != ShellBending::kHinge ||
        scene.parts[m.tri_part[tB]].bending != ShellBending::kHinge)
      continue;
    int kA = 0, kB = 0;
    while (m.tri_edge[3 * tA + kA] != e)
      ++kA;
    while (m.tri_edge[3 * tB + kB] != e)
      ++kB;
    const int x0 = m.tri_node[3 * tA + (kA + 1) % 3], x1 = m.tri_node[3 * tA + (kA + 2) % 3];
    const int x2 = m.tri_node[3 * tA + kA], x3 = m.tri_node[3 * tB + kB];
    m.hinge_node.insert(m.hinge_node.end(), {x0, x1, x2, x3});
    // k_b = E h^3 / (12 sqrt 3) (eq. 17), averaged over the two triangles
    Real kb = 0;
    for (int t : {tA, tB})
      kb += tri_E[t] * tri_h[t] * tri_h[t] * tri_h[t];
    m.hinge_kb.push_back(kb / 2 / (12 * std::sqrt(Real(3))));
    Vec<12> x;
    for (int a = 0; a < 4; ++a)
      x.set_segment(3 * a, node_at(m, m.hinge_node[4 * m.nhinge + a]));
    m.hinge_phi_bar.push_back(shell_hinge_angle(x));
    ++m.nhinge;
  }
}

}  // namespace slender
