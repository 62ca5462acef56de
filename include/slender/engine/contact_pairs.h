#pragma once

// The contact sub-pairs of one step as flat lists (what the host's finder, host/contact/pairs.h,
// and the executor's pipeline, contact_pipeline.h, both produce, in the same order), and the
// reach of a step (host/contact/pairs.cpp).

#include <vector>

#include "slender/model.h"

namespace slender::contact {

/// The sub-pairs of one step, flat.
struct ContactPairLists {
  std::vector<int> ee_node;  ///< edge pairs: nodes a0, a1, b0, b1 (nee x 4)
  std::vector<Real> ee_d;    ///< their contact distance [m] (nee)
  std::vector<Real> ee_mu;   ///< their friction coefficient (nee)
  std::vector<int> pt_node;  ///< vertex-triangle pairs: p, t0, t1, t2 (npt x 4)
  std::vector<Real> pt_d;    ///< (npt)
  std::vector<Real> pt_mu;   ///< (npt)
  int nee() const { return int(ee_d.size()); }
  int npt() const { return int(pt_d.size()); }
};

/// [m] how far a step of size dt may reach: the model's contact tolerance plus twice the largest
/// displacement a node with the largest velocity component in `u` (3 nnode) covers
Real contact_reach(const Model& m, Real max_abs_velocity, Real dt);

}  // namespace slender::contact
