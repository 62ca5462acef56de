#pragma once

// Contact sub-pairs on an executor: the lists of contact/contact_pairs.h, built where the state
// lives (the GPU, for the CUDA backend) so that a step with contact needs no copy of the state on
// the host. Written once over an executor X (engine/executor.h): the one pair finder, of the
// host executor (the CPU backend) and of the CUDA one. tests/contact/reference_pairs.h builds the
// same lists by brute force, the reference it is checked against.
//
// Passes, each a loop over items run by the executor, a scan, a sort or a reduction:
// 1. boxes: each rod edge's and triangle's box over the step (element_step_box) and the bounds
//    of their centres (an exact min/max reduction, which also counts non-finite boxes: a
//    non-finite position or velocity makes its elements' boxes non-finite);
// 2. linear BVH (Karras 2012): 30-bit Morton codes of the centres with the element id below
//    them (distinct 64-bit keys), a radix sort, every internal node from the sorted keys at
//    once, boxes fitted bottom-up (a counter per node: the second child to arrive goes on);
// 3. candidates: each leaf climbs the tree and walks down the subtrees of the leaves after it in
//    the order for those whose boxes overlap its own, that share no node with it and that bring
//    a sub-pair within reach (WalkTree::near: a triangle pair tested whole first,
//    triangle_pair_near, and a shell's rest-neighbour verdicts read from a table the first call
//    builds from the rest shape, Geometry::rest_row), written in one pass at places an
//    atomic counter hands out (a second pass where they outgrow the room), then sorted by kind
//    (edge-edge, edge-triangle, triangle-triangle) and ids;
// 4. sub-pairs: rod edge pairs in candidate order (each candidate one); vertex-triangle,
//    rod-shell edge and shell edge pairs written into fixed slots per candidate (vt_slot,
//    ee_slot: empty where out of reach or between a shell's rest neighbours), sorted (stable, so
//    that the first of equal keys is the first emitted) and made unique (a flag scan);
// 5. comparison with the previous step's lists (a count reduction): the caller learns whether
//    the pairs changed, and downloads them only then.
// Buffers grow and never shrink: steps of a steady size allocate nothing. Every result is a
// function of the state alone (sorts and scans are deterministic, min/max exact, the fitted
// boxes do not depend on the order the counters are taken, the candidates are sorted whatever
// order the walk wrote them in), so two runs agree bit for bit.

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <vector>

#include "slender/core/error.h"
#include "slender/core/hd.h"
#include "slender/core/parallel_for.h"
#include "slender/core/rod_gap.h"
#include "slender/engine/contact_pairs.h"
#include "slender/model.h"
#include "slender/stencils/contact_distance.h"

namespace slender::contact {

namespace pipe {

/// the distance of a sub-pair's four nodes n (point-triangle, or edge-edge) at positions x
SLENDER_HD inline Real subpair_distance(const Real* x, const int n[4], bool edge_edge) {
  Vec<12> p;
  for (int a = 0; a < 4; ++a)
    for (int c = 0; c < 3; ++c)
      p[3 * a + c] = x[3 * n[a] + c];
  ContactDistance cd;
  if (edge_edge) {
    edge_edge_distance(p, kEnergy, cd, nullptr, nullptr);
  } else {
    point_triangle_distance(p, kEnergy, cd, nullptr, nullptr);
  }
  return cd.delta;
}

/// the gap between the bounding boxes of a sub-pair's two primitives (the point, node 0, and
/// the triangle, nodes 1 to 3; or the edges, nodes 0 and 1 and nodes 2 and 3) at positions x: a
/// lower bound of their distance, for a tenth of its cost
SLENDER_HD inline Real subpair_box_gap(const Real* x, const int n[4], bool edge_edge) {
  const int split = edge_edge ? 2 : 1;
  Real s = 0;
  for (int c = 0; c < 3; ++c) {
    Real alo = x[3 * n[0] + c], ahi = alo, blo = x[3 * n[3] + c], bhi = blo;
    for (int a = 1; a < 3; ++a) {
      const Real v = x[3 * n[a] + c];
      if (a < split) {
        alo = v < alo ? v : alo;
        ahi = v > ahi ? v : ahi;
      } else {
        blo = v < blo ? v : blo;
        bhi = v > bhi ? v : bhi;
      }
    }
    const Real g = blo - ahi > alo - bhi ? blo - ahi : alo - bhi;
    if (g > 0) s += g * g;
  }
  return ::sqrt(s);
}

/// the smallest distance between a node of a sub-pair's one primitive and a node of the other
/// (the point and the triangle's corners, or the two edges' ends) at positions x: an upper bound
/// of their distance, for a tenth of its cost
SLENDER_HD inline Real subpair_node_distance(const Real* x, const int n[4], bool edge_edge) {
  const int split = edge_edge ? 2 : 1;
  Real best = -1;
  for (int a = 0; a < split; ++a)
    for (int b = split; b < 4; ++b) {
      Real s = 0;
      for (int c = 0; c < 3; ++c) {
        const Real d = x[3 * n[a] + c] - x[3 * n[b] + c];
        s += d * d;
      }
      if (best < 0 || s < best) best = s;
    }
  return ::sqrt(best);
}

/// a sub-pair's distance at x as far as a comparison with `range` needs it:
/// - the boxes' gap, where that alone is beyond the range by more than rounding (a relative
///   1e-12; the distance is at least the gap);
/// - the nodes' smallest distance, where that is within the range by more than rounding (a
///   relative 1e-9; the distance is at most that);
/// - else the distance itself.
/// Most sub-pairs, far or near, are settled without their distance. The positions must be
/// finite (the finders refuse others before culling; the model checks its rest shape): the
/// two bounds skip a NaN coordinate in their comparisons, and may settle a sub-pair whose
/// distance would be NaN.
SLENDER_HD inline Real subpair_distance_to(const Real* x, const int n[4], bool ee, Real range) {
  const Real gap = subpair_box_gap(x, n, ee);
  if (gap * (1 - Real(1e-12)) >= range) return gap;
  const Real near = subpair_node_distance(x, n, ee);
  if (near * (1 + Real(1e-9)) < range) return near;
  return subpair_distance(x, n, ee);
}

/// a lower bound of the distance between two triangles (nodes ta and tb at positions x): the
/// largest gap between their projections on eight axes, each triangle's normal and the normals
/// of its edges in its plane (0 where they overlap on all, or a triangle is degenerate). Both
/// triangles are projected on each axis as computed, so that a rounded axis still gives a
/// bound. In a flat cloth, neighbours whose boxes overlap are mostly separated along an edge's
/// normal. The axes are tried in a fixed order and the first gap of at least `enough` is
/// returned at once (a lower bound still, and at least `enough` where the largest is): a caller
/// that asks only whether the gap reaches a value gets the same answer for less work.
SLENDER_HD inline Real triangle_pair_gap(const Real* x,
                                         const int ta[3],
                                         const int tb[3],
                                         Real enough = HUGE_VAL) {
  Real p[6][3];  // the six nodes, relative to ta's first (smaller numbers, smaller rounding)
  for (int c = 0; c < 3; ++c) {
    const Real o = x[3 * ta[0] + c];
    for (int a = 0; a < 3; ++a) {
      p[a][c] = x[3 * ta[a] + c] - o;
      p[3 + a][c] = x[3 * tb[a] + c] - o;
    }
  }
  Real best = 0;
  for (int side = 0; side < 2; ++side) {
    const Real(*t)[3] = p + 3 * side;  // this triangle's nodes; the other's: p + 3 (1 - side)
    const Real(*o)[3] = p + 3 * (1 - side);
    Real e[3][3], n[3];
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c)
        e[i][c] = t[(i + 1) % 3][c] - t[i][c];
    n[0] = e[0][1] * e[2][2] - e[0][2] * e[2][1];
    n[1] = e[0][2] * e[2][0] - e[0][0] * e[2][2];
    n[2] = e[0][0] * e[2][1] - e[0][1] * e[2][0];
    const Real nn = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
    if (!(nn > 0)) continue;  // degenerate (or not finite): no bound from this triangle
    for (int axis = 0; axis < 4; ++axis) {
      Real m[3];
      if (axis == 3) {
        m[0] = n[0], m[1] = n[1], m[2] = n[2];
      } else {  // edge `axis`'s outward normal in the plane: e x n (up to orientation)
        const Real* ei = e[axis];
        m[0] = ei[1] * n[2] - ei[2] * n[1];
        m[1] = ei[2] * n[0] - ei[0] * n[2];
        m[2] = ei[0] * n[1] - ei[1] * n[0];
      }
      Real tlo = 0, thi = 0, olo = 0, ohi = 0;
      for (int a = 0; a < 3; ++a) {
        const Real pt = m[0] * t[a][0] + m[1] * t[a][1] + m[2] * t[a][2];
        const Real po = m[0] * o[a][0] + m[1] * o[a][1] + m[2] * o[a][2];
        tlo = a == 0 || pt < tlo ? pt : tlo;
        thi = a == 0 || pt > thi ? pt : thi;
        olo = a == 0 || po < olo ? po : olo;
        ohi = a == 0 || po > ohi ? po : ohi;
      }
      const Real g = olo - thi > tlo - ohi ? olo - thi : tlo - ohi;
      if (g > 0) {
        const Real mm = m[0] * m[0] + m[1] * m[1] + m[2] * m[2];
        const Real gap = g / ::sqrt(mm);
        if (gap >= enough) return gap;
        best = gap > best ? gap : best;
      }
    }
  }
  return best;
}

/// whether triangles ta and tb (nodes at x, velocities u) may hold a sub-pair within reach in a
/// step of size dt (subpair_within_reach): not where their gap (triangle_pair_gap) is beyond the
/// largest contact distance of any of their sub-pairs (max_d) plus the tolerance plus how much
/// closer any two of their six nodes may come (the diagonal of their velocities' box bounds any
/// two nodes' relative speed), with a relative margin of 1e-9 for rounding, so that culling
/// their sub-pairs after this test keeps the lists of testing every sub-pair
SLENDER_HD inline bool triangle_pair_near(const Real* x,
                                          const Real* u,
                                          const int ta[3],
                                          const int tb[3],
                                          Real max_d,
                                          Real tolerance,
                                          Real dt) {
  Real s2 = 0;
  for (int dim = 0; dim < 3; ++dim) {
    Real lo = u[3 * ta[0] + dim], hi = lo;
    for (int a = 1; a < 6; ++a) {
      const Real w = u[3 * (a < 3 ? ta[a] : tb[a - 3]) + dim];
      lo = w < lo ? w : lo;
      hi = w > hi ? w : hi;
    }
    s2 += (hi - lo) * (hi - lo);
  }
  const Real reach = max_d + (tolerance + kStepSweep * dt * ::sqrt(s2));
  const Real beyond = reach * (1 + Real(1e-9));
  return !(triangle_pair_gap(x, ta, tb, beyond) >= beyond);
}

/// whether a sub-pair of contact distance d (nodes n at x, velocities u) may come within range
/// during a step of size dt: its distance now below d plus the tolerance plus how much closer
/// its nodes may come (subpair_approach); a NaN distance keeps the pair. The one culling test of
/// the host finder and the pipeline.
SLENDER_HD inline bool subpair_within_reach(
    const Real* x, const Real* u, const int n[4], Real d, Real tolerance, Real dt, bool ee) {
  const Real reach = d + (tolerance + subpair_approach(u, n, dt));
  return !(subpair_distance_to(x, n, ee, reach) >= reach);
}

/// the model's arrays the passes read, in the executor's memory (or the Model's own, on the
/// host: host_geometry)
struct Geometry {
  int nnode = 0, nedge = 0, ntri = 0, nmaterial = 0;
  Real tolerance = 0;
  const int* edge_node = nullptr;
  const Real* edge_radius = nullptr;
  const Real* edge_EA = nullptr;
  const int* edge_part = nullptr;
  const Real* edge_arc = nullptr;
  const Real* edge_l_bar = nullptr;
  const Real* part_loop_length = nullptr;
  const int* part_material = nullptr;
  const Real* contact_mu = nullptr;
  const int* tri_node = nullptr;
  const Real* tri_half_thickness = nullptr;
  const int* tri_part = nullptr;
  const int* tri_edge = nullptr;
  const int* sedge_node = nullptr;
  const int* sedge_tri = nullptr;
  const Real* node_contact_radius = nullptr;
  const Real* node_x0 = nullptr;  // the rest shape (Model::node_x0)
  const int* node_part = nullptr;

