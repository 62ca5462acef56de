#pragma once

// Energies from the caller's own code (issue 16, item 6): a stencil energy written in the
// caller's source file, evaluated by the engine next to its own families, without editing
// Slender. A model takes them with with_energies() (model.h): the assembly plan then holds
// their stencils' couplings and the pools their local results, and every evaluation of the
// Newton step calls each energy's evaluate() after the built-in families. The step's assembly,
// the line search's potential (energies enter it), the Jacobian's pattern and the Simulator's
// queries (energies(), reactions()) then treat them as any other stencil family.
//
// Two adaptors turn a small struct of SLENDER_HD code into an energy:
// - BendTwistStrainEnergy<E>: an energy of every rod bend-twist stencil's strains (kappa1,
//   kappa2, tau), E(p, strains, want, StrainEnergyEval&), chained with the strains' exact
//   derivatives (rod_bend_twist_eval_with); added to the rod's own elastic energy.
// - LocalStencilEnergy<S>: stencils the caller lists, each with S::kDofs global DOFs and its
//   S::Params; S::eval(x, params, want, LocalEval<kDofs>&) as the built-in stencils.
// Both run their stencils in a host loop on the CPU backend; on the CUDA backend, in a kernel
// of the caller's file when that file is compiled by nvcc (otherwise a step on CUDA is refused
// with an error naming the energy).
//
// Scope: the Young's modulus scales of set_params and the parts' moduli in time do not scale
// these energies, and Rayleigh and Kelvin-Voigt damping leave them out; the vectorized batch
// refuses a model that has them (the per-environment batch runs it).

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "slender/core/error.h"
#include "slender/core/parallel_for.h"
#include "slender/stencils/bindings.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace slender {

/// One evaluation of an energy's stencils at the configuration s (one environment).
struct UserEnergyArgs {
  bool on_device;   ///< the pointers are CUDA device memory (the energy runs a kernel)
  ModelView m;      ///< the model's arrays (in the same memory)
  EvalView s;       ///< the configuration: q, the frames at q, the natural shape (nenv = 1)
  unsigned want;    ///< kEnergy, kGrad, kHess bits
  Real* E;          ///< each stencil's energy                                  (n)
  Real* g;          ///< each stencil's gradient, when want & kGrad             (n x D)
  Real* H;          ///< each stencil's Hessian, when want & kHess (else null)  (n x D x D)
  unsigned* flags;  ///< each stencil's EvalFlag bits                           (n)
};

/// The most local DOFs a user energy's stencil may have.
constexpr int kUserEnergyMaxDofs = 32;

/// An energy of n stencils of D local DOFs each (the adaptors below implement it).
class UserEnergy {
 public:
  virtual ~UserEnergy() = default;
  /// a name for messages
  virtual std::string name() const = 0;
  /// D, the local DOFs of each stencil (1 to kUserEnergyMaxDofs)
  virtual int dofs_per_stencil() const = 0;
  /// the number of stencils on the model of host view m
  virtual long count(const ModelView& m) const = 0;
  /// stencil k's D global DOFs (host view)
  virtual void dofs(const ModelView& m, long k, int* out) const = 0;
  /// every stencil's energy and, as `want` asks, gradient and Hessian into a's arrays
  virtual void evaluate(const UserEnergyArgs& a) const = 0;
  /// whether the energy reads the rods' frames (their strains: curvatures in the material
  /// frame, the reference twist), beside the DOFs' values; an energy of the DOFs alone, a rod's
  /// twist angles among them, does not. The adjoint of a rollout (engine/adjoint.h) needs it.
  virtual bool reads_frames() const { return false; }
  /// whether the energy reads the rods' natural strains (the bend-twist adaptor's Params)
  virtual bool reads_natural_strains() const { return false; }
  /// whether it gives natural_strain_grad (the adjoint refuses an energy that reads the natural
  /// strains and does not)
  virtual bool gives_natural_strain_grad() const { return false; }
  /// For an energy that reads them: the derivative of stencil k's gradient (D values, the
  /// stencil's local DOFs) by the natural strain c (0: kappa1, 1: kappa2, 2: tau) at the
  /// configuration s into g, and true; false where the energy cannot give it.
  virtual bool natural_strain_grad(
      const ModelView& m, const EvalView& s, long k, int c, Real* g) const {
    (void)m, (void)s, (void)k, (void)c, (void)g;
    return false;
  }
  /// For an energy that reads the frames: stencil k's part of the Jacobian that its Hessian
  /// leaves out because a step carries the frames from its start (as
  /// RodBendTwistBinding::transport_asym), D x D row-major into A, at the configuration s (host
  /// view, one environment); none (zeros) for an energy of the DOFs' values.
  virtual void frames_transport_term(const ModelView& m, const EvalView& s, long k, Real* A) const {
    (void)m, (void)s, (void)k;
    const int D = dofs_per_stencil();
    for (int i = 0; i < D * D; ++i)
      A[i] = 0;
  }
};

