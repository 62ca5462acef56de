#include "contact/broad_phase.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>

#include "slender/core/error.h"
#include "slender/core/parallel_for.h"
#include "slender/engine/contact_pairs.h"

namespace slender::contact {

namespace {

// cell coordinates are packed into 21 bits each, so a grid has at most 2^21 cells per axis
constexpr int kCellBits = 21;
constexpr int kMaxCell = (1 << kCellBits) - 1;
// 2^64 / golden ratio, odd: the multiplier of the block hash
constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;
// cells go by blocks of 4 x 4 x 4, whose 64 cells take consecutive buckets: neighbouring cells
// share cache lines of the bucket and entry arrays
constexpr int kBlockBits = 2;
constexpr int kBlockCellBits = 3 * kBlockBits;
// elements whose box size sets the automatic cell size
constexpr int kMedianSample = 4096;
// elements per work item of the threaded loop over the buckets, and the most such items
constexpr int kChunkElems = 1024;
constexpr int kMaxChunks = 256;

std::uint64_t cell_key(int x, int y, int z) {
  return std::uint64_t(x) | std::uint64_t(y) << kCellBits | std::uint64_t(z) << (2 * kCellBits);
}

/// bit d set where cell coordinate d is the min cell of range c on axis d
template <class C>
int lo_bits(const C& c, int x, int y, int z) {
  return int(x == c.lo[0]) | int(y == c.lo[1]) << 1 | int(z == c.lo[2]) << 2;
}

template <class B>
bool overlap(const B& a, const B& b) {
  return a.lo[0] <= b.hi[0] && b.lo[0] <= a.hi[0] && a.lo[1] <= b.hi[1] && b.lo[1] <= a.hi[1] &&
         a.lo[2] <= b.hi[2] && b.lo[2] <= a.hi[2];
}

/// node ids of element e (edges first, then triangles); an edge repeats its last node
void element_nodes(const BroadPhaseInput& in, int e, int node[3]) {
  if (e < in.nedge) {
    node[0] = in.edge_node[2 * std::size_t(e)];
    node[1] = node[2] = in.edge_node[2 * std::size_t(e) + 1];
  } else {
    const int* t = in.tri_node + 3 * std::size_t(e - in.nedge);
    node[0] = t[0];
    node[1] = t[1];
    node[2] = t[2];
  }
}

/// whether elements a and b share a node
bool adjacent(const BroadPhaseInput& in, int a, int b) {
  int na[3], nb[3];
  element_nodes(in, a, na);
  element_nodes(in, b, nb);
  for (int k = 0; k < 3; ++k) {
    for (int l = 0; l < 3; ++l) {
      if (na[k] == nb[l]) return true;
    }
  }
  return false;
}

/// grows v to at least n elements (25 % headroom); the size is the capacity, never the count
template <class T>
void fit(std::vector<T>& v, std::size_t n) {
  if (v.size() < n) v.resize(n + n / 4);
}

/// inflated box of element e, with the contract checks on its nodes and radius
template <class B>
void element_box(const BroadPhaseInput& in, Real inflation, int e, B& b) {
  const bool is_edge = e < in.nedge;
  const int k = is_edge ? 2 : 3;
  const int* nd =
      is_edge ? in.edge_node + 2 * std::size_t(e) : in.tri_node + 3 * std::size_t(e - in.nedge);
  const Real r = is_edge ? in.edge_radius[e] : in.tri_half_thickness[e - in.nedge];
  SLENDER_CHECK(r >= 0 && std::isfinite(r), is_edge ? "edge " : "triangle ",
                is_edge ? e : e - in.nedge, ": radius or half thickness ", r);
  for (int a = 0; a < k; ++a) {
    const int n = nd[a];
    SLENDER_CHECK(n >= 0 && n < in.nnode, is_edge ? "edge " : "triangle ",
                  is_edge ? e : e - in.nedge, ": node id ", n, " not in [0, ", in.nnode, ")");
    const Real* x = in.node_x + 3 * std::size_t(n);
    SLENDER_CHECK(std::isfinite(x[0]) && std::isfinite(x[1]) && std::isfinite(x[2]), "node ", n,
                  ": non-finite position");
    if (in.node_u) {
      const Real* v = in.node_u + 3 * std::size_t(n);
      SLENDER_CHECK(std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]), "node ", n,
                    ": non-finite velocity");
    }
  }
  element_step_box(in.node_x, in.node_u, in.sweep, nd, k, r + Real(0.5) * inflation, b.lo, b.hi);
}

