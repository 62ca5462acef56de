#pragma once

// Triangle meshes of shells: the generators behind SceneBuilder's *_shell methods. Internal to
// host/io. (The triangles' topology check that validate_scene() runs on every part with
// triangles is in host/model/validate_scene.cpp.)
//
// Every generator returns nodes and triangles only (no rod edges), with all triangles wound
// counterclockwise about the shell's normal (right-hand rule: (x1 - x0) x (x2 - x0) points to
// the normal side), no repeated nodes and no degenerate triangles. Misuse (a zero normal, a
// non-positive length, too many nodes) throws InputError("", 0, "<method>.<argument>", ...),
// with <method> the SceneBuilder method, e.g. "disk_shell.radius".

#include <string>
#include <vector>

#include "slender/builder.h"

namespace slender {

/// The most nodes a generated rod or shell mesh may have: 10^7 (more is surely a typo, an edge
/// length in the wrong unit, and would exhaust memory). The fuzz targets lower it (tests/fuzz:
/// a scene of a few bytes may ask for a mesh of millions of nodes, valid but slow), so that the
/// library they link is the one the sanitizer suites run (scripts/sanitize.sh).
long max_generated_nodes();
void set_max_generated_nodes(long n);

/// Parallelogram origin + s u + t v, s, t in [0, 1]; normal u x v. Structured: a grid of
/// nu x nv cells (nu = max(1, round(|u| / L)), nv likewise), node j (nu + 1) + i at
/// origin + i/nu u + j/nv v, each cell split along its shorter diagonal (the same one in every
/// cell). Unstructured: a triangular lattice of rows along u, nv = max(1, round(|v| /
/// (L sqrt(3) / 2))) strips; even rows hold nu + 1 nodes at i/nu, odd rows nu + 2 nodes at 0,
/// (i + 1/2)/nu and 1, rows numbered in order from the origin.
GeometryFile rectangle_mesh(
    const Vec3& origin, const Vec3& u, const Vec3& v, Real edge_length, bool structured);

/// Disk about `center` in the plane normal to `normal`: node 0 at the center, then rings
/// k = 1..nr (nr = max(1, round(radius / L))) of 6k nodes at radius k radius / nr, angle
/// 2 pi j / (6k) from the in-plane axis e1 (see unit_normal_to), counterclockwise about normal.
GeometryFile disk_mesh(const Vec3& center, const Vec3& normal, Real radius, Real edge_length);

/// Regular hexagon of circumradius = side, first corner at center + side e1: the same rings as
/// the disk, each a hexagon (6k nodes, k per side), so the six sectors are equilateral triangles
/// split into nr^2 equal triangles.
GeometryFile hexagon_mesh(const Vec3& center, const Vec3& normal, Real side, Real edge_length);

/// Open hemisphere of the sphere (center, radius) on the side of +axis: node 0 at the pole
/// center + radius axis, then rings k = 1..nr (nr = max(1, round(pi radius / (2 L)))) at polar
/// angle (pi / 2) k / nr with m_k = max(3, round(2 pi radius sin(angle) / L)) nodes; the last
/// ring is the rim, exactly on the equator. Triangles face outward.
GeometryFile hemisphere_mesh(const Vec3& center, const Vec3& axis, Real radius, Real edge_length);

/// A unit vector normal to the unit vector a, from the coordinate axis least aligned with a
/// (ties go to the lower axis): the same a always gives the same direction.
Vec3 unit_normal_to(const Vec3& a);

}  // namespace slender
