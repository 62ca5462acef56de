#pragma once

// Bindings: the only code that knows both the Model's arrays and a stencil's local order. Each
// binding gathers one stencil's local DOFs and parameters from flat views, evaluates it and
// names the global DOFs of its local entries. The loop bodies (functors) below are written once
// and run by parallel_for on the host, or by a CUDA kernel over device memory.

#include "slender/core/types.h"
#include "slender/stencils/contact_imc.h"
#include "slender/stencils/external.h"
#include "slender/stencils/family_table.h"
#include "slender/stencils/ground_contact.h"
#include "slender/stencils/model_arrays.h"
#include "slender/stencils/rod_bend_twist.h"
#include "slender/stencils/rod_frames.h"
#include "slender/stencils/rod_rft.h"
#include "slender/stencils/rod_stretch.h"
#include "slender/stencils/shell_drag.h"
#include "slender/stencils/shell_hinge.h"
#include "slender/stencils/shell_midedge.h"

namespace slender {

/// Counts and read-only pointers to a Model's arrays (host or device memory).
struct ModelView {
  int nnode, nedge, nbend, ndof;
  int nsedge, nhinge, ntri;
  int nmid;     // mid-edge bending triangles
  int xi_base;  // DOF index of the first xi DOF (3 nnode + nedge)
  // the model's arrays the stencils read (model_arrays.h), each (count x width)
  SLENDER_VIEW_ARRAYS(SLENDER_ARRAY_POINTER)
  FamilyTableView table[kMaxFamilies];  // each family's own rows, by Family (family_table.h)
  Real drag_density;                    // rho_med of aerodynamic drag [kg/m^3], 0 = none
  Real drag_coefficient;                // C_D [-]
  Real rft_tangential, rft_normal;      // RFT drag per length [N s/m^2], both 0 = none
  int ground_on;                        // 1 if a ground is present
  // 1 in the 2D mode (integrator.two_d: every y and twist DOF held for good): the rods'
  // stencils give only the x-z block of their Hessians where they lie in a plane y = const
  int two_d;
  GroundContact::Params ground;  // the ground and its contact parameters (u_hat, q_hat unset)
  // contact: this step's edge-edge pairs (set by a simulator; none in a model's view)
  int npair;
  const int* pair_node;  // nodes a0, a1, b0, b1 of each pair      (npair x 4)
  const Real* pair_d;    // contact distance (radii, half thicknesses) (npair)
  Real contact_k;        // k_c [N/m]
  Real contact_delta;    // tolerance [m]
  int npt;               // node - shell triangle pairs
  const int* pt_node;    // p, t0, t1, t2                           (npt x 4)
  const Real* pt_d;      // contact distance [m]                    (npt)
  const Real* pair_mu;   // friction coefficient of each edge pair, null = none (npair)
  const Real* pt_mu;     // friction coefficient of each node-triangle pair, null = none (npt)
  Real contact_nu;       // slip velocity tolerance of contact friction [m/s]
  // contact damping (contact_damping.h): the scale of the node masses (a simulator's
  // density_scale) and the damping ratio between bodies (the ground's is in `ground`)
  Real mass_scale;
  Real contact_zeta;
};

/// The configuration being evaluated, for all envs, with its current frames.
struct EvalView {
  int nenv;
  const Real* q;               // DOFs                                   (nenv x ndof)
  const Real* edge_d1;         // reference directors at q               (nenv x nedge x 3)
  const Real* bend_ref_twist;  // reference twists at q                  (nenv x nbend)
  // natural shape, which actuation changes: one set for all envs (natural_per_env = 0) or one
  // per env (1)
  const Real* bend_kappa_bar;  // natural curvatures                     (· x nbend x 2)
  const Real* bend_tau_bar;    // natural twists                         (· x nbend)
  const Real* hinge_phi_bar;   // natural hinge angles                   (· x nhinge)
  // actuated natural curvature of the mid-edge triangles, the components kappa_bar of
  // shell_midedge.h [1/m] (· x nmid x 3); null: none
  const Real* mid_kappa_bar;
  int natural_per_env;
  const Real* q_hat;       // the integrator's position offsets (nenv x ndof), may be null
  const Real* u_hat;       // the integrator's velocity offsets (nenv x ndof), may be null
  Real c_u;                // du/dq of the integrator [1/s]
  const Real* sedge_tau0;  // mid-edge frame vectors of the step     (nenv x nsedge x 3)
  // the model's signals at the evaluation time, kMaxSignals per env (eval_signals), or null
  // when the model has none
  const Real* signal;
  // the step's energy-consistent contact (contact_discrete_gradient.h; core/integrator.h,
  // contact_step_coeffs): the configuration at the step's start (nenv x ndof; null: pointwise
  // contact forces), the secant's a (2; 0: off), the residual's weight on the contact stencils
  // (contact_w), where they are evaluated (x = x0 + contact_hm (y - x0), the step's midpoint)
  // and, when contact_hm != 1 (Newmark), du/dx of the step's mean velocity c (x - x0) there
  // (contact_cu = 1 / (hm dt))
  const Real* q_start;
  Real contact_a, contact_w, contact_hm, contact_cu;
  // the rods' stretching stencils as the energy-momentum secant from q_start (rod_stretch.h):
  // 1, or 0
  int stretch_secant;
  // natural stretch of the rod edges, part of the natural shape (natural_per_env as above): each
  // edge's natural length is edge_stretch_bar * edge_l_bar [-] (· x nedge); null: 1 (the rest
  // lengths)
  const Real* edge_stretch_bar;
  // the adjoint's view of Newmark's energy-consistent contact (engine/adjoint.h): the stencils'
  // mean velocity as usual, its derivative by x left out of their Jacobians (1), or not (0)
  int contact_fixed_velocity;
};

/// The integrator's view of one contact stencil within a step: the configuration it is
/// evaluated at (x, N / 3 nodes), the node velocities there and du/dx, the step's start and the
/// weights of its results (contact_discrete_gradient.h). Pointwise (outside the energy-consistent
/// form): x = y, u = u_hat + c_u (y - q_hat), no weights. The midpoint rule: the same, with the
/// secant's step. Newmark: x = x0 + hm (y - x0), u the step's mean velocity c (x - x0), g and E
/// weighted by w and H by w hm.
template <int N>
struct ContactView {
  Vec<N> x, u, x0;
  Real c_u = 0;
  bool moving = false;  // velocities are known (a step's offsets are set)
  bool secant = false;  // the step's secant applies (x0 set)
  bool scaled = false;  // g, E by w and H by w hm
  Real w = 1, hm = 1;
  /// from the nodes' DOFs (dof[a] the first of node a) of environment env
  SLENDER_HD void gather(const EvalView& s, long base, const int* dof, unsigned want) {
    constexpr int K = N / 3;
    for (int a = 0; a < K; ++a)
      for (int i = 0; i < 3; ++i)
        x[3 * a + i] = s.q[base + dof[a] + i];
    moving = s.q_hat && s.u_hat;
    c_u = s.c_u;
    if (moving)
      for (int a = 0; a < K; ++a)
        for (int i = 0; i < 3; ++i) {
          const long k = base + dof[a] + i;
          u[3 * a + i] = s.u_hat[k] + s.c_u * (x[3 * a + i] - s.q_hat[k]);
        }
    secant = s.q_start && s.contact_a > 0 && want != kEnergy;
    if (!secant) return;
    for (int a = 0; a < K; ++a)
      for (int i = 0; i < 3; ++i)
        x0[3 * a + i] = s.q_start[base + dof[a] + i];
    w = s.contact_w;
    hm = s.contact_hm;
    scaled = w != 1 || hm != 1;
    if (hm == 1) return;
    // Newmark: the step's midpoint, where the mean velocity is c (x - x0)
    c_u = s.contact_cu;
    for (int i = 0; i < N; ++i) {
      x[i] = x0[i] + hm * (x[i] - x0[i]);
      u[i] = c_u * (x[i] - x0[i]);
    }
    moving = true;
    if (s.contact_fixed_velocity) c_u = 0;
  }
  /// the results' weights
  template <int D>
  SLENDER_HD void weigh(unsigned want, LocalEval<D>& r) const {
    if (!scaled) return;
    r.E *= w;
    r.g *= w;
    if (want & kHess) r.H *= w * hm;
  }
};

/// the step of a contact stencil whose distance at the step's start is D0
SLENDER_HD inline ContactStep contact_step_of(const EvalView& s, Real D0) {
  ContactStep st;
  st.a = s.contact_a;
  st.D0 = D0;
  return st;
}

/// Where one family's local results go: fixed offsets (env, k), no accumulation.
template <int D>
struct LocalBuffers {
  Real* E;                            // energies                (nenv x n), env stride e_stride
  Real* g;                            // gradients               (nenv x n x D)
  Real* H;                            // Hessians (may be null)  (nenv x n x D x D)
  unsigned* flags;                    // EvalFlag bits           (nenv x n)
  long n;                             // stencils per env
  long e_stride, g_stride, h_stride;  // per-env strides of the pools
  SLENDER_HD void store(int env, long k, const LocalEval<D>& r, unsigned want) const {
    E[env * e_stride + k] = r.E;
    flags[env * e_stride + k] = r.flags;
    if (want & kGrad) {
      Real* gk = g + env * g_stride + k * D;
      for (int i = 0; i < D; ++i)
        gk[i] = r.g[i];
    }
    if ((want & kHess) && H) {
      Real* Hk = H + env * h_stride + k * D * D;
      if (D >= 11) {  // a large stencil's Hessian a row at a time: registers for its evaluation
        SLENDER_ROLL_ON_DEVICE
        for (int i = 0; i < D; ++i)
          for (int j = 0; j < D; ++j)
            Hk[i * D + j] = r.H.a[i * D + j];
      } else {
        for (int i = 0; i < D * D; ++i)
          Hk[i] = r.H.a[i];
      }
    }
  }
};

namespace detail {

/// the global DOFs of N nodes' positions, in node order
template <int N>
SLENDER_HD inline void position_dofs(const int* node, int* out) {
  for (int a = 0; a < N; ++a)
    for (int i = 0; i < 3; ++i)
      out[3 * a + i] = 3 * node[a] + i;
}

/// the positions of N nodes from the DOF vector q, into the first 3 N entries of x
template <int N, int D>
SLENDER_HD inline void gather_positions(const Real* q, const int* node, Vec<D>& x) {
  for (int a = 0; a < N; ++a)
    for (int i = 0; i < 3; ++i)
      x[3 * a + i] = q[3 * node[a] + i];
}

/// the inputs of a load that depends on the nodes' velocities (drag, thrust): the positions of
/// N nodes from environment env's q into x, and the step's position and velocity offsets at
/// them (0 where the step has none) with its c_u into p, so that the stencil's velocity is
/// u = u_hat + c_u (x - q_hat)
template <int N, int D, class P>
SLENDER_HD inline void gather_moving_nodes(
    const EvalView& s, long base, const int* node, Vec<D>& x, P& p) {
  for (int a = 0; a < N; ++a) {
    const int n = node[a];
    for (int i = 0; i < 3; ++i) {
      x[3 * a + i] = s.q[base + 3 * n + i];
      p.q_hat[a][i] = s.q_hat ? s.q_hat[base + 3 * n + i] : 0;
      p.u_hat[a][i] = s.u_hat ? s.u_hat[base + 3 * n + i] : 0;
    }
  }
  p.c_u = s.c_u;
}

}  // namespace detail

struct RodStretchBinding {
  using S = RodStretch;
  static constexpr int kDofs = 6;
  /// elastic, in the reactions, symmetric, its energy, its grain (family_traits.h)
  static constexpr FamilyTraits kTraits{true, true, true, EnergyKind::kStretch,
                                        kParallelGrainMedium};
  SLENDER_HD static long count(const ModelView& m) { return m.nedge; }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    detail::position_dofs<2>(m.edge_node + 2 * k, out);
  }
  /// edge k's positions x and parameters at the view's configuration (its natural length: the
  /// rest length times the natural stretch, the actuation, if any); true where the step's
  /// stretching is the midpoint rule's secant, with x0 (when given) its positions at the start
  SLENDER_HD static bool local(const ModelView& m,
                               const EvalView& s,
                               int env,
                               long k,
                               Vec<6>& x,
                               RodStretch::Params& p,
                               Vec<6>* x0) {
    detail::gather_positions<2>(s.q + long(env) * m.ndof, m.edge_node + 2 * k, x);
    const Real lambda =
        s.edge_stretch_bar ? s.edge_stretch_bar[long(env) * s.natural_per_env * m.nedge + k] : 1;
    p = RodStretch::Params{m.edge_EA[k], lambda * m.edge_l_bar[k], m.edge_stretch_alpha[k]};
    if (!(s.q_start && s.stretch_secant)) return false;
    if (x0) detail::gather_positions<2>(s.q_start + long(env) * m.ndof, m.edge_node + 2 * k, *x0);
    return true;
  }
  SLENDER_HD static void eval(
      const ModelView& m, const EvalView& s, int env, long k, unsigned want, LocalEval<6>& r) {
    Vec<6> x, x0;
    RodStretch::Params p;
    // the midpoint rule's energy-momentum stretching (rod_stretch.h)
    if (local(m, s, env, k, x, p, want != kEnergy ? &x0 : nullptr) && want != kEnergy)
      return rod_stretch_em_eval(x, x0, p, want, r);
    rod_stretch_eval(x, p, want, r);
  }
  /// the adjoint's terms of edge k: dg/d(natural stretch), the derivative of its force by the
  /// factor of its rest length (rod_stretch_natural_length_derivative, pointwise or the step's
  /// secant as eval; false, zero, for a degenerate edge), and, with D and the secant on, the
  /// secant's derivative by the step's start (rod_stretch_em_start_derivative; zero otherwise)
  SLENDER_HD static bool adjoint_terms(
      const ModelView& m, const EvalView& s, int env, long k, Vec<6>& dg, Mat<6, 6>* D) {
    Vec<6> x, x0;
    RodStretch::Params p;
    const bool secant = local(m, s, env, k, x, p, &x0);
    if (D) {
      D->set_zero();
      if (secant) rod_stretch_em_start_derivative(x, x0, p, *D);
    }
    if (!rod_stretch_natural_length_derivative(x, secant ? &x0 : nullptr, p, dg)) return false;
    dg *= m.edge_l_bar[k];
    return true;
  }
};

