#pragma once

// One step's stencil evaluation over environment-major pools: the engine (engine/engine.h) runs
// it with one environment for a Simulator and with B for the vectorized batch. It holds:
// - the edges' frames moved to a configuration (time-parallel transport, reference twists);
// - the stencil families' local energies, gradients and Hessians into the pools;
// - each environment's Young's modulus scale and each part's modulus scale on the elastic
//   families (stencils/part_scale.h);
// - Rayleigh stiffness damping (stencils/rayleigh.h): the elastic Hessians kept at a step's
//   start, beta K u at each iterate;
// - Kelvin-Voigt damping (stencils/kelvin_voigt.h, engine/batch_kelvin_voigt.h): the strains
//   kept at a step's anchor, the potential at each iterate.
// Every loop runs one (environment, item) pair per index through the executor X; with one
// environment and no mask it is X's plain loop over the items (their grains and their bits),
// with a mask the masked loop of several environments. Each environment gets the same
// arithmetic either way: the functors only pick its slices of the arrays.

#include <algorithm>
#include <vector>

#include "slender/core/integrator.h"
#include "slender/core/parallel_for.h"
#include "slender/engine/assemble.h"
#include "slender/engine/batch_kelvin_voigt.h"
#include "slender/engine/env_loops.h"
#include "slender/model.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/families.h"
#include "slender/stencils/kelvin_voigt.h"
#include "slender/stencils/part_scale.h"
#include "slender/stencils/rayleigh.h"

namespace slender {

/// Every environment's local pools (environment-major, one environment's after another) and
/// the families' offsets in one environment's pools (an assembly plan's)
struct EnvPools {
  Real* e;
  Real* g;
  Real* h;
  unsigned* flags;
  long e_stride, g_stride, h_stride;  // one environment's pools: energy, gradient, Hessian
  const long* e_off;
  const long* g_off;
  const long* h_off;
  /// family f's slices (n stencils per environment); without `hess` no Hessians (a pool that is
  /// null has null slices: the matrix-free path's products have no energies, its evaluations no
  /// Hessians)
  template <int D>
  LocalBuffers<D> family(Family f, long n, bool hess = true) const {
    return LocalBuffers<D>{e ? e + e_off[f] : nullptr,
                           g ? g + g_off[f] : nullptr,
                           hess && h ? h + h_off[f] : nullptr,
                           flags ? flags + e_off[f] : nullptr,
                           n,
                           e_stride,
                           g_stride,
                           h_stride};
  }
};

/// The edges' frames of a step: every environment's at its start (the state's directors and
/// reference twists) and where the frames moved to the step's current configuration go
struct StepFrames {
  Real* d1;
  Real* t;
  Real* ref;
  Real* d1_cur;
  Real* t_cur;
  Real* ref_cur;
};

namespace env_major {

/// pool[e][off + j] *= scale[e], j < len: a Young's modulus scale on the elastic families'
/// local results (they are linear in E)
struct ScaleRange {
  Real* pool;
  long pool_size, off, len;
  const Real* scale;  // (nenv)
  SLENDER_HD void at(long e, long j) const { pool[e * pool_size + off + j] *= scale[e]; }
  SLENDER_HD void operator()(long i) const { at(i / len, i % len); }
};

/// dst[e][j] = src[e * stride + off + j]: one range of every environment's pool, packed
struct PackRange {
  Real* dst;
  const Real* src;
  long stride, off, len;
  SLENDER_HD void at(long e, long j) const { dst[e * len + j] = src[e * stride + off + j]; }
  SLENDER_HD void operator()(long t) const { at(t / len, t % len); }
};

/// Rayleigh stiffness damping of one elastic family (stencils/rayleigh.h) on every
/// environment: one (environment, stencil) pair per index, each environment's StiffnessDamping
/// on its own slices of the state, the kept start Hessians and the pools
template <class Bd>
struct EnvStiffnessDamping {
  ModelView m;
  const Real* beta;  // per node (shared)
  const Real* y;     // (nenv x ndof)
  const Real* q_hat;
  const Real* u_hat;
  Real c_u;
  const Real* K;  // (nenv x k_size): each environment's elastic Hessians at its step's start
  long k_size, k_off;
  LocalBuffers<Bd::kDofs> pools;  // the family's slices of the pools (H null: no Jacobian)
  long ndof;
  SLENDER_HD void operator()(long t) const {
    const long env = t / pools.n, k = t % pools.n;
    StiffnessDamping<Bd>{m,
                         beta,
                         y + env * ndof,
                         q_hat + env * ndof,
                         u_hat + env * ndof,
                         c_u,
                         K + env * k_size + k_off,
                         pools.E + env * pools.e_stride,
                         pools.g + env * pools.g_stride,
                         pools.H ? pools.H + env * pools.h_stride : nullptr}(k);
  }
};

/// each part's Young's modulus scale of one elastic family on every environment (ScaleByPart,
/// stencils/part_scale.h): one (environment, stencil) pair per index, each environment's own
/// part scales
template <class Bd>
struct EnvScaleByPart {
  ModelView m;
  const int* node_part;
  const Real* part_scale;  // (nenv x npart)
  int npart;
  LocalBuffers<Bd::kDofs> pools;  // the family's slices of the pools (H null: none)
  SLENDER_HD void operator()(long t) const {
    const long env = t / pools.n, k = t % pools.n;
    ScaleByPart<Bd>{m,
                    node_part,
                    part_scale + env * npart,
                    pools.E ? pools.E + env * pools.e_stride : nullptr,
                    pools.g + env * pools.g_stride,
                    pools.H ? pools.H + env * pools.h_stride : nullptr}(k);
  }
};

/// environment 0's items of F by at(0, k): F without the division of its flat index
template <class F>
struct FirstEnv {
  F f;
  SLENDER_HD void operator()(long k) const { f.at(0, k); }
};

}  // namespace env_major

/// The shared evaluation over an executor X (engine/executor.h) for nenv environments of one
/// model. The caller owns the state, the pools and the views; this holds the scales and the
/// damping terms' own arrays.
template <class X>
class StepEval {
  using MembraneBinding = ShellMembraneBinding<kFamMembrane>;

