#pragma once

// Models shared by the GPU suites.

#include <memory>

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

}  // namespace slender::test
