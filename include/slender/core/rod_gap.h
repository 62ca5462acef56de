#pragma once

// Arc-length gap between two edges of one rod (host and device): the rule that keeps neighbours
// along a thick rod out of contact (Model::rod_gap, the host and device contact pair lists).

#include "slender/core/hd.h"

namespace slender {

/// [m] arc length between edge a (starting at arc_a, of rest length l_a) and edge b along their
/// rod, the shorter way round a closed chain of length `loop` (0: open)
SLENDER_HD inline Real rod_arc_gap(Real arc_a, Real l_a, Real arc_b, Real l_b, Real loop) {
  if (arc_b < arc_a) {
    const Real ta = arc_a, tl = l_a;
    arc_a = arc_b, l_a = l_b;
    arc_b = ta, l_b = tl;
  }
  const Real gap = arc_b - (arc_a + l_a);
  // round the other way: from the end of b over the closing point to the start of a
  if (loop > 0) {
    const Real other = loop - (arc_b + l_b) + arc_a;
    return other < gap ? other : gap;
  }
  return gap;
}

}  // namespace slender
