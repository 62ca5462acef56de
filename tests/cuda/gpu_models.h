#pragma once

// Models shared by the GPU suites and the device-stepper suite (tests/cpu).

#include <cmath>
#include <memory>
#include <vector>

#include "slender/builder.h"
#include "slender/model.h"

namespace slender::test {

/// a mid-edge plate (10 cm, h = 1 mm) with a rod joined at its corner node 0, under gravity;
/// with drag on request, and the joint node fixed on request
inline SceneSpec midedge_plate_with_rod(bool drag, bool fix_joint) {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e7, 0.3);
  const int plate = b.rectangle_shell("plate", vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.1, 0),
                                      0.02, false, mat, 1e-3, ShellBending::kMidEdge);
  const int rod =
      b.straight_rod("rod", vec3(0, 0, 0), vec3(0, 0, -0.1), 6, mat, SceneBuilder::circle(1e-3));
  b.joint({NodeRef{plate, 0, {}}, NodeRef{rod, 0, {}}});
  if (drag) b.aerodynamic_drag(1.2, 1.0);
  if (fix_joint) b.fix_node(plate, 0);
  b.gravity(vec3(0, 0, -9.8));
  return b.build();
}

/// a cantilever (16 edges, 0.3 m) clamped at edge 0, implicit midpoint, dt = 2 ms: for
/// prescribed motion by the caller's targets
inline std::shared_ptr<const Model> clamped_rod_for_targets() {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.3);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.3, 0, 0), 16, mat, SceneBuilder::circle(0.005));
  b.fix_edge(rod, 0);
  b.gravity(vec3(0, 0, -9.8));
  b.integrator().kind = IntegratorKind::kImplicitMidpoint;
  b.integrator().dt = 2e-3;
  return build_model(b.build());
}

/// targets of every fixed DOF of that rod for environment e at the end of step s: the clamp
/// moves up and down (amplitude 1 cm (e + 1)) and turns at 0.5 e rad/s
inline std::vector<Real> clamp_targets(const Model& m, int e, int s) {
  std::vector<Real> out(m.fixed_dof.size());
  const Real t = (s + 1) * m.scene.integrator.dt;
  for (size_t j = 0; j < out.size(); ++j) {
    const int dof = m.fixed_dof[j];
    const bool node = dof < 3 * m.nnode;
    out[j] = (node ? m.node_x0[size_t(dof)] : 0) +
             (node && dof % 3 == 2 ? 0.01 * (e + 1) * std::sin(40 * t) : 0) +
             (node ? 0 : 0.5 * e * t);
  }
  return out;
}

}  // namespace slender::test