namespace detail {

#if defined(__CUDACC__)
template <class F>
__global__ void user_energy_kernel(F f, long n) {
  const long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) f(i);
}
#endif

/// f(k) for every stencil k: a host loop, or a kernel of this file where nvcc compiles it
template <class F>
void run_user_stencils(bool on_device, long n, const F& f, const std::string& name) {
  if (n == 0) return;
  if (!on_device) {
    parallel_for_host(n, f, kParallelGrainHeavy);
    return;
  }
#if defined(__CUDACC__)
  const int block = 128;
  user_energy_kernel<F><<<unsigned((n + block - 1) / block), block>>>(f, n);
  const cudaError_t err = cudaGetLastError();
  SLENDER_CHECK(err == cudaSuccess, "energy '", name, "': its kernel failed to launch (",
                cudaGetErrorString(err), ")");
#else
  SLENDER_CHECK(false, "energy '", name,
                "' runs on a CUDA device only when the source file that creates it is compiled "
                "by nvcc; this one was compiled for the host (use the CPU backend, or build the "
                "file with nvcc)");
#endif
}

/// stores one stencil's local results at k
template <int D>
SLENDER_HD inline void store_user_stencil(const UserEnergyArgs& a, long k, const LocalEval<D>& r) {
  LocalBuffers<D>{a.E, a.g, a.H, a.flags, 0, 0, 0, 0}.store(0, k, r, a.want);
}

template <class Energy>
struct BendTwistStrainStencils {
  UserEnergyArgs a;
  Energy energy;
  SLENDER_HD void operator()(long k) const {
    LocalEval<11> r;
    RodBendTwistBinding::eval_with(a.m, a.s, 0, k, energy, a.want, r);
    store_user_stencil<11>(a, k, r);
  }
};

template <class S>
struct ListedStencils {
  UserEnergyArgs a;
  const int* dofs;                   // (n x kDofs)
  const typename S::Params* params;  // (n)
  SLENDER_HD void operator()(long k) const {
    constexpr int D = S::kDofs;
    Vec<D> x;
    for (int i = 0; i < D; ++i)
      x[i] = a.s.q[dofs[k * D + i]];
    LocalEval<D> r;
    r.flags = 0;
    r.g.set_zero();  // (a stencil may leave its gradient unwritten when asked for the energy)
    S::eval(x, params[k], a.want, r);
    store_user_stencil<D>(a, k, r);
  }
};

/// Energy::kReadsNaturalStrains where the type declares it, else true (it may read them)
template <class Energy, class = void>
struct EnergyReadsNaturalStrains : std::true_type {};
template <class Energy>
struct EnergyReadsNaturalStrains<Energy, std::void_t<decltype(Energy::kReadsNaturalStrains)>>
    : std::integral_constant<bool, bool(Energy::kReadsNaturalStrains)> {};
/// Energy::kOfStrainDifferences where the type declares it, else false
template <class Energy, class = void>
struct EnergyOfStrainDifferences : std::false_type {};
template <class Energy>
struct EnergyOfStrainDifferences<Energy, std::void_t<decltype(Energy::kOfStrainDifferences)>>
    : std::integral_constant<bool, bool(Energy::kOfStrainDifferences)> {};
}  // namespace detail