  /// A shell's own neighbours are no contact: vertex v and triangle t of one part that are
  /// within contact range of each other (their contact distance plus the tolerance) in the rest
  /// shape. When a shell's edges are shorter than its contact distance (fine meshes, thick
  /// shells), a triangle's second or third ring, which shares no node with it, lies within
  /// contact range at rest: those pairs would push the shell apart in its own plane. A fold
  /// brings together parts of the shell that are far apart at rest, and is unaffected. A
  /// function of (v, t) alone, so that the host's and the executor's lists agree whichever
  /// candidate brings the pair.
  SLENDER_HD bool rest_neighbours_vt(int v, int t) const {
    if (!node_x0 || node_part[v] != tri_part[t]) return false;
    const int n[4] = {v, tri_node[3 * t], tri_node[3 * t + 1], tri_node[3 * t + 2]};
    return rest_within(n, false, node_contact_radius[v] + tri_half_thickness[t] + tolerance);
  }
  /// the same for two shell edges (of their first triangles' parts and thicknesses, as the
  /// written pair's), a function of the unordered pair (the lower edge id first)
  SLENDER_HD bool rest_neighbours_ee(int ea, int eb) const {
    if (ea > eb) {
      const int e = ea;
      ea = eb;
      eb = e;
    }
    const int ta = sedge_tri[2 * ea], tb = sedge_tri[2 * eb];
    if (!node_x0 || tri_part[ta] != tri_part[tb]) return false;
    const int n[4] = {sedge_node[2 * ea], sedge_node[2 * ea + 1], sedge_node[2 * eb],
                      sedge_node[2 * eb + 1]};
    return rest_within(n, true, tri_half_thickness[ta] + tri_half_thickness[tb] + tolerance);
  }
  /// whether a sub-pair's nodes (point-triangle, or edge-edge) are closer than `range` in the
  /// rest shape
  SLENDER_HD bool rest_within(const int n[4], bool edge_edge, Real range) const {
    return subpair_distance_to(node_x0, n, edge_edge, range) < range;
  }

  /// The rest-neighbour verdicts of the triangle pairs, tabled once (ContactPipeline, from the
  /// rest shape, which never changes): for triangle a, the triangles b > a that share no node
  /// with it and have at least one sub-pair of rest neighbours are rest_tri[rest_row[a] ..
  /// rest_row[a + 1]) in increasing order, and rest_bits of each says which: bit j < 6 for
  /// vt_slot's sub-pair j, bit 6 + j for ee_slot's j, each the verdict rest_neighbours_vt or
  /// rest_neighbours_ee gives. A pair not in the table has none. Null where no table is built
  /// (host_geometry): the verdicts are then computed.
  const int* rest_row = nullptr;
  const int* rest_tri = nullptr;
  const int* rest_bits = nullptr;
  /// the rest_bits of triangles a < b sharing no node (0: no sub-pair of rest neighbours)
  SLENDER_HD int rest_mask(int a, int b) const {
    const int r0 = rest_row[a], n = rest_row[a + 1] - r0;
    const int at = r0 + int(sorted_lower_bound(rest_tri + r0, long(n), b));
    return at < r0 + n && rest_tri[at] == b ? rest_bits[at] : 0;
  }