void check_input(const BroadPhaseInput& in, const BroadPhaseOptions& opt) {
  SLENDER_CHECK(in.nnode >= 0 && in.nedge >= 0 && in.ntri >= 0, "negative count");
  SLENDER_CHECK(in.nedge == 0 || (in.edge_node && in.edge_radius), "edge arrays missing");
  SLENDER_CHECK(in.ntri == 0 || (in.tri_node && in.tri_half_thickness), "triangle arrays missing");
  SLENDER_CHECK(in.nnode == 0 || in.node_x, "node positions missing");
  SLENDER_CHECK(long(in.nedge) + in.ntri < INT_MAX, "too many elements");
  SLENDER_CHECK(opt.inflation >= 0 && std::isfinite(opt.inflation), "inflation ", opt.inflation);
  SLENDER_CHECK(in.sweep >= 0 && std::isfinite(in.sweep), "sweep ", in.sweep);
  SLENDER_CHECK(opt.cell_size >= 0 && std::isfinite(opt.cell_size), "cell size ", opt.cell_size);
}

/// appends pair (a, b), a < b in the combined numbering, to the list of its kind
void emit(int nedge, int a, int b, int*& ee, int*& et, int*& tt) {
  if (b < nedge) {
    *ee++ = a;
    *ee++ = b;
  } else if (a < nedge) {
    *et++ = a;
    *et++ = b - nedge;
  } else {
    *tt++ = a - nedge;
    *tt++ = b - nedge;
  }
}

}  // namespace

void BroadPhase::compute_boxes(Real inflation) {
  fit(box_, std::size_t(nelem_));
  fit(extent_, std::size_t(nelem_));
  Real glo[3], ghi[3];
  for (int d = 0; d < 3; ++d) {
    glo[d] = std::numeric_limits<Real>::infinity();
    ghi[d] = -glo[d];
  }
  for (int e = 0; e < nelem_; ++e) {
    Box& b = box_[e];
    element_box(in_, inflation, e, b);
    b.id = e;
    Real ext = 0;
    for (int d = 0; d < 3; ++d) {
      ext = std::max(ext, b.hi[d] - b.lo[d]);
      glo[d] = std::min(glo[d], b.lo[d]);
      ghi[d] = std::max(ghi[d], b.hi[d]);
    }
    extent_[e] = ext;
  }
  span_ = 0;
  for (int d = 0; d < 3; ++d) {
    origin_[d] = glo[d];
    ghi_[d] = ghi[d];
    span_ = std::max(span_, ghi[d] - glo[d]);
  }
  SLENDER_CHECK(std::isfinite(span_), "broad phase: coordinates span ", span_);
}

void BroadPhase::choose_grid(Real cell_size, GridLayout layout) {
  // the median largest side, of at most kMedianSample elements evenly spread over the ids; a
  // zero median (point-like elements) falls back on the spacing of nelem points spread evenly
  // over the span
  Real h = cell_size;
  if (!(h > 0)) {
    const int m = std::min(nelem_, kMedianSample);
    for (int k = 0; k < m; ++k)
      extent_[std::size_t(k)] = extent_[std::size_t(long(k) * nelem_ / m)];
    Real* mid = extent_.data() + m / 2;
    std::nth_element(extent_.data(), mid, extent_.data() + m);
    h = *mid;
  }
  if (!(h > 0)) h = span_ / std::cbrt(Real(nelem_));
  // at most kMaxCell cells per axis, and an absolute floor that keeps 1 / h finite
  h = std::max({h, span_ / (kMaxCell - 1), Real(1e-12)});

  // classify the elements; too many entries or large elements (very uneven sizes, or a tiny
  // given cell) double the cell size
  const long nlarge_cells = std::max(kMinLargeCells, long(nelem_) / 4);
  long nentry = 0, nlarge = 0;
  for (;;) {
    inv_h_ = 1 / h;
    nentry = 0;
    nlarge = 0;
    for (int e = 0; e < nelem_; ++e) {
      Box& b = box_[e];
      const Cells c = cells(b);
      const long ncell =
          long(c.hi[0] - c.lo[0] + 1) * (c.hi[1] - c.lo[1] + 1) * (c.hi[2] - c.lo[2] + 1);
      b.large = ncell > nlarge_cells;
      if (b.large) {
        ++nlarge;
      } else {
        nentry += ncell;
      }
    }
    if (nentry <= kMaxEntriesPerElement * long(nelem_) && nlarge <= kMaxLarge) break;
    h *= 2;
  }
  SLENDER_CHECK(nentry < INT_MAX, "broad phase: ", nentry, " hash entries");
  stats_.cell_size = h;
  stats_.nentry = nentry;
  stats_.nlarge = int(nlarge);

  // a dense grid of blocks where it is small enough (neighbouring blocks are then near in memory
  // too), else hashed blocks: a power-of-two bucket count, at least the number of entries and
  // two blocks
  long nblock = 1;
  for (int d = 0; d < 3; ++d) {
    const int cmax = int(std::min((ghi_[d] - origin_[d]) * inv_h_, Real(kMaxCell)));
    nblock_[d] = (cmax >> kBlockBits) + 1;
    nblock *= nblock_[d];
  }
  const bool fits = nblock < (INT_MAX >> kBlockCellBits);
  const bool small = nblock <= (kDenseBucketsPerEntry * std::max(nentry, 1024L) >> kBlockCellBits);
  dense_ = fits && (layout == GridLayout::kDense || (layout == GridLayout::kAuto && small));
  if (dense_) {
    nbucket_ = nblock << kBlockCellBits;
  } else {
    int log2_nbucket = kBlockCellBits + 1;
    while ((1L << log2_nbucket) < nentry)
      ++log2_nbucket;
    nbucket_ = 1L << log2_nbucket;
    block_shift_ = 64 - (log2_nbucket - kBlockCellBits);
  }
  stats_.nbucket = nbucket_;
  stats_.dense = dense_;
}

