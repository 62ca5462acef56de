#pragma once

// Steps of build_model shared between its translation units.

#include <vector>

#include "slender/model.h"
#include "slender/stencils/bindings.h"

namespace slender {

/// Counts and host pointers of a Model's arrays.
ModelView host_view(const Model& m);
/// One bend-twist stencil per pair of edges meeting at a node, oriented so that e0 enters and
/// e1 leaves the node (signs record flipped edges); stiffnesses are the mean of the two edges'.
void build_bend_stencils(Model& m,
                         const std::vector<Real>& edge_EI1,
                         const std::vector<Real>& edge_EI2,
                         const std::vector<Real>& edge_GJ);
/// Initial reference directors (spatial parallel transport across each connected structure)
/// and the initial reference twists.
void init_reference_frames(Model& m);
/// Natural curvature and twist: from the initial shape, or from the parts' explicit values.
void init_natural_strains(Model& m);
/// Shell triangles of every part: unique edges with their stretching springs, hinges (for
/// hinge-bending parts) with their natural angles, lumped masses and displaced volumes.
/// Throws InputError for zero-area triangles.
void build_shells(Model& m);
/// Free-DOF CSR pattern and the gather lists of the assembly.
void build_assembly_plan(Model& m);

}  // namespace slender