  SLENDER_HD Real part_mu(int a, int b) const {
    if (!contact_mu) return 0;
    return contact_mu[part_material[a] * nmaterial + part_material[b]];
  }
  /// whether rod edges a and b may touch: both stretch, and they are not neighbours along one
  /// rod closer than their contact distance plus the tolerance (a rod thick compared with its
  /// edges would touch itself even when straight). The one test of both pair finders.
  SLENDER_HD bool rod_pair_kept(int a, int b) const {
    if (!(edge_EA[a] > 0 && edge_EA[b] > 0)) return false;
    const Real gap = rod_gap(a, b);
    return !(gap >= 0 && gap < edge_radius[a] + edge_radius[b] + tolerance);
  }
  /// Model::rod_gap
  SLENDER_HD Real rod_gap(int a, int b) const {
    if (edge_part[a] != edge_part[b] || edge_arc[a] < 0 || edge_arc[b] < 0) return -1;
    return rod_arc_gap(edge_arc[a], edge_l_bar[a], edge_arc[b], edge_l_bar[b],
                       part_loop_length[edge_part[a]]);
  }
  /// node ids of element e (edges first, then triangles); an edge repeats its last node
  SLENDER_HD void element_nodes(int e, int n[3]) const {
    if (e < nedge) {
      n[0] = edge_node[2 * e];
      n[1] = n[2] = edge_node[2 * e + 1];
    } else {
      const int* t = tri_node + 3 * (e - nedge);
      n[0] = t[0], n[1] = t[1], n[2] = t[2];
    }
  }
};

/// The model arrays a Geometry views, each a member of one name in Model and in Geometry (and
/// ContactPipeline's copy of it, with a trailing underscore); the shell arrays only where there
/// are triangles (rest neighbours are a shell's)
// clang-format off
#define SLENDER_GEOMETRY_ARRAYS(X)                                                          \
  X(edge_node) X(edge_radius) X(edge_EA) X(edge_part) X(edge_arc) X(edge_l_bar)              \
  X(part_loop_length) X(part_material) X(contact_mu) X(tri_node) X(tri_half_thickness)       \
  X(tri_part) X(tri_edge) X(sedge_node) X(sedge_tri) X(node_contact_radius)
// clang-format on
#define SLENDER_GEOMETRY_SHELL_ARRAYS(X) X(node_x0) X(node_part)

/// [m] the largest contact distance of any sub-pair of model m's shells (vertex-triangle: a
/// node's contact radius and a half thickness; edge-edge: two half thicknesses), 0 without
/// triangles: triangle_pair_near's bound
inline Real largest_contact_distance(const Model& m) {
  Real max_ht = 0, max_r = 0;
  for (int t = 0; t < m.ntri; ++t)
    max_ht = m.tri_half_thickness[size_t(t)] > max_ht ? m.tri_half_thickness[size_t(t)] : max_ht;
  for (int v = 0; v < m.nnode; ++v)
    max_r = m.node_contact_radius[size_t(v)] > max_r ? m.node_contact_radius[size_t(v)] : max_r;
  return max_r + max_ht > 2 * max_ht ? max_r + max_ht : 2 * max_ht;
}

/// a Geometry's counts and tolerance of model m (its arrays to be placed by the caller)
inline Geometry geometry_counts(const Model& m) {
  Geometry g;
  g.nnode = m.nnode, g.nedge = m.nedge, g.ntri = m.ntri, g.nmaterial = m.nmaterial;
  g.tolerance = m.contact.tolerance;
  return g;
}

/// the Geometry of a Model's own (host) arrays: the host pair finder's rod-pair and
/// rest-neighbour tests
inline Geometry host_geometry(const Model& m) {
  Geometry g = geometry_counts(m);
#define SLENDER_HOST_ARRAY(a) g.a = m.a.empty() ? nullptr : m.a.data();
  SLENDER_GEOMETRY_ARRAYS(SLENDER_HOST_ARRAY)
  if (m.ntri > 0) {
    SLENDER_GEOMETRY_SHELL_ARRAYS(SLENDER_HOST_ARRAY)
  }
#undef SLENDER_HOST_ARRAY
  return g;
}

/// an axis-aligned box; `bad` counts non-finite ones in a reduction
struct Bounds {
  Real lo[3], hi[3];
  int bad;
};

struct BoundsUnion {
  SLENDER_HD Bounds operator()(const Bounds& a, const Bounds& b) const {
    Bounds r;
    for (int d = 0; d < 3; ++d) {
      r.lo[d] = b.lo[d] < a.lo[d] ? b.lo[d] : a.lo[d];
      r.hi[d] = b.hi[d] > a.hi[d] ? b.hi[d] : a.hi[d];
    }
    r.bad = a.bad + b.bad;
    return r;
  }
};

struct SumOp {
  SLENDER_HD long operator()(long a, long b) const { return a + b; }
};

/// box of element e (nodes' min/max grown by radius or half thickness plus inflation / 2, as
/// the reference's), written to box[6 e ...] as lo, hi
struct ElementBoxes {
  Geometry g;
  const Real* x;
  const Real* u;  // velocities: the box covers the step (element_step_box)
  Real sweep;
  Real inflation;
  Real* box;  // (nelem x 6)
  SLENDER_HD void operator()(long i) const {
    const int e = int(i);
    const bool is_edge = e < g.nedge;
    const int k = is_edge ? 2 : 3;
    const int* nd = is_edge ? g.edge_node + 2 * e : g.tri_node + 3 * (e - g.nedge);
    const Real r = is_edge ? g.edge_radius[e] : g.tri_half_thickness[e - g.nedge];
    element_step_box(x, u, sweep, nd, k, r + Real(0.5) * inflation, box + 6 * i, box + 6 * i + 3);
  }
};

/// the centre of a box as a degenerate Bounds, non-finite ones counted
struct CentreOf {
  const Real* box;
  SLENDER_HD Bounds operator()(long i) const {
    Bounds b;
    b.bad = 0;
    for (int d = 0; d < 3; ++d) {
      const Real c = Real(0.5) * (box[6 * i + d] + box[6 * i + 3 + d]);
      if (!is_finite(c)) b.bad = 1;
      b.lo[d] = b.hi[d] = is_finite(c) ? c : 0;
    }
    return b;
  }
};

/// 10 bits of x spread to every third bit
SLENDER_HD inline std::uint64_t spread3(std::uint64_t x) {
  x &= 0x3ff;
  x = (x | (x << 16)) & 0x30000ffULL;
  x = (x | (x << 8)) & 0x300f00fULL;
  x = (x | (x << 4)) & 0x30c30c3ULL;
  x = (x | (x << 2)) & 0x9249249ULL;
  return x;
}

/// key of element i: the Morton code of its centre in the bounds above its id
struct MortonKeys {
  const Real* box;
  Real origin[3], scale[3];  // cell = (centre - origin) * scale, in [0, 1023]
  std::uint64_t* key;
  SLENDER_HD void operator()(long i) const {
    std::uint64_t code = 0;
    for (int d = 0; d < 3; ++d) {
      const Real c = Real(0.5) * (box[6 * i + d] + box[6 * i + 3 + d]);
      Real t = (c - origin[d]) * scale[d];
      t = t < 0 ? 0 : (t > 1023 ? 1023 : t);
      code |= spread3(std::uint64_t(t)) << (2 - d);
    }
    key[i] = (code << 32) | std::uint64_t(i);
  }
};

/// Karras's split search: internal node i of the radix tree over n sorted distinct keys.
/// Nodes: internal 0 .. n-2 (0 the root), leaf r is node n-1+r.
struct BuildTree {
  const std::uint64_t* key;
  long n;
  int* child;   // (n-1 x 2)
  int* parent;  // (2n-1), the root's -1
  SLENDER_HD int delta(long i, long j) const {
    if (j < 0 || j >= n) return -1;
      // leading zeros of the XOR (never 0: keys are distinct)
#if defined(__CUDA_ARCH__)
    return __clzll((long long)(key[i] ^ key[j]));
#else
    return __builtin_clzll(key[i] ^ key[j]);
#endif
  }
  SLENDER_HD void operator()(long i) const {
    const int d = delta(i, i + 1) > delta(i, i - 1) ? 1 : -1;
    const int dmin = delta(i, i - d);
    long lmax = 2;
    while (delta(i, i + lmax * d) > dmin)
      lmax *= 2;
    long l = 0;
    for (long t = lmax / 2; t >= 1; t /= 2)
      if (delta(i, i + (l + t) * d) > dmin) l += t;
    const long j = i + l * d;
    const int dnode = delta(i, j);
    long s = 0;
    for (long t = l; t > 1;) {
      t = (t + 1) / 2;
      if (delta(i, i + (s + t) * d) > dnode) s += t;
    }
    const long gamma = i + s * d + (d < 0 ? -1 : 0);
    const long lo = i < j ? i : j, hi = i < j ? j : i;
    const long left = lo == gamma ? (n - 1) + gamma : gamma;
    const long right = hi == gamma + 1 ? (n - 1) + gamma + 1 : gamma + 1;
    child[2 * i] = int(left);
    child[2 * i + 1] = int(right);
    parent[left] = int(i);
    parent[right] = int(i);
    if (i == 0) parent[0] = -1;
  }
};

/// an atomic add that orders the memory around it (the refit's arrival counters)
SLENDER_HD inline int atomic_add_ordered(int* p, int v) {
#if defined(SLENDER_DEVICE_CODE) && defined(__CUDA_ARCH__)
  __threadfence();
  const int old = atomicAdd(p, v);
  __threadfence();
  return old;
#else
  return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
#endif
}

/// leaf r's box is its element's; then up the tree: the second child to arrive at a node writes
/// the node's box (the union of its children's) and goes on
struct FitBoxes {
  const std::uint64_t* key;
  const Real* box;  // by element (nelem x 6)
  long n;
  const int* child;
  const int* parent;
  int* arrived;    // (n-1), zero beforehand
  Real* node_box;  // (2n-1 x 6)
  SLENDER_HD void operator()(long r) const {
    const long leaf = n - 1 + r;
    const long e = long(key[r] & 0xffffffffULL);
    for (int k = 0; k < 6; ++k)
      node_box[6 * leaf + k] = box[6 * e + k];
    long node = leaf;
    while (true) {
      const int p = parent[node];
      if (p < 0) return;
      if (atomic_add_ordered(&arrived[p], 1) == 0) return;  // the sibling finishes the node
      const volatile Real* a = node_box + 6 * child[2 * p];
      const volatile Real* b = node_box + 6 * child[2 * p + 1];
      for (int d = 0; d < 3; ++d) {
        const Real alo = a[d], blo = b[d], ahi = a[3 + d], bhi = b[3 + d];
        node_box[6 * p + d] = blo < alo ? blo : alo;
        node_box[6 * p + 3 + d] = bhi > ahi ? bhi : ahi;
      }
      node = p;
    }
  }
};

SLENDER_HD inline bool boxes_overlap(const Real* a, const Real* b) {
  return a[0] <= b[3] && b[0] <= a[3] && a[1] <= b[4] && b[1] <= a[4] && a[2] <= b[5] &&
         b[2] <= a[5];
}

/// the packed candidate key: kind (0 edge-edge, 1 edge-triangle, 2 triangle-triangle) in the
/// top two bits, then the first id (31 bits), then the second (31 bits), ids local to their kind
SLENDER_HD inline std::uint64_t candidate_key(int nedge, int a, int b) {
  if (b < a) {
    const int t = a;
    a = b, b = t;
  }
  const std::uint64_t kind = b < nedge ? 0 : (a < nedge ? 1 : 2);
  const std::uint64_t la = std::uint64_t(a < nedge ? a : a - nedge);
  const std::uint64_t lb = std::uint64_t(b < nedge ? b : b - nedge);
  return (kind << 62) | (la << 31) | lb;
}

/// the step over which a sub-pair's reach is judged (subpair_within_reach): positions x,
/// velocities u, the step dt and the contact tolerance
struct Reach {
  const Real* x;
  const Real* u;
  Real dt, tolerance;
  SLENDER_HD bool near(const int n[4], Real d, bool edge_edge) const {
    return subpair_within_reach(x, u, n, d, tolerance, dt, edge_edge);
  }
};

constexpr std::uint64_t kNoKey = ~std::uint64_t(0);
/// Geometry::rest_bits of a triangle pair all of whose sub-pairs (6 vertex-triangle, 9 edge-edge:
/// two triangles sharing no node have all fifteen) join rest neighbours
constexpr int kAllSubpairs = (1 << 15) - 1;

/// Sub-pair j of triangles a and b as vt_slot numbers them (j < 6): vertex v of triangle tri (a's
/// for j < 3, then b's) against the other triangle, t; the rest-neighbour table's bits follow
/// these numbers (RestBits)
SLENDER_HD inline void tt_vertex_triangle(
    const Geometry& g, int a, int b, int j, int& tri, int& v, int& t) {
  tri = j < 3 ? a : b;
  t = j < 3 ? b : a;
  v = g.tri_node[3 * tri + j % 3];
}
/// ... and as ee_slot numbers them (j < 9): a's shell edge j / 3 against b's edge j % 3
SLENDER_HD inline void tt_edges(const Geometry& g, int a, int b, int j, int& ea, int& eb) {
  ea = g.tri_edge[3 * a + j / 3];
  eb = g.tri_edge[3 * b + j % 3];
}

/// Vertex-triangle sub-pair j of element pair (a, b) of kind 1 (rod edge a, triangle b; j < 2:
/// the edge's end nodes) or kind 2 (triangles a, b; j < 6: a's vertices against b, then b's
/// against a), ids local to their kind: its key (vertex, triangle), with `part` the part of the
/// element that brought the vertex; kNoKey where there is no such sub-pair (the vertex on the
/// triangle, a rod edge that does not stretch), it is out of reach, or it joins a shell's rest
/// neighbours (verdicts of the sub-pair alone: a sub-pair several candidates bring gets one).
/// rest_known: the caller knows the sub-pair joins no rest neighbours (Geometry::rest_mask), and
/// the verdict is not computed again.
SLENDER_HD inline std::uint64_t vt_slot(const Geometry& g,
                                        const Reach& reach,
                                        int kind,
                                        int a,
                                        int b,
                                        int j,
                                        int& part,
                                        bool rest_known = false) {
  int v, t;
  if (kind == 1) {
    if (!(g.edge_EA[a] > 0)) return kNoKey;
    v = g.edge_node[2 * a + j], t = b, part = g.edge_part[a];
  } else {
    int tri;
    tt_vertex_triangle(g, a, b, j, tri, v, t);
    part = g.tri_part[tri];
  }
  const int* tn = g.tri_node + 3 * t;
  if (v == tn[0] || v == tn[1] || v == tn[2]) return kNoKey;
  const int n[4] = {v, tn[0], tn[1], tn[2]};
  if (!reach.near(n, g.node_contact_radius[v] + g.tri_half_thickness[t], false) ||
      (!rest_known && g.rest_neighbours_vt(v, t)))
    return kNoKey;
  return (std::uint64_t(v) << 32) | std::uint64_t(t);
}

/// Edge-edge sub-pair j of element pair (a, b) of kind 1 (rod edge a against triangle b's edge
/// j < 3: key (rod edge, shell edge)) or kind 2 (triangle a's edge j / 3 against b's edge j % 3,
/// j < 9: key (lower, higher shell edge)); kNoKey where the edges share a node or the rod edge
/// does not stretch, the sub-pair is out of reach, or it joins a shell's rest neighbours.
/// rest_known as for vt_slot.
SLENDER_HD inline std::uint64_t ee_slot(
    const Geometry& g, const Reach& reach, int kind, int a, int b, int j, bool rest_known = false) {
  if (kind == 1) {
    if (!(g.edge_EA[a] > 0)) return kNoKey;
    const int se = g.tri_edge[3 * b + j];
    const int* sn = g.sedge_node + 2 * se;
    const int* rn = g.edge_node + 2 * a;
    if (rn[0] == sn[0] || rn[0] == sn[1] || rn[1] == sn[0] || rn[1] == sn[1]) return kNoKey;
    const int n[4] = {rn[0], rn[1], sn[0], sn[1]};
    if (!reach.near(n, g.edge_radius[a] + g.tri_half_thickness[g.sedge_tri[2 * se]], true))
      return kNoKey;
    return (std::uint64_t(a) << 32) | std::uint64_t(se);
  }
  int ea, eb;
  tt_edges(g, a, b, j, ea, eb);
  const int lo = ea < eb ? ea : eb, hi = ea < eb ? eb : ea;
  const int n[4] = {g.sedge_node[2 * lo], g.sedge_node[2 * lo + 1], g.sedge_node[2 * hi],
                    g.sedge_node[2 * hi + 1]};
  if (n[0] == n[2] || n[0] == n[3] || n[1] == n[2] || n[1] == n[3]) return kNoKey;
  const Real d =
      g.tri_half_thickness[g.sedge_tri[2 * lo]] + g.tri_half_thickness[g.sedge_tri[2 * hi]];
  if (!reach.near(n, d, true) || (!rest_known && g.rest_neighbours_ee(lo, hi))) return kNoKey;
  return (std::uint64_t(lo) << 32) | std::uint64_t(hi);
}

/// kStackDepth bounds the walk's stack: the tree over distinct 64-bit keys is at most 64 deep
constexpr int kStackDepth = 96;
/// a walk keeps this many candidates before it reserves room for them in the output
constexpr int kWalkBatch = 16;

/// a 64-bit atomic add (relaxed: the pass's end orders it); the old value
SLENDER_HD inline unsigned long long atomic_add_u64(unsigned long long* p, unsigned long long v) {
#if defined(SLENDER_DEVICE_CODE) && defined(__CUDA_ARCH__)
  return atomicAdd(p, v);
#else
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/// leaf r's candidates: leaves after r whose boxes overlap r's, that share no node with it and
/// that may hold a sub-pair within reach (`near`), written to out in batches at places reserved
/// by an atomic counter (counter[0] ends as the total; those beyond `capacity` are counted, not
/// written: the caller grows out and walks again). Their order in out depends on the threads;
/// the caller sorts them. The leaves after r are those of the right children of r's ancestors
/// whose left child holds r (each such subtree's leaves follow r's in the order): the walk
/// climbs from r and descends into those subtrees alone, where their boxes overlap r's.
struct WalkTree {
  Geometry g;
  Reach reach;
  Real max_d;  // largest_contact_distance
  const std::uint64_t* key;
  long n;
  const int* child;
  const int* parent;
  const Real* node_box;
  std::uint64_t* out;
  long capacity;
  unsigned long long* counter;  // [0] candidates, [1] set when the stack would overflow
  bool every;  // every overlapping pair sharing no node, without `near` (find_overlapping)
  /// whether elements a < b (edges first) bring a sub-pair: two rod edges that both stretch,
  /// are no close neighbours along one rod (Geometry::rod_pair_kept) and may come within reach
  /// (one sub-pair); a rod edge and a triangle, or two triangles, of which a sub-pair is kept
  /// (vt_slot, ee_slot), two triangles first tested whole (triangle_pair_near)
  SLENDER_HD bool near(int a, int b) const {
    if (b < g.nedge) {
      if (!g.rod_pair_kept(a, b)) return false;
      const int n[4] = {g.edge_node[2 * a], g.edge_node[2 * a + 1], g.edge_node[2 * b],
                        g.edge_node[2 * b + 1]};
      return reach.near(n, g.edge_radius[a] + g.edge_radius[b], true);
    }
    int part;
    const int lb = b - g.nedge;
    if (a < g.nedge) {  // a rod edge and a triangle
      for (int j = 0; j < 2; ++j)
        if (vt_slot(g, reach, 1, a, lb, j, part) != kNoKey) return true;
      for (int j = 0; j < 3; ++j)
        if (ee_slot(g, reach, 1, a, lb, j) != kNoKey) return true;
      return false;
    }
    // two triangles: their rest-neighbour verdicts from the table where there is one (a pair
    // whose fifteen sub-pairs all join rest neighbours brings none, wherever it is; the
    // table's presence read from g where it is needed, a register less in the walk)
    const int la = a - g.nedge;
    const int rest = g.rest_row ? g.rest_mask(la, lb) : 0;
    if (rest == kAllSubpairs) return false;
    if (!triangle_pair_near(reach.x, reach.u, g.tri_node + 3 * la, g.tri_node + 3 * lb, max_d,
                            reach.tolerance, reach.dt))
      return false;
    for (int j = 0; j < 6; ++j)
      if (!(rest >> j & 1) &&
          vt_slot(g, reach, 2, la, lb, j, part, g.rest_row != nullptr) != kNoKey)
        return true;
    for (int j = 0; j < 9; ++j)
      if (!(rest >> (6 + j) & 1) &&
          ee_slot(g, reach, 2, la, lb, j, g.rest_row != nullptr) != kNoKey)
        return true;
    return false;
  }
  SLENDER_HD void flush(const std::uint64_t* batch, int nb) const {
    const unsigned long long at = atomic_add_u64(counter, (unsigned long long)nb);
    for (int k = 0; k < nb; ++k)
      if (at + k < (unsigned long long)capacity) out[at + k] = batch[k];
  }
  SLENDER_HD void operator()(long r) const {
    const long leaf = n - 1 + r;
    const Real* mine = node_box + 6 * leaf;
    const int a = int(key[r] & 0xffffffffULL);
    int an[3];
    g.element_nodes(a, an);
    int stack[kStackDepth];
    std::uint64_t batch[kWalkBatch];
    int nb = 0;
    for (int from = int(leaf), p = parent[leaf]; p >= 0; from = p, p = parent[p]) {
      if (child[2 * p] != from) continue;  // r under the right child: no leaf after it here
      const int right = child[2 * p + 1];
      if (!boxes_overlap(mine, node_box + 6 * right)) continue;
      int top = 0;
      stack[top++] = right;
      while (top > 0) {
        const int c = stack[--top];
        if (c < n - 1) {
          for (int s = 0; s < 2; ++s) {
            const int cc = child[2 * c + s];
            if (!boxes_overlap(mine, node_box + 6 * cc)) continue;
            if (top == kStackDepth) {
              counter[1] = 1;
              return;
            }
            stack[top++] = cc;
          }
          continue;
        }
        const int b = int(key[c - (n - 1)] & 0xffffffffULL);
        int bn[3];
        g.element_nodes(b, bn);
        bool adjacent = false;
        for (int k = 0; k < 3; ++k)
          for (int l = 0; l < 3; ++l)
            adjacent = adjacent || an[k] == bn[l];
        if (adjacent || (!every && !(a < b ? near(a, b) : near(b, a)))) continue;
        batch[nb++] = candidate_key(g.nedge, a, b);
        if (nb == kWalkBatch) {
          flush(batch, nb);
          nb = 0;
        }
      }
    }
    if (nb > 0) flush(batch, nb);
  }
};

/// where the sorted candidate keys of kinds 1 and 2 start (one item)
struct KindStarts {
  const std::uint64_t* key;
  long n;
  long* start;  // (2)
  SLENDER_HD void operator()(long) const {
    start[0] = sorted_lower_bound(key, n, std::uint64_t(1) << 62);
    start[1] = sorted_lower_bound(key, n, std::uint64_t(2) << 62);
  }
};

SLENDER_HD inline int key_first(std::uint64_t k) { return int((k >> 31) & 0x7fffffffULL); }
SLENDER_HD inline int key_second(std::uint64_t k) { return int(k & 0x7fffffffULL); }

/// a sub-pair list being built: nodes (x 4), contact distance, friction coefficient
struct PairOut {
  int* node;
  Real* d;
  Real* mu;
};

/// rod edge pair k of the candidates (each one a sub-pair)
struct WriteRodPairs {
  Geometry g;
  const std::uint64_t* ee;
  PairOut out;
  SLENDER_HD void operator()(long k) const {
    const int a = key_first(ee[k]), b = key_second(ee[k]);
    const int p = int(k);
    out.node[4 * p] = g.edge_node[2 * a];
    out.node[4 * p + 1] = g.edge_node[2 * a + 1];
    out.node[4 * p + 2] = g.edge_node[2 * b];
    out.node[4 * p + 3] = g.edge_node[2 * b + 1];
    out.d[p] = g.edge_radius[a] + g.edge_radius[b];
    out.mu[p] = g.part_mu(g.edge_part[a], g.edge_part[b]);
  }
};

/// vertex-triangle slots: 2 per edge-triangle candidate, then 6 per triangle pair (vt_slot)
struct EmitVertexTriangle {
  Geometry g;
  Reach reach;
  const std::uint64_t* et;
  long net;
  const std::uint64_t* tt;
  std::uint64_t* key;
  int* part;
  SLENDER_HD void operator()(long s) const {
    const bool rod = s < 2 * net;
    const long k = rod ? s / 2 : (s - 2 * net) / 6;
    const int j = int(rod ? s % 2 : (s - 2 * net) % 6);
    const std::uint64_t c = rod ? et[k] : tt[k];
    int pt = -1;
    key[s] = vt_slot(g, reach, rod ? 1 : 2, key_first(c), key_second(c), j, pt);
    part[s] = pt;
  }
};

/// rod-shell edge slots: 3 per edge-triangle candidate (ee_slot)
struct EmitRodShellEdges {
  Geometry g;
  Reach reach;
  const std::uint64_t* et;
  std::uint64_t* key;
  SLENDER_HD void operator()(long s) const {
    const std::uint64_t c = et[s / 3];
    key[s] = ee_slot(g, reach, 1, key_first(c), key_second(c), int(s % 3));
  }
};

/// shell edge pair slots: 9 per triangle pair (ee_slot)
struct EmitShellEdgePairs {
  Geometry g;
  Reach reach;
  const std::uint64_t* tt;
  std::uint64_t* key;
  SLENDER_HD void operator()(long s) const {
    const std::uint64_t c = tt[s / 9];
    key[s] = ee_slot(g, reach, 2, key_first(c), key_second(c), int(s % 9));
  }
};

/// 1 for the first of each run of equal sorted keys (kNoKey excluded)
struct FirstOfRun {
  const std::uint64_t* key;
  int* flag;
  SLENDER_HD void operator()(long i) const {
    flag[i] = key[i] != kNoKey && (i == 0 || key[i] != key[i - 1]);
  }
};

SLENDER_HD inline int key_hi(std::uint64_t k) { return int(k >> 32); }
SLENDER_HD inline int key_lo(std::uint64_t k) { return int(k & 0xffffffffULL); }

struct WriteVertexTriangle {
  Geometry g;
  const std::uint64_t* key;
  const int* part;
  const int* flag;
  const int* pos;
  PairOut out;
  SLENDER_HD void operator()(long i) const {
    if (!flag[i]) return;
    const int v = key_hi(key[i]), t = key_lo(key[i]), p = pos[i];
    out.node[4 * p] = v;
    for (int a = 0; a < 3; ++a)
      out.node[4 * p + 1 + a] = g.tri_node[3 * t + a];
    out.d[p] = g.node_contact_radius[v] + g.tri_half_thickness[t];
    out.mu[p] = g.part_mu(part[i], g.tri_part[t]);
  }
};

struct WriteRodShellEdge {
  Geometry g;
  const std::uint64_t* key;
  const int* flag;
  const int* pos;
  int base;  // first slot of this segment in the edge pair list
  PairOut out;
  SLENDER_HD void operator()(long i) const {
    if (!flag[i]) return;
    const int e = key_hi(key[i]), se = key_lo(key[i]), p = base + pos[i];
    out.node[4 * p] = g.edge_node[2 * e];
    out.node[4 * p + 1] = g.edge_node[2 * e + 1];
    out.node[4 * p + 2] = g.sedge_node[2 * se];
    out.node[4 * p + 3] = g.sedge_node[2 * se + 1];
    const int tri = g.sedge_tri[2 * se];
    out.d[p] = g.edge_radius[e] + g.tri_half_thickness[tri];
    out.mu[p] = g.part_mu(g.edge_part[e], g.tri_part[tri]);
  }
};

struct WriteShellEdgePair {
  Geometry g;
  const std::uint64_t* key;
  const int* flag;
  const int* pos;
  int base;
  PairOut out;
  SLENDER_HD void operator()(long i) const {
    if (!flag[i]) return;
    const int a = key_hi(key[i]), b = key_lo(key[i]), p = base + pos[i];
    out.node[4 * p] = g.sedge_node[2 * a];
    out.node[4 * p + 1] = g.sedge_node[2 * a + 1];
    out.node[4 * p + 2] = g.sedge_node[2 * b];
    out.node[4 * p + 3] = g.sedge_node[2 * b + 1];
    const int ta = g.sedge_tri[2 * a], tb = g.sedge_tri[2 * b];
    out.d[p] = g.tri_half_thickness[ta] + g.tri_half_thickness[tb];
    out.mu[p] = g.part_mu(g.tri_part[ta], g.tri_part[tb]);
  }
};

/// the rest-neighbour bits (Geometry::rest_bits) of triangle pair candidate k (a key of kind 2),
/// the Geometry's own verdicts of its fifteen sub-pairs in vt_slot's and ee_slot's order
struct RestBits {
  Geometry g;
  const std::uint64_t* tt;
  int* bits;
  SLENDER_HD void operator()(long k) const {
    const int a = key_first(tt[k]), b = key_second(tt[k]);
    int mask = 0;
    for (int j = 0; j < 6; ++j) {
      int tri, v, t;
      tt_vertex_triangle(g, a, b, j, tri, v, t);
      if (g.rest_neighbours_vt(v, t)) mask |= 1 << j;
    }
    for (int j = 0; j < 9; ++j) {
      int ea, eb;
      tt_edges(g, a, b, j, ea, eb);
      if (g.rest_neighbours_ee(ea, eb)) mask |= 1 << (6 + j);
    }
    bits[k] = mask;
  }
};

/// 1 where a value is not 0
struct NonZero {
  const int* v;
  int* flag;
  SLENDER_HD void operator()(long i) const { flag[i] = v[i] != 0 ? 1 : 0; }
};

/// the table's entries (Geometry::rest_tri, rest_bits) from the candidates with bits, and the
/// first triangle of each (for the rows)
struct WriteRestEntries {
  const std::uint64_t* tt;
  const int* bits;
  const int* flag;
  const int* pos;
  int* first;
  int* tri;
  int* out_bits;
  SLENDER_HD void operator()(long k) const {
    if (!flag[k]) return;
    const int p = pos[k];
    first[p] = key_first(tt[k]);
    tri[p] = key_second(tt[k]);
    out_bits[p] = bits[k];
  }
};

/// row t of the table: the first entry whose first triangle is t or later
struct RestRows {
  const int* first;
  long n;
  int* row;
  SLENDER_HD void operator()(long t) const { row[t] = int(sorted_lower_bound(first, n, int(t))); }
};

/// 1 where two node lists differ
struct Differs {
  const int* a;
  const int* b;
  SLENDER_HD long operator()(long i) const { return a[i] != b[i] ? 1 : 0; }
};

}  // namespace pipe

/// The pipeline over executor X (engine/executor.h: Buffer, for_each, to_host, fill_zero, and
/// an X object's reduce, exclusive_scan, sort_keys and sort_pairs, which keep their scratch).
template <class X>
class ContactPipeline {
 public:
  template <class T>
  using Buffer = typename X::template Buffer<T>;

