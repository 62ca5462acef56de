#pragma once

// Kelvin-Voigt damping with B environments (engine.h, step_eval.h): the functors of
// stencils/kelvin_voigt.h (anchors at the step's start, the potential at each iterate) run on
// every environment at once. Each functor here only picks one environment's slices of the
// env-major arrays and calls the single-environment functor on them, so that each environment
// gets the per-environment engine's bits. Host and device code: one (environment, stencil) pair
// per index.

#include "slender/stencils/bindings.h"
#include "slender/stencils/kelvin_voigt.h"

namespace slender {
namespace env_major {

/// environment env's slice of an evaluation view over every environment (bindings.h's layout):
/// the same arrays from env's offsets, as one environment
SLENDER_HD inline EvalView env_eval_view(const ModelView& m, EvalView ev, long env) {
  const long nat = env * ev.natural_per_env;
  ev.nenv = 1;
  ev.q += env * m.ndof;
  ev.edge_d1 += env * 3 * m.nedge;
  ev.bend_ref_twist += env * m.nbend;
  ev.bend_kappa_bar += nat * 2 * m.nbend;
  ev.bend_tau_bar += nat * m.nbend;
  ev.hinge_phi_bar += nat * m.nhinge;
  if (ev.mid_kappa_bar) ev.mid_kappa_bar += nat * 3 * m.nmid;
  if (ev.edge_stretch_bar) ev.edge_stretch_bar += nat * m.nedge;
  ev.natural_per_env = 0;
  if (ev.q_hat) ev.q_hat += env * m.ndof;
  if (ev.u_hat) ev.u_hat += env * m.ndof;
  ev.sedge_tau0 += env * 3 * m.nsedge;
  if (ev.signal) ev.signal += env * kMaxSignals;
  return ev;
}

/// environment env's anchors, every environment's being env-major (nenv x each array's length)
SLENDER_HD inline KvAnchors env_kv_anchors(const ModelView& m, KvAnchors a, long env) {
  a.edge_len += env * m.nedge;
  a.sedge_len += env * m.nsedge;
  a.kappa += env * 2 * m.nbend;
  a.twist += env * m.nbend;
  a.phi += env * m.nhinge;
  a.lambda += env * 9 * m.nmid;
  a.membrane += env * a.membrane_len;
  return a;  // (zero: shared)
}

/// Where every environment's Kelvin-Voigt scales live: one environment's elastic stencils
/// (`per_env` of them, the pools' elastic range) after another; `off` is one family's offset in
/// that range.
struct KvScales {
  Real* scale;   // (nenv x per_env)
  long per_env;  // the elastic families' energies per environment
  long off;      // the family's first stencil in that range
  SLENDER_HD Real* at(long env) const { return scale + env * per_env + off; }
};

/// KvAnchorStretch on every environment (rod or shell edges): n edges per environment
struct EnvKvAnchorStretch {
  long n, ndof;
  const Real* q_a;    // (nenv x ndof)
  const int* node;    // (n x 2)
  const Real* l_bar;  // (n)
  const Real* tau;    // (nnode)
  Real* len;          // (nenv x n)
  KvScales scale;
  SLENDER_HD void operator()(long t) const {
    const long env = t / n, k = t % n;
    KvAnchorStretch{q_a + env * ndof, node, l_bar, tau, len + env * n, scale.at(env)}(k);
  }
};

/// KvAnchorBendTwist on every environment (ev: every environment's view at q_a)
struct EnvKvAnchorBendTwist {
  ModelView m;
  EvalView ev;
  const Real* tau;  // (nnode)
  Real* kappa;      // (nenv x nbend x 2)
  Real* twist;      // (nenv x nbend)
  KvScales scale;
  SLENDER_HD void operator()(long t) const {
    const long env = t / m.nbend, k = t % m.nbend;
    KvAnchorBendTwist{m,
                      env_eval_view(m, ev, env),
                      tau,
                      kappa + env * 2 * m.nbend,
                      twist + env * m.nbend,
                      scale.at(env)}(k);
  }
};

/// KvAnchorHinge on every environment
struct EnvKvAnchorHinge {
  ModelView m;
  const Real* q_a;  // (nenv x ndof)
  const Real* tau;  // (nnode)
  Real* phi;        // (nenv x nhinge)
  KvScales scale;
  SLENDER_HD void operator()(long t) const {
    const long env = t / m.nhinge, k = t % m.nhinge;
    KvAnchorHinge{m, q_a + env * m.ndof, tau, phi + env * m.nhinge, scale.at(env)}(k);
  }
};

/// KvAnchorMidEdge on every environment (ev: every environment's view at q_a)
struct EnvKvAnchorMidEdge {
  ModelView m;
  EvalView ev;
  const Real* tau;  // (nnode)
  Real* lambda;     // (nenv x nmid x 9)
  KvScales scale;
  SLENDER_HD void operator()(long t) const {
    const long env = t / m.nmid, k = t % m.nmid;
    KvAnchorMidEdge{m, env_eval_view(m, ev, env), tau, lambda + env * 9 * m.nmid, scale.at(env)}(k);
  }
};

/// KvAnchorMembrane<B> on every environment: n triangles per environment
template <class B>
struct EnvKvAnchorMembrane {
  ModelView m;
  long n;
  const Real* q_a;  // (nenv x ndof)
  const Real* tau;  // (nnode)
  Real* rows;       // (nenv x n x kReals)
  KvScales scale;
  SLENDER_HD void operator()(long t) const {
    const long env = t / n, k = t % n;
    KvAnchorMembrane<B>{m, q_a + env * m.ndof, tau, rows + env * n * B::kReals, scale.at(env)}(k);
  }
};

/// KelvinVoigt<Bd> on every environment: ev views every environment's z (or y) with its frames,
/// a every environment's anchors; each environment's own anchors replace its natural shape
template <class Bd>
struct EnvKelvinVoigt {
  ModelView m;
  EvalView ev;
  KvAnchors a;
  KvScales scale;
  Real c_u, dt;                   // du/dq of the integrator [1/s], the step [s]
  LocalBuffers<Bd::kDofs> pools;  // the family's slices of the pools (family_buffers)
  SLENDER_HD void operator()(long t) const {
    const long env = t / pools.n, k = t % pools.n;
    const KvAnchors ae = env_kv_anchors(m, a, env);
    KelvinVoigt<Bd>{kv_model_view<Bd>(m, ae),
                    kv_eval_view(env_eval_view(m, ev, env), ae),
                    scale.at(env),
                    c_u,
                    dt,
                    pools.E + env * pools.e_stride,
                    pools.g + env * pools.g_stride,
                    pools.H ? pools.H + env * pools.h_stride : nullptr}(k);
  }
};

}  // namespace env_major
}  // namespace slender