int BroadPhase::block_of(int bx, int by, int bz) const {
  if (dense_) return bx + nblock_[0] * (by + nblock_[1] * bz);
  // multiply, fold, multiply: the top bits of a single multiplication (Fibonacci hashing)
  // collide several times too often on packed coordinates
  std::uint64_t h = cell_key(bx, by, bz) * kGolden;
  h = (h ^ (h >> 32)) * kGolden;
  return int(h >> block_shift_);
}

int BroadPhase::bucket_of(int x, int y, int z) const {
  constexpr int m = (1 << kBlockBits) - 1;
  const int local = (x & m) | (y & m) << kBlockBits | (z & m) << (2 * kBlockBits);
  return block_of(x >> kBlockBits, y >> kBlockBits, z >> kBlockBits) << kBlockCellBits | local;
}

BroadPhase::Cells BroadPhase::cells(const Box& b) const {
  // x >= origin, so the scaled coordinate is >= 0 and the cast truncates like floor (a
  // monotone map, which the pair rule needs); clamp first, as a cast past INT_MAX is undefined
  Cells c;
  for (int d = 0; d < 3; ++d) {
    c.lo[d] = int(std::min((b.lo[d] - origin_[d]) * inv_h_, Real(kMaxCell)));
    c.hi[d] = int(std::min((b.hi[d] - origin_[d]) * inv_h_, Real(kMaxCell)));
  }
  return c;
}

void BroadPhase::sort_elements() {
  // counting sort of the elements by the block of their min cell: elements close in space get
  // close ranks, so that building the hash and the cell-pair loop read and write nearby memory
  // whatever the input order. Stable, hence deterministic.
  fit(sbox_, std::size_t(nelem_));
  fit(order_, std::size_t(nelem_));
  const long nblock = nbucket_ >> kBlockCellBits;
  fit(bucket_adr_, std::size_t(nblock + 1));
  int* count = bucket_adr_.data();
  std::fill(count, count + nblock + 1, 0);
  auto block = [&](const Box& b) {
    const Cells c = cells(b);
    return block_of(c.lo[0] >> kBlockBits, c.lo[1] >> kBlockBits, c.lo[2] >> kBlockBits);
  };
  for (int e = 0; e < nelem_; ++e)
    ++count[block(box_[e]) + 1];
  for (long k = 0; k < nblock; ++k)
    count[k + 1] += count[k];
  // scatter the ids, then gather the boxes: independent random reads overlap, random writes
  // of whole boxes would not
  for (int e = 0; e < nelem_; ++e)
    order_[std::size_t(count[block(box_[e])]++)] = e;
  for (int r = 0; r < nelem_; ++r)
    sbox_[r] = box_[order_[r]];

  large_.clear();
  for (int r = 0; r < nelem_; ++r) {
    if (sbox_[r].large) large_.push_back(r);
  }
}