  explicit ContactPipeline(const Model& m) : model_(&m) {
    SLENDER_CHECK(long(m.nedge) + m.ntri < INT_MAX / 2, "too many contact elements");
    pipe::Geometry& g = g_;
    g = pipe::geometry_counts(m);
    max_d_ = pipe::largest_contact_distance(m);
    auto up = [&](auto& buf, const auto& v) {
      buf.upload(v);
      return v.empty() ? nullptr : buf.data();
    };
#define SLENDER_UP_ARRAY(a) g.a = up(a##_, m.a);
    SLENDER_GEOMETRY_ARRAYS(SLENDER_UP_ARRAY)
    if (m.ntri > 0) {
      SLENDER_GEOMETRY_SHELL_ARRAYS(SLENDER_UP_ARRAY)
    }
#undef SLENDER_UP_ARRAY
  }

  /// the sub-pairs of the step of size dt from positions q and velocities u (executor memory,
  /// the model's DOF vectors); true when their node lists differ from the previous call's (the
  /// first call: always)
  bool find(const Real* q, const Real* u, Real dt) {
    const int nelem = g_.nedge + g_.ntri;
    if (first_ && g_.ntri > 1) rest_table();  // (find_overlapping alone needs no table)
    u_ = u;
    dt_ = dt;
    candidates(q, nelem, inflation(), false);
    subpairs(q);
    // the previous lists stay in prev_, the new ones become cur_
    std::swap(cur_, prev_);
    std::swap(cur_, next_);
    const bool changed = first_ || cur_.nee != prev_.nee || cur_.npt != prev_.npt ||
                         differ(cur_.ee_node, prev_.ee_node, 4L * cur_.nee) ||
                         differ(cur_.pt_node, prev_.pt_node, 4L * cur_.npt);
    first_ = false;
    return changed;
  }

