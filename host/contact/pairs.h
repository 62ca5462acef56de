#pragma once

// The contact sub-pairs of one time step, on the host: the broad phase's candidate elements
// expanded into the pairs the IMC stencils evaluate, with their contact distances and friction
// coefficients, and the sub-pairs that cannot come within range during the step culled.
//
// - rod edge pairs: kept when both edges stretch (the augmented edges of rod-shell joints are
//   triangle edges, which the triangles' own pairs cover) and they are not neighbours along one
//   rod closer than their contact distance plus the tolerance;
// - rod edge - triangle: the rod's end nodes against the triangle (vertex-triangle) and the rod
//   edge against the triangle's edges (edge-edge);
// - triangle pairs: each one's vertices against the other (vertex-triangle) and their shell
//   edges pairwise (edge-edge); each sub-pair once (a vertex-triangle pair keeps the part of the
//   first element that brought it, in candidate order). Summing these smooth pair energies
//   avoids the kinks of a minimum over sub-pairs, which stalls Newton's method;
// - the broad phase's boxes cover each element over the step (its nodes at q and at
//   q + kStepSweep dt u, grown by the tolerance), so elements moving together gain no
//   candidates however fast they move;
// - culling: a sub-pair whose distance at the step's start is at least its contact distance plus
//   the tolerance plus how much closer its nodes may come in the step (kStepSweep dt times their
//   largest relative speed: subpair_approach) has zero energy (eq. 21's cut-off) and cannot
//   reach.
//
// Order of the lists (the assembly plan depends on it): edge pairs are the rod pairs in
// candidate order, then the rod-shell edge pairs sorted by (rod edge, shell edge), then the
// shell edge pairs sorted by (smaller, larger shell edge); vertex-triangle pairs are sorted by
// (vertex, triangle). ContactPipeline (engine/contact_pipeline.h) builds the same lists on the
// device.

#include <array>
#include <utility>
#include <vector>

#include "contact/broad_phase.h"
#include "slender/engine/contact_pairs.h"
#include "slender/model.h"

namespace slender::contact {

/// the broad phase's view of the model's rod edges and triangles at positions q
BroadPhaseInput broad_phase_input(const Model& m, const Real* q);

/// The host's sub-pair finder; keeps its broad phase and scratch lists between calls.
class ContactPairFinder {
 public:
  /// the sub-pairs of the step of size dt starting at positions q with velocities u (the first
  /// 3 nnode entries of the model's DOF vectors)
  void find(const Model& m, const Real* q, const Real* u, Real dt, ContactPairLists& out);
  const BroadPhase& broad_phase() const { return broad_phase_; }

 private:
  BroadPhase broad_phase_;
  std::vector<std::array<int, 3>> vt_;  // (vertex, triangle, part)
  std::vector<std::pair<int, int>> edges_, rod_shell_edges_;
  std::vector<unsigned char> keep_;  // which sub-pairs the culling keeps
  // the triangle pairs' sub-pairs that the culling would keep, per chunk of kTtChunk candidates
  static constexpr long kTtChunk = 4096;
  std::vector<std::vector<std::array<int, 3>>> tt_vt_;
  std::vector<std::vector<std::pair<int, int>>> tt_edges_;
};

}  // namespace slender::contact