void BroadPhase::build_hash() {
  fit(bucket_adr_, std::size_t(nbucket_ + 1));
  fit(entry_, std::size_t(stats_.nentry));
  std::fill(bucket_adr_.begin(), bucket_adr_.begin() + nbucket_ + 1, 0);

  // counting sort by bucket: count, exclusive prefix sum, scatter by rank (so each bucket lists
  // its elements by ascending rank), then shift the advanced starts back by one
  auto for_each_cell = [&](const Box& b, auto&& f) {
    const Cells c = cells(b);
    for (int z = c.lo[2]; z <= c.hi[2]; ++z) {
      for (int y = c.lo[1]; y <= c.hi[1]; ++y) {
        for (int x = c.lo[0]; x <= c.hi[0]; ++x)
          f(cell_key(x, y, z), bucket_of(x, y, z), lo_bits(c, x, y, z));
      }
    }
  };
  int* adr = bucket_adr_.data();
  for (int r = 0; r < nelem_; ++r) {
    if (sbox_[r].large) continue;
    for_each_cell(sbox_[r], [&](std::uint64_t, int bk, int) { ++adr[bk]; });
  }
  int sum = 0;
  for (long k = 0; k < nbucket_; ++k) {
    const int c = adr[k];
    adr[k] = sum;
    sum += c;
  }
  Entry* entry = entry_.data();
  for (int r = 0; r < nelem_; ++r) {
    if (sbox_[r].large) continue;
    for_each_cell(sbox_[r], [&](std::uint64_t key, int bk, int bits) {
      entry[adr[bk]++] = Entry{key, r, bits};
    });
  }
  std::memmove(adr + 1, adr, sizeof(int) * std::size_t(nbucket_));
  adr[0] = 0;
}

void BroadPhase::query_chunk(int c) {
  std::vector<int>& pair = chunk_[c].pair;
  pair.clear();
  const Box* box = sbox_.data();
  auto add = [&](const Box& a, const Box& b) {
    if (overlap(a, b) && !adjacent(in_, a.id, b.id)) {
      pair.push_back(std::min(a.id, b.id));
      pair.push_back(std::max(a.id, b.id));
    }
  };

  // work items past the bucket ranges: one large element each, against all others (a pair of
  // large elements once, from the lower rank)
  if (c >= nchunk_) {
    const int r = large_[std::size_t(c - nchunk_)];
    for (int s = 0; s < nelem_; ++s) {
      if (s != r && (!box[s].large || s > r)) add(box[r], box[s]);
    }
    return;
  }

  // every pair of entries of the same cell, reported from the cell holding the min corner of
  // the boxes' intersection only: the cell map is monotone, so that cell is the max of the two min
  // cells, and as both boxes cover this cell, it is that max on an axis where it is the min cell
  // of either box: a test on the two entries alone, before the boxes are read
  const Entry* entry = entry_.data();
  const int* adr = bucket_adr_.data();
  const long k0 = nbucket_ * c / nchunk_, k1 = nbucket_ * (c + 1) / nchunk_;
  for (long k = k0; k < k1; ++k) {
    const int p1 = adr[k + 1];
    for (int p = adr[k]; p < p1; ++p) {
      const Entry& ep = entry[p];
      for (int q = p + 1; q < p1; ++q) {
        const Entry& eq = entry[q];
        if (eq.key != ep.key) continue;  // another cell in the same bucket
        if ((ep.lo_bits | eq.lo_bits) != 7) continue;
        add(box[ep.rank], box[eq.rank]);
      }
    }
  }
}

void BroadPhase::sort_pairs() {
  // counting sort by the first element, then each (short) row by the second, then split into
  // the three kinds: rows of edges hold their edge pairs, then their edge-triangle pairs
  const int nitem = nchunk_ + int(large_.size());
  long npair = 0;
  for (int c = 0; c < nitem; ++c)
    npair += long(chunk_[c].pair.size()) / 2;
  SLENDER_CHECK(npair < INT_MAX, "broad phase: ", npair, " pairs");
  fit(row_adr_, std::size_t(nelem_) + 1);
  fit(row_col_, std::size_t(npair));
  int* adr = row_adr_.data();
  std::fill(adr, adr + nelem_ + 1, 0);
  for (int c = 0; c < nitem; ++c) {
    const std::vector<int>& p = chunk_[c].pair;
    for (std::size_t k = 0; k < p.size(); k += 2)
      ++adr[p[k] + 1];
  }
  nee_ = net_ = ntt_ = 0;
  for (int a = 0; a < nelem_; ++a) {
    const int n = adr[a + 1];
    adr[a + 1] += adr[a];
    if (a >= nedge_) ntt_ += n;
  }
  int* col = row_col_.data();
  for (int c = 0; c < nitem; ++c) {
    const std::vector<int>& p = chunk_[c].pair;
    for (std::size_t k = 0; k < p.size(); k += 2)
      col[adr[p[k]]++] = p[k + 1];
  }
  std::memmove(adr + 1, adr, sizeof(int) * std::size_t(nelem_));
  adr[0] = 0;
  for (int a = 0; a < nedge_; ++a) {
    std::sort(col + adr[a], col + adr[a + 1]);
    nee_ += std::lower_bound(col + adr[a], col + adr[a + 1], nedge_) - (col + adr[a]);
  }
  for (int a = nedge_; a < nelem_; ++a)
    std::sort(col + adr[a], col + adr[a + 1]);
  net_ = npair - nee_ - ntt_;

  fit(ee_pair_, std::size_t(2 * nee_));
  fit(et_pair_, std::size_t(2 * net_));
  fit(tt_pair_, std::size_t(2 * ntt_));
  int *ee = ee_pair_.data(), *et = et_pair_.data(), *tt = tt_pair_.data();
  for (int a = 0; a < nelem_; ++a) {
    for (int k = adr[a]; k < adr[a + 1]; ++k)
      emit(nedge_, a, col[k], ee, et, tt);
  }
}

