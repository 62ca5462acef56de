#pragma once

// Contact broad phase of the CPU backend: once per time step, the candidate pairs of rod edges
// (capsules: 2 nodes + radius) and shell triangles (3 nodes + half thickness) whose inflated
// axis-aligned boxes overlap, excluding adjacent elements (those sharing a node). The narrow
// phase then computes the true distance of each candidate pair.
//
// Algorithm: a uniform grid (spatial hash), all passes linear in the number of elements:
// 1. boxes: each element's box, grown by its radius (half thickness) + inflation / 2;
// 2. grid: cell size h = the median largest box side (or given), doubled while the (element,
//    cell) entries would exceed kMaxEntriesPerElement per element or more than kMaxLarge
//    elements would be large (cover more than max(kMinLargeCells, nelem / 4) cells). Cells go
//    by blocks of 4 x 4 x 4 (64 consecutive buckets); the blocks form a dense grid when that is
//    small enough, else they are hashed (GridLayout);
// 3. spatial order: a counting sort of the elements by the block of their min cell, so that the
//    next passes touch nearby memory whatever the input order;
// 4. hash: every small element enters every cell its box covers (a counting sort by bucket);
// 5. pairs: for every two entries of the same cell, the pair is tested only in the cell that
//    holds the min corner of the two boxes' intersection, which each entry's "min cell" bits
//    decide before any box is read: each overlapping pair is found exactly once. Large
//    elements are tested against all others. Threaded with OpenMP over ranges of buckets;
// 6. sort: a counting sort of the pairs by their first element, each row sorted, split by kind.
// The output is sorted, so it does not depend on the thread count or the input order beyond
// the ids, and it is the same bit for bit for the same input. Many elements crowded into one
// cell (far below the median size, or at one point) cost the square of their number there.
//
// Element ids: edges are 0..nedge-1 and triangles 0..ntri-1, each in their own array; the
// output names them that way. Internally edges come first, then triangles.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "slender/core/small.h"

namespace slender::contact {

/// Geometry of one broad-phase call: flat arrays owned by the caller, read only.
struct BroadPhaseInput {
  int nnode = 0;
  const Real* node_x = nullptr;  ///< node positions [m] (nnode x 3)
  int nedge = 0;
  const int* edge_node = nullptr;     ///< node ids of each rod edge (nedge x 2)
  const Real* edge_radius = nullptr;  ///< rod radius [m] (nedge)
  int ntri = 0;
  const int* tri_node = nullptr;             ///< node ids of each shell triangle (ntri x 3)
  const Real* tri_half_thickness = nullptr;  ///< half the shell thickness [m] (ntri)
  /// node velocities [m/s] (nnode x 3), or null: each element's box then covers its nodes at
  /// node_x and at node_x + sweep node_u (slender::contact::element_step_box)
  const Real* node_u = nullptr;
  Real sweep = 0;  ///< [s]
};

/// How the blocks of 4 x 4 x 4 hash cells are laid out in memory.
enum class GridLayout {
  kAuto,    ///< dense where the grid of blocks is at most kDenseBucketsPerEntry x the entries
  kDense,   ///< a dense grid wherever its bucket count fits an int, however sparse
  kHashed,  ///< a hash of the block coordinates
};

/// Settings of one broad-phase call.
struct BroadPhaseOptions {
  /// [m] every pair whose surfaces (capsule of radius r, slab of half thickness h) may come
  /// closer than this is a candidate (the contact tolerance; the motion of a step is the
  /// input's sweep). Each box grows by r (or h) + inflation / 2 on every side, so two boxes
  /// overlap whenever the surfaces are within `inflation`.
  Real inflation = 0;
  /// [m] edge of a hash cell; 0: the median over elements of their largest box side. A cell
  /// size that would put more than kMaxEntriesPerElement (element, cell) entries per element
  /// into the hash, or make more than kMaxLarge elements large, is doubled until it does not
  /// (the size used is in BroadPhaseStats).
  Real cell_size = 0;
  GridLayout layout = GridLayout::kAuto;
};

/// Candidate pairs of one call: pointers into the BroadPhase's buffers, valid until its next
/// call. Each list is sorted by its first then its second column, and holds each pair once.
struct CandidatePairs {
  long nee = 0;
  const int* ee_pair = nullptr;  ///< edge pairs (a, b), a < b (nee x 2)
  long net = 0;
  const int* et_pair = nullptr;  ///< edge-triangle pairs (edge, triangle) (net x 2)
  long ntt = 0;
  const int* tt_pair = nullptr;  ///< triangle pairs (a, b), a < b (ntt x 2)
};

/// What one call did, for benchmarks and the growth warning of the contact workspace.
struct BroadPhaseStats {
  Real cell_size = 0;     ///< [m] hash cell edge used
  long nentry = 0;        ///< (element, cell) entries in the hash
  long nbucket = 0;       ///< buckets, 64 per block of 4 x 4 x 4 cells
  bool dense = false;     ///< blocks laid out as a dense grid (else hashed)
  int nlarge = 0;         ///< elements kept out of the grid and tested against all others
  bool grew = false;      ///< this call enlarged a buffer (it allocated)
  long ngrow = 0;         ///< calls so far that enlarged a buffer
  std::size_t bytes = 0;  ///< workspace capacity [bytes], output buffers included
};

/// more (element, cell) entries per element than this on average doubles the cell size
constexpr long kMaxEntriesPerElement = 64;
/// an element covering more cells than max(this, number of elements / 4) is large: it stays
/// out of the grid and is tested against every other element
constexpr long kMinLargeCells = 512;
/// more large elements than this doubles the cell size (each costs a pass over all elements)
constexpr long kMaxLarge = 64;
/// GridLayout::kAuto takes a dense grid of blocks up to this many buckets per hash entry
constexpr long kDenseBucketsPerEntry = 4;

/// The broad phase and its workspace. Buffers grow as needed and never shrink, so repeated calls
/// on problems of the same size do not allocate (stats().grew reports when one did). Not
/// thread-safe: one object per concurrent caller. The pair loop is threaded with OpenMP.
class BroadPhase {
 public:
  /// Finds the candidate pairs of `in`. Throws slender::Error on a broken contract: a node id
  /// out of range, a non-finite position, a negative or non-finite radius, half thickness,
  /// inflation or cell size.
  CandidatePairs find_pairs(const BroadPhaseInput& in, const BroadPhaseOptions& opt);
  const BroadPhaseStats& stats() const { return stats_; }

