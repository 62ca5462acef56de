// The contact pair finder (engine/contact_pipeline.h: the one finder, on the host executor here
// and the CUDA executor on a GPU): its linear-BVH candidates and its sub-pairs (with their contact
// distances and friction coefficients) equal the brute-force reference's (reference_pairs.h)
// entry for entry, on the contact scenes' initial states, on randomly disturbed states (many
// close and crossing elements) and along a short run into contact. Its change flag follows the
// node lists.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backend/host_executor.h"
#include "pair_lists_util.h"
#include "reference_pairs.h"
#include "slender/builder.h"
#include "slender/engine/contact_pipeline.h"
#include "slender/model.h"
#include "slender/simulator.h"
#include "slender/stencils/contact_distance.h"

namespace slender::contact {
namespace {
namespace SLENDER_UNITY_ID {

using Pipeline = ContactPipeline<HostExecutor>;

using test::fine_sheet;
using test::load_scene;

// the pipeline's candidate keys of its last call, in their order
std::vector<std::uint64_t> candidate_keys(const Pipeline& pipe) {
  const long n = pipe.candidates_ee() + pipe.candidates_et() + pipe.candidates_tt();
  return std::vector<std::uint64_t>(pipe.candidate_keys(), pipe.candidate_keys() + n);
}

// the pipeline against the reference (reference_pairs.h) on one state: the candidates and the
// lists entry for entry; returns the number of sub-pairs found
long expect_same(const Model& m,
                 Pipeline& pipe,
                 const std::vector<Real>& q,
                 const std::vector<Real>& u,
                 Real dt,
                 const std::string& what) {
  const test::ReferencePairs want = test::reference_pairs(m, q.data(), u.data(), dt);
  ContactPairLists got;
  pipe.find(q.data(), u.data(), dt);
  pipe.download(got);
  EXPECT_EQ(candidate_keys(pipe), want.candidates) << what << ": candidates";
  test::expect_same_pairs(got, want.lists, what);
  return long(want.lists.ee_d.size() + want.lists.pt_d.size());
}

// median rest length of the model's rod and shell edges
Real typical_edge(const Model& m) {
  std::vector<Real> l(m.edge_l_bar);
  l.insert(l.end(), m.sedge_l_bar.begin(), m.sedge_l_bar.end());
  std::nth_element(l.begin(), l.begin() + l.size() / 2, l.end());
  return l[l.size() / 2];
}

class PipelineScenes : public ::testing::TestWithParam<std::string> {};

// the initial state and three disturbed ones: nodes moved by up to 0.6 of an edge (elements
// cross, crowd and nearly touch everywhere), velocities of up to an edge per step
TEST_P(PipelineScenes, EqualsTheReferenceOnDisturbedStates) {
  const auto m = load_scene(GetParam());
  ASSERT_TRUE(m->contact.enabled);
  Simulator sim(m);
  const Real dt = m->scene.integrator.dt;
  const Real h = typical_edge(*m);
  Pipeline pipe(*m);
  std::vector<Real> q = sim.state().q, u = sim.state().u;
  long found = expect_same(*m, pipe, q, u, dt, GetParam() + " initial");
  std::mt19937 rng(7);
  std::uniform_real_distribution<Real> unit(-1, 1);
  for (int trial = 0; trial < 3; ++trial) {
    q = sim.state().q, u = sim.state().u;
    for (int i = 0; i < 3 * m->nnode; ++i) {
      q[i] += 0.6 * h * unit(rng);
      u[i] = (h / dt) * unit(rng) * (trial == 0 ? 0 : 1);
    }
    found += expect_same(*m, pipe, q, u, dt, GetParam() + " disturbed " + std::to_string(trial));
  }
  EXPECT_GT(found, 100) << "the states should give many sub-pairs";
}

INSTANTIATE_TEST_SUITE_P(
    Scenes,
    PipelineScenes,
    ::testing::Values("plate_contact.json", "gripper.json", "shell_fold.json", "cloth_drop.json"),
    [](const auto& info) {
      std::string s = info.param;
      return s.substr(0, s.find('.'));
    });

// The search the clearance probe uses (find_overlapping: every two elements sharing no node whose
// boxes at positions q, grown by half an inflation, overlap; no test of reach) equals the
// reference's overlapping pairs on the initial and disturbed states, at inflations from 0 to two
// edges, and leaves the step's lists as they were
TEST_P(PipelineScenes, OverlappingBoxesEqualTheReference) {
  const auto m = load_scene(GetParam());
  Simulator sim(m);
  const Real dt = m->scene.integrator.dt;
  const Real h = typical_edge(*m);
  Pipeline pipe(*m);
  std::vector<Real> q = sim.state().q;
  pipe.find(q.data(), sim.state().u.data(), dt);
  ContactPairLists before, after;
  pipe.download(before);
  std::mt19937 rng(9);
  std::uniform_real_distribution<Real> unit(-1, 1);
  long found = 0;
  for (int trial = 0; trial < 2; ++trial) {
    for (const Real inflation : {Real(0), m->contact.tolerance, 2 * h}) {
      pipe.find_overlapping(q.data(), inflation);
      const std::vector<std::uint64_t> got = candidate_keys(pipe);
      EXPECT_EQ(got, test::reference_overlapping(*m, q.data(), nullptr, 0, inflation))
          << GetParam() << " trial " << trial << " inflation " << inflation;
      found += long(got.size());
    }
    for (int i = 0; i < 3 * m->nnode; ++i)
      q[i] += 0.6 * h * unit(rng);
  }
  EXPECT_GT(found, 100);
  pipe.download(after);
  test::expect_same_pairs(after, before, GetParam() + ": the lists kept");
  EXPECT_THROW(pipe.find_overlapping(q.data(), -1), Error);
}

// along a run of the rod-shell / shell-shell scene into contact (the plate catches the rod and
// the tile): equal at every step, and the change flag is set exactly when the node lists change
TEST(Pipeline, EqualsTheReferenceAlongARun) {
  const auto m = load_scene("plate_contact.json");
  Simulator sim(m);
  const Real dt = m->scene.integrator.dt;
  Pipeline pipe(*m);
  ContactPairLists prev, now, got;
  long changes = 0, contacts = 0;
  for (int step = 0; step < 120; ++step) {
    const State& s = sim.state();
    now = test::reference_pairs(*m, s.q.data(), s.u.data(), dt).lists;
    const bool changed = pipe.find(s.q.data(), s.u.data(), dt);
    pipe.download(got);
    ASSERT_EQ(got.ee_node, now.ee_node) << "step " << step;
    ASSERT_EQ(got.pt_node, now.pt_node) << "step " << step;
    ASSERT_EQ(got.ee_d, now.ee_d) << "step " << step;
    ASSERT_EQ(got.pt_d, now.pt_d) << "step " << step;
    const bool host_changed =
        step == 0 || now.ee_node != prev.ee_node || now.pt_node != prev.pt_node;
    EXPECT_EQ(changed, host_changed) << "step " << step;
    changes += changed;
    contacts += now.nee() + now.npt();
    std::swap(prev, now);
    ASSERT_TRUE(sim.step().ok()) << "step " << step;
  }
  EXPECT_GT(changes, 3);
  EXPECT_GT(contacts, 0);
  // the same state again: nothing changed
  pipe.find(sim.state().q.data(), sim.state().u.data(), dt);
  EXPECT_FALSE(pipe.find(sim.state().q.data(), sim.state().u.data(), dt));
}

// fine_sheet: edges (2 mm) shorter than its contact range (h 3 mm + tolerance 1 mm), so that the
// second and third rings of each triangle, which share no node with it, lie in contact range at
// rest (S9's cloth at 200k triangles: issue 21)

// the vertex-triangle pairs of one part that share no node and lie within contact range at rest
long rest_pairs_in_range(const Model& m) {
  long n = 0;
  for (int v = 0; v < m.nnode; ++v)
    for (int t = 0; t < m.ntri; ++t) {
      const int* tn = &m.tri_node[3 * t];
      if (v == tn[0] || v == tn[1] || v == tn[2]) continue;
      Vec<12> p;
      const int nodes[4] = {v, tn[0], tn[1], tn[2]};
      for (int a = 0; a < 4; ++a)
        for (int c = 0; c < 3; ++c)
          p[3 * a + c] = m.node_x0[3 * nodes[a] + c];
      ContactDistance cd;
      point_triangle_distance(p, kEnergy, cd, nullptr, nullptr);
      n += cd.delta < m.node_contact_radius[v] + m.tri_half_thickness[t] + m.contact.tolerance;
    }
  return n;
}

// A shell's own neighbours in the rest shape are no contact pair (pipe::Geometry::
// rest_neighbours_vt): the fine sheet at rest has hundreds of such pairs in contact range, and
// neither the finder nor the reference lists any; folded over itself, its far halves are found
// touching, by both alike, and every pair found is far apart in the rest shape
TEST(Pipeline, AShellsRestNeighboursAreNoPairsButItsFoldsAre) {
  const auto m = fine_sheet(false);
  ASSERT_GT(rest_pairs_in_range(*m), 500) << "the sheet should be finer than its contact range";
  Simulator sim(m);
  const Real dt = m->scene.integrator.dt;
  Pipeline pipe(*m);
  std::vector<Real> q = sim.state().q, u = sim.state().u;
  EXPECT_EQ(expect_same(*m, pipe, q, u, dt, "flat at rest"), 0);
  // folded about x = 0.03: the half beyond lies over the other, 2.5 mm above it (within d = 3 mm)
  for (int i = 0; i < m->nnode; ++i)
    if (q[3 * i] > 0.03 + 1e-9) {
      q[3 * i] = 0.06 - q[3 * i];
      q[3 * i + 2] += 0.0025;
    }
  const ContactPairLists lists = test::reference_pairs(*m, q.data(), u.data(), dt).lists;
  EXPECT_GT(lists.npt(), 100) << "the fold's halves touch";
  const pipe::Geometry g = pipe::host_geometry(*m);
  for (long k = 0; k < lists.npt(); ++k) {
    const int v = lists.pt_node[4 * k];
    // its triangle: the one with these three nodes (the lists keep nodes, not ids)
    for (int t = 0; t < m->ntri; ++t) {
      if (m->tri_node[3 * t] == lists.pt_node[4 * k + 1] &&
          m->tri_node[3 * t + 1] == lists.pt_node[4 * k + 2] &&
          m->tri_node[3 * t + 2] == lists.pt_node[4 * k + 3]) {
        ASSERT_FALSE(g.rest_neighbours_vt(v, t)) << "pair " << k;
      }
    }
  }
  EXPECT_GT(expect_same(*m, pipe, q, u, dt, "folded"), 100);
}

// a sheet `length` m by 2 cm of 2 mm edges (3 mm thick: finer than its contact range) whose
// nodes are moved in its plane at random (seed) by up to 0.3 of an edge, contact at 1 mm
std::shared_ptr<const Model> irregular_fine_sheet(Real length, unsigned seed) {
  SceneBuilder b;
  const int mat = b.material("cloth", 300, 1e6, 0.3);
  const int sheet = b.rectangle_shell("sheet", vec3(0, 0, 0.05), vec3(length, 0, 0),
                                      vec3(0, 0.02, 0), 0.002, false, mat, 0.003);
  b.membrane(sheet, MembraneModel::kSprings);
  std::mt19937 jitter(seed);
  std::uniform_real_distribution<Real> offset(-0.0006, 0.0006);
  for (auto& x : b.part(sheet).nodes) {
    x[0] += offset(jitter);
    x[1] += offset(jitter);
  }
  test::contact_at_1mm(b);
  return build_model(b.build());
}

// On a fine sheet with an irregular rest shape (its nodes moved in its plane by up to 0.3 of an
// edge, so that no symmetry of the mesh makes a pair's verdicts alike), the reference's lists
// equal the pipeline's:
// - shrunk in its plane by a fifth, at rest: the pairs just beyond contact range at rest (no
//   rest neighbours) come within it, beside the rest neighbours that stay within it;
// - crumpled at random (nodes moved by up to 0.6 of an edge, velocities of up to an edge per
//   step): most pairs near at rest come within reach.
TEST(Pipeline, AnIrregularFineSheetGivesTheSameListsShrunkOrCrumpled) {
  const auto fine = irregular_fine_sheet(0.06, 3);
  const Real dt = fine->scene.integrator.dt;
  Pipeline pipe(*fine);
  Simulator sim(fine);
  std::vector<Real> q = sim.state().q, u(sim.state().u.size(), 0.0);
  for (int i = 0; i < fine->nnode; ++i)
    for (int k = 0; k < 2; ++k)
      q[3 * size_t(i) + size_t(k)] *= 0.8;
  EXPECT_GT(expect_same(*fine, pipe, q, u, dt, "fine sheet shrunk"), 100);
  std::mt19937 rng(5);
  std::uniform_real_distribution<Real> unit(-1, 1);
  const Real h = typical_edge(*fine);
  q = sim.state().q;
  for (int i = 0; i < 3 * fine->nnode; ++i) {
    q[i] += 0.6 * h * unit(rng);
    u[i] = (h / dt) * unit(rng);
  }
  EXPECT_GT(expect_same(*fine, pipe, q, u, dt, "fine sheet crumpled"), 100);
}

// The walk reads a shell's rest-neighbour verdicts from a table the pipeline builds at its first
// find (pipe::Geometry::rest_row): on the irregular fine sheet, every triangle pair sharing no
// node, tested by brute force, has in the table exactly the sub-pairs the Geometry's own verdicts
// call rest neighbours, and none beside; many pairs are rest neighbours in all fifteen sub-pairs
// (those the walk skips whole) and many in some. The lists the walk gives with the table are
// the reference's in the tests above and below.
TEST(Pipeline, TheRestNeighbourTableHoldsEveryPairsVerdicts) {
  const auto m = irregular_fine_sheet(0.03, 11);
  Pipeline pipe(*m);
  EXPECT_EQ(pipe.geometry().rest_row, nullptr) << "the table comes with the first find";
  const std::vector<Real> u(size_t(m->ndof), 0.0);
  pipe.find(m->node_x0.data(), u.data(), m->scene.integrator.dt);
  const pipe::Geometry& tab = pipe.geometry();
  const pipe::Geometry ref = pipe::host_geometry(*m);
  ASSERT_NE(tab.rest_row, nullptr);
  long kept = 0, whole = 0, some = 0;
  for (int a = 0; a < m->ntri; ++a)
    for (int c = a + 1; c < m->ntri; ++c) {
      bool shared = false;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          shared = shared || m->tri_node[3 * a + i] == m->tri_node[3 * c + j];
      if (shared) continue;
      int want = 0;
      for (int j = 0; j < 6; ++j) {
        const int tri = j < 3 ? a : c, t = j < 3 ? c : a;
        if (ref.rest_neighbours_vt(m->tri_node[3 * tri + j % 3], t)) want |= 1 << j;
      }
      for (int j = 0; j < 9; ++j)
        if (ref.rest_neighbours_ee(m->tri_edge[3 * a + j / 3], m->tri_edge[3 * c + j % 3]))
          want |= 1 << (6 + j);
      ASSERT_EQ(tab.rest_mask(a, c), want) << "triangles " << a << ", " << c;
      kept += want != 0;
      whole += want == pipe::kAllSubpairs;
      some += want != 0 && want != pipe::kAllSubpairs;
    }
  EXPECT_EQ(pipe.rest_pairs(), kept);
  EXPECT_GT(whole, 100) << "pairs rest neighbours in every sub-pair";
  EXPECT_GT(some, 100) << "pairs rest neighbours in some sub-pairs";
}

// The pair search covers each element's own motion over the step, not the fastest node's
// everywhere: a sheet moving fast as a whole gains no pairs and no candidates (element pairs
// that bring a sub-pair), while the halves of a fold 8 mm
// apart (beyond the 4 mm contact range) pair up away from the fold line once the step can close
// the gap (3 m/s towards each other: 2 dt u = 6 mm). The reference and the pipeline agree on
// each state.
TEST(Pipeline, PairsFollowEachElementsMotionNotTheFastestNodes) {
  const auto m = fine_sheet(false);
  const Real dt = m->scene.integrator.dt;
  Simulator sim(m);
  Pipeline pipe(*m);
  std::vector<Real> q = sim.state().q, u(sim.state().u.size(), 0.0);
  auto candidates = [&] {
    return pipe.candidates_ee() + pipe.candidates_et() + pipe.candidates_tt();
  };
  EXPECT_EQ(expect_same(*m, pipe, q, u, dt, "flat at rest"), 0);
  EXPECT_EQ(candidates(), 0);
  for (int i = 0; i < m->nnode; ++i)
    u[3 * i + 2] = -20;
  EXPECT_EQ(expect_same(*m, pipe, q, u, dt, "flat, falling at 20 m/s"), 0);
  EXPECT_EQ(candidates(), 0);
  for (int i = 0; i < m->nnode; ++i)
    u[3 * i] = 5, u[3 * i + 1] = -3;
  EXPECT_EQ(expect_same(*m, pipe, q, u, dt, "flat, moving obliquely"), 0);
  // folded about x = 0.03, the half beyond 8 mm above the other
  std::fill(u.begin(), u.end(), 0.0);
  std::vector<bool> upper(size_t(m->nnode), false);
  for (int i = 0; i < m->nnode; ++i)
    if (q[3 * i] > 0.03 + 1e-9) {
      upper[size_t(i)] = true;
      q[3 * i] = 0.06 - q[3 * i];
      q[3 * i + 2] += 0.008;
    }
  // vertex-triangle pairs whose vertex lies more than 1 cm from the fold line
  auto away_from_fold = [&] {
    const ContactPairLists lists = test::reference_pairs(*m, q.data(), u.data(), dt).lists;
    long n = 0;
    for (long k = 0; k < lists.npt(); ++k)
      n += q[3 * size_t(lists.pt_node[4 * k])] < 0.02;
    return n;
  };
  expect_same(*m, pipe, q, u, dt, "folded, at rest");
  EXPECT_EQ(away_from_fold(), 0);
  for (int i = 0; i < m->nnode; ++i)
    u[3 * i + 2] = upper[size_t(i)] ? -3 : 0;
  expect_same(*m, pipe, q, u, dt, "folded, closing");
  EXPECT_GT(away_from_fold(), 100) << "the closing fold's halves pair up";
}

// ... and so the fine sheet at rest feels no contact force: without gravity it stays at rest
// (with its rest neighbours as pairs, the softplus energy of every pair in range would push it
// apart in its own plane), and under gravity it falls as a whole, its in-plane shape unchanged
TEST(Pipeline, AFineSheetAtRestFeelsNoContactOfItsOwn) {
  for (bool gravity : {false, true}) {
    SCOPED_TRACE(gravity ? "gravity" : "no gravity");
    const auto m = fine_sheet(gravity);
    Simulator sim(m);
    for (int k = 0; k < 5; ++k)
      ASSERT_TRUE(sim.step().ok());
    const State& s = sim.state();
    Real in_plane = 0, fall = 0;
    for (int i = 0; i < m->nnode; ++i) {
      in_plane = std::max({in_plane, std::fabs(s.q[3 * i] - m->node_x0[3 * i]),
                           std::fabs(s.q[3 * i + 1] - m->node_x0[3 * i + 1])});
      fall = std::max(fall, std::fabs(s.q[3 * i + 2] - m->node_x0[3 * i + 2]));
    }
    EXPECT_LT(in_plane, 1e-12);
    if (gravity) {  // free fall over 5 steps of implicit Euler: z drops by g dt^2 (1+...+5)
      EXPECT_NEAR(fall, 9.81 * 1e-6 * 15, 1e-9);
    } else {
      EXPECT_LT(fall, 1e-12);
    }
  }
}

// The culling's shortcuts, the gap between the two primitives' bounding boxes (a lower bound of
// their distance) and their nodes' smallest distance (an upper bound), leave the verdict the
// exact distance's on every sub-pair: random point-triangle and edge-edge configurations
// (general, coplanar, parallel, touching, an end or a vertex exactly beyond the other primitive
// along an axis), each tested at reaches just below, at and just above its distance, and at
// random reaches.
TEST(Pipeline, TheBoundsOfTheDistanceLeaveTheVerdict) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<Real> uni(-1, 1);
  const int n[4] = {0, 1, 2, 3};
  const std::vector<Real> u(12, 0);
  long checked = 0, settled_by_box = 0, settled_by_nodes = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<Real> x(12);
    for (Real& v : x)
      v = uni(rng);
    const int kind = trial % 5;
    if (kind == 1) {  // coplanar: every z the same
      for (int a = 0; a < 4; ++a)
        x[3 * a + 2] = 0.25;
    } else if (kind == 2) {  // parallel edges / the point over the triangle's plane
      for (int c = 0; c < 3; ++c)
        x[9 + c] = x[6 + c] + (x[3 + c] - x[0 + c]);
    } else if (kind == 3) {  // node 0 exactly beyond node 1 along x
      x[0] = x[3] + 0.5 * std::fabs(uni(rng));
      x[1] = x[4];
      x[2] = x[5];
    } else if (kind == 4) {  // touching: node 0 on node 2
      for (int c = 0; c < 3; ++c)
        x[c] = x[6 + c];
    }
    for (bool ee : {false, true}) {
      const Real dist = pipe::subpair_distance(x.data(), n, ee);
      const Real gap = pipe::subpair_box_gap(x.data(), n, ee);
      ASSERT_TRUE(std::isfinite(dist));
      const Real near = pipe::subpair_node_distance(x.data(), n, ee);
      ASSERT_LE(gap, dist * (1 + 1e-12) + 1e-300) << "trial " << trial << " ee " << ee;
      ASSERT_LE(dist, near * (1 + 1e-12)) << "trial " << trial << " ee " << ee;
      const Real reaches[] = {dist * (1 - 1e-9), dist, dist * (1 + 1e-9), std::fabs(uni(rng))};
      for (Real reach : reaches) {
        // d = reach, no tolerance, no motion: the reach is d
        const bool exact = !(dist >= reach);
        EXPECT_EQ(pipe::subpair_within_reach(x.data(), u.data(), n, reach, 0, 1e-3, ee), exact)
            << "trial " << trial << " ee " << ee << " reach " << reach << " dist " << dist;
        ++checked;
        if (gap * (1 - 1e-12) >= reach) ++settled_by_box;
        if (gap * (1 - 1e-12) < reach && near * (1 + 1e-9) < reach) ++settled_by_nodes;
      }
    }
  }
  // each shortcut must settle a good share of the random sub-pairs, or it is no shortcut
  EXPECT_GT(settled_by_box, checked / 10) << settled_by_box << " of " << checked;
  EXPECT_GT(settled_by_nodes, checked / 20) << settled_by_nodes << " of " << checked;
}

// The finder's test of a whole triangle pair, triangle_pair_gap, is a lower bound of the
// distance of each of its sub-pairs (the vertices of each against the other, the edges
// pairwise): random pairs, general, coplanar (a flat cloth), one a sliver, and touching at a
// node; and it separates a good share of the coplanar ones, which boxes do not.
TEST(Pipeline, TheTrianglePairGapBoundsEverySubpair) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<Real> uni(-1, 1);
  long separated = 0, coplanar = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<Real> x(18);
    for (Real& v : x)
      v = uni(rng);
    const int kind = trial % 4;
    if (kind == 1) {  // coplanar
      for (int a = 0; a < 6; ++a)
        x[3 * a + 2] = 0.25;
      ++coplanar;
    } else if (kind == 2) {  // the first triangle a sliver: its third node nearly on its first edge
      for (int c = 0; c < 3; ++c)
        x[6 + c] = 0.5 * (x[c] + x[3 + c]) + 1e-9 * uni(rng);
    } else if (kind == 3) {  // touching: the second triangle's first node on the first's
      for (int c = 0; c < 3; ++c)
        x[9 + c] = x[c];
    }
    const int ta[3] = {0, 1, 2}, tb[3] = {3, 4, 5};
    const Real gap = pipe::triangle_pair_gap(x.data(), ta, tb);
    ASSERT_GE(gap, 0);
    Real nearest = 1e300;
    for (int side = 0; side < 2; ++side)
      for (int a = 0; a < 3; ++a) {
        const int* t = side ? tb : ta;
        const int* o = side ? ta : tb;
        const int n[4] = {t[a], o[0], o[1], o[2]};
        nearest = std::min(nearest, pipe::subpair_distance(x.data(), n, false));
      }
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) {
        const int n[4] = {ta[a], ta[(a + 1) % 3], tb[b], tb[(b + 1) % 3]};
        nearest = std::min(nearest, pipe::subpair_distance(x.data(), n, true));
      }
    ASSERT_LE(gap, nearest * (1 + 1e-12) + 1e-15) << "trial " << trial;
    if (kind == 3) {
      EXPECT_EQ(gap, 0) << "trial " << trial;
    }
    if (kind == 1 && gap > 0) ++separated;
  }
  EXPECT_GT(separated, coplanar / 4) << separated << " of " << coplanar;
}