/// Shell edges stretch like rod edges (the same stencil), without twist DOFs.
struct ShellStretchBinding {
  using S = RodStretch;
  static constexpr int kDofs = 6;
  /// elastic, in the reactions, symmetric, its energy, its grain (family_traits.h)
  static constexpr FamilyTraits kTraits{true, true, true, EnergyKind::kStretch,
                                        kParallelGrainMedium};
  SLENDER_HD static long count(const ModelView& m) { return m.nsedge; }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    detail::position_dofs<2>(m.sedge_node + 2 * k, out);
  }
  SLENDER_HD static void eval(
      const ModelView& m, const EvalView& s, int env, long k, unsigned want, LocalEval<6>& r) {
    Vec<6> x;
    detail::gather_positions<2>(s.q + long(env) * m.ndof, m.sedge_node + 2 * k, x);
    rod_stretch_eval(x, RodStretch::Params{m.sedge_EA[k], m.sedge_l_bar[k]}, want, r);
  }
};

/// Hinge bending of a shell edge shared by two triangles.
struct ShellHingeBinding {
  using S = ShellHinge;
  static constexpr int kDofs = 12;
  /// elastic, in the reactions, symmetric, its energy, its grain (family_traits.h)
  static constexpr FamilyTraits kTraits{true, true, true, EnergyKind::kBend, kParallelGrainHeavy};
  SLENDER_HD static long count(const ModelView& m) { return m.nhinge; }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    detail::position_dofs<4>(m.hinge_node + 4 * k, out);
  }
  SLENDER_HD static void eval(
      const ModelView& m, const EvalView& s, int env, long k, unsigned want, LocalEval<12>& r) {
    Vec<12> x;
    detail::gather_positions<4>(s.q + long(env) * m.ndof, m.hinge_node + 4 * k, x);
    const Real* phi_bar = s.hinge_phi_bar + long(env) * s.natural_per_env * m.nhinge;
    shell_hinge_eval(x, ShellHinge::Params{m.hinge_kb[k], phi_bar[k]}, want, r);
  }
  /// the derivative of the gradient by the natural angle, d(grad E)/d(phi_bar) = -kb grad phi
  /// (the adjoint's mixed derivative), into r.g (unscaled, as eval)
  SLENDER_HD static void natural_angle_grad(
      const ModelView& m, const EvalView& s, int env, long k, LocalEval<12>& r) {
    Vec<12> x;
    detail::gather_positions<4>(s.q + long(env) * m.ndof, m.hinge_node + 4 * k, x);
    shell_hinge_angle_grad(x, r.g);
    r.g *= -m.hinge_kb[k];
  }
};

