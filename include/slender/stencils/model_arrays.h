#pragma once

// The one list of the model's per-element arrays and of a state's arrays. Every entry is
//   X(type, name, count, width, doc)
// for an array of count x width values (row-major), `count` being an expression of the Model `m`
// (its counts: nnode, nedge, nbend, ndof, ntri, nsedge, nhinge, nmid, npart).
// - SLENDER_VIEW_ARRAYS: what the stencils read through ModelView, on the host and, uploaded,
//   on the device;
// - SLENDER_HOST_ARRAYS: what only the host reads (the initial state, output, model building);
// - SLENDER_STATE_ARRAYS: what changes in time, per environment.
// From these lists come Model's and State's members, ModelView's pointers, host_view, the device
// model's upload (kernels/device_model.cu), Model::memory_bytes, the shape checks
// (model_arrays_fit, state_fits) and the Python views (Model.arrays()). A new array is one entry
// here; the model builder fills it.

// clang-format off
#define SLENDER_VIEW_ARRAYS(X)                                                                  \
  /* nodes */                                                                                   \
  X(Real, node_mass, m.nnode, 1, "lumped mass [kg]")                                            \
  X(Real, node_contact_radius, m.nnode, 1, "radius or half thickness of each node [m]")         \
  /* rod edges */                                                                               \
  X(int, edge_node, m.nedge, 2, "node ids, the edge runs node0 -> node1")                       \
  X(Real, edge_l_bar, m.nedge, 1, "rest length [m]")                                            \
  X(Real, edge_EA, m.nedge, 1, "axial stiffness [N]")                                           \
  X(Real, edge_stretch_alpha, m.nedge, 1,                                                        \
    "stretching law: 0 Hookean, else the one-term Ogden exponent (2: neo-Hookean)")             \
  /* bend-twist stencils: local nodes x0, x1, x2 and edges e0 = x1 - x0, e1 = x2 - x1 */        \
  X(int, bend_node, m.nbend, 3, "node ids x0, x1, x2")                                          \
  X(int, bend_edge, m.nbend, 2, "edge ids of e0, e1")                                           \
  X(Real, bend_sign, m.nbend, 2, "+1 if the stored edge runs as e0 (e1) does, else -1")         \
  X(Real, bend_EI, m.nbend, 2, "bending stiffnesses EI1, EI2 [N m^2]")                          \
  X(Real, bend_GJ, m.nbend, 1, "torsional stiffness [N m^2]")                                   \
  X(Real, bend_dl, m.nbend, 1, "Voronoi length (l_bar0 + l_bar1) / 2 [m]")                      \
  X(Real, bend_tau_bar, m.nbend, 1, "natural twist [rad]")                                      \
  X(Real, bend_frame_offset, m.nbend, 1,                                                        \
    "angle by which edge 1's material frame is turned back when curvature is measured: the "    \
    "initial reference twist (0 along a plain rod) [rad]")                                      \
  /* shells: triangles, their unique edges, hinges, mid-edge stencils */                        \
  X(int, tri_node, m.ntri, 3, "node ids, counter-clockwise about the normal")                   \
  X(Real, tri_area_bar, m.ntri, 1, "rest area [m^2]")                                           \
  X(int, tri_edge, m.ntri, 3, "shell edge opposite each node")                                  \
  X(int, sedge_node, m.nsedge, 2, "node ids")                                                   \
  X(Real, sedge_l_bar, m.nsedge, 1, "rest length [m]")                                          \
  X(Real, sedge_EA, m.nsedge, 1, "stretching stiffness, the sum of E h A / l_bar [N]")          \
  X(int, sedge_tri, m.nsedge, 2, "triangles on each shell edge, -1 = none")                     \
  X(int, sedge_xi, m.nsedge, 1, "xi DOF of each shell edge from 3 nnode + nedge, or -1")        \
  X(int, sedge_frame_fixed, m.nsedge, 1,                                                        \
    "1 where the edge's mid-edge frame tau0 keeps its initial value: its xi is fixed (a clamp)") \
  X(int, hinge_node, m.nhinge, 4, "x0, x1 (the edge), x2, x3 (the opposite vertices)")          \
  X(Real, hinge_kb, m.nhinge, 1,                                                                \
    "bending stiffness: E h^3 / (6 sqrt 3), or D_h l_bar^2 / (A_1 + A_2) (geometric) [N m]")   \
  X(Real, hinge_phi_bar, m.nhinge, 1, "natural dihedral angle [rad]")                           \
  X(int, mid_tri, m.nmid, 1, "triangle of each mid-edge stencil")                               \
  X(Real, mid_sign, m.nmid, 3, "+1 if the stored edge runs as e^k")                             \
  X(Real, mid_kb, m.nmid, 1, "E h^3 / (24 (1 - nu^2)) [N m]")                                   \
  X(Real, mid_nu, m.nmid, 1, "Poisson ratio")                                                   \
  X(Real, mid_lambda_bar, m.nmid, 9, "natural shape operator [1/m]")