// The walk writes the candidates into the room the last call needed (at first 4 per element): a
// state with more, the cloth's nodes scattered at random over a 10 cm square in a 2 mm layer
// (every triangle crossing dozens of others), takes its second walk and still gives every
// candidate, and so does the next call on it, whose room fits; the lists equal the reference's
TEST(Pipeline, ACrowdedStateOutgrowsTheWalksRoom) {
  const auto m = load_scene("cloth_drop.json");
  const std::vector<Real> q = test::scattered_nodes(*m, 3), u(q.size(), 0.0);
  Pipeline pipe(*m);
  const Real dt = m->scene.integrator.dt;
  EXPECT_GT(expect_same(*m, pipe, q, u, dt, "scattered, first call"), 1000);
  EXPECT_GT(pipe.candidates_tt(), 10 * long(m->nedge + m->ntri)) << "beyond the first room";
  expect_same(*m, pipe, q, u, dt, "scattered, second call");
}

// Parts far apart and elements of very different sizes: two fine sheets 1 km apart along x
// (each sheet's centres share a Morton cell of a metre: the tree orders them by id), a rod lying
// across one sheet from corner to corner 1 mm above it, and one of two short edges beside it. The
// overlapping pairs and the step's candidates and lists equal the reference's.
TEST(Pipeline, FarApartPartsAndAHugeElement) {
  SceneBuilder b;
  const int mat = b.material("m", 300, 1e6, 0.3);
  for (const Real x : {0.0, 1e3}) {
    const int s = b.rectangle_shell(x == 0 ? "near" : "far", vec3(x, 0, 0), vec3(0.06, 0, 0),
                                    vec3(0, 0.02, 0), 0.004, false, mat, 0.003);
    b.membrane(s, MembraneModel::kSprings);
  }
  CrossSection cs;
  cs.radius = 1e-3;
  b.straight_rod("across", vec3(-0.01, -0.01, 0.001), vec3(0.07, 0.03, 0.001), 9, mat, cs);
  b.straight_rod("short", vec3(0.03, 0.01, 0.004), vec3(0.031, 0.01, 0.004), 3, mat, cs);
  test::contact_at_1mm(b);
  const auto m = build_model(b.build());
  std::vector<Real> q(m->node_x0.begin(), m->node_x0.end()), u(size_t(m->ndof), 0.0);
  q.resize(size_t(m->ndof), 0.0);
  std::mt19937 rng(17);
  std::uniform_real_distribution<Real> unit(-1, 1);
  for (int i = 0; i < 3 * m->nnode; ++i)
    u[size_t(i)] = 0.5 * unit(rng);
  Pipeline pipe(*m);
  for (const Real inflation : {Real(0), Real(0.01)}) {
    pipe.find_overlapping(q.data(), inflation);
    EXPECT_EQ(candidate_keys(pipe),
              test::reference_overlapping(*m, q.data(), nullptr, 0, inflation))
        << inflation;
    EXPECT_GT(pipe.candidates_et(), 10) << inflation;
  }
  EXPECT_GT(expect_same(*m, pipe, q, u, 1e-3, "far apart"), 10);
}

