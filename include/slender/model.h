#pragma once

// Model: the immutable, shared description of a structure — topology, DOF map, stencil index
// arrays, rest quantities, stiffnesses, masses, loads and the Jacobian's sparsity pattern.
// Arrays are flat (structure of arrays) and named <object>_<field>; each carries its shape.
//
// DOF order (seed 000, eq. 1): q = [x_1 .. x_N, theta^1 .. theta^E]; node i owns q[3i .. 3i+2],
// edge e owns q[3N + e]. Shell mid-edge DOFs (xi) will follow the twists.

#include <memory>
#include <string>
#include <vector>

#include "slender/scene.h"
#include "slender/stencils/families.h"

namespace slender {

/// A point load resolved to a global node.
struct PointLoad {
  int node;
  Vec3 force;         ///< [N]
  TimeFunction time;  ///< F(t) = force * time(t)
};

/// Evaluates a load's time function at t.
Real eval_time_function(const TimeFunction& f, Real t);
/// The same with an extra phase added to a sine's argument [rad] (other kinds ignore it).
Real eval_time_function(const TimeFunction& f, Real t, Real phase);

struct Model;
/// The values of the DOFs the scene's motions move (Model::motion_dof) at time t (nmoved).
void motion_targets(const Model& m, Real t, Real* out);

/// One driven natural value: spring `index` of a family, rest value, spatial phase.
struct ActuatedSpring {
  int actuation;  ///< index into scene.actuation
  int index;      ///< hinge, or bend-twist stencil
  int component;  ///< 0, 1: kappa1, kappa2; 2: twist; 3: hinge angle
  Real scale;     ///< converts the amplitude to the stencil's value (Voronoi length or 1)
  Real phase;     ///< a sine's spatial phase [rad]
};

/// Free-DOF CSR pattern of the Newton Jacobian and, for every stored value, the list of
/// contributions (indices into the concatenated local-Hessian pool) summed in a fixed order.
struct AssemblyPlan {
  int nfree = 0;                  ///< number of free DOFs
  std::vector<int> dof_free;      ///< free index of each DOF, -1 if fixed   (ndof)
  std::vector<int> free_dof;      ///< DOF of each free index                (nfree)
  std::vector<int> row_ptr;       ///< CSR row pointers, full symmetric      (nfree + 1)
  std::vector<int> col;           ///< CSR column indices                    (nnz)
  std::vector<int> diag_slot;     ///< slot of each free DOF's diagonal      (nfree)
  std::vector<int> slot_src_adr;  ///< first source of each slot             (nnz + 1)
  std::vector<int> slot_src;      ///< index into the local-Hessian pool     (nsrc)
  std::vector<int> row_src_adr;   ///< first gradient source of each free DOF (nfree + 1)
  std::vector<int> row_src;       ///< index into the local-gradient pool    (ngsrc)
  long hess_pool = 0;             ///< length of the local-Hessian pool (sum of n_k * dofs_k^2)
  long grad_pool = 0;             ///< length of the local-gradient pool (sum of n_k * dofs_k)
  long energy_pool = 0;           ///< number of stencils of all families
  long h_off[kNumFamilies] = {};  ///< each family's offset in the Hessian pool
  long g_off[kNumFamilies] = {};  ///< each family's offset in the gradient pool
  long e_off[kNumFamilies] = {};  ///< each family's offset in the energy and flag pools
  int nnz() const { return int(col.size()); }
};

struct Model {
  // counts
  int nnode = 0;  ///< nodes
  int nedge = 0;  ///< rod edges (each has a twist DOF)
  int nbend = 0;  ///< bend-twist stencils (pairs of edges meeting at a node)
  int ndof = 0;   ///< 3 nnode + nedge
  int npart = 0;  ///< parts (rods, networks)

  // nodes
  std::vector<Real> node_x0;    ///< initial positions [m]                 (nnode x 3)
  std::vector<Real> node_mass;  ///< lumped mass [kg]                      (nnode)
  std::vector<Real> node_dl;    ///< Voronoi length (half the rod and shell edges) [m] (nnode)
  std::vector<int> node_part;   ///< part that first declared the node     (nnode)

  // rod edges
  std::vector<int> edge_node;      ///< node ids, edge runs node0 -> node1    (nedge x 2)
  std::vector<Real> edge_l_bar;    ///< rest length [m]                       (nedge)
  std::vector<Real> edge_EA;       ///< axial stiffness [N]                   (nedge)
  std::vector<Real> edge_inertia;  ///< rotational inertia of the twist DOF [kg m^2] (nedge)
  std::vector<Real> edge_radius;   ///< radius (or half the larger side) for output [m] (nedge)
  std::vector<int> edge_part;      ///< owning part                           (nedge)
  std::vector<Real> edge_d1_0;     ///< initial reference director d1, unit, normal to the
                                   ///< edge [-]                              (nedge x 3)