  /// The candidates alone, every two elements sharing no node whose boxes at positions q
  /// (executor memory; no motion) overlap, each element's box grown by its radius or half
  /// thickness and half of `box_inflation` [m] (>= 0), with no test of reach: candidate_keys() and
  /// the counts by kind give them until the next call. The sub-pair lists stay as they were.
  /// The clearance probe's search (host/contact/clearance.h).
  void find_overlapping(const Real* q, Real box_inflation) {
    SLENDER_CHECK(box_inflation >= 0 && is_finite(box_inflation), "contact: inflation ",
                  box_inflation, " (must be finite and at least 0)");
    u_ = nullptr;
    dt_ = 0;
    candidates(q, g_.nedge + g_.ntri, box_inflation, true);
  }

  /// the current lists, downloaded
  void download(ContactPairLists& out) const {
    out.ee_node.resize(4 * size_t(cur_.nee));
    out.ee_d.resize(size_t(cur_.nee));
    out.ee_mu.resize(size_t(cur_.nee));
    out.pt_node.resize(4 * size_t(cur_.npt));
    out.pt_d.resize(size_t(cur_.npt));
    out.pt_mu.resize(size_t(cur_.npt));
    X::to_host(out.ee_node.data(), cur_.ee_node.data(), size_t(4L * cur_.nee));
    X::to_host(out.ee_d.data(), cur_.ee_d.data(), size_t(cur_.nee));
    X::to_host(out.ee_mu.data(), cur_.ee_mu.data(), size_t(cur_.nee));
    X::to_host(out.pt_node.data(), cur_.pt_node.data(), size_t(4L * cur_.npt));
    X::to_host(out.pt_d.data(), cur_.pt_d.data(), size_t(cur_.npt));
    X::to_host(out.pt_mu.data(), cur_.pt_mu.data(), size_t(cur_.npt));
  }