/// Aerodynamic drag of one shell triangle (a force, not an energy: its Jacobian is not
/// symmetric, so a model with drag is solved by LU).
struct ShellDragBinding {
  using S = ShellDrag;
  static constexpr int kDofs = 9;
  /// elastic, in the reactions, symmetric, its energy, its grain (family_traits.h)
  static constexpr FamilyTraits kTraits{false, false, false, EnergyKind::kNone,
                                        kParallelGrainMedium};
  /// non-symmetric whenever the model has drag on its triangles
  template <class M>
  static bool symmetric(const M& m) {
    return !(m.drag_density > 0 && m.drag_coefficient > 0 && m.ntri > 0);
  }
  SLENDER_HD static long count(const ModelView& m) {
    return m.drag_density > 0 && m.drag_coefficient > 0 ? m.ntri : 0;
  }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    detail::position_dofs<3>(m.tri_node + 3 * k, out);
  }
  SLENDER_HD static void eval(
      const ModelView& m, const EvalView& s, int env, long k, unsigned want, LocalEval<9>& r) {
    const long base = long(env) * m.ndof;
    Vec<9> x;
    ShellDrag::Params p;
    detail::gather_moving_nodes<3>(s, base, m.tri_node + 3 * k, x, p);
    p.rho_med = m.drag_density;
    p.C_D = m.drag_coefficient;
    p.A_bar = m.tri_area_bar[k];
    shell_drag_eval(x, p, want, r);
  }
};

/// Resistive-force-theory drag of one rod edge (a force: non-symmetric Jacobian when the
/// coefficients differ). Edges without stretching stiffness (a rod-shell joint's) get none.
struct RodRftBinding {
  using S = RodRft;
  static constexpr int kDofs = 6;
  /// elastic, in the reactions, symmetric, its energy, its grain (family_traits.h)
  static constexpr FamilyTraits kTraits{false, false, false, EnergyKind::kNone,
                                        kParallelGrainMedium};
  /// non-symmetric where the tangential and normal coefficients differ
  template <class M>
  static bool symmetric(const M& m) {
    return !(m.rft_tangential != m.rft_normal && m.nedge > 0);
  }
  SLENDER_HD static long count(const ModelView& m) {
    return m.rft_tangential > 0 || m.rft_normal > 0 ? m.nedge : 0;
  }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    detail::position_dofs<2>(m.edge_node + 2 * k, out);
  }
  SLENDER_HD static void eval(
      const ModelView& m, const EvalView& s, int env, long k, unsigned want, LocalEval<6>& r) {
    const long base = long(env) * m.ndof;
    Vec<6> x;
    RodRft::Params p;
    detail::gather_moving_nodes<2>(s, base, m.edge_node + 2 * k, x, p);
    p.c_t = m.rft_tangential;
    p.c_n = m.rft_normal;
    p.l_bar = m.edge_EA[k] > 0 ? m.edge_l_bar[k] : 0;
    rod_rft_eval(x, p, want, r);
  }
};

