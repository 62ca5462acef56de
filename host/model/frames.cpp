// Bend-twist stencils of a rod network, initial reference frames and natural strains.

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>

#include "model/model_internal.h"
#include "slender/stencils/bindings.h"

namespace slender {

namespace {

Vec3 pos(const Model& m, int n) {
  return vec3(m.node_x0[3 * n], m.node_x0[3 * n + 1], m.node_x0[3 * n + 2]);
}

Vec3 tangent(const Model& m, int e) {
  const Vec3 d = pos(m, m.edge_node[2 * e + 1]) - pos(m, m.edge_node[2 * e]);
  return d / norm(d);
}

// a unit vector normal to t: the preferred direction projected, or the coordinate axis least
// aligned with t
Vec3 normal_to(const Vec3& t, const Vec3& preferred) {
  Vec3 v = preferred - dot(preferred, t) * t;
  if (norm(v) > 1e-8 * std::max(norm(preferred), Real(1e-300))) return v / norm(v);
  int k = 0;
  for (int i = 1; i < 3; ++i)
    if (std::fabs(t[i]) < std::fabs(t[k])) k = i;
  Vec3 axis = vec3(0, 0, 0);
  axis[k] = 1;
  v = axis - dot(axis, t) * t;
  return v / norm(v);
}

// the ground as the contact stencil wants it; the integrator's fields stay zero here
GroundContact::Params ground_params(const Model& m) {
  GroundContact::Params p{};
  const GroundSpec& g = m.ground;
  p.ground.shape = g.wavy ? GroundShape::kWavy : GroundShape::kPlane;
  p.ground.p0 = g.point;
  p.ground.n = g.normal;
  p.ground.amplitude = g.amplitude;
  p.ground.length_x = g.length_x;
  p.ground.length_y = g.length_y;
  p.ground.phase_x = g.phase_x;
  p.ground.phase_y = g.phase_y;
  p.ground.offset = g.offset;
  p.k_c = m.ground_stiffness;
  p.k_per_kg = m.ground_stiffness_per_kg;
  p.delta = g.contact_distance;
  p.mu = g.friction;
  p.nu = g.slip_velocity;
  p.zeta = contact_damping_ratio(g.restitution);
  return p;
}

}  // namespace

ModelView host_view(const Model& m) {
  ModelView v{};
  v.nnode = m.nnode;
  v.nedge = m.nedge;
  v.nbend = m.nbend;
  v.ndof = m.ndof;
  v.nsedge = m.nsedge;
  v.nhinge = m.nhinge;
  v.ntri = m.ntri;
  v.nmid = m.nmid;
  v.xi_base = 3 * m.nnode + m.nedge;
#define SLENDER_HOST_POINTER(type, name, count, width, doc) v.name = m.name.data();
  SLENDER_VIEW_ARRAYS(SLENDER_HOST_POINTER)
#undef SLENDER_HOST_POINTER
  for (int f = 0; f < kMaxFamilies; ++f)
    v.table[f] = m.tables[size_t(f)].view();
  v.drag_density = m.drag_density;
  v.drag_coefficient = m.drag_coefficient;
  v.rft_tangential = m.rft_tangential;
  v.rft_normal = m.rft_normal;
  v.ground_on = m.ground.enabled ? 1 : 0;
  v.two_d = m.scene.integrator.two_d ? 1 : 0;
  v.ground = ground_params(m);
  v.npair = 0;  // contact pairs: a simulator's, none in a model's view
  v.pair_node = nullptr;
  v.pair_d = nullptr;
  v.contact_k = m.contact_stiffness;
  v.contact_delta = m.contact.tolerance;
  v.npt = 0;
  v.pt_node = nullptr;
  v.pt_d = nullptr;
  v.pair_mu = nullptr;
  v.pt_mu = nullptr;
  v.contact_nu = m.contact.slip_velocity;
  v.mass_scale = 1;
  v.contact_zeta = m.contact.enabled ? contact_damping_ratio(m.contact.restitution) : 0;
  return v;
}

void build_bend_stencils(Model& m,
                         const std::vector<Real>& edge_EI1,
                         const std::vector<Real>& edge_EI2,
                         const std::vector<Real>& edge_GJ) {
  // edges incident to each node, in edge order
  std::vector<std::vector<int>> node_edges(m.nnode);
  for (int e = 0; e < m.nedge; ++e) {
    node_edges[m.edge_node[2 * e]].push_back(e);
    node_edges[m.edge_node[2 * e + 1]].push_back(e);
  }
  for (int n = 0; n < m.nnode; ++n) {
    const auto& es = node_edges[n];
    for (size_t i = 0; i < es.size(); ++i)
      for (size_t j = i + 1; j < es.size(); ++j) {
        int a = es[i], b = es[j];
        // prefer the order in which a enters n and b leaves it (no flips on a plain rod)
        const bool a_enters = m.edge_node[2 * a + 1] == n;
        const bool b_leaves = m.edge_node[2 * b] == n;
        if (!a_enters && !b_leaves) std::swap(a, b);
        const Real sa = m.edge_node[2 * a + 1] == n ? 1 : -1;
        const Real sb = m.edge_node[2 * b] == n ? 1 : -1;
        const int x0 = sa > 0 ? m.edge_node[2 * a] : m.edge_node[2 * a + 1];
        const int x2 = sb > 0 ? m.edge_node[2 * b + 1] : m.edge_node[2 * b];
        m.bend_node.insert(m.bend_node.end(), {x0, n, x2});
        m.bend_edge.insert(m.bend_edge.end(), {a, b});
        m.bend_sign.insert(m.bend_sign.end(), {sa, sb});
        m.bend_EI.push_back(0.5 * (edge_EI1[a] + edge_EI1[b]));
        m.bend_EI.push_back(0.5 * (edge_EI2[a] + edge_EI2[b]));
        m.bend_GJ.push_back(0.5 * (edge_GJ[a] + edge_GJ[b]));
        m.bend_dl.push_back(0.5 * (m.edge_l_bar[a] + m.edge_l_bar[b]));
        ++m.nbend;
      }
  }

  // the stencil pairing consecutive edges (k-1, k) of each rod part
  std::map<std::pair<int, int>, int> pair_bend;
  for (int k = 0; k < m.nbend; ++k) {
    const int a = m.bend_edge[2 * k], b = m.bend_edge[2 * k + 1];
    pair_bend[{std::min(a, b), std::max(a, b)}] = k;
  }
  m.part_bend.assign(m.part_edge.size(), -1);
  for (int p = 0; p < m.npart; ++p) {
    if (!m.scene.parts[p].is_rod) continue;
    const int adr = m.part_edge_adr[p], num = m.part_edge_adr[p + 1] - adr;
    const bool closed = num >= 3 && m.scene.parts[p].edges.back()[1] == 0;
    for (int k = 0; k < num; ++k) {
      if (k == 0 && !closed) continue;
      const int a = m.part_edge[adr + (k + num - 1) % num], b = m.part_edge[adr + k];
      const auto it = pair_bend.find({std::min(a, b), std::max(a, b)});
      if (it != pair_bend.end()) m.part_bend[adr + k] = it->second;
    }
  }
}

void init_reference_frames(Model& m) {
  // breadth-first over edges through shared nodes, transporting the director across each node
  // in the stencil orientation (into the node, then out of it)
  std::vector<std::vector<int>> node_edges(m.nnode);
  for (int e = 0; e < m.nedge; ++e) {
    node_edges[m.edge_node[2 * e]].push_back(e);
    node_edges[m.edge_node[2 * e + 1]].push_back(e);
  }
  m.edge_d1_0.assign(3 * size_t(m.nedge), 0);
  std::vector<char> done(m.nedge, 0);
  for (int seed = 0; seed < m.nedge; ++seed) {
    if (done[seed]) continue;
    const Vec3 t = tangent(m, seed);
    const Vec3 d = normal_to(t, m.scene.parts[m.edge_part[seed]].frame_normal);
    for (int c = 0; c < 3; ++c)
      m.edge_d1_0[3 * seed + c] = d[c];
    done[seed] = 1;
    std::deque<int> queue{seed};
    while (!queue.empty()) {
      const int a = queue.front();
      queue.pop_front();
      for (int side = 0; side < 2; ++side) {
        const int n = m.edge_node[2 * a + side];
        // orient a into n
        const Real sa = m.edge_node[2 * a + 1] == n ? 1 : -1;
        const Vec3 ta = sa * tangent(m, a);
        const Vec3 da =
            sa * vec3(m.edge_d1_0[3 * a], m.edge_d1_0[3 * a + 1], m.edge_d1_0[3 * a + 2]);
        for (int b : node_edges[n]) {
          if (done[b]) continue;
          const Real sb = m.edge_node[2 * b] == n ? 1 : -1;
          const Vec3 tb = sb * tangent(m, b);
          Vec3 db = parallel_transport(da, ta, tb);
          db = normal_to(tb, db);
          db = sb * db;
          for (int c = 0; c < 3; ++c)
            m.edge_d1_0[3 * b + c] = db[c];
          done[b] = 1;
          queue.push_back(b);
        }
      }
    }
  }

  // reference twists of the initial frames
  m.bend_ref_twist_0.assign(m.nbend, 0);
  std::vector<Real> t0(3 * size_t(m.nedge));
  for (int e = 0; e < m.nedge; ++e) {
    const Vec3 t = tangent(m, e);
    for (int c = 0; c < 3; ++c)
      t0[3 * e + c] = t[c];
  }
  const std::vector<Real> zero(m.nbend, 0);
  m.bend_tau_bar.assign(m.nbend, 0);
  const ReferenceTwists rt{host_view(m), m.edge_d1_0.data(), t0.data(), zero.data(),
                           m.bend_ref_twist_0.data()};
  for (long k = 0; k < m.nbend; ++k)
    rt(k);
  m.bend_frame_offset = m.bend_ref_twist_0;
}

void init_natural_strains(Model& m) {
  // strains of the initial shape with zero twist angles: a stress-free start
  m.bend_kappa_bar.assign(2 * size_t(m.nbend), 0);
  m.bend_tau_bar.assign(m.nbend, 0);
  std::vector<Real> q(m.ndof, 0);
  std::copy(m.node_x0.begin(), m.node_x0.end(), q.begin());
  const ModelView mv = host_view(m);
  EvalView ev{};
  ev.nenv = 1;
  ev.q = q.data();
  ev.edge_d1 = m.edge_d1_0.data();
  ev.bend_ref_twist = m.bend_ref_twist_0.data();
  ev.bend_kappa_bar = m.bend_kappa_bar.data();
  ev.bend_tau_bar = m.bend_tau_bar.data();
  ev.hinge_phi_bar = m.hinge_phi_bar.data();
  for (int k = 0; k < m.nbend; ++k) {
    LocalEval<11> r;
    RodBendTwist::Strains s;
    RodBendTwistBinding::eval(mv, ev, 0, k, kEnergy, r, &s);
    m.bend_kappa_bar[2 * k] = s.kappa1;
    m.bend_kappa_bar[2 * k + 1] = s.kappa2;
    m.bend_tau_bar[k] = s.tau;
  }

  // explicit natural curvature [1/m] and twist [rad/m] of rod parts
  for (int p = 0; p < m.npart; ++p) {
    const PartSpec& part = m.scene.parts[p];
    if (!part.is_rod) continue;
    const int adr = m.part_edge_adr[p], num = m.part_edge_adr[p + 1] - adr;
    const bool closed = num >= 3 && part.edges.back()[1] == 0;
    int interior = 0;
    for (int k = closed ? 0 : 1; k < num; ++k, ++interior) {
      const int b = m.part_bend[adr + k];
      if (b < 0) continue;
      if (!part.natural_curvature.empty()) {
        // a turning angle phi = |k| dl has discrete curvature 2 tan(phi / 2)
        const Real k1 = part.natural_curvature[interior][0];
        const Real k2 = part.natural_curvature[interior][1];
        const Real kn = std::hypot(k1, k2);
        const Real scale = kn > 0 ? 2 * std::tan(0.5 * kn * m.bend_dl[b]) / kn : m.bend_dl[b];
        m.bend_kappa_bar[2 * b] = k1 * scale;
        m.bend_kappa_bar[2 * b + 1] = k2 * scale;
      }
      if (!part.natural_twist.empty())
        m.bend_tau_bar[b] = part.natural_twist[interior] * m.bend_dl[b];
    }
  }
}

Real max_natural_kappa_bar() { return 2 * std::tan(kMaxNaturalTurn / 2); }

}  // namespace slender
