#pragma once

// Clearance of a configuration, for tests, benchmarks and reports (not used by the simulator):
// how close the shell triangles that share no node come to each other (the self-contact the
// contact model must keep apart: no tunnelling), and how close the nodes come to the ground.
//
// Triangle pairs: the contact pair finder's search for overlapping boxes
// (ContactPipeline::find_overlapping, on the host executor: the triangles whose slabs of half
// thickness come within `search`) gives the pairs; each pair's distance is the exact distance
// between the two mid-surface triangles: the minimum over the six edge-triangle distances (each
// edge of one against the other triangle: its end nodes against the triangle and the edge against
// the triangle's edges, i.e. every vertex-triangle and edge-edge sub-pair of the contact model),
// and 0 where an edge pierces the other triangle (the triangles intersect: the shell has passed
// through itself). Pairs beyond the search radius are not measured.

#include <cmath>
#include <vector>

#include "slender/model.h"

namespace slender::contact {

/// Settings of one clearance measurement.
struct ClearanceOptions {
  /// [m] triangle pairs whose surfaces (slabs of half thickness) are farther apart than this are
  /// not measured; > 0
  Real search = 0;
  /// [m] triangle pairs whose mid-surfaces are closer than this count as touching
  Real touch = 0;
  /// leave out the pairs the contact model leaves out: triangles of one part whose rest shapes
  /// lie within contact range (their half thicknesses plus the model's contact tolerance), a
  /// fine mesh's in-plane neighbours (pipe::Geometry::rest_neighbours_vt). They are still
  /// checked for crossing.
  bool skip_rest_neighbours = false;
};

/// What one measurement found. Distances are between mid-surfaces (compare them with the
/// contact distance, the shell thickness); "none" is +infinity.
struct Clearance {
  Real self = INFINITY;  ///< [m] smallest distance of two triangles sharing no node, if measured
  int self_tri[2] = {-1, -1};  ///< that pair of triangles
  long crossing = 0;           ///< measured pairs that intersect (an edge pierces a triangle)
  long touching = 0;           ///< measured pairs closer than ClearanceOptions::touch
  long measured = 0;           ///< triangle pairs measured (the search's candidates)
  /// [m] smallest height of a node above the ground minus its contact radius (half the shell
  /// thickness, the rod radius): negative below the contact surface; +infinity without ground
  Real ground = INFINITY;
  int ground_node = -1;  ///< that node
};

/// Measures clearances (each call builds the pair finder's search for its model: a measure, not
/// a step's work).
class ClearanceProbe {
 public:
  /// the clearance of configuration q (the first 3 nnode entries are node positions [m]) of m
  Clearance measure(const Model& m, const std::vector<Real>& q, const ClearanceOptions& opt);
};

/// The exact distance [m] between two triangles (node positions a[3], b[3]): the minimum of
/// their vertex-triangle and edge-edge distances, or 0 where they intersect (`crossing` then
/// true). The triangles may share nodes (the distance is then 0).
Real triangle_distance(const Vec3 a[3], const Vec3 b[3], bool& crossing);

}  // namespace slender::contact