  // the current lists in the executor's memory (valid until the next find)
  int nee() const { return cur_.nee; }
  int npt() const { return cur_.npt; }
  const int* ee_node() const { return cur_.ee_node.data(); }
  const Real* ee_d() const { return cur_.ee_d.data(); }
  const Real* ee_mu() const { return cur_.ee_mu.data(); }
  const int* pt_node() const { return cur_.pt_node.data(); }
  const Real* pt_d() const { return cur_.pt_d.data(); }
  const Real* pt_mu() const { return cur_.pt_mu.data(); }
  /// [m] the tolerance the boxes grow by, and [s] the time their nodes' motion is swept over
  Real inflation() const { return model_->contact.tolerance; }
  Real sweep() const { return kStepSweep * dt_; }
  /// broad-phase candidates of the last call: edge pairs, edge-triangle, triangle pairs
  long candidates_ee() const { return nce_; }
  long candidates_et() const { return ncet_; }
  long candidates_tt() const { return nctt_; }
  /// triangle pairs in the rest-neighbour table (pipe::Geometry::rest_row, built by the first
  /// find), and the pipeline's Geometry (executor memory)
  long rest_pairs() const { return rest_pairs_; }
  const pipe::Geometry& geometry() const { return g_; }
  /// the sorted candidate keys (pipe::candidate_key), in the executor's memory
  const std::uint64_t* candidate_keys() const { return cand_.data(); }

