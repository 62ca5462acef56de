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
  b.membrane(plate, MembraneModel::kSprings);
  const int rod =
      b.straight_rod("rod", vec3(0, 0, 0), vec3(0, 0, -0.1), 6, mat, SceneBuilder::circle(1e-3));
  b.joint({NodeRef{plate, 0, {}}, NodeRef{rod, 0, {}}});
  if (drag) b.aerodynamic_drag(1.2, 1.0);
  if (fix_joint) b.fix_node(plate, 0);
  b.gravity(vec3(0, 0, -9.8));
  return b.build();
}

/// two sheets (8 cm x 4 cm, h = 1 mm) of constant-strain triangles, one St Venant-Kirchhoff
/// and one neo-Hookean (nu = 0.4), the first with mid-edge bending, on the ground under gravity
inline SceneSpec membrane_sheets() {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.4);
  const int a = b.rectangle_shell("stvk", vec3(0, 0, 0.01), vec3(0.08, 0, 0), vec3(0, 0.04, 0),
                                  0.01, false, mat, 1e-3, ShellBending::kMidEdge);
  const int c = b.rectangle_shell("neo_hookean", vec3(0, 0.05, 0.01), vec3(0.08, 0, 0),
                                  vec3(0, 0.04, 0), 0.01, true, mat, 1e-3);
  b.membrane(a, MembraneModel::kStvk);
  b.membrane(c, MembraneModel::kNeoHookean);
  GroundSpec g;
  g.enabled = true;
  b.ground(g);
  b.gravity(vec3(0, 0, -9.8));
  return b.build();
}

}  // namespace slender::test