/// Mid-edge normal bending of one shell triangle: its three nodes and the xi DOFs of its edges.
struct ShellMidEdgeBinding {
  using S = ShellMidedge;
  static constexpr int kDofs = 12;
  /// elastic, in the reactions, symmetric, its energy, its grain (family_traits.h)
  static constexpr FamilyTraits kTraits{true, true, true, EnergyKind::kBend, kParallelGrainHeavy};
  SLENDER_HD static long count(const ModelView& m) { return m.nmid; }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    const int t = m.mid_tri[k];
    for (int a = 0; a < 3; ++a) {
      for (int i = 0; i < 3; ++i)
        out[3 * a + i] = 3 * m.tri_node[3 * t + a] + i;
      out[9 + a] = m.xi_base + m.sedge_xi[m.tri_edge[3 * t + a]];
    }
  }
  /// stencil k's local DOF values (positions, xi) and parameters at the view's configuration
  SLENDER_HD static void local(
      const ModelView& m, const EvalView& s, int env, long k, Vec<12>& x, ShellMidedge::Params& p) {
    const Real* q = s.q + long(env) * m.ndof;
    const Real* tau0 = s.sedge_tau0 + long(env) * m.nsedge * 3;
    const int t = m.mid_tri[k];
    for (int a = 0; a < 3; ++a) {
      for (int i = 0; i < 3; ++i)
        x[3 * a + i] = q[3 * m.tri_node[3 * t + a] + i];
      const int e = m.tri_edge[3 * t + a];
      x[9 + a] = q[m.xi_base + m.sedge_xi[e]];
      for (int i = 0; i < 3; ++i)
        p.tau0[a][i] = tau0[3 * e + i];
      p.s[a] = m.mid_sign[3 * k + a];
      p.l_bar[a] = m.sedge_l_bar[e];
    }
    p.A_bar = m.tri_area_bar[t];
    for (int i = 0; i < 9; ++i)
      p.Lambda_bar.a[i] = m.mid_lambda_bar[9 * k + i];
    p.kb = m.mid_kb[k];
    p.nu = m.mid_nu[k];
    if (s.mid_kappa_bar) {
      const Real* c = s.mid_kappa_bar + (long(env) * s.natural_per_env * m.nmid + k) * 3;
      for (int a = 0; a < 3; ++a)
        p.kappa_bar[a] = c[a];
    }
  }
  /// `Lambda`, when given, receives the triangle's shape operator at q
  SLENDER_HD static void eval(const ModelView& m,
                              const EvalView& s,
                              int env,
                              long k,
                              unsigned want,
                              LocalEval<12>& r,
                              Mat3* Lambda = nullptr) {
    Vec<12> x;
    ShellMidedge::Params p;
    local(m, s, env, k, x, p);
    shell_midedge_eval(x, p, want, r, Lambda);
  }
  /// the adjoint's terms of stencil k for its three edges, lambda . dg/d(tau0) and
  /// lambda . dg/d(kappa_bar), from its gradient g and H lambda (shell_midedge_adjoint_terms);
  /// false where degenerate
  SLENDER_HD static bool adjoint_terms(const ModelView& m,
                                       const EvalView& s,
                                       int env,
                                       long k,
                                       const Vec<12>& g,
                                       const Vec<12>& Hl,
                                       const Vec<12>& lambda,
                                       Vec3 dtau0[3],
                                       Real dkappa[3]) {
    Vec<12> x;
    ShellMidedge::Params p;
    local(m, s, env, k, x, p);
    return shell_midedge_adjoint_terms(x, p, g, Hl, lambda, dtau0, dkappa);
  }
};

/// The mid-edge frame vector tau0 = n_avg x e_hat of every shell edge with a xi DOF, for the
/// configuration q (refreshed at the start of each step): one (env, shell edge) per index. A
/// clamped edge (its xi fixed, sedge_frame_fixed) keeps the tau0 it has, its initial one: its
/// fixed xi = n^m . tau0 then holds the mid-edge normal in place, where a tau0 refreshed from
/// the turning triangle next to it would let the normal turn along, step by step.
struct MidEdgeFrames {
  ModelView m;
  const Real* q;               // (nenv x ndof)
  Real* tau0;                  // (nenv x nsedge x 3)
  bool refresh_fixed = false;  // also the clamped edges' (the model's initial frames)
  SLENDER_HD void operator()(long i) const {
    const int env = int(i / m.nsedge);
    const long e = i % m.nsedge;
    if (m.sedge_xi[e] < 0) return;
    if (!refresh_fixed && m.sedge_frame_fixed[e]) return;
    const Real* qe = q + long(env) * m.ndof;
    auto pos = [qe](int n) { return vec3(qe[3 * n], qe[3 * n + 1], qe[3 * n + 2]); };
    Vec3 n_avg = vec3(0, 0, 0);
    for (int a = 0; a < 2; ++a) {
      const int t = m.sedge_tri[2 * e + a];
      if (t < 0) continue;
      const Vec3 x0 = pos(m.tri_node[3 * t]), x1 = pos(m.tri_node[3 * t + 1]);
      const Vec3 x2 = pos(m.tri_node[3 * t + 2]);
      const Vec3 nt = cross(x1 - x0, x2 - x0);
      const Real ln = norm(nt);
      if (ln > 0) n_avg += nt / ln;
    }
    const Vec3 ed = pos(m.sedge_node[2 * e + 1]) - pos(m.sedge_node[2 * e]);
    Vec3 tau = cross(n_avg, ed);
    const Real lt = norm(tau);
    if (lt > 0) tau = tau / lt;
    for (int c = 0; c < 3; ++c)
      tau0[3 * i + c] = tau[c];
  }
};