 private:
  /// inflated box of one element: what the pair test reads, one cache line
  struct alignas(64) Box {
    Real lo[3];  ///< [m]
    Real hi[3];  ///< [m]
    int id;      ///< element id, edges first
    int large;   ///< 1: out of the grid
  };
  /// the cells a box covers, per axis [lo, hi]
  struct Cells {
    int lo[3];
    int hi[3];
  };
  /// one (element, cell) entry of the hash
  struct Entry {
    std::uint64_t key;  ///< packed cell coordinates
    int rank;           ///< the element's place in the spatial order
    int lo_bits;        ///< bit d: the cell is the element's min cell on axis d
  };
  /// found pairs of one work item: (id, id) with the smaller first
  struct Chunk {
    std::vector<int> pair;
  };

  void compute_boxes(Real inflation);
  void choose_grid(Real cell_size, GridLayout layout);
  Cells cells(const Box& b) const;
  int block_of(int bx, int by, int bz) const;
  int bucket_of(int x, int y, int z) const;
  void sort_elements();
  void build_hash();
  void query_chunk(int c);
  void sort_pairs();
  std::size_t capacity_bytes() const;

  BroadPhaseInput in_;  // the geometry, during a call only
  int nedge_ = 0;
  int nelem_ = 0;
  Real origin_[3] = {0, 0, 0};   // [m] min corner of all boxes
  Real ghi_[3] = {0, 0, 0};      // [m] max corner of all boxes
  Real span_ = 0;                // [m] largest side of the box of all boxes
  Real inv_h_ = 1;               // [1/m] 1 / cell size
  long nbucket_ = 0;             // buckets: 64 per block
  bool dense_ = false;           // blocks in a dense grid (else hashed)
  int nblock_[3] = {1, 1, 1};    // blocks per axis of the dense grid
  int block_shift_ = 63;         // a hashed block is the top 64 - shift bits of a mix
  std::vector<Box> box_;         // by element id (nelem)
  std::vector<Box> sbox_;        // by rank: in the order of their min cell's block (nelem)
  std::vector<int> order_;       // element id of each rank (nelem)
  std::vector<Real> extent_;     // largest box side of each element, scratch (nelem)
  std::vector<int> large_;       // ranks of the large elements, ascending (nlarge)
  std::vector<int> bucket_adr_;  // first entry of each bucket (nbucket + 1)
  std::vector<Entry> entry_;     // entries by bucket, each bucket by rank (nentry)
  std::vector<Chunk> chunk_;     // (nchunk)
  int nchunk_ = 0;
  std::vector<int> row_adr_;  // pairs by their first element: first pair (nelem + 1)
  std::vector<int> row_col_;  // their second elements (npair)
  std::vector<int> ee_pair_, et_pair_, tt_pair_;  // output, sized to capacity
  long nee_ = 0, net_ = 0, ntt_ = 0;
  BroadPhaseStats stats_;
};

/// The O(n^2) reference: the same boxes and rules as BroadPhase, every pair tested. Fills the
/// three sorted pair lists ((n x 2) each, flat).
void find_pairs_brute_force(const BroadPhaseInput& in,
                            const BroadPhaseOptions& opt,
                            std::vector<int>& ee_pair,
                            std::vector<int>& et_pair,
                            std::vector<int>& tt_pair);

}  // namespace slender::contact
