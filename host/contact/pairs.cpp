#include "contact/pairs.h"

#include <algorithm>
#include <cmath>

#include "slender/core/parallel_for.h"
#include "slender/engine/contact_pipeline.h"

namespace slender::contact {

BroadPhaseInput broad_phase_input(const Model& m, const Real* q) {
  BroadPhaseInput in;
  in.nnode = m.nnode;
  in.node_x = q;
  in.nedge = m.nedge;
  in.edge_node = m.edge_node.data();
  in.edge_radius = m.edge_radius.data();
  in.ntri = m.ntri;
  in.tri_node = m.tri_node.data();
  in.tri_half_thickness = m.tri_half_thickness.data();
  return in;
}

namespace {

// keeps the sub-pairs that may come within range during the step (pipe::subpair_within_reach)
// and are no shell's rest neighbours (rest_ee(k), rest_pt(k): a verdict of the pair alone, so
// that asking it of the few sub-pairs within reach only gives the lists of asking it first),
// tested on every thread, kept in order
template <class RestEe, class RestPt>
void cull_far_subpairs(const Real* q,
                       const Real* u,
                       Real dt,
                       Real tol,
                       ContactPairLists& l,
                       std::vector<unsigned char>& keep,
                       const RestEe& rest_ee,
                       const RestPt& rest_pt) {
  auto filter = [&](std::vector<int>& nodes, std::vector<Real>& d, std::vector<Real>& mu,
                    bool edge_edge, const auto& rest) {
    keep.resize(d.size());
    const int* nd = nodes.data();
    const Real* dd = d.data();
    unsigned char* kp = keep.data();
    parallel_for_host(
        long(d.size()),
        [&](long k) {
          kp[k] =
              pipe::subpair_within_reach(q, u, nd + 4 * k, dd[k], tol, dt, edge_edge) && !rest(k)
                  ? 1
                  : 0;
        },
        kParallelGrainHeavy);
    size_t kept = 0;
    for (size_t k = 0; k < d.size(); ++k) {
      if (keep[k]) {
        for (int a = 0; a < 4; ++a)
          nodes[4 * kept + a] = nodes[4 * k + a];
        d[kept] = d[k];
        mu[kept] = mu[k];
        ++kept;
      }
    }
    nodes.resize(4 * kept);
    d.resize(kept);
    mu.resize(kept);
  };
  filter(l.ee_node, l.ee_d, l.ee_mu, true, rest_ee);
  filter(l.pt_node, l.pt_d, l.pt_mu, false, rest_pt);
}

}  // namespace

void ContactPairFinder::find(
    const Model& m, const Real* q, const Real* u, Real dt, ContactPairLists& out) {
  BroadPhaseInput in = broad_phase_input(m, q);
  in.node_u = u;
  in.sweep = kStepSweep * dt;
  BroadPhaseOptions opt;
  opt.inflation = m.contact.tolerance;
  const CandidatePairs cp = broad_phase_.find_pairs(in, opt);
  std::vector<int>& ee = out.ee_node;
  std::vector<Real>& ee_d = out.ee_d;
  std::vector<Real>& ee_mu = out.ee_mu;
  ee.clear(), ee_d.clear(), ee_mu.clear();
  out.pt_node.clear(), out.pt_d.clear(), out.pt_mu.clear();
  // rod edge pairs (the pipeline's test: pipe::Geometry::rod_pair_kept)
  const pipe::Geometry rest = pipe::host_geometry(m);
  for (long k = 0; k < cp.nee; ++k) {
    const int a = cp.ee_pair[2 * k], b = cp.ee_pair[2 * k + 1];
    if (!rest.rod_pair_kept(a, b)) continue;
    ee.insert(ee.end(), {m.edge_node[2 * a], m.edge_node[2 * a + 1], m.edge_node[2 * b],
                         m.edge_node[2 * b + 1]});
    ee_d.push_back(m.edge_radius[a] + m.edge_radius[b]);
    ee_mu.push_back(m.part_mu(m.edge_part[a], m.edge_part[b]));
  }
  // vertex-triangle pairs (vertex, triangle, part) and edge pairs, as flat lists sorted and
  // made unique below (the order of a std::map / std::set, in linear memory: this runs every
  // step)
  vt_.clear();
  edges_.clear();
  rod_shell_edges_.clear();
  for (long k = 0; k < cp.net; ++k) {
    const int e = cp.et_pair[2 * k], t = cp.et_pair[2 * k + 1];
    if (!(m.edge_EA[e] > 0)) continue;
    const int* tn = &m.tri_node[3 * t];
    for (int a = 0; a < 2; ++a) {
      const int v = m.edge_node[2 * e + a];
      if (v != tn[0] && v != tn[1] && v != tn[2]) vt_.push_back({v, t, m.edge_part[e]});
    }
    for (int j = 0; j < 3; ++j) {
      const int se = m.tri_edge[3 * t + j];
      const int* sn = &m.sedge_node[2 * se];
      const int* rn = &m.edge_node[2 * e];
      if (rn[0] == sn[0] || rn[0] == sn[1] || rn[1] == sn[0] || rn[1] == sn[1]) continue;
      rod_shell_edges_.push_back({e, se});
    }
  }
  // the triangle pairs' sub-pairs, each kept only where the culling below would keep it (within
  // reach and no rest neighbours: a verdict of the sub-pair alone, so that the lists are those
  // of culling after the sort). A fine cloth's candidates expand into tens of millions of
  // sub-pairs, nearly all out of reach: testing them in parallel here spares sorting them.
  // Chunks in candidate order, concatenated in order: the lists do not depend on the threads.
  const Real tol = m.contact.tolerance;
  const Real max_d = pipe::largest_contact_distance(m);
  const long nchunk = (cp.ntt + kTtChunk - 1) / kTtChunk;
  tt_vt_.resize(size_t(nchunk));
  tt_edges_.resize(size_t(nchunk));
  parallel_for_host(
      nchunk,
      [&](long c) {
        std::vector<std::array<int, 3>>& vt = tt_vt_[size_t(c)];
        std::vector<std::pair<int, int>>& edges = tt_edges_[size_t(c)];
        vt.clear();
        edges.clear();
        const long end = std::min(cp.ntt, (c + 1) * kTtChunk);
        for (long k = c * kTtChunk; k < end; ++k) {
          const int ta = cp.tt_pair[2 * k], tb = cp.tt_pair[2 * k + 1];
          const int* tri_a = &m.tri_node[3 * ta];
          const int* tri_b = &m.tri_node[3 * tb];
          if (!pipe::triangle_pair_near(q, u, tri_a, tri_b, max_d, tol, dt)) continue;
          for (int side = 0; side < 2; ++side) {
            const int t = side ? tb : ta, o = side ? ta : tb;
            const int* tn = side ? tri_b : tri_a;
            const int* on = side ? tri_a : tri_b;
            for (int a = 0; a < 3; ++a) {
              const int v = tn[a];
              if (v == on[0] || v == on[1] || v == on[2]) continue;
              const int n[4] = {v, on[0], on[1], on[2]};
              const Real d = m.node_contact_radius[v] + m.tri_half_thickness[o];
              if (!pipe::subpair_within_reach(q, u, n, d, tol, dt, false)) continue;
              if (rest.rest_neighbours_vt(v, o)) continue;
              vt.push_back({v, o, m.tri_part[t]});
            }
          }
          for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) {
              const int ea = m.tri_edge[3 * ta + a], eb = m.tri_edge[3 * tb + b];
              const int* na = &m.sedge_node[2 * ea];
              const int* nb = &m.sedge_node[2 * eb];
              if (na[0] == nb[0] || na[0] == nb[1] || na[1] == nb[0] || na[1] == nb[1]) continue;
              const int lo = std::min(ea, eb), hi = std::max(ea, eb);
              const int n[4] = {m.sedge_node[2 * lo], m.sedge_node[2 * lo + 1],
                                m.sedge_node[2 * hi], m.sedge_node[2 * hi + 1]};
              const Real d = m.tri_half_thickness[m.sedge_tri[2 * lo]] +
                             m.tri_half_thickness[m.sedge_tri[2 * hi]];
              if (!pipe::subpair_within_reach(q, u, n, d, tol, dt, true)) continue;
              if (rest.rest_neighbours_ee(lo, hi)) continue;
              edges.push_back({lo, hi});
            }
        }
      },
      1);
  for (long c = 0; c < nchunk; ++c) {
    vt_.insert(vt_.end(), tt_vt_[size_t(c)].begin(), tt_vt_[size_t(c)].end());
    edges_.insert(edges_.end(), tt_edges_[size_t(c)].begin(), tt_edges_[size_t(c)].end());
  }
  // a vertex-triangle pair keeps the part of the first element that brought it (stable sort,
  // first of each run kept)
  std::stable_sort(vt_.begin(), vt_.end(), [](const auto& a, const auto& b) {
    return a[0] != b[0] ? a[0] < b[0] : a[1] < b[1];
  });
  vt_.erase(std::unique(vt_.begin(), vt_.end(),
                        [](const auto& a, const auto& b) { return a[0] == b[0] && a[1] == b[1]; }),
            vt_.end());
  for (auto* list : {&edges_, &rod_shell_edges_}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  for (const auto& [v, t, part] : vt_) {
    out.pt_node.insert(out.pt_node.end(),
                       {v, m.tri_node[3 * t], m.tri_node[3 * t + 1], m.tri_node[3 * t + 2]});
    out.pt_d.push_back(m.node_contact_radius[v] + m.tri_half_thickness[t]);
    out.pt_mu.push_back(m.part_mu(part, m.tri_part[t]));
  }
  for (const auto& [e, se] : rod_shell_edges_) {
    ee.insert(ee.end(), {m.edge_node[2 * e], m.edge_node[2 * e + 1], m.sedge_node[2 * se],
                         m.sedge_node[2 * se + 1]});
    ee_d.push_back(m.edge_radius[e] + m.tri_half_thickness[m.sedge_tri[2 * se]]);
    ee_mu.push_back(m.part_mu(m.edge_part[e], m.tri_part[m.sedge_tri[2 * se]]));
  }
  const size_t shell_ee_begin = ee_d.size();  // the shell edge pairs: edges_, in order
  for (const auto& [a, b] : edges_) {
    ee.insert(ee.end(), {m.sedge_node[2 * a], m.sedge_node[2 * a + 1], m.sedge_node[2 * b],
                         m.sedge_node[2 * b + 1]});
    // a shell edge's thickness: its first triangle's
    ee_d.push_back(m.tri_half_thickness[m.sedge_tri[2 * a]] +
                   m.tri_half_thickness[m.sedge_tri[2 * b]]);
    ee_mu.push_back(m.part_mu(m.tri_part[m.sedge_tri[2 * a]], m.tri_part[m.sedge_tri[2 * b]]));
  }
  // a shell's own neighbours in the rest shape are no pair (pipe::Geometry::rest_neighbours_vt)
  cull_far_subpairs(
      q, u, dt, m.contact.tolerance, out, keep_,
      [&](long k) {
        if (size_t(k) < shell_ee_begin) return false;
        const auto& [a, b] = edges_[size_t(k) - shell_ee_begin];
        return rest.rest_neighbours_ee(a, b);
      },
      [&](long k) { return rest.rest_neighbours_vt(vt_[size_t(k)][0], vt_[size_t(k)][1]); });
}

}  // namespace slender::contact