/// qbar += (d tau0_e / dq)^T w for shell edge e's frame vector as MidEdgeFrames computes it from
/// the configuration q (one environment's, ndof): through its edge and its triangles' unit
/// normals (the adjoint's term, engine/adjoint.h). Nothing for an edge without xi or a clamped
/// one (its tau0 does not follow q), nor where tau0 has no direction.
SLENDER_HD inline void mid_edge_frame_adjoint(
    const ModelView& m, const Real* q, long e, const Vec3& w, Real* qbar) {
  if (m.sedge_xi[e] < 0 || m.sedge_frame_fixed[e]) return;
  auto pos = [q](int n) { return vec3(q[3 * n], q[3 * n + 1], q[3 * n + 2]); };
  auto add = [qbar](int n, const Vec3& v) {
    for (int c = 0; c < 3; ++c)
      qbar[3 * n + c] += v[c];
  };
  Vec3 n_avg = vec3(0, 0, 0), nt[2], C[2], D[2];
  Real ln[2] = {0, 0};
  for (int a = 0; a < 2; ++a) {
    const int t = m.sedge_tri[2 * e + a];
    if (t < 0) continue;
    const Vec3 x0 = pos(m.tri_node[3 * t]);
    C[a] = pos(m.tri_node[3 * t + 1]) - x0;
    D[a] = pos(m.tri_node[3 * t + 2]) - x0;
    nt[a] = cross(C[a], D[a]);
    ln[a] = norm(nt[a]);
    if (ln[a] > 0) n_avg += nt[a] / ln[a];
  }
  const int na = m.sedge_node[2 * e], nb = m.sedge_node[2 * e + 1];
  const Vec3 ed = pos(nb) - pos(na);
  const Vec3 tau = cross(n_avg, ed);
  const Real lt = norm(tau);
  if (!(lt > 0)) return;
  const Vec3 t0 = tau / lt;
  const Vec3 wt = (w - dot(t0, w) * t0) / lt;  // by tau = n_avg x ed
  const Vec3 ned = cross(wt, n_avg);           // by ed
  add(nb, ned);
  add(na, -1 * ned);
  const Vec3 nav = cross(ed, wt);  // by n_avg
  for (int a = 0; a < 2; ++a) {
    const int t = m.sedge_tri[2 * e + a];
    if (t < 0 || !(ln[a] > 0)) continue;
    const Vec3 u = nt[a] / ln[a];
    const Vec3 nN = (nav - dot(u, nav) * u) / ln[a];  // by N = C x D
    const Vec3 nC = cross(D[a], nN), nD = cross(nN, C[a]);
    add(m.tri_node[3 * t + 1], nC);
    add(m.tri_node[3 * t + 2], nD);
    add(m.tri_node[3 * t], -1 * (nC + nD));
  }
}

/// Contact of one node with the ground, with Coulomb friction.
struct GroundBinding {
  using S = GroundContact;
  static constexpr int kDofs = 3;
  /// elastic, in the reactions, symmetric, its energy, its grain (family_traits.h)
  static constexpr FamilyTraits kTraits{false, false, false, EnergyKind::kNone,
                                        kParallelGrainMedium};
  /// non-symmetric with friction
  template <class M>
  static bool symmetric(const M& m) {
    return !(m.ground.enabled && m.ground.friction > 0);
  }
  SLENDER_HD static long count(const ModelView& m) { return m.ground_on ? m.nnode : 0; }
  SLENDER_HD static void dofs(const ModelView&, long k, int* out) {
    for (int i = 0; i < 3; ++i)
      out[i] = 3 * int(k) + i;
  }
  SLENDER_HD static void eval(
      const ModelView& m, const EvalView& s, int env, long k, unsigned want, LocalEval<3>& r) {
    eval_with_friction(m, s, env, k, want, m.ground.mu, r, m.mass_scale);
  }
  /// the same with the Coulomb coefficient mu in place of the model's (an environment's own
  /// ground friction) and the masses scaled by mass_scale (its own density scale)
  SLENDER_HD static void eval_with_friction(const ModelView& m,
                                            const EvalView& s,
                                            int env,
                                            long k,
                                            unsigned want,
                                            Real mu,
                                            LocalEval<3>& r,
                                            Real mass_scale) {
    ContactView<3> cv;
    GroundContact::Params p;
    setup(m, s, env, k, want, mu, mass_scale, cv, p);
    ground_contact_eval(cv.x, p, want, r);
    cv.weigh(want, r);
  }
  /// the derivative of node k's penalty and friction forces by its distance Delta_0 at the
  /// step's start under the secant (ground_secant_start_derivative; Newmark's weighted) and that
  /// distance's gradient there (the adjoint's term); false where there is none
  SLENDER_HD static bool secant_start_derivative(const ModelView& m,
                                                 const EvalView& s,
                                                 int env,
                                                 long k,
                                                 Real mu,
                                                 Real mass_scale,
                                                 Vec3& dg,
                                                 Vec3& grad_D0) {
    ContactView<3> cv;
    GroundContact::Params p;
    setup(m, s, env, k, kGrad, mu, mass_scale, cv, p, &grad_D0);
    if (!cv.secant) return false;
    if (!ground_secant_start_derivative(cv.x, p, dg)) return false;
    dg *= cv.w;  // (Newmark's weight on the residual)
    return true;
  }
  /// node k's contact view and ground parameters as a step's evaluation takes them
  SLENDER_HD static void setup(const ModelView& m,
                               const EvalView& s,
                               int env,
                               long k,
                               unsigned want,
                               Real mu,
                               Real mass_scale,
                               ContactView<3>& cv,
                               GroundContact::Params& p,
                               Vec3* grad_D0 = nullptr) {
    const long base = long(env) * m.ndof;
    p = m.ground;
    p.mu = mu;
    const int dof = 3 * int(k);
    cv.gather(s, base, &dof, want);
    // the integrator's offsets as the stencil reads them, u = u_hat + c_u (x - q_hat): the
    // step's own, or under Newmark's form q_hat = x0, u_hat = 0 (the mean velocity; the
    // dashpot's start q_hat - u_hat / c_u is then x0)
    const bool mid = cv.secant && cv.hm != 1;
    p.c_u = cv.c_u;
    for (int i = 0; i < 3; ++i) {
      p.q_hat[i] = mid ? cv.x0[i] : s.q_hat ? s.q_hat[base + dof + i] : 0;
      p.u_hat[i] = mid ? 0 : s.u_hat ? s.u_hat[base + dof + i] : 0;
    }
    // (the adjoint's view with the mean velocity's derivative left out, contact_fixed_velocity:
    // the same velocity as the offset u_hat, c_u = 0, and the dashpot's start x0 given)
    if (mid && s.contact_fixed_velocity) {
      for (int i = 0; i < 3; ++i)
        p.u_hat[i] = cv.u[i];
      p.start_given = true;
    }
    // the node's mass (the dashpot and the automatic stiffness); the dashpot also needs the
    // step's offsets (none outside a step)
    p.mass = m.node_mass ? m.node_mass[k] * mass_scale : 0;
    p.dashpot = s.q_hat && s.u_hat;
    // the node touches the ground at its radius: move the ground by it
    const Real rad = m.node_contact_radius[k];
    if (p.ground.shape == GroundShape::kPlane) {
      p.ground.p0 += rad * p.ground.n;
    } else {
      p.ground.offset += rad;
    }
    // the step's secant normal force needs the distance at the step's start (grad_D0, when
    // given: its gradient there)
    if (cv.secant) {
      Vec3 gd;
      Mat3 hd;
      p.step = contact_step_of(s, ground_distance(p.ground, cv.x0, gd, hd));
      if (grad_D0) *grad_D0 = gd;
    }
  }
};