 private:
  struct Lists {
    Buffer<int> ee_node, pt_node;
    Buffer<Real> ee_d, ee_mu, pt_d, pt_mu;
    int nee = 0, npt = 0;
  };

  /// grows b to at least n (a quarter more), never shrinks: the size is the capacity
  template <class T>
  static void fit(Buffer<T>& b, long n) {
    if (long(b.size()) < n) b.resize(size_t(n + n / 4 + 1));
  }
  static void fit_lists(Lists& l, long nee, long npt) {
    fit(l.ee_node, 4 * nee), fit(l.ee_d, nee), fit(l.ee_mu, nee);
    fit(l.pt_node, 4 * npt), fit(l.pt_d, npt), fit(l.pt_mu, npt);
  }
  static pipe::PairOut ee_out(Lists& l) {
    return {l.ee_node.data(), l.ee_d.data(), l.ee_mu.data()};
  }
  static pipe::PairOut pt_out(Lists& l) {
    return {l.pt_node.data(), l.pt_d.data(), l.pt_mu.data()};
  }

  // Geometry's rest-neighbour table, from the triangle pairs whose boxes overlap in the rest
  // shape. A sub-pair is rest neighbours within its range, at most the largest contact distance
  // plus the tolerance; two triangles' boxes, each grown by its half thickness and half the
  // inflation, overlap wherever their nodes come that close once the inflation is that range
  // less twice the thinnest half thickness (and a hundredth of the range more, for rounding).
  // Once, at the first find; the candidates' room is given back after.
  void rest_table() {
    const Model& m = *model_;
    Real thinnest = m.tri_half_thickness[0];
    for (int t = 1; t < m.ntri; ++t)
      thinnest = std::min(thinnest, m.tri_half_thickness[size_t(t)]);
    const Real range = max_d_ + inflation();
    find_overlapping(g_.node_x0, std::max(Real(0), range - 2 * thinnest) + Real(0.01) * range);
    const long ntt = nctt_;
    const std::uint64_t* tt = cand_.data() + nce_ + ncet_;
    Buffer<int> bits, flag, pos, first;
    long kept = 0;
    if (ntt > 0) {
      bits.resize(size_t(ntt)), flag.resize(size_t(ntt)), pos.resize(size_t(ntt));
      each_heavy(ntt, pipe::RestBits{g_, tt, bits.data()});
      each(ntt, pipe::NonZero{bits.data(), flag.data()});
      kept = x_.exclusive_scan(flag.data(), pos.data(), ntt);
    }
    first.resize(size_t(kept > 0 ? kept : 1));
    rest_tri_.resize(size_t(kept > 0 ? kept : 1));
    rest_bits_.resize(size_t(kept > 0 ? kept : 1));
    if (kept > 0)
      each(ntt, pipe::WriteRestEntries{tt, bits.data(), flag.data(), pos.data(), first.data(),
                                       rest_tri_.data(), rest_bits_.data()});
    rest_row_.resize(size_t(g_.ntri) + 1);
    each(long(g_.ntri) + 1, pipe::RestRows{first.data(), kept, rest_row_.data()});
    g_.rest_row = rest_row_.data();
    g_.rest_tri = rest_tri_.data();
    g_.rest_bits = rest_bits_.data();
    rest_pairs_ = kept;
    cand_ = Buffer<std::uint64_t>();
    nce_ = ncet_ = nctt_ = ncand_ = 0;
  }

  bool differ(const Buffer<int>& a, const Buffer<int>& b, long n) {
    return n > 0 && x_.reduce(n, pipe::Differs{a.data(), b.data()}, 0L, pipe::SumOp{}) > 0;
  }