 public:
  template <class T>
  using Buffer = typename X::template Buffer<T>;
  template <class T>
  using Const = typename X::template ConstArray<T>;

  StepEval(const Model& m, int nenv) : m_(&m), nenv_(nenv) {
    const size_t B = size_t(nenv);
    const AssemblyPlan& p = m.plan;  // (the elastic families keep their place in every plan)
    set_youngs_scales(std::vector<Real>(B, 1));
    if (m.npart > 0) {
      node_part_.upload(m.node_part);
      part_scale_.resize(B * size_t(m.npart));
    }
    if (m.stiffness_damping) {  // each node's beta; the elastic Hessians kept at a step's start
      beta_.upload(m.node_stiffness_damping);
      k_size_ = p.h_off[kFamElasticEnd] - p.h_off[kFamElasticBegin];
      k_start_.resize(B * size_t(k_size_));
    }
    if (m.kelvin_voigt) {  // each node's retardation time; every environment's anchors
      kv_tau_.upload(m.node_kelvin_voigt);
      const std::vector<Real> zero(size_t(m.nedge), 0);
      X::upload(kv_anchor_.zero, zero.data(), zero.size());
      kv_size_ = p.e_off[kFamElasticEnd] - p.e_off[kFamElasticBegin];
      kv_scale_.resize(B * size_t(kv_size_));
      kv_qa_.resize(B * size_t(m.ndof));
      kv_z_.resize(B * size_t(m.ndof));
      kv_d1_.resize(B * 3 * size_t(m.nedge));
      kv_t_.resize(B * 3 * size_t(m.nedge));
      kv_ref_.resize(B * size_t(m.nbend));
      kv_anchor_.resize(m, B, m.tables[kFamMembrane].rows * long(MembraneBinding::kReals));
    }
  }

  /// the environments the following loops run on: their flags in X's memory (nenv), or null
  /// for every environment
  void set_active(const unsigned char* active) { act_ = active; }

  /// each environment's Young's modulus scale (nenv, on the host)
  void set_youngs_scales(const std::vector<Real>& s) {
    X::upload(yscale_, s.data(), s.size());
    youngs_scaled_ =
        std::any_of(s.begin(), s.end(), [](Real v) { return v != 1; });  // (x 1 is exact)
  }
  /// each environment's part scales (nenv x npart, on the host) from the next evaluation on
  void set_part_scales(const Real* s) {
    X::upload(part_scale_, s, size_t(nenv_) * size_t(m_->npart));
    parts_scaled_ = true;
  }
  /// the parts' moduli unscaled again
  void clear_part_scales() { parts_scaled_ = false; }
  /// each environment's Young's modulus scale in X's memory, or null where every one is 1
  const Real* youngs_scales() const { return youngs_scaled_ ? yscale_.data() : nullptr; }
  /// each node's part, and every environment's part scales or null where they do not apply
  const int* node_parts() const { return node_part_.data(); }
  const Real* part_scales() const { return parts_scaled_ ? part_scale_.data() : nullptr; }