  // bend-twist stencils: local nodes (x0, x1, x2), edges e0 = x1 - x0 and e1 = x2 - x1
  std::vector<int> bend_node;           ///< node ids x0, x1, x2                   (nbend x 3)
  std::vector<int> bend_edge;           ///< edge ids of e0, e1                    (nbend x 2)
  std::vector<Real> bend_sign;          ///< +1 if the stored edge runs as e0 (e1) does, else -1
                                        ///<                                       (nbend x 2)
  std::vector<Real> bend_EI;            ///< bending stiffnesses EI1, EI2 [N m^2]  (nbend x 2)
  std::vector<Real> bend_GJ;            ///< torsional stiffness [N m^2]           (nbend)
  std::vector<Real> bend_dl;            ///< Voronoi length (l_bar0 + l_bar1) / 2 [m] (nbend)
  std::vector<Real> bend_kappa_bar;     ///< natural curvatures kappa1, kappa2 [-] (nbend x 2)
  std::vector<Real> bend_tau_bar;       ///< natural twist [rad]                   (nbend)
  std::vector<Real> bend_ref_twist_0;   ///< initial reference twist [rad]      (nbend)
  std::vector<Real> bend_frame_offset;  ///< angle by which edge 1's material frame is turned
                                        ///< back when curvature is measured: the initial
                                        ///< reference twist (0 along a plain rod) [rad] (nbend)

  // shells: triangles, their unique edges, hinges
  int ntri = 0;                     ///< shell triangles
  int nsedge = 0;                   ///< shell edges (each unique edge of the triangles)
  int nhinge = 0;                   ///< hinges (interior shell edges of hinge-bending parts)
  std::vector<int> tri_node;        ///< node ids, counter-clockwise about the normal (ntri x 3)
  std::vector<Real> tri_area_bar;   ///< rest area [m^2]                     (ntri)
  std::vector<int> tri_part;        ///< owning part                         (ntri)
  std::vector<int> tri_edge;        ///< shell edge opposite each node       (ntri x 3)
  std::vector<int> sedge_node;      ///< node ids                            (nsedge x 2)
  std::vector<Real> sedge_l_bar;    ///< rest length [m]                     (nsedge)
  std::vector<Real> sedge_EA;       ///< stretching stiffness sum E h A / l_bar [N] (nsedge)
  std::vector<int> hinge_node;      ///< x0, x1 (the edge), x2, x3 (opposite vertices) (nhinge x 4)
  std::vector<Real> hinge_kb;       ///< bending stiffness E h^3 / (6 sqrt 3) [N m] (nhinge)
  std::vector<Real> hinge_phi_bar;  ///< natural dihedral angle [rad]        (nhinge)
  std::vector<int> hinge_sedge;     ///< the shell edge of each hinge         (nhinge)
  std::vector<Real> node_volume;    ///< displaced volume for buoyancy [m^3] (nnode)
  std::vector<int> sedge_tri;       ///< triangles on each shell edge, -1 = none (nsedge x 2)
  // mid-edge bending (seed 000 §3.3.2): one xi DOF per edge of a mid-edge part, after the twists
  int nxi = 0;                       ///< xi DOFs
  int nmid = 0;                      ///< mid-edge bending triangles
  std::vector<int> sedge_xi;         ///< xi DOF of each shell edge from 3 nnode + nedge, or -1
  std::vector<int> mid_tri;          ///< triangle of each mid-edge stencil      (nmid)
  std::vector<Real> mid_sign;        ///< +1 if the stored edge runs as e^k      (nmid x 3)
  std::vector<Real> mid_kb;          ///< E h^3 / (24 (1 - nu^2)) [N m]          (nmid)
  std::vector<Real> mid_nu;          ///< Poisson ratio                          (nmid)
  std::vector<Real> mid_lambda_bar;  ///< natural shape operator [1/m]           (nmid x 9)
  std::vector<Real> sedge_tau0_0;    ///< initial mid-edge frame vectors         (nsedge x 3)

  // DOFs
  std::vector<Real> dof_mass;            ///< lumped mass matrix diagonal        (ndof)
  std::vector<unsigned char> dof_fixed;  ///< 1 if the DOF is held fixed       (ndof)
  std::vector<Real> dof_u0;              ///< initial velocity                   (ndof)

