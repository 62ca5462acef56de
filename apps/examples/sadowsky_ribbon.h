#pragma once

// Sadowsky's energy of a narrow inextensible ribbon, as an energy from the caller's code
// (include/slender/stencils/user_energy.h): the example of an energy added to Slender without
// editing it (issue 16, item 6; Py-DiSMech, seed 001, §IV, names it as the energy its
// strain-based stencils make easy to add).
//
// A ribbon of width w much larger than its thickness h bends easily about its width (the
// curvature kappa1 here, with the thin direction along the material director m1) and hardly in
// its plane (kappa2). Being developable, it can twist only where it bends, and Sadowsky's energy
// per unit length is
//   e = D / 2 (kappa^2 + tau^2)^2 / kappa^2,   D = E w h^3 / 12,
// with kappa and tau the easy curvature and the twist per unit length. On a discrete rod's
// bend-twist stencil of Voronoi length dl, whose strains are integrated over dl (kappa1 =
// kappa dl, tau = tau dl), this is
//   E = D / (2 dl) (kappa1^2 + tau^2)^2 / (kappa1^2 + eps^2),
// where eps regularizes the pure twist (kappa1 = 0), which the ribbon cannot take without
// bending. The rod's own energy keeps its in-plane bending; its easy bending and its twist are
// replaced: the energy below subtracts the rod's own 1/2 EI1/dl (kappa1 - kappa1_bar)^2 +
// 1/2 GJ/dl (tau - tau_bar)^2, so that the total is Sadowsky's energy plus the in-plane
// bending 1/2 EI2/dl (kappa2 - kappa2_bar)^2. D is the rod's EI1.

#include "slender/stencils/rod_bend_twist.h"

namespace slender {
namespace examples {

struct SadowskyRibbon {
  Real eps = 1e-4;  ///< regularization of the integrated curvature [-]

  SLENDER_HD void operator()(const RodBendTwist::Params& p,
                             const RodBendTwist::Strains& s,
                             unsigned,
                             StrainEnergyEval& out) const {
    const Real c = p.EI1 / (2 * p.dl);
    const Real k = s.kappa1, t = s.tau;
    const Real u = k * k + t * t, v = k * k + eps * eps;
    // f = u^2 / v and its derivatives in (k, t)
    const Real f = u * u / v;
    const Real fk = 4 * k * u / v - 2 * k * u * u / (v * v);
    const Real ft = 4 * t * u / v;
    const Real fkk = 4 * u / v + 8 * k * k / v - 16 * k * k * u / (v * v) - 2 * u * u / (v * v) +
                     8 * k * k * u * u / (v * v * v);
    const Real ftt = 4 * u / v + 8 * t * t / v;
    const Real fkt = 8 * k * t / v - 8 * k * t * u / (v * v);
    // minus the rod's own easy bending and twist
    const Real k1 = p.EI1 / p.dl, kt = p.GJ / p.dl;
    const Real d1 = k - p.kappa1_bar, dt = t - p.tau_bar;
    out.E = c * f - Real(0.5) * (k1 * d1 * d1 + kt * dt * dt);
    out.dE[0] = c * fk - k1 * d1;
    out.dE[1] = 0;
    out.dE[2] = c * ft - kt * dt;
    out.d2E[0][0] = c * fkk - k1;
    out.d2E[2][2] = c * ftt - kt;
    out.d2E[0][2] = out.d2E[2][0] = c * fkt;
  }
};

}  // namespace examples
}  // namespace slender