#define SLENDER_HOST_ARRAYS(X)                                                                  \
  X(Real, node_x0, m.nnode, 3, "initial positions [m]")                                         \
  X(Real, node_dl, m.nnode, 1, "Voronoi length (half the rod and shell edges) [m]")             \
  X(Real, node_volume, m.nnode, 1, "displaced volume for buoyancy [m^3]")                       \
  X(Real, node_added_mass, m.nnode, 1,                                                          \
    "added mass C_a rho_med V (in dof_mass, not in the weight) [kg]")                           \
  X(int, node_part, m.nnode, 1, "part that first declared the node")                            \
  X(Real, dof_mass_damping, m.ndof, 1,                                                           \
    "alpha of the mass damping of the DOF's part (a node's, a twist's edge's, a xi's shell "      \
    "edge's) [1/s]")                                                                            \
  X(Real, node_stiffness_damping, m.nnode, 1,                                                    \
    "beta of the Rayleigh stiffness damping of the node's part: a stencil takes its first "      \
    "node's [s]")                                                                               \
  X(Real, node_kelvin_voigt, m.nnode, 1,                                                         \
    "retardation time eta / E of the Kelvin-Voigt damping of the node's part: a stencil takes "  \
    "its first node's [s]")                                                                     \
  X(Real, edge_inertia, m.nedge, 1, "rotational inertia of the twist DOF [kg m^2]")             \
  X(Real, edge_radius, m.nedge, 1, "radius (or half the larger side) for output [m]")           \
  X(int, edge_part, m.nedge, 1, "owning part")                                                  \
  X(Real, edge_d1_0, m.nedge, 3, "initial reference director d1, unit, normal to the edge")     \
  X(Real, edge_arc, m.nedge, 1,                                                                 \
    "arc-length position of the edge's start along its part when the part is a chain of "       \
    "edges (a rod), else -1 [m]: with the chain's length it measures how far apart along the "  \
    "rod two edges are, so that contact skips neighbours that touch only because the rod is "   \
    "thick compared with its edges")                                                            \
  X(Real, bend_kappa_bar, m.nbend, 2, "natural curvatures kappa1, kappa2 [-]")                  \
  X(Real, bend_ref_twist_0, m.nbend, 1, "initial reference twist [rad]")                        \
  X(int, tri_part, m.ntri, 1, "owning part")                                                    \
  X(Real, tri_half_thickness, m.ntri, 1, "half the contact thickness [m]")                      \
  X(int, hinge_sedge, m.nhinge, 1, "the shell edge of each hinge")                              \
  X(Real, sedge_tau0_0, m.nsedge, 3, "initial mid-edge frame vectors")                          \
  X(Real, dof_mass, m.ndof, 1, "lumped mass matrix diagonal")                                   \
  X(unsigned char, dof_fixed, m.ndof, 1, "1 if the DOF is held fixed")                          \
  X(Real, dof_u0, m.ndof, 1, "initial velocity")                                                \
  X(int, part_material, m.npart, 1, "material of each part")                                    \
  X(Real, part_loop_length, m.npart, 1, "length of a closed chain, else 0 [m]")

#define SLENDER_STATE_ARRAYS(X)                                                                 \
  X(Real, q, m.ndof, 1, "DOFs [m, rad]")                                                        \
  X(Real, u, m.ndof, 1, "DOF velocities")                                                       \
  X(Real, a, m.ndof, 1, "DOF accelerations (Newmark)")                                          \
  X(Real, edge_d1, m.nedge, 3, "reference director at step start")                              \
  X(Real, edge_t, m.nedge, 3, "edge tangent at step start")                                     \
  X(Real, bend_ref_twist, m.nbend, 1, "reference twist at step start [rad]")                    \
  X(Real, sedge_tau0, m.nsedge, 3, "mid-edge frame vectors of the step")
// clang-format on

/// an entry's member: a std::vector of its type (Model, State)
#define SLENDER_ARRAY_MEMBER(type, name, count, width, doc) std::vector<type> name;
/// an entry's read-only pointer (ModelView)
#define SLENDER_ARRAY_POINTER(type, name, count, width, doc) const type* name;