  // loads
  Vec3 gravity = Vec3{{0, 0, 0}};  ///< [m/s^2]
  Real viscosity = 0;              ///< eta [Pa s]
  Real mass_damping = 0;           ///< alpha [1/s]
  Real buoyancy_density = 0;       ///< density of the surrounding medium for buoyancy [kg/m^3]
  Real drag_density = 0;           ///< rho_med of aerodynamic drag on shells [kg/m^3]
  Real drag_coefficient = 0;       ///< C_D of aerodynamic drag [-]
  Real rft_tangential = 0;         ///< RFT drag per length along a rod edge [N s/m^2]
  Real rft_normal = 0;             ///< RFT drag per length across a rod edge [N s/m^2]
  ContactSpec contact;             ///< rod and shell contact settings
  Real contact_stiffness = 0;      ///< k_c of rod and shell contact in use [N/m]
  int nmaterial = 0;               ///< materials of the scene
  std::vector<Real> contact_mu;    ///< friction coefficient of each pair of materials (nmat^2)
  std::vector<int> part_material;  ///< material of each part (npart)
  /// arc-length position of each rod edge's start along its part when the part is a chain of
  /// edges (a rod), else -1 [m] (nedge); with the chain's length (0 unless closed) it measures
  /// how far apart along the rod two edges are, so that contact skips neighbours that touch
  /// only because the rod is thick compared with its edges
  std::vector<Real> edge_arc;
  std::vector<Real> part_loop_length;  ///< length of a closed chain, else 0 [m] (npart)
  /// rest length of rod between edges a and b of one chain part (the shorter way round a
  /// closed one), or -1 if they are not on one chain
  Real rod_gap(int a, int b) const;
  GroundSpec ground;                      ///< the ground, if any (normal made unit)
  Real ground_stiffness = 0;              ///< k_c in use [N/m] (automatic: the heaviest node's)
  Real ground_stiffness_per_kg = 0;       ///< automatic: k_c per kg of a node's mass, else 0
  std::vector<Real> node_contact_radius;  ///< radius or half thickness of each node [m] (nnode)
  std::vector<Real> tri_half_thickness;   ///< half the contact thickness [m] (ntri)
  /// whether the Newton Jacobian may be non-symmetric (drag, friction): then it is solved by LU
  bool nonsymmetric() const {
    return (drag_density > 0 && drag_coefficient > 0 && ntri > 0) ||
           (rft_tangential != rft_normal && nedge > 0) || friction();
  }
  /// whether any force without a potential acts through friction (ground or contact)
  bool friction() const { return (ground.enabled && ground.friction > 0) || contact_friction(); }
  /// whether any pair of bodies in contact has friction
  bool contact_friction() const {
    if (!contact.enabled) return false;
    for (Real mu : contact_mu)
      if (mu > 0) return true;
    return false;
  }
  /// friction coefficient between parts a and b
  Real part_mu(int a, int b) const {
    return contact_mu[size_t(part_material[a]) * nmaterial + part_material[b]];
  }
  std::vector<PointLoad> point_loads;

  // prescribed motion (the scene's motions): the DOFs they move, ascending, each one's value at
  // time t being motion_base + s(t) motion_amount with s the time function of its motion
  std::vector<TimeFunction> motion_time;  ///< (nmotion)
  std::vector<int> motion_dof;            ///< (nmoved)
  std::vector<int> motion_of;             ///< the motion of each moved DOF (nmoved)
  std::vector<Real> motion_base;          ///< (nmoved)
  std::vector<Real> motion_amount;        ///< (nmoved)
  std::vector<int> dof_motion_slot;       ///< index in motion_dof of each DOF, -1 if unmoved (ndof)
  std::vector<int> fixed_dof;             ///< the fixed DOFs, ascending (nfixed)
  std::vector<int> dof_fixed_slot;        ///< index in fixed_dof of each DOF, -1 if free (ndof)

  // parts, for output and for resolving references
  std::vector<std::string> part_name;  ///< (npart)
  std::vector<int> part_node_adr;      ///< first entry in part_node of each part (npart + 1)
  std::vector<int> part_node;          ///< global node of each part-local node
  std::vector<int> part_edge_adr;      ///< first entry in part_edge of each part (npart + 1)
  std::vector<int> part_edge;          ///< global edge of each part-local edge

  /// index of the bend stencil that pairs part edges (k-1, k) of a rod, or -1
  std::vector<int> part_bend;  ///< parallel to part_edge: bend at the edge's start node

  std::vector<ActuatedSpring> actuated;  ///< every driven natural value

  AssemblyPlan plan;
  SceneSpec scene;  ///< the spec the model was built from (integrator, output, names)

  int node_dof(int node) const { return 3 * node; }
  int edge_dof(int edge) const { return 3 * nnode + edge; }
  int xi_dof(int sedge) const { return 3 * nnode + nedge + sedge_xi[sedge]; }
  /// global node of a part-local reference (negative index counts from the end)
  int resolve_node(const NodeRef& r) const;
  int resolve_edge(const EdgeRef& r) const;
  /// bytes held by the model's arrays
  size_t memory_bytes() const;
};

/// Builds the model from a validated scene: merges joints, creates stencils with their
/// orientation signs, reference frames, stiffnesses, masses, fixed DOFs and the assembly plan.
/// Throws InputError for problems that need the assembled structure to see (zero-length edges,
/// a joint naming one node twice, ...).
std::shared_ptr<const Model> build_model(const SceneSpec& scene);

}  // namespace slender