namespace detail {

/// A contact pair's dashpot at the step's start xl (contact_damping.h): the normal w = grad
/// Delta (and, with `hess`, H = Hess Delta), 1 / m_eff = sum over the 12 DOFs of w_i^2 / m_i with
/// its derivatives by w, im_i = 2 w_i / m_i, the activation s and the coefficient c; false where
/// the pair is out of the ramp's reach at the start or has no mass along w.
struct PairDashpotStart {
  Vec<12> w, im;
  Mat<12, 12> H;
  Real inv_m, s, c;
  template <class Distance>
  SLENDER_HD bool at(const ModelView& m, const int* node, Real d, const Vec<12>& xl, bool hess) {
    Distance dist;
    ContactDistance cl;
    dist(xl, kEnergy, cl, nullptr, nullptr);
    if (!(cl.delta < d + m.contact_delta)) return false;  // out of the ramp's reach
    w = Vec<12>::zero();
    im = Vec<12>::zero();
    dist(xl, hess ? kGradHess : kGrad, cl, &w, &H);
    inv_m = 0;
    for (int a = 0; a < 4; ++a) {
      const Real ma = m.node_mass[node[a]] * m.mass_scale;
      const Vec3 wv = w.segment<3>(3 * a);
      const Real wa = dot(wv, wv);
      if (wa > 0 && ma > 0) inv_m += wa / ma;
      if (ma > 0)
        for (int i = 0; i < 3; ++i)
          im[3 * a + i] = 2 * wv[i] / ma;
    }
    if (!(inv_m > 0)) return false;
    s = contact_logistic(15 / m.contact_delta * (d - cl.delta));
    c = 2 * m.contact_zeta * ::sqrt(2 * m.contact_k / inv_m) * s;
    return true;
  }
};

/// the normal dashpot of a 4-node contact pair (contact_damping.h): its normal, activation and
/// reduced mass at xl (the step's start), the node velocities u at the pair's x and du/dx c_u
template <class Distance>
SLENDER_HD inline void add_pair_dashpot(const ModelView& m,
                                        const int* node,
                                        Real d,
                                        const Vec<12>& xl,
                                        const Vec<12>& u,
                                        Real c_u,
                                        unsigned want,
                                        LocalEval<12>& r) {
  PairDashpotStart st;
  if (st.at<Distance>(m, node, d, xl, false)) add_contact_damping<12>(st.w, st.c, u, c_u, want, r);
}

/// The part of a contact pair's negated force that add_pair_dashpot adds, g_d = c (w . u) w, and
/// its derivative by the step's start xl, where the pair's normal w = grad Delta, its activation
/// and its reduced mass are taken (the adjoint's term; the force's dependence on u through x
/// is in the Jacobian). With H = Hess Delta at xl, s = the logistic activation, c0 its
/// coefficient in deep contact and 1 / m_eff = sum_i w_i^2 / m_i (i over the 12 DOFs, m_i the
/// node's mass):
///   dg_d/dxl = (w . u) w (grad c)^T + c w (H u)^T + c (w . u) H,
///   grad c = -c grad(1 / m_eff) / (2 / m_eff) - c (1 - s) K1 w,
///   grad(1 / m_eff) = H (2 w_i / m_i)_i.
/// False (nothing written) where add_pair_dashpot adds nothing.
template <class Distance>
SLENDER_HD inline bool pair_dashpot_start_derivative(const ModelView& m,
                                                     const int* node,
                                                     Real d,
                                                     const Vec<12>& xl,
                                                     const Vec<12>& u,
                                                     Vec<12>& g_d,
                                                     Mat<12, 12>& dg) {
  PairDashpotStart st;
  if (!st.at<Distance>(m, node, d, xl, true)) return false;
  const Vec<12>& w = st.w;
  const Mat<12, 12>& H = st.H;
  const Real K1 = 15 / m.contact_delta, c = st.c;
  Real vn = 0;
  for (int i = 0; i < 12; ++i)
    vn += w[i] * u[i];
  Vec<12> gc, Hu;
  for (int j = 0; j < 12; ++j) {
    Real gi = 0, hu = 0;
    for (int i = 0; i < 12; ++i) {
      gi += st.im[i] * H(i, j);
      hu += H(j, i) * u[i];
    }
    gc[j] = -c * gi / (2 * st.inv_m) - c * (1 - st.s) * K1 * w[j];
    Hu[j] = hu;
  }
  for (int i = 0; i < 12; ++i) {
    g_d[i] = c * vn * w[i];
    for (int j = 0; j < 12; ++j)
      dg(i, j) = vn * w[i] * gc[j] + c * w[i] * Hu[j] + c * vn * H(i, j);
  }
  return true;
}

/// a contact pair's DOFs, view, friction and step as a step's evaluation takes them
/// (contact_pair_eval)
template <class Distance>
struct ContactPairSetup {
  int dof[4];
  ContactView<12> cv;
  ImcFriction f;
  bool fr = false;  // friction acts
  ContactStep step;
  /// (grad_D0, when given: the gradient of the distance at the step's start, where the secant
  /// applies)
  SLENDER_HD void at(const ModelView& m,
                     const EvalView& s,
                     long base,
                     const int* node,
                     Real mu,
                     unsigned want,
                     Vec<12>* grad_D0 = nullptr) {
    for (int a = 0; a < 4; ++a)
      dof[a] = 3 * node[a];
    cv.gather(s, base, dof, want);
    // friction: the node velocities at x
    fr = mu > 0 && cv.moving;
    if (fr) {
      f.mu = mu;
      f.nu = m.contact_nu;
      f.c_u = cv.c_u;
      for (int a = 0; a < 4; ++a)
        f.u[a] = cv.u.template segment<3>(3 * a);
      f.u[4] = Vec3::zero();
    }
    // the step's secant normal force needs the distance at the step's start
    step = ContactStep{};
    if (cv.secant) {
      Distance dist0;
      ContactDistance c0;
      if (grad_D0) *grad_D0 = Vec<12>::zero();
      dist0(cv.x0, grad_D0 ? kGrad : kEnergy, c0, grad_D0, nullptr);
      step = contact_step_of(s, c0.delta);
    }
  }
  SLENDER_HD const ImcFriction* friction() const { return fr ? &f : nullptr; }
};

/// the derivative of a contact pair's penalty and friction forces by its distance at the step's
/// start under the secant (imc_secant_start_derivative; Newmark's weighted) and that distance's
/// gradient there (the adjoint's term); false where there is none
template <class Distance>
SLENDER_HD inline bool contact_pair_secant_start_derivative(const ModelView& m,
                                                            const EvalView& s,
                                                            int env,
                                                            const int* node,
                                                            Real d,
                                                            Real mu,
                                                            Vec<12>& dg,
                                                            Vec<12>& grad_D0) {
  ContactPairSetup<Distance> ps;
  ps.at(m, s, long(env) * m.ndof, node, mu, kGrad, &grad_D0);
  if (!ps.cv.secant) return false;
  if (!imc_secant_start_derivative<12, Distance>(
          ps.cv.x, ImcParams{m.contact_k, d, m.contact_delta}, ps.friction(), ps.step, dg))
    return false;
  dg *= ps.cv.w;  // (Newmark's weight on the residual)
  return true;
}

/// one 4-node contact pair (nodes `node`, contact distance d, friction coefficient mu) of
/// either kind: the distance functor picks edge-edge or point-triangle; in the integrator's view
/// of the step (ContactView: the step's midpoint and mean velocity under the energy-consistent
/// forms)
template <class Distance>
SLENDER_HD inline void contact_pair_eval(const ModelView& m,
                                         const EvalView& s,
                                         int env,
                                         const int* node,
                                         Real d,
                                         Real mu,
                                         unsigned want,
                                         LocalEval<12>& r) {
  const long base = long(env) * m.ndof;
  ContactPairSetup<Distance> ps;
  ps.at(m, s, base, node, mu, want);
  const ContactView<12>& cv = ps.cv;
  const int* dof = ps.dof;
  r.g.set_zero();  // out of range the stencil returns early; keep every path defined
  imc_eval<12, Distance>(cv.x, ImcParams{m.contact_k, d, m.contact_delta}, want, r, nullptr,
                         ps.friction(), &ps.step);
  if (m.contact_zeta > 0 && (cv.c_u > 0 || s.contact_fixed_velocity) && cv.moving && s.q_hat &&
      m.node_mass) {
    // the normal dashpot (contact_damping.h): normal, activation and reduced mass at the step's
    // start x_lag (q_hat - u_hat / c_u; Newmark's form: x0)
    Vec<12> xl;
    if (cv.secant && cv.hm != 1) {
      xl = cv.x0;
    } else {
      for (int a = 0; a < 4; ++a)
        for (int i = 0; i < 3; ++i) {
          const long k = base + dof[a] + i;
          xl[3 * a + i] = s.q_hat[k] - s.u_hat[k] / s.c_u;
        }
    }
    add_pair_dashpot<Distance>(m, node, d, xl, cv.u, cv.c_u, want, r);
  }
  cv.weigh(want, r);
}

}  // namespace detail