  /// the frames moved from the step's start to q (every environment's) into d1, t, ref
  void frames_at(
      const ModelView& mv, const StepFrames& fr, const Real* q, Real* d1, Real* t, Real* ref) {
    run(mv.nedge, TransportFrames{mv, q, fr.d1, fr.t, d1, t}, kParallelGrainMedium);
    run(mv.nbend, ReferenceTwists{mv, d1, t, fr.ref, ref}, kParallelGrainMedium);
  }
  /// ... into the step's current frames
  void frames_at(const ModelView& mv, const StepFrames& fr, const Real* q) {
    frames_at(mv, fr, q, fr.d1_cur, fr.t_cur, fr.ref_cur);
  }

  /// family Bd's stencils at the view's configuration into the pools (`want`: kGrad, kHess)
  template <class Bd>
  void eval_family(const ModelView& mv,
                   const EnvPools& p,
                   Family f,
                   const EvalView& ev,
                   unsigned want,
                   long grain) {
    const long n = Bd::count(mv);
    if (n == 0) return;
    run(n, EvalStencils<Bd>{mv, ev, n, want, p.family<Bd::kDofs>(f, n)}, grain);
  }

  /// the elastic families' results scaled by each environment's Young's modulus scale, then by
  /// its parts' scales (their Hessians only with kHess in `want`; no energies where p.e is null:
  /// the matrix-free path's Hessian products in p.g)
  void scale_elastic(const ModelView& mv, const EnvPools& p, unsigned want) {
    const Family a = kFamElasticBegin, b = kFamElasticEnd;
    const bool hess = (want & kHess) != 0 && p.h;  // (no Hessian pool: matrix-free)
    if (youngs_scaled_) {  // the elastic families are one range of each pool
      if (p.e) scale_range(p.e, p.e_stride, p.e_off[a], p.e_off[b]);
      scale_range(p.g, p.g_stride, p.g_off[a], p.g_off[b]);
      if (hess) scale_range(p.h, p.h_stride, p.h_off[a], p.h_off[b]);
    }
    if (!parts_scaled_) return;
    for_each_elastic_family([&](auto binding, Family f, long grain) {
      using Bd = decltype(binding);
      const long n = Bd::count(mv);
      if (n == 0) return;
      run(n,
          env_major::EnvScaleByPart<Bd>{mv, node_part_.data(), part_scale_.data(), m_->npart,
                                        p.family<Bd::kDofs>(f, n, hess)},
          grain);
    });
  }

  /// the elastic families at the step's start (the view's configuration, whose frames go to the
  /// step's current ones), scaled, their Hessians kept for the step's Rayleigh stiffness damping
  /// (whole: beta K u reads the held DOFs' columns too, where a motion moves them)
  void keep_start_stiffness(const ModelView& view,
                            const EnvPools& p,
                            const StepFrames& fr,
                            const EvalView& ev) {
    ModelView mv = view;
    mv.two_d = 0;
    frames_at(mv, fr, ev.q);
    for_each_elastic_family([&](auto binding, Family f, long grain) {
      eval_family<decltype(binding)>(mv, p, f, ev, kGradHess, grain);
    });
    scale_elastic(mv, p, kGradHess);
    run(k_size_,
        env_major::PackRange{k_start_.data(), p.h, p.h_stride, p.h_off[kFamElasticBegin], k_size_},
        kParallelGrain);
  }

  /// beta K u of every elastic stencil added to its pools' entries at the view's configuration
  /// y (the view's q_hat, u_hat and c_u; H null in the pools: no Jacobian)
  void add_stiffness_damping(const ModelView& mv, const EnvPools& p, const EvalView& ev) {
    const long begin = p.h_off[kFamElasticBegin];
    for_each_elastic_family([&](auto binding, Family f, long grain) {
      using Bd = decltype(binding);
      const long n = Bd::count(mv);
      if (n == 0) return;
      run(n,
          env_major::EnvStiffnessDamping<Bd>{
              mv, beta_.data(), ev.q, ev.q_hat, ev.u_hat, ev.c_u, k_start_.data(), k_size_,
              p.h_off[f] - begin, p.family<Bd::kDofs>(f, n, p.h != nullptr), long(mv.ndof)},
          grain);
    });
  }

