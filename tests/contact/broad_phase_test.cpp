// Broad phase: the spatial hash against an independent O(n^2) box test on random soups of rods
// and shell patches, degenerate geometry, determinism and the workspace's growth.

#include "contact/broad_phase.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <numeric>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "slender/core/error.h"
#include "slender/core/parallel_for.h"

// every allocation of the test program is counted, so that a test can check that a call made
// none (the aligned forms too: the broad phase's boxes are cache-line aligned)
namespace {
std::atomic<long> g_allocations{0};
void* counted_alloc(std::size_t n, std::size_t align) {
  ++g_allocations;
  n = std::max<std::size_t>(n, 1);
  void* p = align <= alignof(std::max_align_t)
                ? std::malloc(n)
                : std::aligned_alloc(align, (n + align - 1) / align * align);
  if (!p) throw std::bad_alloc();
  return p;
}
// out of line, or GCC pairs the inlined free() with operator new and warns of a mismatch
[[gnu::noinline]] void counted_free(void* p) noexcept { std::free(p); }
}  // namespace

// (the nothrow forms too: std::stable_sort's buffer comes from one and goes back through the
// plain delete, which must then be ours on both ends; a sanitizer's own nothrow new would not)
void* operator new(std::size_t n) { return counted_alloc(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_alloc(n, std::size_t(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n, 0);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n, std::size_t(a));
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_free(p); }

namespace slender::contact {
namespace {
namespace SLENDER_UNITY_ID {

/// a soup of rod edges and shell triangles in flat arrays, as BroadPhaseInput reads them
struct Soup {
  std::vector<Real> node_x;              // (nnode x 3)
  std::vector<int> edge_node;            // (nedge x 2)
  std::vector<Real> edge_radius;         // (nedge)
  std::vector<int> tri_node;             // (ntri x 3)
  std::vector<Real> tri_half_thickness;  // (ntri)

  int nnode() const { return int(node_x.size() / 3); }
  int nedge() const { return int(edge_radius.size()); }
  int ntri() const { return int(tri_half_thickness.size()); }
  int add_node(Real x, Real y, Real z) {
    node_x.insert(node_x.end(), {x, y, z});
    return nnode() - 1;
  }
  void add_edge(int a, int b, Real r) {
    edge_node.insert(edge_node.end(), {a, b});
    edge_radius.push_back(r);
  }
  void add_tri(int a, int b, int c, Real h) {
    tri_node.insert(tri_node.end(), {a, b, c});
    tri_half_thickness.push_back(h);
  }
  BroadPhaseInput input() const {
    BroadPhaseInput in;
    in.nnode = nnode();
    in.node_x = node_x.data();
    in.nedge = nedge();
    in.edge_node = edge_node.data();
    in.edge_radius = edge_radius.data();
    in.ntri = ntri();
    in.tri_node = tri_node.data();
    in.tri_half_thickness = tri_half_thickness.data();
    return in;
  }
};

/// Random rods (chains of edges, so neighbours share nodes) and small shell patches
/// (triangulated grids) in a cube of side `box`; every fourth rod starts at a patch node (a
/// rod-shell joint). Elements are about 1 long, so a smaller box is a denser soup.
Soup random_soup(std::uint64_t seed, int nrod, int npatch, Real box) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<Real> u(0, 1), s(-1, 1);
  std::uniform_int_distribution<int> len(1, 8);
  Soup soup;
  for (int q = 0; q < npatch; ++q) {
    // an m x m node grid on a random plane, jittered, two triangles per quad
    const int m = 2 + int(3 * u(rng));
    const Real o[3] = {box * u(rng), box * u(rng), box * u(rng)};
    const Real a[3] = {s(rng), s(rng), s(rng)}, b[3] = {s(rng), s(rng), s(rng)};
    const int first = soup.nnode();
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < m; ++j) {
        Real x[3];
        for (int d = 0; d < 3; ++d)
          x[d] = o[d] + 0.7 * (i * a[d] + j * b[d]) + 0.1 * s(rng);
        soup.add_node(x[0], x[1], x[2]);
      }
    }
    const Real h = 0.02 * u(rng);
    for (int i = 0; i + 1 < m; ++i) {
      for (int j = 0; j + 1 < m; ++j) {
        const int n00 = first + i * m + j, n01 = n00 + 1, n10 = n00 + m, n11 = n10 + 1;
        soup.add_tri(n00, n10, n11, h);
        soup.add_tri(n00, n11, n01, h);
      }
    }
  }
  const int npatch_node = soup.nnode();
  for (int r = 0; r < nrod; ++r) {
    int prev;
    if (r % 4 == 0 && npatch_node > 0) {
      prev = int(rng() % std::uint64_t(npatch_node));
    } else {
      prev = soup.add_node(box * u(rng), box * u(rng), box * u(rng));
    }
    Real p[3] = {soup.node_x[3 * prev], soup.node_x[3 * prev + 1], soup.node_x[3 * prev + 2]};
    const Real radius = 0.05 * u(rng);
    for (int k = len(rng); k > 0; --k) {
      for (Real& c : p)
        c += s(rng);
      const int next = soup.add_node(p[0], p[1], p[2]);
      soup.add_edge(prev, next, radius);
      prev = next;
    }
  }
  return soup;
}

using Pair = std::pair<int, int>;
struct PairSets {
  std::vector<Pair> ee, et, tt;
  bool operator==(const PairSets& o) const { return ee == o.ee && et == o.et && tt == o.tt; }
};

std::vector<Pair> to_pairs(long n, const int* p) {
  std::vector<Pair> v;
  for (long k = 0; k < n; ++k)
    v.emplace_back(p[2 * k], p[2 * k + 1]);
  return v;
}

PairSets to_sets(const CandidatePairs& c) {
  return {to_pairs(c.nee, c.ee_pair), to_pairs(c.net, c.et_pair), to_pairs(c.ntt, c.tt_pair)};
}

/// independent reference: boxes from the definition, every pair tested, sorted sets
PairSets naive_pairs(const Soup& soup, Real inflation) {
  struct B {
    std::array<Real, 3> lo, hi;
    std::vector<int> node;
  };
  std::vector<B> edge_box, tri_box;
  auto make = [&](const int* nd, int k, Real r) {
    B b;
    for (int d = 0; d < 3; ++d) {
      b.lo[d] = b.hi[d] = soup.node_x[3 * nd[0] + d];
      for (int a = 1; a < k; ++a) {
        b.lo[d] = std::min(b.lo[d], soup.node_x[3 * nd[a] + d]);
        b.hi[d] = std::max(b.hi[d], soup.node_x[3 * nd[a] + d]);
      }
      b.lo[d] -= r + inflation / 2;
      b.hi[d] += r + inflation / 2;
    }
    b.node.assign(nd, nd + k);
    return b;
  };
  for (int e = 0; e < soup.nedge(); ++e)
    edge_box.push_back(make(&soup.edge_node[2 * e], 2, soup.edge_radius[e]));
  for (int t = 0; t < soup.ntri(); ++t)
    tri_box.push_back(make(&soup.tri_node[3 * t], 3, soup.tri_half_thickness[t]));
  auto candidate = [](const B& a, const B& b) {
    for (int d = 0; d < 3; ++d) {
      if (a.lo[d] > b.hi[d] || b.lo[d] > a.hi[d]) return false;
    }
    for (int n : a.node) {
      if (std::count(b.node.begin(), b.node.end(), n)) return false;
    }
    return true;
  };
  PairSets r;
  for (std::size_t i = 0; i < edge_box.size(); ++i) {
    for (std::size_t j = i + 1; j < edge_box.size(); ++j) {
      if (candidate(edge_box[i], edge_box[j])) r.ee.emplace_back(int(i), int(j));
    }
    for (std::size_t j = 0; j < tri_box.size(); ++j) {
      if (candidate(edge_box[i], tri_box[j])) r.et.emplace_back(int(i), int(j));
    }
  }
  for (std::size_t i = 0; i < tri_box.size(); ++i) {
    for (std::size_t j = i + 1; j < tri_box.size(); ++j) {
      if (candidate(tri_box[i], tri_box[j])) r.tt.emplace_back(int(i), int(j));
    }
  }
  return r;
}

PairSets hash_pairs(const Soup& soup, BroadPhaseOptions opt, BroadPhase* bp = nullptr) {
  BroadPhase local;
  return to_sets((bp ? *bp : local).find_pairs(soup.input(), opt));
}

void expect_sorted_unique(const PairSets& p) {
  for (const auto* v : {&p.ee, &p.et, &p.tt}) {
    EXPECT_TRUE(std::adjacent_find(v->begin(), v->end(), std::greater_equal<Pair>()) == v->end());
  }
  for (const auto* v : {&p.ee, &p.tt}) {
    for (const Pair& q : *v)
      EXPECT_LT(q.first, q.second);
  }
}

// ---- random soups against the reference -----------------------------------------------------

struct SoupCase {
  int nrod, npatch;
  Real box, inflation;
};
const SoupCase kSoupCases[] = {
    {60, 20, 12.0, 0.1},  // sparse
    {60, 20, 5.0, 0.2},   // medium
    {40, 15, 2.0, 0.3},   // dense: most boxes overlap
    {200, 0, 6.0, 0.1},   // rods only
    {0, 60, 6.0, 0.1},    // shells only
};

class RandomSoup : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(RandomSoup, MatchesBruteForce) {
  const auto [seed, k] = GetParam();
  const SoupCase& sc = kSoupCases[k];
  const Soup soup = random_soup(std::uint64_t(seed), sc.nrod, sc.npatch, sc.box);
  BroadPhaseOptions opt;
  opt.inflation = sc.inflation;
  const PairSets ref = naive_pairs(soup, opt.inflation);
  const PairSets got = hash_pairs(soup, opt);
  expect_sorted_unique(got);
  EXPECT_EQ(got.ee, ref.ee);
  EXPECT_EQ(got.et, ref.et);
  EXPECT_EQ(got.tt, ref.tt);
  if (k < 3) {
    EXPECT_GT(ref.ee.size() + ref.et.size() + ref.tt.size(), 0u);
  }

  // the library's brute force agrees too
  std::vector<int> ee, et, tt;
  find_pairs_brute_force(soup.input(), opt, ee, et, tt);
  EXPECT_EQ(to_pairs(long(ee.size() / 2), ee.data()), ref.ee);
  EXPECT_EQ(to_pairs(long(et.size() / 2), et.data()), ref.et);
  EXPECT_EQ(to_pairs(long(tt.size() / 2), tt.data()), ref.tt);

  // given cell sizes, fine to coarse, and either block layout change nothing
  for (const GridLayout layout : {GridLayout::kDense, GridLayout::kHashed}) {
    for (const Real h : {0.0, 0.05, 0.3, 1.0, 4.0}) {
      opt.cell_size = h;
      opt.layout = layout;
      BroadPhase bp;
      EXPECT_EQ(hash_pairs(soup, opt, &bp), ref) << "cell size " << h;
      EXPECT_EQ(bp.stats().dense, layout == GridLayout::kDense);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds,
                         RandomSoup,
                         ::testing::Combine(::testing::Range(0, 20), ::testing::Range(0, 5)));

TEST(BroadPhase, LargeSoupMatchesBruteForce) {
  const Soup soup = random_soup(99, 800, 250, 25.0);
  BroadPhaseOptions opt;
  opt.inflation = 0.15;
  BroadPhase bp;
  const PairSets got = hash_pairs(soup, opt, &bp);
  EXPECT_EQ(got, naive_pairs(soup, opt.inflation));
  EXPECT_GT(bp.stats().nentry, 0);
  EXPECT_EQ(bp.stats().nlarge, 0);
  EXPECT_TRUE(bp.stats().dense);
  EXPECT_GT(got.ee.size(), 100u);
  EXPECT_GT(got.et.size(), 10u);
  EXPECT_GT(got.tt.size(), 100u);
}

// ---- the inflation contract -----------------------------------------------------------------

TEST(BroadPhase, InflationCoversTheSurfaceGap) {
  // two parallel edges along x, radii r1 and r2, centre lines a distance D apart along y: a
  // candidate exactly when the surface gap D - r1 - r2 is at most the inflation
  const Real r1 = 0.1, r2 = 0.05, d = 0.2;
  for (Real gap : {0.0, 0.1, 0.19, 0.21, 0.5}) {
    Soup soup;
    const Real y = r1 + r2 + gap;
    soup.add_edge(soup.add_node(0, 0, 0), soup.add_node(1, 0, 0), r1);
    soup.add_edge(soup.add_node(0, y, 0), soup.add_node(1, y, 0), r2);
    BroadPhaseOptions opt;
    opt.inflation = d;
    EXPECT_EQ(hash_pairs(soup, opt).ee.size(), gap <= d ? 1u : 0u) << "gap " << gap;
  }
}

// ---- degenerate geometry ----------------------------------------------------------------------

TEST(BroadPhase, EmptyAndSingleElement) {
  Soup soup;
  BroadPhase bp;
  CandidatePairs c = bp.find_pairs(soup.input(), {});
  EXPECT_EQ(c.nee + c.net + c.ntt, 0);
  soup.add_edge(soup.add_node(0, 0, 0), soup.add_node(1, 0, 0), 0.1);
  c = bp.find_pairs(soup.input(), {});
  EXPECT_EQ(c.nee + c.net + c.ntt, 0);
}

TEST(BroadPhase, AllElementsInOneCell) {
  const Soup soup = random_soup(7, 30, 10, 3.0);
  BroadPhaseOptions opt;
  opt.inflation = 0.1;
  opt.cell_size = 1e3;
  BroadPhase bp;
  EXPECT_EQ(hash_pairs(soup, opt, &bp), naive_pairs(soup, opt.inflation));
  EXPECT_EQ(bp.stats().nentry, soup.nedge() + soup.ntri());
  EXPECT_EQ(bp.stats().cell_size, 1e3);
}

TEST(BroadPhase, HugeElementsAmongSmallOnes) {
  // small rods and patches in a cube of side 40, plus a ground triangle and a long edge that
  // span it: they cover far too many cells for the grid and are tested against everything
  Soup soup = random_soup(11, 400, 100, 40.0);
  const int a = soup.add_node(-10, -10, 20), b = soup.add_node(60, -10, 20),
            c = soup.add_node(-10, 60, 21);
  soup.add_tri(a, b, c, 0.01);
  soup.add_edge(soup.add_node(-5, 20, -5), soup.add_node(45, 20, 45), 0.2);
  BroadPhaseOptions opt;
  opt.inflation = 0.1;
  BroadPhase bp;
  const PairSets got = hash_pairs(soup, opt, &bp);
  EXPECT_EQ(got, naive_pairs(soup, opt.inflation));
  EXPECT_EQ(bp.stats().nlarge, 2);
  EXPECT_LT(bp.stats().cell_size, 5.0);  // the huge elements do not set the cell size
  // both huge elements do meet small ones
  const int big_edge = soup.nedge() - 1, big_tri = soup.ntri() - 1;
  EXPECT_TRUE(std::any_of(got.et.begin(), got.et.end(),
                          [&](const Pair& p) { return p.second == big_tri; }));
  EXPECT_TRUE(std::any_of(got.ee.begin(), got.ee.end(),
                          [&](const Pair& p) { return p.second == big_edge; }));
}

TEST(BroadPhase, TinyGivenCellSizeIsEnlarged) {
  const Soup soup = random_soup(5, 100, 30, 8.0);
  BroadPhaseOptions opt;
  opt.inflation = 0.1;
  opt.cell_size = 1e-4;
  BroadPhase bp;
  EXPECT_EQ(hash_pairs(soup, opt, &bp), naive_pairs(soup, opt.inflation));
  EXPECT_GT(bp.stats().cell_size, opt.cell_size);
  EXPECT_LE(bp.stats().nentry, kMaxEntriesPerElement * (soup.nedge() + soup.ntri()));
  EXPECT_LE(bp.stats().nlarge, kMaxLarge);
}

TEST(BroadPhase, ZeroSizeElements) {
  // collapsed edges and triangles with zero radius and thickness: at one point all
  // non-adjacent pairs touch; spread out on a lattice only coincident ones do
  for (const bool coincident : {true, false}) {
    Soup soup;
    for (int k = 0; k < 40; ++k) {
      const Real x = coincident ? 1.0 : Real(k % 4), y = coincident ? 1.0 : Real(k / 4 % 4);
      const int n0 = soup.add_node(x, y, 0), n1 = soup.add_node(x, y, 0),
                n2 = soup.add_node(x, y, 0);
      if (k % 2) {
        soup.add_edge(n0, n1, 0);
      } else {
        soup.add_tri(n0, n1, n2, 0);
      }
      if (k % 5 == 0) soup.add_edge(n2, n0, 0);  // adjacent to the element just made
    }
    for (const Real d : {0.0, 0.5}) {
      BroadPhaseOptions opt;
      opt.inflation = d;
      BroadPhase bp;
      const PairSets got = hash_pairs(soup, opt, &bp);
      EXPECT_EQ(got, naive_pairs(soup, d)) << coincident << " " << d;
      EXPECT_GT(bp.stats().cell_size, 0);
      EXPECT_TRUE(std::isfinite(bp.stats().cell_size));
      if (coincident) {
        const std::size_t n = got.ee.size() + got.et.size() + got.tt.size();
        const std::size_t ne = std::size_t(soup.nedge()), nt = std::size_t(soup.ntri());
        EXPECT_EQ(n, (ne + nt) * (ne + nt - 1) / 2 - 8);  // 8 adjacent pairs
      }
    }
  }
}

TEST(BroadPhase, FarApartClustersAndHugeCoordinates) {
  // two clusters 1e6 apart: the grid is capped at 2^21 cells per axis and stays correct
  Soup soup = random_soup(3, 50, 10, 4.0);
  Soup far = random_soup(4, 50, 10, 4.0);
  const int off = soup.nnode();
  for (std::size_t k = 0; k < far.node_x.size(); ++k)
    soup.node_x.push_back(far.node_x[k] + (k % 3 == 0 ? 1e6 : 0.0));
  for (int e = 0; e < far.nedge(); ++e)
    soup.add_edge(far.edge_node[2 * e] + off, far.edge_node[2 * e + 1] + off, far.edge_radius[e]);
  for (int t = 0; t < far.ntri(); ++t) {
    soup.add_tri(far.tri_node[3 * t] + off, far.tri_node[3 * t + 1] + off,
                 far.tri_node[3 * t + 2] + off, far.tri_half_thickness[t]);
  }
  BroadPhaseOptions opt;
  opt.inflation = 0.1;
  BroadPhase bp;
  EXPECT_EQ(hash_pairs(soup, opt, &bp), naive_pairs(soup, opt.inflation));
  EXPECT_FALSE(bp.stats().dense);  // a dense grid of blocks would be mostly empty: hashed
}

// ---- determinism ------------------------------------------------------------------------------

TEST(BroadPhase, SameOutputTwiceAndAcrossWorkspaces) {
  // big enough for the pair loop to run threaded
  const Soup soup = random_soup(21, 6000, 1600, 40.0);
  ASSERT_GE(soup.nedge() + soup.ntri(), kParallelGrain);
  BroadPhaseOptions opt;
  opt.inflation = 0.1;
  BroadPhase bp;
  const PairSets first = hash_pairs(soup, opt, &bp);
  EXPECT_EQ(hash_pairs(soup, opt, &bp), first);
  EXPECT_EQ(hash_pairs(soup, opt), first);
  // the thread count does not change the output
  for (int t : {1, 2, 3}) {
    set_host_threads(t);
    EXPECT_EQ(hash_pairs(soup, opt, &bp), first) << t << " threads";
  }
  set_host_threads(0);
}

TEST(BroadPhase, PermutedInputGivesTheSamePairs) {
  const Soup soup = random_soup(31, 300, 80, 10.0);
  BroadPhaseOptions opt;
  opt.inflation = 0.2;
  const PairSets ref = hash_pairs(soup, opt);

  // permute nodes, edges and triangles; new id k holds old id perm[k]
  std::mt19937_64 rng(5);
  auto perm = [&](int n) {
    std::vector<int> p(std::size_t(n), 0);
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), rng);
    return p;
  };
  auto inverse = [](const std::vector<int>& p) {
    std::vector<int> q(p.size());
    for (std::size_t k = 0; k < p.size(); ++k)
      q[std::size_t(p[k])] = int(k);
    return q;
  };
  const std::vector<int> pn = perm(soup.nnode()), pe = perm(soup.nedge()), pt = perm(soup.ntri());
  const std::vector<int> node_new = inverse(pn);
  Soup s;
  for (int k = 0; k < soup.nnode(); ++k)
    s.add_node(soup.node_x[3 * pn[k]], soup.node_x[3 * pn[k] + 1], soup.node_x[3 * pn[k] + 2]);
  for (int k = 0; k < soup.nedge(); ++k) {
    // also swap an edge's ends now and then
    const int a = node_new[soup.edge_node[2 * pe[k]]], b = node_new[soup.edge_node[2 * pe[k] + 1]];
    k % 2 ? s.add_edge(a, b, soup.edge_radius[pe[k]]) : s.add_edge(b, a, soup.edge_radius[pe[k]]);
  }
  for (int k = 0; k < soup.ntri(); ++k) {
    const int* t = &soup.tri_node[3 * pt[k]];
    s.add_tri(node_new[t[1]], node_new[t[2]], node_new[t[0]], soup.tri_half_thickness[pt[k]]);
  }
  const PairSets got = hash_pairs(s, opt);
  expect_sorted_unique(got);

  // map back to the old ids and sort
  PairSets back;
  for (const Pair& p : got.ee)
    back.ee.emplace_back(std::min(pe[p.first], pe[p.second]), std::max(pe[p.first], pe[p.second]));
  for (const Pair& p : got.et)
    back.et.emplace_back(pe[p.first], pt[p.second]);
  for (const Pair& p : got.tt)
    back.tt.emplace_back(std::min(pt[p.first], pt[p.second]), std::max(pt[p.first], pt[p.second]));
  for (auto* v : {&back.ee, &back.et, &back.tt})
    std::sort(v->begin(), v->end());
  EXPECT_EQ(back, ref);
}

// ---- workspace ----------------------------------------------------------------------------------

TEST(BroadPhase, WorkspaceGrowsOnlyWhenNeeded) {
  const Soup small = random_soup(41, 200, 50, 10.0);
  const Soup big = random_soup(42, 2000, 500, 22.0);
  BroadPhaseOptions opt;
  opt.inflation = 0.1;
  BroadPhase bp;
  bp.find_pairs(small.input(), opt);
  EXPECT_TRUE(bp.stats().grew);
  EXPECT_EQ(bp.stats().ngrow, 1);
  bp.find_pairs(small.input(), opt);
  EXPECT_FALSE(bp.stats().grew);
  bp.find_pairs(big.input(), opt);
  EXPECT_TRUE(bp.stats().grew);
  const std::size_t bytes = bp.stats().bytes;
  const long ngrow = bp.stats().ngrow;

  // moving the big soup a little (a new step) or going back to the small one allocates nothing
  Soup moved_soup = big;
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<Real> u(-0.01, 0.01);
  for (Real& x : moved_soup.node_x)
    x += u(rng);
  const Soup& moved = moved_soup;
  for (const Soup* s : {&moved, &small, &big}) {
    const long before = g_allocations;
    bp.find_pairs(s->input(), opt);
    EXPECT_EQ(g_allocations - before, 0);
    EXPECT_FALSE(bp.stats().grew);
  }
  EXPECT_EQ(bp.stats().bytes, bytes);
  EXPECT_EQ(bp.stats().ngrow, ngrow);

  // and a growing call does allocate: the counter sees the broad phase's allocations
  const Soup bigger = random_soup(43, 4000, 1000, 30.0);
  const long before = g_allocations;
  bp.find_pairs(bigger.input(), opt);
  EXPECT_GT(g_allocations - before, 0);
  EXPECT_TRUE(bp.stats().grew);
}

// ---- contracts ----------------------------------------------------------------------------------

TEST(BroadPhase, BrokenContractsThrow) {
  Soup soup = random_soup(1, 5, 2, 3.0);
  BroadPhase bp;
  BroadPhaseOptions opt;
  opt.inflation = -1;
  EXPECT_THROW(bp.find_pairs(soup.input(), opt), Error);
  opt.inflation = 0.1;
  opt.cell_size = std::nan("");
  EXPECT_THROW(bp.find_pairs(soup.input(), opt), Error);
  opt.cell_size = 0;

  Soup bad = soup;
  bad.edge_node[1] = bad.nnode();
  EXPECT_THROW(bp.find_pairs(bad.input(), opt), Error);
  bad = soup;
  bad.tri_node[2] = -1;
  EXPECT_THROW(bp.find_pairs(bad.input(), opt), Error);
  bad = soup;
  bad.node_x[3 * bad.edge_node[0]] = std::nan("");
  EXPECT_THROW(bp.find_pairs(bad.input(), opt), Error);
  bad = soup;
  bad.tri_half_thickness[0] = -0.1;
  EXPECT_THROW(bp.find_pairs(bad.input(), opt), Error);

  // the workspace still works after a throw
  EXPECT_EQ(to_sets(bp.find_pairs(soup.input(), opt)), naive_pairs(soup, opt.inflation));
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender::contact