/// Implicit contact between two edges, rod or shell (seed 000 eqs. 21-22), with friction (eq. 23).
struct ContactEdgeEdgeBinding {
  static constexpr int kDofs = 12;
  /// elastic, in the reactions, symmetric, its energy, its grain (family_traits.h)
  static constexpr FamilyTraits kTraits{false, true, false, EnergyKind::kNone, kParallelGrainHeavy};
  /// non-symmetric where a pair of bodies has friction
  template <class M>
  static bool symmetric(const M& m) {
    return !m.contact_friction();
  }
  SLENDER_HD static long count(const ModelView& m) { return m.npair; }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    detail::position_dofs<4>(m.pair_node + 4 * k, out);
  }
  SLENDER_HD static void eval(
      const ModelView& m, const EvalView& s, int env, long k, unsigned want, LocalEval<12>& r) {
    detail::contact_pair_eval<detail::EdgeEdgeDistanceFn>(
        m, s, env, m.pair_node + 4 * k, m.pair_d[k], m.pair_mu ? m.pair_mu[k] : 0, want, r);
  }
};

/// Implicit contact between a rod or shell node and a shell triangle, with friction (eq. 23).
struct ContactPointTriangleBinding {
  static constexpr int kDofs = 12;
  /// elastic, in the reactions, symmetric, its energy, its grain (family_traits.h)
  static constexpr FamilyTraits kTraits{false, true, false, EnergyKind::kNone, kParallelGrainHeavy};
  /// non-symmetric where a pair of bodies has friction
  template <class M>
  static bool symmetric(const M& m) {
    return !m.contact_friction();
  }
  SLENDER_HD static long count(const ModelView& m) { return m.npt; }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    detail::position_dofs<4>(m.pt_node + 4 * k, out);
  }
  SLENDER_HD static void eval(
      const ModelView& m, const EvalView& s, int env, long k, unsigned want, LocalEval<12>& r) {
    detail::contact_pair_eval<detail::PointTriangleDistanceFn>(
        m, s, env, m.pt_node + 4 * k, m.pt_d[k], m.pt_mu ? m.pt_mu[k] : 0, want, r);
  }
};