/// The sensitivity of a strain energy E(s - s_bar) (Energy::kOfStrainDifferences) to its natural
/// strain c: dE/ds_bar_c = -dE/ds_c, so the stencil's gradient changes by -sum_c' d2E/ds_c ds_c'
/// times the strain c''s gradient; as an "energy" of the strains, linear in them with those
/// coefficients (frozen at s), whose gradient rod_bend_twist_eval_with chains exactly (no
/// Hessian asked).
template <class Energy>
struct StrainDifferenceSensitivity {
  Energy energy;
  int c = 0;
  SLENDER_HD void operator()(const RodBendTwist::Params& p,
                             const RodBendTwist::Strains& s,
                             unsigned,
                             StrainEnergyEval& out) const {
    StrainEnergyEval full;
    energy(p, s, kGradHess, full);
    const Real v[3] = {s.kappa1, s.kappa2, s.tau};
    out.E = 0;
    for (int i = 0; i < 3; ++i) {
      out.dE[i] = -full.d2E[c][i];
      out.E += out.dE[i] * v[i];
    }
  }
};

/// An energy of every rod bend-twist stencil's strains, added to the rod's own: Energy is a
/// copyable struct with SLENDER_HD void operator()(const RodBendTwist::Params& p, const
/// RodBendTwist::Strains& s, unsigned want, StrainEnergyEval& out) const, which gives E, dE/ds
/// and d2E/ds2 for s = (kappa1, kappa2, tau) (p: the stencil's stiffnesses, Voronoi length and
/// natural strains). The strains and their derivatives are the rod's own, so its frames, its
/// joints and its orientation rules hold. The adjoint of a rollout (slender/adjoint.h)
/// differentiates an Energy that says it reads no natural strains (`static constexpr bool
/// kReadsNaturalStrains = false;`) or that it is a function of s - s_bar alone (`static
/// constexpr bool kOfStrainDifferences = true;`, as RodElasticStrainEnergy), and refuses others.
template <class Energy>
class BendTwistStrainEnergy final : public UserEnergy {
 public:
  explicit BendTwistStrainEnergy(std::string name, Energy energy = Energy{})
      : name_(std::move(name)), energy_(energy) {}
  std::string name() const override { return name_; }
  int dofs_per_stencil() const override { return 11; }
  long count(const ModelView& m) const override { return m.nbend; }
  void dofs(const ModelView& m, long k, int* out) const override {
    RodBendTwistBinding::dofs(m, k, out);
  }
  bool reads_frames() const override { return true; }
  bool reads_natural_strains() const override {
    return detail::EnergyReadsNaturalStrains<Energy>::value;
  }
  bool gives_natural_strain_grad() const override {
    return detail::EnergyOfStrainDifferences<Energy>::value;
  }
  bool natural_strain_grad(
      const ModelView& m, const EvalView& s, long k, int c, Real* g) const override {
    if (!detail::EnergyOfStrainDifferences<Energy>::value) return false;
    LocalEval<11> r;
    r.g.set_zero();
    RodBendTwistBinding::eval_with(m, s, 0, k, StrainDifferenceSensitivity<Energy>{energy_, c},
                                   kGrad, r);
    for (int i = 0; i < 11; ++i)
      g[i] = r.g[i];
    return true;
  }
  void frames_transport_term(const ModelView& m,
                             const EvalView& s,
                             long k,
                             Real* A) const override {
    Vec<11> x;
    RodBendTwist::Params p;
    RodBendTwistBinding::gather(m, s, 0, k, x, p);
    LocalEval<11> r;
    Mat<11, 11> T;
    rod_bend_twist_eval_with(x, p, energy_, kGradHess, r, nullptr, &T);
    for (int i = 0; i < 11 * 11; ++i)
      A[i] = T.a[i];
  }
  void evaluate(const UserEnergyArgs& a) const override {
    detail::run_user_stencils(a.on_device, a.m.nbend,
                              detail::BendTwistStrainStencils<Energy>{a, energy_}, name_);
  }

 private:
  std::string name_;
  Energy energy_;
};

