#pragma once

// Contact broad phase of the CPU backend: once per time step, the candidate pairs of rod edges
// (capsules: 2 nodes + radius) and shell triangles (3 nodes + half thickness) whose inflated
// axis-aligned boxes overlap, excluding adjacent elements (those sharing a node). The narrow
// phase then computes the true distance of each candidate pair.
//
// Algorithm: a uniform spatial hash. Each element's box is inserted into every grid cell it
// overlaps (hashed by the cell's integer coordinates, built by a counting sort so that each
// bucket lists its entries in element order). Then each element queries the cells of its own box
// for higher-numbered elements; a pair is reported only from the cell that holds the min corner
// of the two boxes' intersection, so each pair is found exactly once, without a global sort.
// Elements that would cover too many cells (a ground triangle among small ones) stay out of the
// grid and are tested against every element. The output is sorted, so it does not depend on the
// thread count, and it is the same bit for bit for the same input.
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
};

/// Settings of one broad-phase call.
struct BroadPhaseOptions {
  /// [m] every pair whose surfaces (capsule of radius r, slab of half thickness h) may come
  /// closer than this is a candidate: the contact distance plus tolerance plus the motion
  /// expected in one step. Each box grows by r (or h) + inflation / 2 on every side, so two
  /// boxes overlap whenever the surfaces are within `inflation`.
  Real inflation = 0;
  /// [m] edge of a hash cell; 0: the median over elements of their largest box side. A cell
  /// size that would put more than kMaxEntriesPerElement (element, cell) entries per element
  /// into the hash, or make more than kMaxLarge elements large, is doubled until it does not
  /// (the size used is in BroadPhaseStats).
  Real cell_size = 0;
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
  long nbucket = 0;       ///< hash buckets (a power of two)
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

/// The broad phase and its workspace. Buffers grow as needed and never shrink, so repeated calls
/// on problems of the same size do not allocate (stats().grew reports when one did). Not
/// thread-safe: one object per concurrent caller. The query loop is threaded with OpenMP.
class BroadPhase {
 public:
  /// Finds the candidate pairs of `in`. Throws slender::Error on a broken contract: a node id
  /// out of range, a non-finite position, a negative or non-finite radius, half thickness,
  /// inflation or cell size.
  CandidatePairs find_pairs(const BroadPhaseInput& in, const BroadPhaseOptions& opt);
  const BroadPhaseStats& stats() const { return stats_; }

 private:
  /// inflated box of one element, its cell range and its nodes (an edge repeats its last)
  struct Box {
    Real lo[3];
    Real hi[3];
    int cell_lo[3];
    int cell_hi[3];
    int node[3];
    int id;     ///< element id, edges first
    int large;  ///< 1: out of the grid
    int pad;
  };
  /// one (element, cell) entry of the hash
  struct Entry {
    std::uint64_t key;  ///< packed cell coordinates
    int rank;           ///< the element's place in the spatial order
    int lo_bits;        ///< bit d: the cell is the element's min cell on axis d
  };
  /// found pairs of one range of ranks (one OpenMP work item): (id, id) with the smaller first
  struct Chunk {
    std::vector<int> pair;
  };

  void compute_boxes(const BroadPhaseInput& in, Real inflation);
  void choose_grid(Real cell_size);
  void sort_elements();
  void build_hash();
  void query_chunk(int c);
  void sort_pairs();
  std::size_t capacity_bytes() const;

  int nedge_ = 0;
  int nelem_ = 0;
  Real origin_[3] = {0, 0, 0};   // [m] min corner of all boxes
  Real span_ = 0;                // [m] largest side of the box of all boxes
  Real inv_h_ = 1;               // [1/m] 1 / cell size
  long nbucket_ = 0;             // hash buckets, a power of two
  int block_shift_ = 63;         // a block's hash is (block key * golden) >> shift
  std::vector<Box> box_;         // by element id (nelem)
  std::vector<Box> sbox_;        // by rank: in the order of their min cell's bucket (nelem)
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
