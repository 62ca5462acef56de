#include "contact/clearance.h"

#include <algorithm>
#include <cmath>

#include "backend/host_executor.h"
#include "model/model_internal.h"
#include "slender/core/error.h"
#include "slender/engine/contact_pipeline.h"
#include "slender/stencils/contact_distance.h"
#include "slender/stencils/ground_contact.h"

namespace slender::contact {

Real triangle_distance(const Vec3 a[3], const Vec3 b[3], bool& crossing) {
  crossing = false;
  Real best = INFINITY;
  // each edge of one triangle against the other: its end nodes against that triangle and the
  // edge against that triangle's edges; both ways round covers all vertex-triangle and
  // edge-edge pairs
  for (int side = 0; side < 2; ++side) {
    const Vec3* e = side ? b : a;
    const Vec3* t = side ? a : b;
    for (int k = 0; k < 3; ++k) {
      Vec<15> x;
      x.set_segment(0, e[k]);
      x.set_segment(3, e[(k + 1) % 3]);
      for (int c = 0; c < 3; ++c)
        x.set_segment(6 + 3 * c, t[c]);
      ContactDistance d;
      int pair = 0;
      edge_triangle_distance(x, kEnergy, d, pair, nullptr, nullptr);
      if (d.flags & kContactCrossing) crossing = true;
      best = std::min(best, d.delta);
    }
  }
  return crossing ? Real(0) : best;
}

namespace {

Vec3 node_at(const std::vector<Real>& q, int n) {
  return vec3(q[3 * size_t(n)], q[3 * size_t(n) + 1], q[3 * size_t(n) + 2]);
}

// triangles ta and tb of one part within contact range of each other in the rest shape
bool rest_neighbours(const Model& m, int ta, int tb) {
  if (m.tri_part[ta] != m.tri_part[tb]) return false;
  Vec3 a[3], b[3];
  for (int i = 0; i < 3; ++i) {
    a[i] = node_at(m.node_x0, m.tri_node[3 * ta + i]);
    b[i] = node_at(m.node_x0, m.tri_node[3 * tb + i]);
  }
  bool crossing = false;
  const Real d = triangle_distance(a, b, crossing);
  return d < m.tri_half_thickness[ta] + m.tri_half_thickness[tb] + m.contact.tolerance;
}

}  // namespace

Clearance ClearanceProbe::measure(const Model& m,
                                  const std::vector<Real>& q,
                                  const ClearanceOptions& opt) {
  SLENDER_CHECK(q.size() >= 3 * size_t(m.nnode), "configuration too short: ", q.size(),
                " values for ", m.nnode, " nodes");
  SLENDER_CHECK(opt.search > 0 && std::isfinite(opt.search), "search radius must be positive, got ",
                opt.search);
  Clearance c;

  // triangle pairs sharing no node whose slabs come within the search radius
  if (m.ntri > 0) {
    ContactPipeline<HostExecutor> pipe(m);
    pipe.find_overlapping(q.data(), opt.search);
    const long ntt = pipe.candidates_tt();
    const std::uint64_t* tt = pipe.candidate_keys() + pipe.candidates_ee() + pipe.candidates_et();
    c.measured = ntt;
    for (long k = 0; k < ntt; ++k) {
      const int ta = pipe::key_first(tt[k]), tb = pipe::key_second(tt[k]);
      Vec3 a[3], b[3];
      for (int i = 0; i < 3; ++i) {
        a[i] = node_at(q, m.tri_node[3 * ta + i]);
        b[i] = node_at(q, m.tri_node[3 * tb + i]);
      }
      bool crossing = false;
      const Real d = triangle_distance(a, b, crossing);
      if (crossing) ++c.crossing;
      if (opt.skip_rest_neighbours && !crossing && rest_neighbours(m, ta, tb)) {
        --c.measured;
        continue;
      }
      if (d < opt.touch) ++c.touching;
      if (d < c.self) {
        c.self = d;
        c.self_tri[0] = ta;
        c.self_tri[1] = tb;
      }
    }
  }

  // nodes against the ground, each at its contact radius
  if (m.ground.enabled) {
    // the ground as its contact stencil sees it
    const Ground gr = host_view(m).ground.ground;
    for (int n = 0; n < m.nnode; ++n) {
      Vec3 grad;
      Mat3 hess;
      const Real h = ground_distance(gr, node_at(q, n), grad, hess) - m.node_contact_radius[n];
      if (h < c.ground) {
        c.ground = h;
        c.ground_node = n;
      }
    }
  }
  return c;
}

}  // namespace slender::contact