  /// the elastic stencils' strains at the step's anchor q_a = q_hat - u_hat / c_u (the view's)
  /// and their scales, kept for the step's Kelvin-Voigt damping; q_a's frames go to the step's
  /// current ones
  void keep_kv_anchors(const ModelView& mv, const StepFrames& fr, EvalView ev) {
    const Model& m = *m_;
    const Real* tau = kv_tau_.data();
    Real* qa = kv_qa_.data();
    run(m.ndof, KvAnchorPosition{ev.q_hat, ev.u_hat, ev.c_u, qa}, kParallelGrain);
    frames_at(mv, fr, qa);
    ev.q = qa;
    run(m.nedge,
        env_major::EnvKvAnchorStretch{m.nedge, m.ndof, qa, mv.edge_node, mv.edge_l_bar, tau,
                                      kv_anchor_.edge_len.data(), kv_scales(kFamStretch)},
        kParallelGrainMedium);
    run(m.nsedge,
        env_major::EnvKvAnchorStretch{m.nsedge, m.ndof, qa, mv.sedge_node, mv.sedge_l_bar, tau,
                                      kv_anchor_.sedge_len.data(), kv_scales(kFamShellStretch)},
        kParallelGrainMedium);
    run(m.nbend,
        env_major::EnvKvAnchorBendTwist{mv, ev, tau, kv_anchor_.kappa.data(),
                                        kv_anchor_.twist.data(), kv_scales(kFamBendTwist)},
        kParallelGrainHeavy);
    run(m.nhinge,
        env_major::EnvKvAnchorHinge{mv, qa, tau, kv_anchor_.phi.data(), kv_scales(kFamHinge)},
        kParallelGrainMedium);
    run(m.nmid,
        env_major::EnvKvAnchorMidEdge{mv, ev, tau, kv_anchor_.lambda.data(),
                                      kv_scales(kFamMidEdge)},
        kParallelGrainHeavy);
    const long nmem = MembraneBinding::count(mv);
    run(nmem,
        env_major::EnvKvAnchorMembrane<MembraneBinding>{
            mv, nmem, qa, tau, kv_anchor_.membrane.data(), kv_scales(kFamMembrane)},
        kParallelGrainMedium);
    if (kv_factor_ != 1)
      run(long(kv_scale_.size()), KvScaleBy{kv_scale_.data(), kv_factor_}, kParallelGrain);
  }
  /// every retardation time's factor from the next step on (1: the model's; the adjoint's
  /// parameter, engine/adjoint.h)
  void set_kv_factor(Real f) { kv_factor_ = f; }

  /// the Kelvin-Voigt potential of every elastic stencil added to its pools' entries at the
  /// view's configuration y (its frames: the step's current ones), for a step of size dt
  void add_kelvin_voigt(
      const ModelView& mv, const EnvPools& p, const StepFrames& fr, EvalView ev, Real dt) {
    ev = kv_end_view(mv, fr, ev, dt);
    const KvAnchors a = kv_anchor_.view();
    for_each_elastic_family([&](auto binding, Family f, long grain) {
      using Bd = decltype(binding);
      const long n = Bd::count(mv);
      if (n == 0) return;
      run(n,
          env_major::EnvKelvinVoigt<Bd>{mv, ev, a, kv_scales(f), ev.c_u, dt,
                                        p.family<Bd::kDofs>(f, n, p.h != nullptr)},
          grain);
    });
  }

  /// the per-DOF terms (inertia, gravity, buoyancy, viscous drag, mass damping, loads) of every
  /// DOF at the view's configuration (engine/assemble.h)
  void dof_terms(const DofTerms& t) { run(m_->ndof, t, kParallelGrain); }

  /// the residual of every free row: its per-DOF term and its stencils' gradient entries
  void residual(long nfree, const AssembleResidual& r) { run(nfree, r, kParallelGrain); }

  /// the end of a converged step: the state (q, u, a) from the step's solution (fin), the frames
  /// at the new configuration as the next step's start and, with `midedge`, the mid-edge frame
  /// vectors there (into tau0)
  void end_step(const ModelView& mv,
                const FinalizeStep& fin,
                const StepFrames& fr,
                Real* tau0,
                bool midedge) {
    run(mv.ndof, fin, kParallelGrain);
    frames_at(mv, fr, fin.q);
    copy(fr.d1, fr.d1_cur, 3L * mv.nedge);
    copy(fr.t, fr.t_cur, 3L * mv.nedge);
    copy(fr.ref, fr.ref_cur, mv.nbend);
    if (midedge) run(mv.nsedge, MidEdgeFrames{mv, fin.q, tau0}, kParallelGrainMedium);
  }

