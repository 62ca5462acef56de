#pragma once

// Kelvin-Voigt strain-rate damping (Bartholdt et al., seed 004, eqs. 13-15): beside each elastic
// stress E eps a viscous one eta d(eps)/dt, on the strains of every elastic stencil (rod
// stretching, bending and twisting; shell stretching, springs or triangles, hinge and mid-edge
// bending). With the retardation time tau = eta / E, a stencil whose elastic energy is
// k/2 (eps - eps_bar)^2 feels
//   F = -tau k (d eps / dq)^T d(eps)/dt.
// In a step the integrator's velocity of the iterate y is u(y) = u_hat + c_u (y - q_hat), which
// vanishes at the anchor q_a = q_hat - u_hat / c_u (the step's start for implicit Euler and the
// midpoint rule). The configuration a whole step at that velocity reaches from the anchor is
//   z(y) = q_a + dt u(y) = q_a + w (y - q_a),  w = c_u dt
// (the step's end for implicit Euler, w = 1, and for the midpoint rule, w = 2). The strain rate
// is the secant over the step, (eps(z) - eps(q_a)) / dt, and the damping the gradient in y of
//   psi(y) = tau / (w dt) k/2 (eps(z(y)) - eps(q_a))^2,
// which is the stencil's own elastic energy at z with its natural strains replaced by those at
// q_a, times tau / (w dt): its gradient in y is tau / dt times the energy's gradient at z, its
// Hessian tau c_u times the energy's Hessian at z. So the Jacobian is exact and symmetric, the
// line search keeps measuring a potential, the work over a step is -tau dt k (rate)^2 to first
// order, and a rigid motion that the step carries from q_a to z unchanged in shape is not damped
// at all (a rigid translation under every integrator, a rigid rotation under implicit Euler
// and the midpoint rule; the rods' bending and twist only up to the small turn of their
// time-parallel frames about the tangents).
//
// The anchors (the stencils' strains at q_a) and each stencil's scale are kept at the step's
// start by the KvAnchor* functors; KelvinVoigt<B> evaluates the family's own binding at z with
// views whose natural strains are the anchors (kv_model_view, kv_eval_view) and adds the scaled
// result to the family's pools. Stretching is the one law not quadratic in the strain as stored
// (the rest length sits in the binding's strain, and an Ogden law is not quadratic at all): its
// anchor is the length l_a at q_a, evaluated as a Hookean edge of rest length l_a, whose energy
// EA/2 (l - l_a)^2 / l_a the scale l_a / l_bar turns into EA l_bar/2 (eps - eps_a)^2. The
// constant-strain membrane's natural shape is its rest metric: its anchor is the triangle's
// metric at q_a (its own law, measured from the shape at q_a over that shape's area). Host and
// device code: one stencil per index.

#include <type_traits>

#include "slender/stencils/bindings.h"
#include "slender/stencils/part_scale.h"
#include "slender/stencils/shell_membrane.h"

