#pragma once

// Steps of build_model shared between its translation units.

#include <vector>

#include "slender/engine/model_view.h"
#include "slender/model.h"
#include "slender/stencils/bindings.h"

namespace slender {

/// The tables of the families that keep their own (stencils/family_table.h): every entry of the
/// scene's forces.families checked against its family's fields and built (Model::tables,
/// Model::signals). Needs the shells, the fixed DOFs and the initial positions.
void build_family_tables(Model& m);

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
/// Mid-edge bending: a xi DOF for every edge of a mid-edge part, one stencil per triangle with
/// its edge orientation signs and stiffness (the rest shape comes later).
void build_midedge(Model& m);
/// The initial mid-edge frames and every mid-edge triangle's natural shape operator (needs the
/// DOF count and the model view).
void init_midedge_rest_shape(Model& m);
/// The actuation components of a unit curvature along `direction` (zero: every direction) on
/// mid-edge stencil k (shell_midedge_curvature_components at the rest shape); false when the
/// direction is normal to its triangle.
bool midedge_unit_curvature(const Model& m, int k, const Vec3& direction, Real c[3]);
/// Rod-shell joints (seed 000 §3.4): at a node shared by rod edges and triangles, every edge of
/// those triangles becomes a rod edge too (frames and a twist DOF, no stretching stiffness of
/// its own: the shell's spring stretches it), so that bend-twist springs couple the rod and the
/// shell. Their bending and twisting stiffnesses and twist inertia per length are those of the
/// rod edges at the joint (their mean). Appends to the per-edge stiffness arrays.
void add_rod_shell_joint_edges(Model& m,
                               std::vector<Real>& edge_EI1,
                               std::vector<Real>& edge_EI2,
                               std::vector<Real>& edge_GJ);
/// The DOFs fixed at t = 0 (Model::dof_fixed, fixed_dof, dof_fixed_slot) from the scene's
/// boundary block, the clamps' DOFs `clamp_dofs` and two_d, and the DOFs that stay fixed
/// (Model::dof_locked). Throws InputError for a shell clamp whose nodes join no shell edge.
void build_fixed_dofs(Model& m, const std::vector<int>& clamp_dofs);
/// The scene's boundary events as Model::event_* (after the motions are resolved); throws
/// InputError for an event that releases a DOF that stays fixed or fixes a moved DOF.
void resolve_boundary_events(Model& m);

/// The scene's name of an actuation target ("rod_curvature1", "hinge_angle", ...).
std::string target_name(ActuationSpec::Target t);

/// The springs that `act` drives (its target's kind, its part, its selection), appended to out
/// with index `a`, their scale (the amplitude's unit to the stencil's value), spatial phase and
/// series column. Throws InputError naming the entry (`what`: "actuation" or "controller";
/// `target_field`: the entry's name of the target) when it takes no spring or its series has
/// another number of columns.
void actuation_springs(const Model& m,
                       const ActuationSpec& act,
                       int a,
                       std::vector<ActuatedSpring>& out,
                       const char* what,
                       const char* target_field);

/// Free-DOF CSR pattern and the gather lists of the assembly.
void build_assembly_plan(Model& m);
/// The same for the families of a view (a view with contact pairs: the merged plan the engine's
/// contact part must reproduce, engine/contact_jacobian.h), with the DOFs flagged in `fixed`
/// held (ndof; null: the model's dof_fixed).
void build_assembly_plan(const Model& m,
                         const ModelView& mv,
                         AssemblyPlan& p,
                         const unsigned char* fixed = nullptr);

/// a part-local node or edge index with a negative one counted from the end (-1: the last)
inline int local_index(int index, int count) { return index < 0 ? count + index : index; }

}  // namespace slender