std::size_t BroadPhase::capacity_bytes() const {
  std::size_t n =
      (box_.capacity() + sbox_.capacity()) * sizeof(Box) + extent_.capacity() * sizeof(Real) +
      entry_.capacity() * sizeof(Entry) + chunk_.capacity() * sizeof(Chunk) +
      (large_.capacity() + order_.capacity() + bucket_adr_.capacity() + row_adr_.capacity() +
       row_col_.capacity() + ee_pair_.capacity() + et_pair_.capacity() + tt_pair_.capacity()) *
          sizeof(int);
  for (const Chunk& ch : chunk_)
    n += ch.pair.capacity() * sizeof(int);
  return n;
}

CandidatePairs BroadPhase::find_pairs(const BroadPhaseInput& in, const BroadPhaseOptions& opt) {
  check_input(in, opt);
  const std::size_t bytes_before = capacity_bytes();
  in_ = in;
  nedge_ = in.nedge;
  nelem_ = in.nedge + in.ntri;
  stats_.cell_size = 0;
  stats_.nentry = 0;
  stats_.nbucket = 0;
  stats_.dense = false;
  stats_.nlarge = 0;
  nee_ = net_ = ntt_ = 0;

  if (nelem_ > 0) {
    compute_boxes(opt.inflation);
    choose_grid(opt.cell_size, opt.layout);
    sort_elements();
    build_hash();

    // work items: fixed ranges of buckets (a function of nelem only), then one per large
    // element; the pairs are sorted afterwards, so the result does not depend on the thread
    // count
    nchunk_ = std::min(kMaxChunks, (nelem_ + kChunkElems - 1) / kChunkElems);
    const int nitem = nchunk_ + int(large_.size());
    if (int(chunk_.size()) < nitem) chunk_.resize(std::size_t(nitem));
    // threaded (one thread per work item at most) from kParallelGrain elements
    if (nelem_ >= kParallelGrain) {
      parallel_for_host(
          nitem, [this](long c) { query_chunk(int(c)); }, 1);
    } else {
      for (int c = 0; c < nitem; ++c)
        query_chunk(c);
    }
    sort_pairs();
  }
  in_ = BroadPhaseInput{};

  stats_.bytes = capacity_bytes();
  stats_.grew = stats_.bytes != bytes_before;
  if (stats_.grew) ++stats_.ngrow;
  return CandidatePairs{nee_, ee_pair_.data(), net_, et_pair_.data(), ntt_, tt_pair_.data()};
}

void find_pairs_brute_force(const BroadPhaseInput& in,
                            const BroadPhaseOptions& opt,
                            std::vector<int>& ee_pair,
                            std::vector<int>& et_pair,
                            std::vector<int>& tt_pair) {
  check_input(in, opt);
  struct B {
    Real lo[3], hi[3];
  };
  const int nelem = in.nedge + in.ntri;
  std::vector<B> box(static_cast<std::size_t>(nelem));
  for (int e = 0; e < nelem; ++e)
    element_box(in, opt.inflation, e, box[e]);
  ee_pair.clear();
  et_pair.clear();
  tt_pair.clear();
  for (int i = 0; i < nelem; ++i) {
    for (int j = i + 1; j < nelem; ++j) {
      if (!overlap(box[i], box[j]) || adjacent(in, i, j)) continue;
      std::vector<int>& v = j < in.nedge ? ee_pair : i < in.nedge ? et_pair : tt_pair;
      v.push_back(i < in.nedge ? i : i - in.nedge);
      v.push_back(j < in.nedge ? j : j - in.nedge);
    }
  }
}

}  // namespace slender::contact