/// An energy of stencils the caller lists: S has static constexpr int kDofs, a copyable
/// S::Params, and SLENDER_HD static void eval(const Vec<kDofs>& x, const Params& p, unsigned
/// want, LocalEval<kDofs>& out), which writes the energy, its gradient (want & kGrad) and its
/// Hessian (want & kHess) in the local DOFs x (x[i] = q[dofs[k][i]]). The stencil's couplings
/// enter the Jacobian's pattern.
template <class S>
class LocalStencilEnergy final : public UserEnergy {
 public:
  static constexpr int D = S::kDofs;
  LocalStencilEnergy(std::string name,
                     const std::vector<std::array<int, D>>& dofs,
                     std::vector<typename S::Params> params)
      : name_(std::move(name)), params_(std::move(params)) {
    SLENDER_CHECK(dofs.size() == params_.size(), "energy '", name_, "': ", dofs.size(),
                  " stencils but ", params_.size(), " parameter sets");
    dofs_.reserve(dofs.size() * D);
    for (const auto& d : dofs)
      dofs_.insert(dofs_.end(), d.begin(), d.end());
  }
  ~LocalStencilEnergy() override {
#if defined(__CUDACC__)
    if (dev_dofs_) cudaFree(dev_dofs_);
    if (dev_params_) cudaFree(dev_params_);
#endif
  }
  LocalStencilEnergy(const LocalStencilEnergy&) = delete;
  LocalStencilEnergy& operator=(const LocalStencilEnergy&) = delete;

  std::string name() const override { return name_; }
  int dofs_per_stencil() const override { return D; }
  long count(const ModelView&) const override { return long(params_.size()); }
  void dofs(const ModelView&, long k, int* out) const override {
    for (int i = 0; i < D; ++i)
      out[i] = dofs_[size_t(k) * D + i];
  }
  void evaluate(const UserEnergyArgs& a) const override {
    const int* dofs = dofs_.data();
    const typename S::Params* params = params_.data();
    if (a.on_device) device_copies(dofs, params);
    detail::run_user_stencils(a.on_device, long(params_.size()),
                              detail::ListedStencils<S>{a, dofs, params}, name_);
  }

 private:
  // the stencils' DOFs and parameters in the current device's memory, copied at the first
  // evaluation on a device (one device per energy)
  void device_copies(const int*& dofs, const typename S::Params*& params) const {
#if defined(__CUDACC__)
    std::lock_guard<std::mutex> lock(mutex_);
    int device = -1;
    cudaGetDevice(&device);
    if (!dev_dofs_ && !dofs_.empty()) {
      void* d = nullptr;
      void* p = nullptr;
      cudaError_t err = cudaMalloc(&d, dofs_.size() * sizeof(int));
      if (err == cudaSuccess) err = cudaMalloc(&p, params_.size() * sizeof(typename S::Params));
      if (err == cudaSuccess)
        err = cudaMemcpy(d, dofs_.data(), dofs_.size() * sizeof(int), cudaMemcpyHostToDevice);
      if (err == cudaSuccess)
        err = cudaMemcpy(p, params_.data(), params_.size() * sizeof(typename S::Params),
                         cudaMemcpyHostToDevice);
      if (err != cudaSuccess) {
        cudaFree(d);
        cudaFree(p);
        SLENDER_CHECK(false, "energy '", name_, "': copying its stencils to the device failed (",
                      cudaGetErrorString(err), ")");
      }
      dev_dofs_ = d;
      dev_params_ = p;
      dev_ = device;
    }
    SLENDER_CHECK(dev_ == device || dofs_.empty(), "energy '", name_,
                  "' was copied to CUDA device ", dev_, " and is now evaluated on device ", device,
                  " (one device per energy object)");
    dofs = static_cast<const int*>(dev_dofs_);
    params = static_cast<const typename S::Params*>(dev_params_);
#else
    (void)dofs;
    (void)params;
#endif
  }

  std::string name_;
  std::vector<int> dofs_;  // (n x D)
  std::vector<typename S::Params> params_;
  mutable std::mutex mutex_;
  mutable void* dev_dofs_ = nullptr;
  mutable void* dev_params_ = nullptr;
  mutable int dev_ = -1;
};

}  // namespace slender
