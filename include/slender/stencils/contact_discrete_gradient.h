#pragma once

// Energy-consistent penalty contact over a time step (a discrete gradient, Gonzalez 1996, on the
// contact distance): the normal contact force of a step is the secant of the penalty energy
// phi(Delta) between the step's start and its end instead of its slope at one configuration.
//
// Why: the implicit midpoint rule evaluates forces at the step's midpoint and Newmark-beta
// (average acceleration) averages the end forces; both keep the energy of a quadratic potential
// but not of a stiff, strongly nonlinear one. An impact that spans a few steps then returns
// more energy than it took (a rod dropped at dt = 5 ms rebounded with 28 % more energy under the
// midpoint rule). With the secant the work of the normal force over the step equals the change
// of phi exactly wherever Delta is linear in the positions (a node against a plane), and to
// O(|dx|^2 Hess Delta) otherwise: the penalty's stiffness no longer enters the error.
//
// The stencil is evaluated at the step's midpoint x = (x0 + x_e) / 2 (x0 its start, x_e its
// end), where the distance at the end is taken as
//   Delta_e = Delta_0 + a (Delta(x) - Delta_0),  a = 2      (exact for a Delta linear in x)
// and the normal force along grad Delta(x) is the secant
//   psi(Delta(x)) = (phi(Delta_e) - phi(Delta_0)) / (Delta_e - Delta_0),
//   dpsi/dDelta   = a (phi'(Delta_e) - psi) / (Delta_e - Delta_0),
// so g = psi grad Delta and H = dpsi/dDelta grad Delta grad Delta^T + psi Hess Delta: symmetric,
// for psi(Delta(x)) grad Delta is the gradient of a potential of Delta(x) (whose value is not
// needed: the line search goes by the residual). The work over the step, g . (x_e - x0), is
// psi (Delta_e - Delta_0) = phi(Delta_e) - phi(Delta_0) when Delta is linear, and differs from
// the change of phi by O(|dx|^3) of Delta's third derivatives otherwise (the midpoint rule on
// Delta: the secant has taken the penalty's stiffness out of the error). The friction takes the
// secant as its normal force; friction and dashpot see the step's mean velocity.
// How a step's unknown y maps to x, and how the residual weighs the result, is the bindings'
// (stencils/bindings.h) and the integrator's (core/integrator.h, contact_step_coeffs): the
// midpoint rule's y is x itself; Newmark's y is the end, x = x0 + (y - x0) / 2, and the contact
// acts as a constant force (an impulse) over the step, weighted 1 / (2 beta) in the residual.
// Below |Delta_e - Delta_0| = 1e-6 delta (delta the penalty's ramp width) the difference
// quotients lose digits, and the midpoint values psi = phi'(Delta_m), dpsi/dDelta = a/2
// phi''(Delta_m), Delta_m = (Delta_0 + Delta_e) / 2, take over (they differ from the quotients
// by O(phi''' h^2), 1e-13 of phi' there); at rest (Delta_e = Delta_0) they are the pointwise
// values, so a body lying on the ground feels exactly what it felt before.

#include "slender/core/types.h"

namespace slender {

/// The step a contact stencil is evaluated in, for its energy-consistent normal force; a = 0:
/// off (the pointwise force phi'(Delta(y)), outside a step or by the scene's choice).
struct ContactStep {
  Real a = 0;   ///< Delta_e = Delta_0 + a (Delta(x) - Delta_0): 2 at the step's midpoint; 0 off
  Real D0 = 0;  ///< Delta at the step's start [m]
  SLENDER_HD bool on() const { return a > 0; }
};

/// The secant psi of the penalty phi over the step and its derivative with respect to Delta(y)
/// (see above); phi(D, d1, d2) returns phi(D) and, when d1 (d2) is not null, phi' (phi'').
/// delta: the penalty's ramp width [m], which sets where the difference quotients give way.
template <class Phi>
SLENDER_HD inline void contact_secant(
    const Phi& phi, const ContactStep& st, Real D, Real delta, Real& psi, Real& dpsi) {
  const Real De = st.D0 + st.a * (D - st.D0);
  const Real h = De - st.D0;
  if (::fabs(h) > Real(1e-6) * delta) {
    Real d1e;
    const Real pe = phi(De, &d1e, nullptr);
    const Real p0 = phi(st.D0, nullptr, nullptr);
    psi = (pe - p0) / h;
    dpsi = st.a * (d1e - psi) / h;
    return;
  }
  Real d1m, d2m;
  phi(Real(0.5) * (st.D0 + De), &d1m, &d2m);
  psi = d1m;
  dpsi = Real(0.5) * st.a * d2m;
}

/// dpsi/dDelta_0 of contact_secant's psi at a fixed Delta(y) (the adjoint's term: Delta_0 is the
/// step's start's): with Delta_e = Delta_0 + a (Delta - Delta_0) and h = Delta_e - Delta_0,
/// (phi'(Delta_e) (1 - a) - phi'(Delta_0) + a psi) / h; where contact_secant takes the midpoint
/// values, (1 - a / 2) phi''(Delta_m) (0 for the midpoint rule's a = 2).
template <class Phi>
SLENDER_HD inline Real contact_secant_start_derivative(const Phi& phi,
                                                       const ContactStep& st,
                                                       Real D,
                                                       Real delta) {
  const Real De = st.D0 + st.a * (D - st.D0);
  const Real h = De - st.D0;
  if (::fabs(h) > Real(1e-6) * delta) {
    Real d1e, d10;
    const Real pe = phi(De, &d1e, nullptr);
    const Real p0 = phi(st.D0, &d10, nullptr);
    const Real psi = (pe - p0) / h;
    return (d1e * (1 - st.a) - d10 + st.a * psi) / h;
  }
  Real d1m, d2m;
  phi(Real(0.5) * (st.D0 + De), &d1m, &d2m);
  return (1 - Real(0.5) * st.a) * d2m;
}

}  // namespace slender
