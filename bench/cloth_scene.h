#pragma once

// S9's cloth (apps/scenes/cloth_drop.json, Py-DiSMech Fig. 11) built in code at any size: the
// scene of slender_cloth_bench and slender_precond_bench.

#include <algorithm>
#include <cmath>

#include "slender/builder.h"

namespace slender::bench::cloth {

constexpr Real kRadius = 0.3;    // [m]
constexpr Real kThick = 2e-3;    // [m]
constexpr Real kRho = 1000;      // [kg/m^3]
constexpr Real kNu = 0.3;        // [-]
constexpr Real kHeight = 0.25;   // centre above the ground [m]
constexpr Real kTol = 1e-3;      // contact tolerance [m]
constexpr Real kDamping = 5;     // mass-proportional [1/s]
constexpr Real kDt = 1e-3;       // [s]
constexpr Real kGravity = 9.81;  // [m/s^2]

/// the disk's ring count whose 6 nr^2 triangles are nearest `target`
inline int rings_for(long target) {
  return std::max(1, int(std::lround(std::sqrt(double(target) / 6))));
}

/// the cloth with `rings` rings of triangles and Young's modulus E: a disk of radius 0.3 m,
/// h = 2 mm, hinge bending, its centre and first ring fixed 0.25 m above a frictionless ground,
/// tilted by 5.4 degrees; gravity, mass-proportional damping 5/s, self-contact (tolerance 1 mm),
/// implicit Euler at dt = 1 ms
inline SceneSpec make_scene(int rings, Real E) {
  SceneBuilder b;
  b.name("cloth_drop");
  const int mat = b.material("cloth", kRho, E, kNu);
  const int s = b.disk_shell("cloth", vec3(0, 0, kHeight), vec3(0.08, 0.05, 1), kRadius,
                             kRadius / rings, mat, kThick);
  b.membrane(s, slender::MembraneModel::kSprings);
  for (int n = 0; n <= 6; ++n)  // the centre and its first ring
    b.fix_node(s, n);
  ContactSpec c;
  c.tolerance = kTol;
  b.contact(c);
  GroundSpec g;
  g.enabled = true;
  g.contact_distance = 2e-4;
  b.ground(g);
  b.gravity(vec3(0, 0, -kGravity)).mass_damping(kDamping);
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = kDt;
  return b.build();
}

}  // namespace slender::bench::cloth
