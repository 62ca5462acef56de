#pragma once

// The contact sub-pairs of a step by their definition, by brute force: the reference the pair
// finder (engine/contact_pipeline.h, on either executor) is checked against. O(n^2) in the
// elements, no tree, no grid, no shortcut that skips a sub-pair:
// - sub-pairs: every sub-pair of every two elements (rod edges, then triangles) whose boxes over
//   the step (element_step_box, grown by the radius or half thickness and half the tolerance)
//   overlap and that share no node, kept when within reach (pipe::subpair_within_reach) and not
//   a shell's rest neighbours (two rod edges: when both stretch and are no close neighbours
//   along one rod), each once, a vertex-triangle pair with the part of the first element pair
//   that brought it in key order; the lists in the finder's order (contact/contact_pairs.h);
// - candidates: those element pairs that bring a kept sub-pair, as packed keys in key order
//   (the finder's cut of whole triangle pairs, pipe::triangle_pair_near, is not used here: the
//   lists and candidates check that it loses none).

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "slender/engine/contact_pairs.h"
#include "slender/engine/contact_pipeline.h"
#include "slender/model.h"

namespace slender::contact::test {

struct ReferencePairs {
  std::vector<std::uint64_t> candidates;  ///< pipe::candidate_key, sorted
  ContactPairLists lists;
};

/// every two elements (rod edges, then triangles) sharing no node whose boxes over a step
/// (element_step_box: the nodes at q and q + sweep u, u may be null) grown by their radius or
/// half thickness and half of `inflation` overlap, as packed keys in key order
inline std::vector<std::uint64_t> reference_overlapping(
    const Model& m, const Real* q, const Real* u, Real sweep, Real inflation) {
  const pipe::Geometry g = pipe::host_geometry(m);
  const int nelem = m.nedge + m.ntri;
  std::vector<Real> box(6 * size_t(nelem));
  for (int e = 0; e < nelem; ++e) {
    const bool edge = e < m.nedge;
    const int* nd = edge ? &m.edge_node[2 * size_t(e)] : &m.tri_node[3 * size_t(e - m.nedge)];
    const Real r = edge ? m.edge_radius[size_t(e)] : m.tri_half_thickness[size_t(e - m.nedge)];
    element_step_box(q, u, sweep, nd, edge ? 2 : 3, r + Real(0.5) * inflation, &box[6 * e],
                     &box[6 * e + 3]);
  }
  std::vector<std::uint64_t> overlapping;
  for (int a = 0; a < nelem; ++a)
    for (int b = a + 1; b < nelem; ++b) {
      if (!pipe::boxes_overlap(&box[6 * a], &box[6 * b])) continue;
      int an[3], bn[3];
      g.element_nodes(a, an);
      g.element_nodes(b, bn);
      bool shared = false;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          shared = shared || an[i] == bn[j];
      if (shared) continue;
      overlapping.push_back(pipe::candidate_key(m.nedge, a, b));
    }
  std::sort(overlapping.begin(), overlapping.end());
  return overlapping;
}

inline ReferencePairs reference_pairs(const Model& m, const Real* q, const Real* u, Real dt) {
  const pipe::Geometry g = pipe::host_geometry(m);
  const Real tol = m.contact.tolerance;
  auto within = [&](const int n[4], Real d, bool ee) {
    return pipe::subpair_within_reach(q, u, n, d, tol, dt, ee);
  };
  // the overlapping element pairs sharing no node, in key order
  const std::vector<std::uint64_t> overlapping =
      reference_overlapping(m, q, u, kStepSweep * dt, tol);
  ReferencePairs out;
  // the sub-pairs
  std::vector<std::pair<int, int>> rod;            // rod edge pairs, in key order
  std::set<std::pair<int, int>> rod_shell, shell;  // (rod edge, shell edge), (lower, higher)
  std::map<std::pair<int, int>, int> vt;           // (vertex, triangle) -> part
  bool brought = false;                            // by the element pair at hand
  auto add_vt = [&](int v, int t, int part) {
    const int* tn = &m.tri_node[3 * size_t(t)];
    if (v == tn[0] || v == tn[1] || v == tn[2]) return;
    const int n[4] = {v, tn[0], tn[1], tn[2]};
    if (!within(n, m.node_contact_radius[size_t(v)] + m.tri_half_thickness[size_t(t)], false) ||
        g.rest_neighbours_vt(v, t))
      return;
    vt.emplace(std::make_pair(v, t), part);  // the first keeps its part
    brought = true;
  };
  for (const std::uint64_t k : overlapping) {
    const int kind = int(k >> 62), a = pipe::key_first(k), b = pipe::key_second(k);
    brought = false;
    if (kind == 0) {
      const int n[4] = {m.edge_node[2 * a], m.edge_node[2 * a + 1], m.edge_node[2 * b],
                        m.edge_node[2 * b + 1]};
      if (g.rod_pair_kept(a, b) && within(n, m.edge_radius[a] + m.edge_radius[b], true)) {
        rod.push_back({a, b});
        brought = true;
      }
    } else if (kind == 1) {  // rod edge a, triangle b
      if (!(m.edge_EA[a] > 0)) continue;
      for (int i = 0; i < 2; ++i)
        add_vt(m.edge_node[2 * a + i], b, m.edge_part[a]);
      for (int j = 0; j < 3; ++j) {
        const int se = m.tri_edge[3 * b + j];
        const int n[4] = {m.edge_node[2 * a], m.edge_node[2 * a + 1], m.sedge_node[2 * se],
                          m.sedge_node[2 * se + 1]};
        if (n[0] == n[2] || n[0] == n[3] || n[1] == n[2] || n[1] == n[3]) continue;
        if (within(n, m.edge_radius[a] + m.tri_half_thickness[m.sedge_tri[2 * se]], true)) {
          rod_shell.insert({a, se});
          brought = true;
        }
      }
    } else {  // triangles a, b
      for (int i = 0; i < 3; ++i)
        add_vt(m.tri_node[3 * a + i], b, m.tri_part[a]);
      for (int i = 0; i < 3; ++i)
        add_vt(m.tri_node[3 * b + i], a, m.tri_part[b]);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          const int ea = m.tri_edge[3 * a + i], eb = m.tri_edge[3 * b + j];
          const int lo = std::min(ea, eb), hi = std::max(ea, eb);
          const int n[4] = {m.sedge_node[2 * lo], m.sedge_node[2 * lo + 1], m.sedge_node[2 * hi],
                            m.sedge_node[2 * hi + 1]};
          if (n[0] == n[2] || n[0] == n[3] || n[1] == n[2] || n[1] == n[3]) continue;
          const Real d =
              m.tri_half_thickness[m.sedge_tri[2 * lo]] + m.tri_half_thickness[m.sedge_tri[2 * hi]];
          if (within(n, d, true) && !g.rest_neighbours_ee(lo, hi)) {
            shell.insert({lo, hi});
            brought = true;
          }
        }
    }
    if (brought) out.candidates.push_back(k);
  }
  ContactPairLists& l = out.lists;
  auto add_ee = [&](int n0, int n1, int n2, int n3, Real d, Real mu) {
    l.ee_node.insert(l.ee_node.end(), {n0, n1, n2, n3});
    l.ee_d.push_back(d);
    l.ee_mu.push_back(mu);
  };
  for (const auto& [a, b] : rod)
    add_ee(m.edge_node[2 * a], m.edge_node[2 * a + 1], m.edge_node[2 * b], m.edge_node[2 * b + 1],
           m.edge_radius[a] + m.edge_radius[b], m.part_mu(m.edge_part[a], m.edge_part[b]));
  for (const auto& [e, se] : rod_shell) {
    const int t = m.sedge_tri[2 * se];
    add_ee(m.edge_node[2 * e], m.edge_node[2 * e + 1], m.sedge_node[2 * se],
           m.sedge_node[2 * se + 1], m.edge_radius[e] + m.tri_half_thickness[t],
           m.part_mu(m.edge_part[e], m.tri_part[t]));
  }
  for (const auto& [a, b] : shell) {
    const int ta = m.sedge_tri[2 * a], tb = m.sedge_tri[2 * b];
    add_ee(m.sedge_node[2 * a], m.sedge_node[2 * a + 1], m.sedge_node[2 * b],
           m.sedge_node[2 * b + 1], m.tri_half_thickness[ta] + m.tri_half_thickness[tb],
           m.part_mu(m.tri_part[ta], m.tri_part[tb]));
  }
  for (const auto& [vt_pair, part] : vt) {
    const auto [v, t] = vt_pair;
    l.pt_node.insert(l.pt_node.end(),
                     {v, m.tri_node[3 * t], m.tri_node[3 * t + 1], m.tri_node[3 * t + 2]});
    l.pt_d.push_back(m.node_contact_radius[v] + m.tri_half_thickness[t]);
    l.pt_mu.push_back(m.part_mu(part, m.tri_part[t]));
  }
  return out;
}

}  // namespace slender::contact::test
