#pragma once

// A load's share of the system residual and of its Jacobian (the residual with the load on
// less the residual with it off), and that Jacobian against central differences of the share:
// the check of a load family's assembled, possibly non-symmetric Jacobian through the engine.

#include <algorithm>
#include <cmath>
#include <vector>

#include "slender/model.h"
#include "slender/simulator.h"

namespace slender::test {

/// The share at `at` (and its Jacobian in *J, when J is given); set_load(true / false) turns the
/// load on and off.
template <class SetLoad>
std::vector<Real> load_share(
    Simulator& sim, Real dt, const std::vector<Real>& at, std::vector<Real>* J, SetLoad set_load) {
  std::vector<Real> fp, f0, Jp, J0;
  set_load(true);
  sim.residual(dt, at, fp, J ? &Jp : nullptr);
  set_load(false);
  sim.residual(dt, at, f0, J ? &J0 : nullptr);
  for (size_t i = 0; i < fp.size(); ++i)
    fp[i] -= f0[i];
  if (J) {
    for (size_t i = 0; i < Jp.size(); ++i)
      Jp[i] -= J0[i];
    *J = Jp;
  }
  return fp;
}

struct LoadShareFd {
  Real rel = 0;         ///< |J - J_fd| / |J_fd| (Frobenius) over the free DOFs
  Real fd_norm = 0;     ///< |J_fd|
  Real force_norm = 0;  ///< |share| at y
  Real asymmetry = 0;   ///< max |J_rc - J_cr|
};

/// The share's Jacobian at y against central differences (step h) of the share, column by
/// column over the plan's free DOFs.
template <class SetLoad>
LoadShareFd load_share_vs_fd(Simulator& sim,
                             Real dt,
                             const AssemblyPlan& plan,
                             const std::vector<Real>& y,
                             SetLoad set_load,
                             Real h = 1e-7) {
  std::vector<Real> J;
  const std::vector<Real> f = load_share(sim, dt, y, &J, set_load);
  Real diff = 0, ref = 0, fnorm = 0, asym = 0;
  for (Real v : f)
    fnorm += v * v;
  for (int c = 0; c < plan.nfree; ++c) {
    std::vector<Real> yp = y, ym = y;
    yp[size_t(plan.free_dof[c])] += h;
    ym[size_t(plan.free_dof[c])] -= h;
    const std::vector<Real> fp = load_share(sim, dt, yp, nullptr, set_load),
                            fm = load_share(sim, dt, ym, nullptr, set_load);
    for (int r = 0; r < plan.nfree; ++r) {
      const Real fd = (fp[size_t(r)] - fm[size_t(r)]) / (2 * h);
      const Real a = J[size_t(r) * plan.nfree + c];
      diff += (a - fd) * (a - fd);
      ref += fd * fd;
      asym = std::max(asym, std::fabs(a - J[size_t(c) * plan.nfree + r]));
    }
  }
  LoadShareFd out;
  out.rel = std::sqrt(diff / ref);
  out.fd_norm = std::sqrt(ref);
  out.force_norm = std::sqrt(fnorm);
  out.asymmetry = asym;
  return out;
}

}  // namespace slender::test
