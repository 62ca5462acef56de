#pragma once

// The engine's queries of the state (engine/engine.h): the stencils evaluated once at each
// environment's configuration with its own frames, scaled as a step scales them (Young's
// modulus, the parts' moduli in time), and what a front end reads of them, each a reduction on
// the executor: the energies by kind, the support reactions, the shells' bending energy density
// and Newmark's consistent initial acceleration. The Simulator hands the inputs of its state's
// time (StepInputs: the natural shape, part scales, signals, loads); the host receives only the
// results. Included by engine.h after the class; not a header of its own.

#include <algorithm>
#include <cstdint>

#include "slender/engine/engine.h"
#include "slender/stencils/part_scale.h"

namespace slender {

namespace env_major {

/// Each bend-twist stencil's energy split into its twist part and the rest (bending), both
/// scaled as the pools are (the environment's Young's modulus scale, the stencil's part's
/// scale): out[2 (e n + k)] the twist, out[2 (e n + k) + 1] the bending.
struct BendTwistSplit {
  ModelView m;
  EvalView s;
  long n;                  // nbend
  const Real* yscale;      // (nenv) or null: 1
  const int* node_part;    // (nnode)
  const Real* part_scale;  // (nenv x npart) or null: none
  int npart;
  Real* out;
  SLENDER_HD void operator()(long i) const {
    const int env = int(i / n);
    const long k = i % n;
    LocalEval<11> r;
    RodBendTwist::Strains st;
    RodBendTwistBinding::eval(m, s, env, k, kEnergy, r, &st);
    const Real dt = st.tau - s.bend_tau_bar[long(env) * n + k];
    const Real twist = Real(0.5) * m.bend_GJ[k] / m.bend_dl[k] * dt * dt;
    Real scale = yscale ? yscale[env] : Real(1);
    if (part_scale) {
      int idx[RodBendTwistBinding::kDofs];
      scale *= part_scale[long(env) * npart +
                          node_part[stencil_part_node<RodBendTwistBinding>(m, k, idx)]];
    }
    out[2 * i] = scale * twist;
    out[2 * i + 1] = scale * (r.E - twist);
  }
};

/// Where each entry of an environment's energy pool goes (Energies by EnergyKind): the
/// families' ranges, in pool order
struct EnergyLayout {
  int nfam = 0;
  long begin[kNumFamilies + 1] = {};
  long end[kNumFamilies + 1] = {};
  int kind[kNumFamilies + 1] = {};  // EnergyKind, or -1: the caller's energies (Energies::user)
  long bt_begin = 0, bt_n = 0;      // the bend-twist family's range (its split in `bt`)
  SLENDER_HD int kind_of(long i) const {
    for (int f = 0; f < nfam; ++f)
      if (i >= begin[f] && i < end[f]) return kind[f];
    return int(EnergyKind::kNone);
  }
};

/// per environment over its energy pool: s0 stretch, s1 bend, s2 twist (first pass) or s0 load,
/// s1 the caller's energies (second pass), each in pool order
struct EnergySums {
  EnergyLayout l;
  long pool;
  const Real* e;   // (nenv x pool)
  const Real* bt;  // BendTwistSplit's (nenv x bt_n x 2)
  bool second;
  SLENDER_HD Red4 operator()(long env, long i) const {
    Red4 r{0, 0, 0, 0};
    if (!second && i >= l.bt_begin && i < l.bt_begin + l.bt_n) {
      const long k = env * l.bt_n + (i - l.bt_begin);
      r.s2 = bt[2 * k];
      r.s1 = bt[2 * k + 1];
      return r;
    }
    const int kind = l.kind_of(i);
    const Real v = e[env * pool + i];
    if (!second) {
      if (kind == int(EnergyKind::kStretch)) r.s0 = v;
      if (kind == int(EnergyKind::kBend)) r.s1 = v;
    } else {
      if (kind == int(EnergyKind::kLoad)) r.s0 = v;
      if (kind == -1) r.s1 = v;
    }
    return r;
  }
};

/// per environment over its DOFs: s0 the kinetic energy 1/2 m u^2 (m the environment's
/// inertial mass), s1 the potential of gravity -(density m) g . x
struct KineticGravity {
  int ndof, nnode;
  const Real* dof_mass;    // the model's (ndof)
  const Real* added_mass;  // (nnode) or null
  const Real* node_mass;   // (nnode)
  const Real* u;
  const Real* q;
  const Real* params;  // per environment: density scale, gravity (stride 5), or null
  Real g0, g1, g2;     // the model's gravity (without params)
  SLENDER_HD Red4 operator()(long env, long i) const {
    Red4 r{0, 0, 0, 0};
    const Real ui = u[env * ndof + i];
    Real mass = dof_mass[i];
    if (params) {
      const Real ma = added_mass && i < 3 * nnode ? added_mass[i / 3] : Real(0);
      mass = scaled_inertial_mass(params[5 * env], dof_mass[i], ma);
    }
    r.s0 = Real(0.5) * mass * ui * ui;
    if (i < 3 * nnode) {
      const int c = int(i % 3);
      const Real density = params ? params[5 * env] : Real(1);
      const Real g = params ? params[5 * env + 1 + c] : (c == 0 ? g0 : c == 1 ? g1 : g2);
      r.s1 = -(density * node_mass[i / 3] * g * q[env * ndof + i]);
    }
    return r;
  }
};

/// every gradient entry of a family that enters the reactions keyed by its DOF (the others
/// keep the key ndof, which sorts last)
template <class Bd>
struct ReactionKeys {
  ModelView m;
  long g_off;
  std::uint64_t* key;
  SLENDER_HD void operator()(long k) const {
    int idx[Bd::kDofs];
    Bd::dofs(m, k, idx);
    for (int a = 0; a < Bd::kDofs; ++a)
      if (idx[a] >= 0) key[g_off + k * Bd::kDofs + a] = std::uint64_t(idx[a]);
  }
};

/// key[i] = v, src[i] = i
struct KeyFill {
  std::uint64_t* key;
  int* src;
  std::uint64_t v;
  SLENDER_HD void operator()(long i) const {
    key[i] = v;
    src[i] = int(i);
  }
};

/// The support reactions of every environment's held DOFs: the sum of the gradient entries
/// keyed by the DOF (in pool order), less gravity and buoyancy, less the loads; 0 at free DOFs.
struct ReactionGather {
  int ndof, nnode;
  long ng;                   // entries sorted
  const std::uint64_t* key;  // sorted ascending
  const int* src;            // each entry's place in the gradient pool
  const Real* g;             // (nenv x g_stride)
  long g_stride;
  const Real* node_mass;
  const Real* node_volume;
  Real buoyancy, g0, g1, g2;
  const Real* load;            // (ndof: the loads at the state's time) or null
  const unsigned char* fixed;  // (nenv x ndof when fixed_stride, else ndof)
  long fixed_stride;
  Real* out;  // (nenv x ndof)
  SLENDER_HD static long first_at_least(const std::uint64_t* k, long n, std::uint64_t v) {
    long lo = 0, hi = n;
    while (lo < hi) {
      const long mid = lo + (hi - lo) / 2;
      if (k[mid] < v)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
  SLENDER_HD void operator()(long i) const {
    const long env = i / ndof;
    const int d = int(i % ndof);
    if (!fixed[env * fixed_stride + d]) {
      out[i] = 0;
      return;
    }
    const long lo = first_at_least(key, ng, std::uint64_t(d));
    const long hi = first_at_least(key, ng, std::uint64_t(d) + 1);
    Real r = 0;
    for (long j = lo; j < hi; ++j)
      r += g[env * g_stride + src[j]];
    if (d < 3 * nnode) {
      const int n = d / 3, c = d % 3;
      const Real grav = c == 0 ? g0 : c == 1 ? g1 : g2;
      r -= (node_mass[n] - buoyancy * node_volume[n]) * grav;
    }
    if (load) r -= load[d];
    out[i] = r;
  }
};

/// each triangle's shell bending energy per rest area: half of each adjacent hinge's energy
/// (in hinge order) and its mid-edge stencil's, over the rest area
struct ShellDensity {
  int ntri;
  const int* src;  // (ntri x 4): up to three hinges ascending, then the mid-edge stencil; -1 none
  const Real* e;   // (nenv x pool)
  long pool, hinge_off, mid_off;
  const Real* area;
  Real* out;  // (nenv x ntri)
  SLENDER_HD void operator()(long i) const {
    const long env = i / ntri;
    const int t = int(i % ntri);
    const int* s = src + 4 * t;
    Real acc = 0;
    for (int a = 0; a < 3; ++a)
      if (s[a] >= 0) acc += Real(0.5) * e[env * pool + hinge_off + s[a]];
    if (s[3] >= 0) acc += e[env * pool + mid_off + s[3]];
    out[i] = acc / area[t];
  }
};

/// Newmark's consistent initial acceleration on the free rows: a = -f / m with the model's
/// masses (0 where m = 0)
struct StartAcceleration {
  int nfree, ndof;
  const int* free_dof;
  const Real* f;         // (nenv x nfree)
  const Real* dof_mass;  // (ndof)
  Real* a;               // (nenv x ndof)
  SLENDER_HD void operator()(long i) const {
    const long env = i / nfree;
    const int d = free_dof[i % nfree];
    const Real m = dof_mass[d];
    a[env * ndof + d] = m > 0 ? -f[i] / m : Real(0);
  }
};

}  // namespace env_major

template <class X>
void Engine<X>::eval_at_state(const StepInputs& in, unsigned want, bool newmark) {
  take_inputs(in);
  eval_state(want, newmark, in.dt);
}

template <class X>
void Engine<X>::eval_state(unsigned want, bool newmark, Real dt) {
  active_h_.assign(size_t(nenv_), 1);
  push_active();
  const Model& m = *model_;
  // no velocity terms (a query), or those of the state (Newmark's start: q_hat = q, u_hat = u,
  // c_u = 0)
  if (newmark) {
    X::copy(q_hat_.data(), q_.data(), size_t(nenv_) * m.ndof);
    X::copy(u_hat_.data(), u_.data(), size_t(nenv_) * m.ndof);
  } else {
    se_.copy(q_hat_.data(), zero_dofs(), m.ndof);
    se_.copy(u_hat_.data(), zero_dofs(), m.ndof);
  }
  EvalView ev = eval_view(q_.data(), d1_.data(), ref_.data());
  ev.q_hat = q_hat_.data();
  ev.u_hat = u_hat_.data();
  ev.c_u = 0;
  if (newmark && contact_on_ && contact_step_coeffs(spec_, dt).a > 0) {
    // the contact forces left out (Newmark's start: its stored acceleration keeps the
    // energy-consistent contact's impulses out, core/integrator.h)
    ev.q_start = q_.data();
    ev.contact_a = 2;
    ev.contact_w = 0;
    ev.contact_hm = 1;
  }
  eval_families(ev, want);
  query_view_ = ev;
}

template <class X>
std::vector<Energies> Engine<X>::energies(const StepInputs& in) {
  take_inputs(in);
  return energies_of_state();
}

template <class X>
std::vector<Energies> Engine<X>::energies() {
  inputs_at_state();
  return energies_of_state();
}

template <class X>
std::vector<Energies> Engine<X>::energies_of_state() {
  const Model& m = *model_;
  const int B = nenv_;
  eval_state(kEnergy, false, spec_.dt);
  env_major::EnergyLayout l;
  for_each_family([&](auto binding, Family f, long) {
    using Bd = decltype(binding);
    constexpr EnergyKind kind = Bd::kTraits.energy;
    if constexpr (kind == EnergyKind::kBendTwist) {
      l.bt_begin = pd_.e_off[f];
      l.bt_n = Bd::count(mv_);
    } else if constexpr (kind != EnergyKind::kNone) {
      l.begin[l.nfam] = pd_.e_off[f];
      l.end[l.nfam] = pd_.e_off[f] + Bd::count(mv_);
      l.kind[l.nfam++] = int(kind);
    }
  });
  const AssemblyPlan& p = *plan_;
  if (!m.user_energies.empty()) {  // their stencils: one range after the families'
    l.begin[l.nfam] = p.user_e_off.front();
    l.end[l.nfam] = p.user_e_off.front();
    for (size_t i = 0; i < m.user_energies.size(); ++i)
      l.end[l.nfam] = std::max(l.end[l.nfam], p.user_e_off[i] + m.user_energies[i]->count(mv_));
    l.kind[l.nfam++] = -1;
  }
  if (l.bt_n > 0) {
    bt_split_.resize(size_t(B) * 2 * size_t(l.bt_n));
    each(long(B) * l.bt_n,
         env_major::BendTwistSplit{mv_, query_view_, l.bt_n, se_.youngs_scales(), se_.node_parts(),
                                   se_.part_scales(), m.npart, bt_split_.data()});
  }
  std::vector<Red4> a(static_cast<size_t>(B)), b(a), c(a);
  const long pool = pd_.energy_pool;
  if (pool > 0) {
    X::env_reduce(B, pool, env_major::EnergySums{l, pool, e_pool_.data(), bt_split_.data(), false},
                  a.data(), red_scratch_);
    X::env_reduce(B, pool, env_major::EnergySums{l, pool, e_pool_.data(), bt_split_.data(), true},
                  b.data(), red_scratch_);
  }
  const Vec3 g = m.gravity;
  X::env_reduce(B, m.ndof,
                env_major::KineticGravity{m.ndof, m.nnode, dof_mass_.data(),
                                          m.has_added_mass() ? node_added_mass_.data() : nullptr,
                                          mv_.node_mass, u_.data(), q_.data(),
                                          scaled_ ? params_.data() : nullptr, g[0], g[1], g[2]},
                c.data(), red_scratch_);
  std::vector<Energies> out(static_cast<size_t>(B));
  for (int e = 0; e < B; ++e) {
    Energies& en = out[size_t(e)];
    if (pool > 0) {
      en.stretch = a[e].s0;
      en.bend = a[e].s1;
      en.twist = a[e].s2;
      en.load = b[e].s0;
      en.user = b[e].s1;
    }
    en.kinetic = c[e].s0;
    en.gravity = c[e].s1;
  }
  return out;
}

template <class X>
void Engine<X>::reactions(const StepInputs& in, Real* out) {
  const Model& m = *model_;
  const int B = nenv_;
  eval_at_state(in, kGrad, false);
  // every gradient entry of the families in the reactions keyed by its DOF, sorted (stable:
  // each DOF's entries in pool order)
  const long ng = pd_.grad_pool;
  reac_key_.resize(size_t(ng));
  reac_src_.resize(size_t(ng));
  if (ng > 0) {
    X::for_each(ng, env_major::KeyFill{reac_key_.data(), reac_src_.data(), std::uint64_t(m.ndof)},
                kParallelGrain);
    for_each_family([&](auto binding, Family f, long grain) {
      using Bd = decltype(binding);
      if (!family_in_reactions(f)) return;
      const long n = Bd::count(mv_);
      if (n > 0)
        X::for_each(n, env_major::ReactionKeys<Bd>{mv_, pd_.g_off[f], reac_key_.data()}, grain);
    });
    // the energies from the caller's code are internal forces too (their DOFs from the host's
    // view of the model: their stencils run there)
    const AssemblyPlan& p = *plan_;
    const ModelView hv = X::kHostMemory ? mv_ : host_view(m);
    for (size_t i = 0; i < m.user_energies.size(); ++i) {
      const UserEnergy& u = *m.user_energies[i];
      const int d = u.dofs_per_stencil();
      const long n = u.count(hv);
      std::vector<std::uint64_t> k(size_t(n) * d, std::uint64_t(m.ndof));
      std::vector<int> idx(static_cast<size_t>(d));
      for (long s = 0; s < n; ++s) {
        u.dofs(hv, s, idx.data());
        for (int a = 0; a < d; ++a)
          if (idx[size_t(a)] >= 0) k[size_t(s * d + a)] = std::uint64_t(idx[size_t(a)]);
      }
      X::upload_at(reac_key_, size_t(p.user_g_off[i]), k.data(), k.size());
    }
    xq_.sort_pairs(reac_key_.data(), reac_src_.data(), ng);
  }
  reac_.resize(size_t(B) * m.ndof);
  const Vec3 g = m.gravity;
  each(long(B) * m.ndof,
       env_major::ReactionGather{m.ndof, m.nnode, ng, reac_key_.data(), reac_src_.data(),
                                 g_pool_.data(), pd_.grad_pool, mv_.node_mass, node_volume_.data(),
                                 m.buoyancy_density, g[0], g[1], g[2],
                                 in.loads_changed ? f_time_.data() : nullptr, fixed_ptr(),
                                 fixed_per_env_ ? long(m.ndof) : 0, reac_.data()});
  X::download_at(reac_, 0, out, size_t(B) * m.ndof);
  if constexpr (X::kHostMemory) {
    // the caller's force at the state (host executors, one environment)
    if (force_) {
      force_.call(c_.t_eval, m.ndof, q_.data(), u_.data(), nullptr, nullptr, 0, false);
      const unsigned char* fx = fixed_ptr();
      for (int i = 0; i < m.ndof; ++i)
        if (fx[i]) out[i] -= force_.force[i];
    }
  }
}

template <class X>
void Engine<X>::shell_bending_energy_density(const StepInputs& in, Real* out) {
  const Model& m = *model_;
  const int B = nenv_;
  if (m.ntri == 0) return;
  eval_at_state(in, kEnergy, false);
  if (shell_src_.size() == 0) {  // each triangle's hinges (ascending) and mid-edge stencil
    std::vector<int> s(4 * size_t(m.ntri), -1);
    std::vector<int> nh(size_t(m.ntri), 0);
    for (int k = 0; k < m.nhinge; ++k)
      for (int a = 0; a < 2; ++a) {
        const int t = m.sedge_tri[2 * m.hinge_sedge[k] + a];
        if (t >= 0) s[4 * size_t(t) + size_t(nh[size_t(t)]++)] = k;
      }
    for (int k = 0; k < m.nmid; ++k)
      s[4 * size_t(m.mid_tri[k]) + 3] = k;
    shell_src_.upload(s);
  }
  shell_density_.resize(size_t(B) * m.ntri);
  each(long(B) * m.ntri,
       env_major::ShellDensity{m.ntri, shell_src_.data(), e_pool_.data(), pd_.energy_pool,
                               pd_.e_off[kFamHinge], pd_.e_off[kFamMidEdge], mv_.tri_area_bar,
                               shell_density_.data()});
  X::download_at(shell_density_, 0, out, size_t(B) * m.ntri);
}

template <class X>
void Engine<X>::newmark_start(const StepInputs& in) {
  const Model& m = *model_;
  const int B = nenv_;
  eval_at_state(in, kGrad, true);
  // the velocity terms (viscosity, damping) at u: q_hat = q, u_hat = u, c_u = 0; the loads
  // and gravity whole (no load factor)
  se_.dof_terms(dof_terms_at(q_.data(), 0, 0, 1));
  residual_rows();
  if (pd_.nfree > 0)
    each(long(B) * pd_.nfree, env_major::StartAcceleration{pd_.nfree, m.ndof, free_dof_.data(),
                                                           f_.data(), dof_mass_.data(), a_.data()});
}

}  // namespace slender