  /// dst = src, per_env values of every environment (of the active ones, with a mask)
  void copy(Real* dst, const Real* src, long per_env) {
    if (per_env <= 0) return;
    if (!act_) return X::copy(dst, src, size_t(nenv_) * size_t(per_env));
    run(per_env, env_major::Copy{dst, src}, kParallelGrain);
  }

  /// f over per_env items of every environment (of the active ones, with a mask): without a
  /// mask X's loop over all (nenv x per_env, one environment: by at(0, k) where f has it), with
  /// one the batch's masked loop (env_major::each_masked, one environment per index on the host)
  template <class F>
  void run(long per_env, const F& f, long grain) const {
    if (per_env <= 0) return;
    if (act_)
      return env_major::each_masked<X>(nenv_ * per_env, env_major::Masked<F>{f, act_, per_env},
                                       grain);
    if constexpr (env_major::HasAt<F>::value) {
      if (nenv_ == 1) return X::for_each(per_env, env_major::FirstEnv<F>{f}, grain);
    }
    X::for_each(nenv_ * per_env, f, grain);
  }

  /// the view at which the Kelvin-Voigt terms of the iterate ev.q evaluate: the configuration
  /// z = q_a + w (y - q_a), w = c_u dt, with its frames moved from the step's start (into this
  /// object's buffers; implicit Euler: z = y, whose frames are at hand), and no energy-momentum
  /// secant (the damping's stencils at z are pointwise)
  EvalView kv_end_view(const ModelView& mv, const StepFrames& fr, EvalView ev, Real dt) {
    ev.stretch_secant = 0;
    const Real w = ev.c_u * dt;
    if (w == 1) return ev;
    Real* z = kv_z_.data();
    run(m_->ndof, KvEndPosition{kv_qa_.data(), ev.q, w, z}, kParallelGrain);
    frames_at(mv, fr, z, kv_d1_.data(), kv_t_.data(), kv_ref_.data());
    ev.q = z;
    ev.edge_d1 = kv_d1_.data();
    ev.bend_ref_twist = kv_ref_.data();
    return ev;
  }

  /// the Kelvin-Voigt anchors of the step (keep_kv_anchors), their position q_a and family f's
  /// scales, all of environment 0 (the adjoint's linearization, engine/adjoint.h)
  KvAnchors kv_anchors() { return kv_anchor_.view(); }
  const Real* kv_anchor_position() { return kv_qa_.data(); }
  /// environment 0's elastic Hessians at the step's start (keep_start_stiffness, scaled), family
  /// f's first, and each node's Rayleigh beta (the adjoint's linearization, engine/adjoint.h)
  const Real* start_stiffness(Family f) {
    return k_start_.data() + (m_->plan.h_off[f] - m_->plan.h_off[kFamElasticBegin]);
  }
  const Real* stiffness_beta() { return beta_.data(); }
  const Real* kv_scale_of(Family f) { return kv_scales(f).at(0); }

 private:
  void scale_range(Real* pool, long pool_size, long begin, long end) {
    if (end > begin)
      run(end - begin, env_major::ScaleRange{pool, pool_size, begin, end - begin, yscale_.data()},
          kParallelGrain);
  }
  // where every environment's Kelvin-Voigt scales of family f live
  env_major::KvScales kv_scales(Family f) {
    return env_major::KvScales{kv_scale_.data(), kv_size_,
                               m_->plan.e_off[f] - m_->plan.e_off[kFamElasticBegin]};
  }

  const Model* m_;
  long nenv_;
  const unsigned char* act_ = nullptr;
  // each environment's Young's modulus scale; whether one is not 1
  Buffer<Real> yscale_;
  bool youngs_scaled_ = false;
  // each node's part and every environment's part scales (nenv x npart); whether they apply
  Const<int> node_part_;
  Buffer<Real> part_scale_;
  bool parts_scaled_ = false;
  // Rayleigh stiffness damping: each node's beta, every environment's elastic Hessians at its
  // step's start (k_size_ each)
  Const<Real> beta_;
  Buffer<Real> k_start_;
  long k_size_ = 0;
  // Kelvin-Voigt damping: each node's retardation time, every environment's anchor
  // configuration, its end configuration z and z's frames, the elastic stencils' strains at
  // the anchor and their scales (kv_size_ each: the pools' elastic range)
  Const<Real> kv_tau_;
  Buffer<Real> kv_qa_, kv_z_, kv_d1_, kv_t_, kv_ref_, kv_scale_;
  KvAnchorStore<Buffer<Real>> kv_anchor_;
  long kv_size_ = 0;
  Real kv_factor_ = 1;
};

}  // namespace slender
