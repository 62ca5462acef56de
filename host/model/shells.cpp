// Shell topology of a model: triangles, their unique edges (stretching springs), hinges with
// natural angles, lumped masses and displaced volumes (seed 000 §3.1, §3.3.1).

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "model/model_internal.h"
#include "slender/core/error.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/shell_hinge.h"
#include "slender/stencils/shell_membrane.h"
#include "slender/stencils/shell_midedge.h"

namespace slender {

namespace {

Vec3 node_at(const Model& m, int n) {
  return vec3(m.node_x0[3 * n], m.node_x0[3 * n + 1], m.node_x0[3 * n + 2]);
}

// The stiffness k_b of the hinge at shell edge e between triangles tA and tB, for
// E = 1/2 k_b (phi - phi_bar)^2 (docs/numerics.md, "Hinge stiffness"); each triangle adds its
// part's share.
// - papers: 1/2 (2 / sqrt 3) E h^3 / 12 per triangle, so k_b = (2 / sqrt 3) E h^3 / 12: on an
//   equilateral mesh the plate rigidity E h^3 / 12 (Savin et al. 2011). Seed 000's eq. 17 quotes
//   1 / sqrt(3) together with the factor 1/2, which halves the rigidity.
// - geometric: D_t A_t l_bar^2 / (A_A + A_B)^2 per triangle, so that two of one part give
//   k_b = D_h l_bar^2 / (A_A + A_B) (Grinspun et al. 2003's |e|^2 / A weighting). For a
//   deformation w = 1/2 p^T K p the dihedral angle of a hinge with wing heights h_A, h_B is
//   1/2 (h_A + h_B) K_mm plus terms in K_tm and K_tt that the mesh adds (numerics.md); on an
//   equilateral lattice, on a cylinder of curvature kappa, the three edge directions' hinges
//   then store exactly 1/2 D_h kappa^2 per area (any direction), as on a grid of right
//   triangles bent about an axis. The lattice acts as a plate of Poisson ratio -1/3 whatever
//   the material's, so a free strip bends with D_h (1 - 1/9): D_h = E h^3 / (12 (1 - 1/9))
//   makes that E h^3 / 12, Euler-Bernoulli's E I per width.
Real hinge_stiffness(const SceneSpec& scene,
                     const Model& m,
                     const std::vector<Real>& tri_E,
                     const std::vector<Real>& tri_h,
                     int tA,
                     int tB,
                     int e) {
  const HingeStiffness kA = scene.parts[m.tri_part[tA]].hinge_stiffness;
  const HingeStiffness kB = scene.parts[m.tri_part[tB]].hinge_stiffness;
  if (kA == HingeStiffness::kPapers && kB == HingeStiffness::kPapers) {
    // (the expression of the models before the geometric option, to the last bit)
    Real kb = 0;
    for (int t : {tA, tB})
      kb += tri_E[t] * tri_h[t] * tri_h[t] * tri_h[t];
    return kb / 2 * 2 / (12 * std::sqrt(Real(3)));
  }
  const Real l2 = m.sedge_l_bar[e] * m.sedge_l_bar[e];
  const Real area = m.tri_area_bar[tA] + m.tri_area_bar[tB];
  Real kb = 0;
  for (int t : {tA, tB}) {
    const Real Eh3 = tri_E[t] * tri_h[t] * tri_h[t] * tri_h[t];
    if (scene.parts[m.tri_part[t]].hinge_stiffness == HingeStiffness::kPapers) {
      kb += Eh3 / (12 * std::sqrt(Real(3)));
    } else {
      const Real D_h = Eh3 / (12 * (1 - Real(1) / 9));
      kb += D_h * m.tri_area_bar[t] * l2 / (area * area);
    }
  }
  return kb;
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

  // Voronoi lengths of the viscous drag (seed 000 eq. 27): half of every shell edge, as of
  // every rod edge, goes to each of its nodes
  for (int e = 0; e < m.nsedge; ++e)
    for (int a = 0; a < 2; ++a)
      m.node_dl[m.sedge_node[2 * e + a]] += m.sedge_l_bar[e] / 2;

  // the (up to two) triangles of every edge
  m.sedge_tri.assign(2 * size_t(m.nsedge), -1);
  for (int e = 0; e < m.nsedge; ++e)
    for (size_t j = 0; j < edge_tris[e].size() && j < 2; ++j)
      m.sedge_tri[2 * e + j] = edge_tris[e][j];

  // stretching springs, E = 1/2 k_s l_bar eps^2 (seed 000 eq. 10): every triangle of the edge
  // adds its own share E h A / l_bar (A its rest area; the triangles may belong to different
  // parts), i.e. a spring constant k_s / l_bar = sum E h A / l_bar^2. On an equilateral
  // triangle the share is seed 000's sqrt(3)/4 E h l_bar; an interior edge takes two of them,
  // and the triangular lattice of such springs has the membrane stiffness E h (2D Young's
  // modulus 2 k / sqrt(3) of a lattice of spring constant k = sqrt(3)/2 E h) and the Poisson
  // ratio 1/3, whatever the material's nu. On a grid of right triangles the same shares give
  // E h along the grid's axes (with Poisson ratio 0). Seed 000's per-edge constant, a single
  // share, gives half of that (E h / 2); tests/physics/membrane_test.cpp pulls both meshes.
  // Only the triangles of "springs" parts give shares: the others' membrane is a
  // constant-strain triangle (stencils/shell_membrane.h, built with the family tables), and an
  // edge of theirs alone keeps a spring of stiffness 0
  static_assert(int(MembraneModel::kStvk) == ShellMembrane::kStvk &&
                    int(MembraneModel::kNeoHookean) == ShellMembrane::kNeoHookean,
                "the membrane family's laws are the scene's membrane models");
  m.sedge_EA.assign(m.nsedge, 0);
  for (int e = 0; e < m.nsedge; ++e) {
    Real k = 0;
    for (int t : edge_tris[e])
      if (scene.parts[m.tri_part[t]].membrane == MembraneModel::kSprings)
        k += tri_E[t] * tri_h[t] * m.tri_area_bar[t];
    m.sedge_EA[e] = k / m.sedge_l_bar[e];
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
    m.hinge_sedge.push_back(e);
    m.hinge_kb.push_back(hinge_stiffness(scene, m, tri_E, tri_h, tA, tB, e));
    Vec<12> x;
    for (int a = 0; a < 4; ++a)
      x.set_segment(3 * a, node_at(m, m.hinge_node[4 * m.nhinge + a]));
    m.hinge_phi_bar.push_back(shell_hinge_angle(x));
    ++m.nhinge;
  }
}

void build_midedge(Model& m) {
  const SceneSpec& scene = m.scene;
  m.sedge_xi.assign(m.nsedge, -1);
  m.sedge_frame_fixed.assign(m.nsedge, 0);  // the clamps set theirs with the fixed DOFs
  for (int t = 0; t < m.ntri; ++t) {
    const PartSpec& part = scene.parts[m.tri_part[t]];
    if (part.bending != ShellBending::kMidEdge) continue;
    const Material& mat = scene.materials[part.material];
    for (int k = 0; k < 3; ++k) {
      const int e = m.tri_edge[3 * t + k];
      if (m.sedge_xi[e] < 0) m.sedge_xi[e] = m.nxi++;
      // e^k runs from node k+1 to node k+2 of the triangle
      m.mid_sign.push_back(m.sedge_node[2 * e] == m.tri_node[3 * t + (k + 1) % 3] ? 1 : -1);
    }
    m.mid_tri.push_back(t);
    const Real h = part.thickness, nu = mat.poisson_ratio;
    m.mid_kb.push_back(mat.youngs_modulus * h * h * h / (24 * (1 - nu * nu)));
    m.mid_nu.push_back(nu);
    ++m.nmid;
  }
  m.mid_lambda_bar.assign(9 * size_t(m.nmid), 0);
}

void init_midedge_rest_shape(Model& m) {
  m.sedge_tau0_0.assign(3 * size_t(m.nsedge), 0);
  if (m.nmid == 0) return;
  std::vector<Real> q(m.ndof, 0);
  std::copy(m.node_x0.begin(), m.node_x0.end(), q.begin());
  const ModelView mv = host_view(m);
  const MidEdgeFrames frames{mv, q.data(), m.sedge_tau0_0.data(), /*refresh_fixed=*/true};
  for (long e = 0; e < m.nsedge; ++e)
    frames(e);
  // the natural shape operator of each triangle: its initial shape with all xi = 0 (the
  // mid-edge normals start as the average of the two face normals)
  for (int k = 0; k < m.nmid; ++k) {
    const int t = m.mid_tri[k];
    Vec<12> x = Vec<12>::zero();
    ShellMidedge::Params p;
    for (int a = 0; a < 3; ++a) {
      x.set_segment(3 * a, node_at(m, m.tri_node[3 * t + a]));
      const int e = m.tri_edge[3 * t + a];
      p.tau0[a] = vec3(m.sedge_tau0_0[3 * e], m.sedge_tau0_0[3 * e + 1], m.sedge_tau0_0[3 * e + 2]);
      p.s[a] = m.mid_sign[3 * k + a];
      p.l_bar[a] = m.sedge_l_bar[e];
    }
    p.A_bar = m.tri_area_bar[t];
    p.Lambda_bar = Mat3::zero();
    p.kb = m.mid_kb[k];
    p.nu = m.mid_nu[k];
    Mat3 L;
    shell_midedge_shape_operator(x, p, L);
    for (int i = 0; i < 9; ++i)
      m.mid_lambda_bar[9 * k + i] = L.a[i];
  }
}

bool midedge_unit_curvature(const Model& m, int k, const Vec3& direction, Real c[3]) {
  const int t = m.mid_tri[k];
  Vec<9> x;
  for (int a = 0; a < 3; ++a)
    x.set_segment(3 * a, node_at(m, m.tri_node[3 * t + a]));
  Mat3 K = Mat3::identity();
  if (norm(direction) > 0) {
    // the direction's part in the triangle's plane, made unit
    const Vec3 n = cross(x.segment<3>(3) - x.segment<3>(0), x.segment<3>(6) - x.segment<3>(0));
    const Vec3 d = direction - dot(direction, n) / dot(n, n) * n;
    if (!(norm(d) > 1e-6 * norm(direction))) {
      c[0] = c[1] = c[2] = 0;
      return false;
    }
    K = (1 / dot(d, d)) * outer(d, d);
  }
  return shell_midedge_curvature_components(x, K, c);
}

std::vector<Real> midedge_curvature_components(const Model& m, const Vec3& direction) {
  SLENDER_CHECK(
      std::isfinite(direction[0]) && std::isfinite(direction[1]) && std::isfinite(direction[2]),
      "midedge_curvature_components: the direction must be finite");
  std::vector<Real> out(3 * size_t(m.nmid));
  for (int k = 0; k < m.nmid; ++k)
    SLENDER_CHECK(midedge_unit_curvature(m, k, direction, out.data() + 3 * size_t(k)),
                  "midedge_curvature_components: the direction (", direction[0], ", ", direction[1],
                  ", ", direction[2], ") is normal to mid-edge triangle ", k, " (shell triangle ",
                  m.mid_tri[k], ")");
  return out;
}

void add_rod_shell_joint_edges(Model& m,
                               std::vector<Real>& edge_EI1,
                               std::vector<Real>& edge_EI2,
                               std::vector<Real>& edge_GJ) {
  if (m.ntri == 0 || m.nedge == 0) return;
  // rod edges at each node
  std::vector<std::vector<int>> node_rod_edges(m.nnode);
  for (int e = 0; e < m.nedge; ++e)
    for (int a = 0; a < 2; ++a)
      node_rod_edges[m.edge_node[2 * e + a]].push_back(e);

  // joint nodes: a rod edge and a triangle meet there; their triangles' edges are augmented
  std::vector<int> joint_of_sedge(m.nsedge, -1);  // the joint node that augments the edge
  for (int t = 0; t < m.ntri; ++t)
    for (int k = 0; k < 3; ++k) {
      const int n = m.tri_node[3 * t + k];
      if (node_rod_edges[n].empty()) continue;
      for (int j = 0; j < 3; ++j) {
        if (joint_of_sedge[m.tri_edge[3 * t + j]] < 0) joint_of_sedge[m.tri_edge[3 * t + j]] = n;
      }
    }
  // a shell edge that is already a rod edge (a rope along the shell's border) stays one edge
  std::set<std::pair<int, int>> rod_pairs;
  for (int e = 0; e < m.nedge; ++e) {
    const int a = m.edge_node[2 * e], b = m.edge_node[2 * e + 1];
    rod_pairs.insert({std::min(a, b), std::max(a, b)});
  }
  for (int se = 0; se < m.nsedge; ++se) {
    const int n = joint_of_sedge[se];
    if (n < 0) continue;
    const int sa = m.sedge_node[2 * se], sb = m.sedge_node[2 * se + 1];
    if (rod_pairs.count({std::min(sa, sb), std::max(sa, sb)})) continue;
    // the rod's properties at the joint, averaged over its edges there
    Real EI1 = 0, EI2 = 0, GJ = 0, inertia_per_length = 0, radius = 0;
    const auto& rods = node_rod_edges[n];
    for (int e : rods) {
      EI1 += edge_EI1[e];
      EI2 += edge_EI2[e];
      GJ += edge_GJ[e];
      inertia_per_length += m.edge_inertia[e] / m.edge_l_bar[e];
      radius += m.edge_radius[e];
    }
    const Real w = Real(1) / Real(rods.size());
    const int a = m.sedge_node[2 * se], b = m.sedge_node[2 * se + 1];
    m.edge_node.insert(m.edge_node.end(), {a, b});
    m.edge_l_bar.push_back(m.sedge_l_bar[se]);
    m.edge_EA.push_back(0);
    m.edge_stretch_alpha.push_back(0);
    m.edge_inertia.push_back(w * inertia_per_length * m.sedge_l_bar[se]);
    m.edge_radius.push_back(w * radius);
    m.edge_part.push_back(m.edge_part[rods[0]]);
    edge_EI1.push_back(w * EI1);
    edge_EI2.push_back(w * EI2);
    edge_GJ.push_back(w * GJ);
    ++m.nedge;
  }
}

}  // namespace slender