struct RodBendTwistBinding {
  using S = RodBendTwist;
  static constexpr int kDofs = 11;
  /// elastic, in the reactions, symmetric, its energy, its grain (family_traits.h)
  static constexpr FamilyTraits kTraits{true, true, true, EnergyKind::kBendTwist,
                                        kParallelGrainHeavy};
  SLENDER_HD static long count(const ModelView& m) { return m.nbend; }
  SLENDER_HD static void dofs(const ModelView& m, long k, int* out) {
    for (int a = 0; a < 3; ++a)
      for (int i = 0; i < 3; ++i)
        out[3 * a + i] = 3 * m.bend_node[3 * k + a] + i;
    out[9] = 3 * m.nnode + m.bend_edge[2 * k];
    out[10] = 3 * m.nnode + m.bend_edge[2 * k + 1];
  }
  /// gathers the local DOFs (theta with the orientation sign applied) and parameters
  SLENDER_HD static void gather(
      const ModelView& m, const EvalView& s, int env, long k, Vec<11>& x, RodBendTwist::Params& p) {
    const Real* q = s.q + long(env) * m.ndof;
    const Real* d1 = s.edge_d1 + long(env) * m.nedge * 3;
    for (int a = 0; a < 3; ++a)
      for (int i = 0; i < 3; ++i)
        x[3 * a + i] = q[3 * m.bend_node[3 * k + a] + i];
    const int e0 = m.bend_edge[2 * k], e1 = m.bend_edge[2 * k + 1];
    const Real s0 = m.bend_sign[2 * k], s1 = m.bend_sign[2 * k + 1];
    x[9] = s0 * q[3 * m.nnode + e0];
    x[10] = s1 * q[3 * m.nnode + e1];
    for (int i = 0; i < 3; ++i) {
      p.d1_0[i] = s0 * d1[3 * e0 + i];
      p.d1_1[i] = s1 * d1[3 * e1 + i];
    }
    p.ref_twist = s.bend_ref_twist[long(env) * m.nbend + k];
    p.EI1 = m.bend_EI[2 * k];
    p.EI2 = m.bend_EI[2 * k + 1];
    p.GJ = m.bend_GJ[k];
    p.dl = m.bend_dl[k];
    const long nat = long(env) * s.natural_per_env * m.nbend;
    const Real* kb = s.bend_kappa_bar + 2 * nat;
    p.kappa1_bar = kb[2 * k];
    p.kappa2_bar = kb[2 * k + 1];
    p.tau_bar = s.bend_tau_bar[nat + k];
    p.frame_offset = m.bend_frame_offset[k];
    p.in_plane = m.two_d;
  }
  SLENDER_HD static void eval(const ModelView& m,
                              const EvalView& s,
                              int env,
                              long k,
                              unsigned want,
                              LocalEval<11>& r,
                              RodBendTwist::Strains* strains = nullptr) {
    eval_with(m, s, env, k, RodElasticStrainEnergy{}, want, r, strains);
  }
  /// the same with another energy of the stencil's strains (rod_bend_twist_eval_with)
  template <class Energy>
  SLENDER_HD static void eval_with(const ModelView& m,
                                   const EvalView& s,
                                   int env,
                                   long k,
                                   const Energy& energy,
                                   unsigned want,
                                   LocalEval<11>& r,
                                   RodBendTwist::Strains* strains = nullptr) {
    Vec<11> x;
    RodBendTwist::Params p;
    gather(m, s, env, k, x, p);
    rod_bend_twist_eval_with(x, p, energy, want, r, strains);
    if (want == kEnergy) return;
    // back from the stencil's edge orientation to the stored one: theta_loc = sign theta
    const Real sg[2] = {m.bend_sign[2 * k], m.bend_sign[2 * k + 1]};
    for (int a = 0; a < 2; ++a) {
      if (sg[a] > 0) continue;
      const int i = 9 + a;
      r.g[i] = -r.g[i];
      if (!(want & kHess)) continue;
      for (int j = 0; j < 11; ++j) {
        r.H(i, j) = -r.H(i, j);
        r.H(j, i) = -r.H(j, i);
      }
    }
  }
  /// d(grad E)/d(natural strain c) of stencil k (c = 0: kappa1 bar, 1: kappa2 bar, 2: tau bar)
  /// into r.g, in the stored orientation (RodNaturalStrainSensitivity), unscaled by the moduli's
  /// scales
  /// the antisymmetric part of stencil k's gradient Jacobian under the step's frame transport
  /// (rod_bend_twist_eval_with's transport_asym) into A, unscaled by the moduli's scales (it has
  /// no twist rows or columns, so the stored orientation needs no signs); zero in the 2D mode
  SLENDER_HD static void transport_asym(
      const ModelView& m, const EvalView& s, int env, long k, Mat<11, 11>& A) {
    Vec<11> x;
    RodBendTwist::Params p;
    gather(m, s, env, k, x, p);
    LocalEval<11> r;
    rod_bend_twist_eval_with(x, p, RodElasticStrainEnergy{}, kGradHess, r, nullptr, &A);
  }
  SLENDER_HD static void natural_strain_grad(
      const ModelView& m, const EvalView& s, int env, long k, int c, LocalEval<11>& r) {
    eval_with(m, s, env, k, RodNaturalStrainSensitivity{c}, kGrad, r);
  }
};

/// Evaluates one family of stencils: one (env, stencil) pair per index.
template <class B>
struct EvalStencils {
  ModelView m;
  EvalView s;
  long n;  // B::count(m)
  unsigned want;
  LocalBuffers<B::kDofs> out;
  SLENDER_HD void operator()(long t) const {
    const int env = int(t / n);
    const long k = t % n;
    LocalEval<B::kDofs> r;
    B::eval(m, s, env, k, want, r);
    out.store(env, k, r, want);
  }
};

/// Moves every edge's reference director from the step start to the configuration q by
/// time-parallel transport: one (env, edge) pair per index.
struct TransportFrames {
  ModelView m;
  const Real* q;         // (nenv x ndof)
  const Real* d1_start;  // (nenv x nedge x 3)
  const Real* t_start;   // (nenv x nedge x 3)
  Real* d1_out;          // (nenv x nedge x 3)
  Real* t_out;           // (nenv x nedge x 3)
  SLENDER_HD void operator()(long i) const {
    const int env = int(i / m.nedge);
    const long e = i % m.nedge;
    const Real* qe = q + long(env) * m.ndof;
    const int a = m.edge_node[2 * e], b = m.edge_node[2 * e + 1];
    Vec3 t =
        vec3(qe[3 * b] - qe[3 * a], qe[3 * b + 1] - qe[3 * a + 1], qe[3 * b + 2] - qe[3 * a + 2]);
    const Real l = norm(t);
    const Real* d0 = d1_start + 3 * i;
    const Real* t0 = t_start + 3 * i;
    Vec3 d1 = vec3(d0[0], d0[1], d0[2]);
    if (l > kTinyLength) {
      t = t / l;
      d1 = parallel_transport(d1, vec3(t0[0], t0[1], t0[2]), t);
      // re-orthonormalize so that round-off does not accumulate over many steps
      d1 -= dot(d1, t) * t;
      const Real n = norm(d1);
      if (n > 0) d1 = d1 / n;
    } else {
      t = vec3(t0[0], t0[1], t0[2]);
    }
    for (int c = 0; c < 3; ++c) {
      d1_out[3 * i + c] = d1[c];
      t_out[3 * i + c] = t[c];
    }
  }
};

/// Reference twist of every bend stencil from the current directors: one (env, bend) pair
/// per index; continuous in time through the step-start value.
struct ReferenceTwists {
  ModelView m;
  const Real* d1;         // (nenv x nedge x 3)
  const Real* t;          // (nenv x nedge x 3)
  const Real* ref_start;  // (nenv x nbend)
  Real* ref_out;          // (nenv x nbend)
  SLENDER_HD void operator()(long i) const {
    const int env = int(i / m.nbend);
    const long k = i % m.nbend;
    const long base = long(env) * m.nedge * 3;
    const int e0 = m.bend_edge[2 * k], e1 = m.bend_edge[2 * k + 1];
    const Real s0 = m.bend_sign[2 * k], s1 = m.bend_sign[2 * k + 1];
    const Real* a = d1 + base + 3 * e0;
    const Real* b = d1 + base + 3 * e1;
    const Real* ta = t + base + 3 * e0;
    const Real* tb = t + base + 3 * e1;
    ref_out[i] =
        reference_twist(s0 * vec3(a[0], a[1], a[2]), s0 * vec3(ta[0], ta[1], ta[2]),
                        s1 * vec3(b[0], b[1], b[2]), s1 * vec3(tb[0], tb[1], tb[2]), ref_start[i]);
  }
};

}  // namespace slender