// a non-finite position is an error naming the cause, not a silent empty list
// (a position, or a velocity: either makes its elements' boxes over the step non-finite, at an
// edge's first node or its last; an infinite velocity in a step of size 0 too)
TEST(Pipeline, NonFinitePositionOrVelocityIsAnError) {
  const auto m = load_scene("gripper.json");
  Simulator sim(m);
  Pipeline pipe(*m);
  struct Case {
    int dof;
    bool velocity;
    Real value, dt;
  };
  // (node 59: the first finger's tip, the last node of its last edge)
  for (const Case c : {Case{5, false, std::nan(""), 1e-3}, Case{179, false, std::nan(""), 1e-3},
                       Case{5, true, std::nan(""), 1e-3}, Case{179, true, std::nan(""), 1e-3},
                       Case{7, true, INFINITY, 1e-3}, Case{7, true, -INFINITY, 0}}) {
    std::vector<Real> q = sim.state().q, u = sim.state().u;
    (c.velocity ? u : q)[size_t(c.dof)] = c.value;
    try {
      pipe.find(q.data(), u.data(), c.dt);
      ADD_FAILURE() << "no error: " << (c.velocity ? "velocity " : "position ") << c.value;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("non-finite positions or velocities"), std::string::npos)
          << e.what();
    }
  }
  // and a finite state afterwards is found as before
  const ContactPairLists want =
      test::reference_pairs(*m, sim.state().q.data(), sim.state().u.data(), 1e-3).lists;
  ContactPairLists got;
  pipe.find(sim.state().q.data(), sim.state().u.data(), 1e-3);
  pipe.download(got);
  test::expect_same_pairs(got, want, "after the errors");
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender::contact