  // passes 1-3: the sorted candidate keys in cand_, counts by kind
  // (every: find_overlapping's candidates, with no test of reach)
  void candidates(const Real* q, int nelem, Real box_inflation, bool every) {
    nce_ = ncet_ = nctt_ = 0;
    ncand_ = 0;
    if (nelem < 2) return;
    const long n = nelem;
    const pipe::Reach reach{q, u_, dt_, inflation()};
    fit(box_, 6 * n);
    each(n, pipe::ElementBoxes{g_, q, u_, sweep(), box_inflation, box_.data()});
    pipe::Bounds none;
    for (int d = 0; d < 3; ++d)
      none.lo[d] = INFINITY, none.hi[d] = -INFINITY;
    none.bad = 0;
    const pipe::Bounds all = x_.reduce(n, pipe::CentreOf{box_.data()}, none, pipe::BoundsUnion{});
    SLENDER_CHECK(all.bad == 0, "contact: ", all.bad,
                  " rod edges or triangles have non-finite positions or velocities");
    pipe::MortonKeys mk{box_.data(), {0, 0, 0}, {0, 0, 0}, nullptr};
    for (int d = 0; d < 3; ++d) {
      const Real span = all.hi[d] - all.lo[d];
      mk.origin[d] = all.lo[d];
      mk.scale[d] = span > 0 ? Real(1023) / span : 0;
    }
    fit(key_, n);
    mk.key = key_.data();
    each(n, mk);
    x_.sort_keys(key_.data(), n);
    fit(child_, 2 * (n - 1)), fit(parent_, 2 * n - 1);
    fit(arrived_, n - 1), fit(node_box_, 6 * (2 * n - 1));
    each(n - 1, pipe::BuildTree{key_.data(), n, child_.data(), parent_.data()});
    X::fill_zero(arrived_.data(), size_t(n - 1));
    each(n, pipe::FitBoxes{key_.data(), box_.data(), n, child_.data(), parent_.data(),
                           arrived_.data(), node_box_.data()});
    // one walk writes the candidates into the room the last step's needed (a second, only
    // where they outgrow it); sorted below, so that their order is the state's alone
    fit(cand_, 4 * n), fit(walk_count_, 2);
    unsigned long long counts[2];
    for (int pass = 0; pass < 2; ++pass) {
      X::fill_zero(walk_count_.data(), size_t(2));
      X::for_each(n,
                  pipe::WalkTree{g_, reach, max_d_, key_.data(), n, child_.data(), parent_.data(),
                                 node_box_.data(), cand_.data(), long(cand_.size()),
                                 walk_count_.data(), every},
                  kWalkGrain);
      X::to_host(counts, walk_count_.data(), size_t(2));
      SLENDER_CHECK(counts[1] == 0, "contact: the broad phase's tree is deeper than ",
                    pipe::kStackDepth);
      SLENDER_CHECK(counts[0] < (unsigned long long)(INT_MAX / 16), "contact: ", counts[0],
                    " candidate pairs, too many (are the velocities finite and sane?)");
      if (counts[0] <= cand_.size()) break;
      fit(cand_, long(counts[0]));
    }
    const long total = long(counts[0]);
    ncand_ = total;
    if (total == 0) return;
    x_.sort_keys(cand_.data(), total);
    fit(kind_start_, 2);
    each(1, pipe::KindStarts{cand_.data(), total, kind_start_.data()});
    long starts[2];
    X::to_host(starts, kind_start_.data(), size_t(2));
    nce_ = starts[0];
    ncet_ = starts[1] - starts[0];
    nctt_ = total - starts[1];
  }

  // pass 4: next_ gets the sub-pairs within reach
  void subpairs(const Real* q) {
    const pipe::Reach reach{q, u_, dt_, inflation()};
    const std::uint64_t* ee = cand_.data();
    const std::uint64_t* et = ee + nce_;
    const std::uint64_t* tt = et + ncet_;
    const long nrod = nce_, ntt = nctt_;  // (each rod pair a sub-pair)
    // vertex-triangle, rod-shell edge and shell edge slots (those out of reach empty), sorted
    // and made unique
    const long nvt_slot = 2 * ncet_ + 6 * ntt, nrs_slot = 3 * ncet_, nse_slot = 9 * ntt;
    fit(vt_key_, nvt_slot), fit(vt_part_, nvt_slot), fit(vt_flag_, nvt_slot);
    fit(vt_pos_, nvt_slot);
    fit(rs_key_, nrs_slot), fit(rs_flag_, nrs_slot), fit(rs_pos_, nrs_slot);
    fit(se_key_, nse_slot), fit(se_flag_, nse_slot), fit(se_pos_, nse_slot);
    long nvt = 0, nrs = 0, nse = 0;
    if (nvt_slot > 0) {
      each_heavy(nvt_slot, pipe::EmitVertexTriangle{g_, reach, et, ncet_, tt, vt_key_.data(),
                                                    vt_part_.data()});
      x_.sort_pairs(vt_key_.data(), vt_part_.data(), nvt_slot);
      each(nvt_slot, pipe::FirstOfRun{vt_key_.data(), vt_flag_.data()});
      nvt = x_.exclusive_scan(vt_flag_.data(), vt_pos_.data(), nvt_slot);
    }
    if (nrs_slot > 0) {
      each_heavy(nrs_slot, pipe::EmitRodShellEdges{g_, reach, et, rs_key_.data()});
      x_.sort_keys(rs_key_.data(), nrs_slot);
      each(nrs_slot, pipe::FirstOfRun{rs_key_.data(), rs_flag_.data()});
      nrs = x_.exclusive_scan(rs_flag_.data(), rs_pos_.data(), nrs_slot);
    }
    if (nse_slot > 0) {
      each_heavy(nse_slot, pipe::EmitShellEdgePairs{g_, reach, tt, se_key_.data()});
      x_.sort_keys(se_key_.data(), nse_slot);
      each(nse_slot, pipe::FirstOfRun{se_key_.data(), se_flag_.data()});
      nse = x_.exclusive_scan(se_flag_.data(), se_pos_.data(), nse_slot);
    }
    // the lists: rod pairs, rod-shell edges, shell edge pairs; vertex-triangle pairs
    Lists& out = next_;
    fit_lists(out, nrod + nrs + nse, nvt);
    if (nrod > 0) each(nrod, pipe::WriteRodPairs{g_, ee, ee_out(out)});
    if (nrs > 0)
      each(nrs_slot, pipe::WriteRodShellEdge{g_, rs_key_.data(), rs_flag_.data(), rs_pos_.data(),
                                             int(nrod), ee_out(out)});
    if (nse > 0)
      each(nse_slot, pipe::WriteShellEdgePair{g_, se_key_.data(), se_flag_.data(), se_pos_.data(),
                                              int(nrod + nrs), ee_out(out)});
    if (nvt > 0)
      each(nvt_slot, pipe::WriteVertexTriangle{g_, vt_key_.data(), vt_part_.data(), vt_flag_.data(),
                                               vt_pos_.data(), pt_out(out)});
    out.nee = int(nrod + nrs + nse);
    out.npt = int(nvt);
  }

  const Model* model_;
  mutable X x_;
  // the passes' loops (on the host threaded from kParallelGrainMedium items; those that walk
  // the tree or measure distances from kParallelGrainHeavy)
  template <class F>
  static void each(long n, const F& f) {
    X::for_each(n, f, kParallelGrainMedium);
  }
  template <class F>
  static void each_heavy(long n, const F& f) {
    X::for_each(n, f, kParallelGrainHeavy);
  }
  // the walk's items take a few tenths of a microsecond to tens (a crowded leaf): threaded from
  // 2 x 128 leaves, so that a small scene's walk (a few hundred) runs on two cores
  static constexpr long kWalkGrain = 128;
  pipe::Geometry g_;
  // model arrays
  Buffer<int> edge_node_, edge_part_, part_material_, tri_node_, tri_part_, tri_edge_, sedge_node_,
      sedge_tri_, node_part_;
  Buffer<Real> edge_radius_, edge_EA_, edge_arc_, edge_l_bar_, part_loop_length_, contact_mu_,
      tri_half_thickness_, node_contact_radius_, node_x0_;
  // broad phase
  Buffer<Real> box_, node_box_;
  Buffer<std::uint64_t> key_, cand_;
  Buffer<int> child_, parent_, arrived_;
  Buffer<unsigned long long> walk_count_;
  Buffer<long> kind_start_;
  long nce_ = 0, ncet_ = 0, nctt_ = 0, ncand_ = 0;
  // sub-pairs
  Buffer<int> vt_part_, vt_flag_, vt_pos_, rs_flag_, rs_pos_, se_flag_, se_pos_;
  Buffer<std::uint64_t> vt_key_, rs_key_, se_key_;
  Lists cur_, prev_, next_;
  // the rest-neighbour table (rest_table)
  Buffer<int> rest_row_, rest_tri_, rest_bits_;
  long rest_pairs_ = 0;
  Real max_d_ = 0;           // pipe::largest_contact_distance
  const Real* u_ = nullptr;  // the last call's velocities (executor memory) and step
  Real dt_ = 0;
  bool first_ = true;
};

}  // namespace slender::contact