namespace slender {

/// A family's Kelvin-Voigt anchors at the step's start: where they live (null: none of that
/// kind) and each stencil's scale, tau (times l_a / l_bar for stretching; 0: not damped).
struct KvAnchors {
  Real* edge_len = nullptr;   // rod edges' lengths at q_a                  (nedge)
  Real* sedge_len = nullptr;  // shell edges' lengths at q_a                (nsedge)
  Real* kappa = nullptr;      // bend-twist springs' curvatures at q_a      (nbend x 2)
  Real* twist = nullptr;      // ... twists at q_a                          (nbend)
  Real* phi = nullptr;        // hinges' angles at q_a                      (nhinge)
  Real* lambda = nullptr;     // mid-edge triangles' shape operators at q_a (nmid x 9)
  /// membrane triangles' rows with the rest metric replaced by the metric at q_a (their table's
  /// reals, rows x kReals: membrane_len per environment)
  Real* membrane = nullptr;
  long membrane_len = 0;
  const Real* zero = nullptr;  // zeros, one per rod edge (the Hookean law's alpha)
};

/// Where an engine keeps the anchors of nenv environments, one after another (buffers of its
/// executor: resize and data), and their KvAnchors view; `zero` is filled by the engine (one
/// zero per rod edge, shared)
template <class Buf>
struct KvAnchorStore {
  Buf edge_len, sedge_len, kappa, twist, phi, lambda, membrane, zero;
  long membrane_len = 0;
  /// for model m's counts and nenv environments; membrane_len: the membrane table's reals
  template <class M>
  void resize(const M& m, size_t nenv, long membrane_reals) {
    edge_len.resize(nenv * size_t(m.nedge));
    sedge_len.resize(nenv * size_t(m.nsedge));
    kappa.resize(nenv * 2 * size_t(m.nbend));
    twist.resize(nenv * size_t(m.nbend));
    phi.resize(nenv * size_t(m.nhinge));
    lambda.resize(nenv * 9 * size_t(m.nmid));
    membrane_len = membrane_reals;
    membrane.resize(nenv * size_t(membrane_reals));
  }
  KvAnchors view() {
    KvAnchors a;
    a.edge_len = edge_len.data();
    a.sedge_len = sedge_len.data();
    a.kappa = kappa.data();
    a.twist = twist.data();
    a.phi = phi.data();
    a.lambda = lambda.data();
    a.membrane = membrane.data();
    a.membrane_len = membrane_len;
    a.zero = zero.data();
    return a;
  }
};

/// The model view of family B's Kelvin-Voigt term: the family's natural shape arrays replaced
/// by the anchors (stretching: the rest lengths by the lengths at q_a, its law Hookean).
template <class B>
SLENDER_HD inline ModelView kv_model_view(ModelView m, const KvAnchors& a) {
  if constexpr (std::is_same_v<B, RodStretchBinding>) {
    m.edge_l_bar = a.edge_len;
    m.edge_stretch_alpha = a.zero;
  } else if constexpr (std::is_same_v<B, ShellStretchBinding>) {
    m.sedge_l_bar = a.sedge_len;
  } else if constexpr (std::is_same_v<B, ShellMidEdgeBinding>) {
    m.mid_lambda_bar = a.lambda;
  } else if constexpr (IsShellMembraneBinding<B>::value) {
    m.table[B::kFamily].r = a.membrane;
  }
  return m;
}

/// The evaluation view of the Kelvin-Voigt term: the natural curvatures, twists and hinge
/// angles replaced by the anchors (one set: a single environment). The mid-edge triangles'
/// actuated curvature stays: their anchor (KvAnchorMidEdge) is the shape operator less it, at
/// the same actuation, so the damping sees the strain rate and not the drive. The rod edges'
/// natural stretch goes: their anchors are lengths (kv_model_view), whatever the drive.
SLENDER_HD inline EvalView kv_eval_view(EvalView ev, const KvAnchors& a) {
  ev.bend_kappa_bar = a.kappa;
  ev.bend_tau_bar = a.twist;
  ev.hinge_phi_bar = a.phi;
  ev.edge_stretch_bar = nullptr;
  ev.natural_per_env = 0;
  return ev;
}

/// The anchor q_a = q_hat - u_hat / c_u, where the integrator's velocity vanishes; one DOF per
/// index.
struct KvAnchorPosition {
  const Real* q_hat;  // (ndof)
  const Real* u_hat;  // (ndof)
  Real c_u;           // > 0
  Real* q_a;          // (ndof)
  SLENDER_HD void operator()(long i) const { q_a[i] = q_hat[i] - u_hat[i] / c_u; }
};

/// Stretching (rod or shell edges, by `node`, `l_bar`): the length at q_a and the scale
/// tau l_a / l_bar, one edge per index.
struct KvAnchorStretch {
  const Real* q_a;    // (ndof)
  const int* node;    // the edges' nodes (n x 2)
  const Real* l_bar;  // rest lengths (n)
  const Real* tau;    // per node (nnode)
  Real* len;          // (n)
  Real* scale;        // (n)
  SLENDER_HD void operator()(long k) const {
    const int a = node[2 * k], b = node[2 * k + 1];
    Vec3 e;
    for (int i = 0; i < 3; ++i)
      e[i] = q_a[3 * b + i] - q_a[3 * a + i];
    const Real l = norm(e);
    len[k] = l;
    // a zero-length edge has no direction to damp along
    scale[k] = l > kTinyLength ? tau[a] * l / l_bar[k] : 0;
  }
};

/// Bend-twist springs: curvatures and twist at q_a (ev: the view at q_a, its frames), scale tau.
struct KvAnchorBendTwist {
  ModelView m;
  EvalView ev;
  const Real* tau;  // per node (nnode)
  Real* kappa;      // (nbend x 2)
  Real* twist;      // (nbend)
  Real* scale;      // (nbend)
  SLENDER_HD void operator()(long k) const {
    LocalEval<11> r;
    RodBendTwist::Strains st;
    RodBendTwistBinding::eval(m, ev, 0, k, kEnergy, r, &st);
    kappa[2 * k] = st.kappa1;
    kappa[2 * k + 1] = st.kappa2;
    twist[k] = st.tau;
    int idx[11];
    scale[k] = (r.flags & kDegenerate) ? 0 : tau[stencil_part_node<RodBendTwistBinding>(m, k, idx)];
  }
};

/// Hinges: the dihedral angle at q_a, scale tau.
struct KvAnchorHinge {
  ModelView m;
  const Real* q_a;  // (ndof)
  const Real* tau;  // per node (nnode)
  Real* phi;        // (nhinge)
  Real* scale;      // (nhinge)
  SLENDER_HD void operator()(long k) const {
    Vec<12> x;
    detail::gather_positions<4>(q_a, m.hinge_node + 4 * k, x);
    phi[k] = shell_hinge_angle(x);
    int idx[12];
    scale[k] = detail::hinge_degenerate(detail::hinge_edges(x))
                   ? 0
                   : tau[stencil_part_node<ShellHingeBinding>(m, k, idx)];
  }
};

/// Mid-edge triangles: the shape operator at q_a (with the step's mid-edge frames), scale tau.
struct KvAnchorMidEdge {
  ModelView m;
  EvalView ev;
  const Real* tau;  // per node (nnode)
  Real* lambda;     // (nmid x 9)
  Real* scale;      // (nmid)
  SLENDER_HD void operator()(long k) const {
    LocalEval<12> r;
    Mat3 L;
    ShellMidEdgeBinding::eval(m, ev, 0, k, kEnergy, r, &L);
    for (int i = 0; i < 9; ++i)
      lambda[9 * k + i] = L.a[i];
    int idx[12];
    scale[k] = (r.flags & kDegenerate) ? 0 : tau[stencil_part_node<ShellMidEdgeBinding>(m, k, idx)];
  }
};

/// Membrane triangles (binding B, ShellMembraneBinding): the row with the metric at q_a as its
/// rest metric, scale tau (0 for a triangle squashed at q_a).
template <class B>
struct KvAnchorMembrane {
  ModelView m;
  const Real* q_a;  // (ndof)
  const Real* tau;  // per node (nnode)
  Real* rows;       // (rows x kReals)
  Real* scale;      // (rows)
  SLENDER_HD void operator()(long k) const {
    const FamilyTableView& t = m.table[B::kFamily];
    const Real* r = t.r + B::kReals * k;
    Real* out = rows + B::kReals * k;
    for (int i = 0; i < B::kReals; ++i)
      out[i] = r[i];
    Vec<9> x;
    detail::gather_positions<3>(q_a, t.i + B::kInts * k, x);
    shell_membrane_metric(x, out[3], out[4], out[5]);
    const Real D = out[3] * out[4] - out[5] * out[5], D_bar = r[3] * r[4] - r[5] * r[5];
    int idx[9];
    scale[k] = D > kMembraneMinAreaRatio2 * D_bar ? tau[stencil_part_node<B>(m, k, idx)] : 0;
  }
};

/// v[i] *= f, one value per index (the scales' factor: the adjoint's retardation-time scale)
struct KvScaleBy {
  Real* v;
  Real f;
  SLENDER_HD void operator()(long i) const { v[i] *= f; }
};

/// The configuration z = q_a + w (y - q_a) a whole step reaches from the anchor at the iterate's
/// velocity; one DOF per index.
struct KvEndPosition {
  const Real* q_a;  // (ndof)
  const Real* y;    // (ndof)
  Real w;           // c_u dt
  Real* z;          // (ndof)
  SLENDER_HD void operator()(long i) const { z[i] = q_a[i] + w * (y[i] - q_a[i]); }
};

/// Family B's Kelvin-Voigt potential at the iterate, added to the family's pools; one stencil
/// per index. ev views z (its q, frames and twists) with the anchors as natural shape, m is
/// kv_model_view: with the binding's energy e(z), the pools take scale [e / (c_u dt^2),
/// de/dz / dt, d2e/dz2 c_u].
template <class B>
struct KelvinVoigt {
  static constexpr int D = B::kDofs;
  ModelView m;
  EvalView ev;
  const Real* scale;  // per stencil (n)
  Real c_u, dt;       // du/dq of the integrator [1/s], the step [s]
  Real* E;            // this family's energies (n)
  Real* g;            // ... gradients (n x D)
  Real* H;            // ... Hessians (n x D x D); null: no Jacobian wanted
  SLENDER_HD void operator()(long k) const {
    const Real s = scale[k];
    if (s == 0) return;
    LocalEval<D> r;
    B::eval(m, ev, 0, k, H ? kGradHess : kGrad, r);
    E[k] += s / (c_u * dt * dt) * r.E;
    const Real sg = s / dt;
    for (int i = 0; i < D; ++i)
      g[k * D + i] += sg * r.g[i];
    if (H) {
      const Real sh = s * c_u;
      for (int i = 0; i < D * D; ++i)
        H[k * D * D + i] += sh * r.H.a[i];
    }
  }
};

}  // namespace slender
