#pragma once

// The smooth Coulomb friction law of seed 000 eq. (23), shared by ground contact
// (ground_contact.h) and pair contact (contact_imc.h):
//   F_fr = -mu gamma(r) |F_n| w / r,   gamma = 2 / (1 + exp(-K2 r)) - 1 = tanh(K2 r / 2),
// w the tangential slip velocity, r = |w|, K2 = 15 / nu. gamma / r = (K2 / 2) T(y) with
// T(y) = tanh(y) / y, y = K2 r / 2, is even and analytic in r, so the force is smooth at w = 0
// (a viscous drag mu |F_n| K2 / 2 w there). T and T'(y) / y switch to their Taylor series for
// small y instead of dividing by r.

#include "slender/core/types.h"

namespace slender {
namespace detail {

// below this y = K2 r / 2 the closed form of T' / y loses digits to cancellation (about
// eps / y^2, 1e-13 here); the series, cut after y^10 (T) and y^8 (T' / y), are exact to a few
// 1e-15 below it
constexpr Real kFrictionSeriesY = 0.05;

/// T(y) = tanh(y) / y and dT/dy / y, both smooth and even in y >= 0
SLENDER_HD inline void friction_tanh_ratio(Real y, Real& T, Real& dT_over_y) {
  if (y < kFrictionSeriesY) {
    // tanh(y) / y = 1 - y^2/3 + 2y^4/15 - 17y^6/315 + 62y^8/2835 - 1382y^10/155925 + ...
    const Real y2 = y * y;
    T = 1 + y2 * (Real(-1) / 3 +
                  y2 * (Real(2) / 15 + y2 * (Real(-17) / 315 +
                                             y2 * (Real(62) / 2835 - y2 * Real(1382) / 155925))));
    dT_over_y = Real(-2) / 3 +
                y2 * (Real(8) / 15 +
                      y2 * (Real(-34) / 105 + y2 * (Real(496) / 2835 - y2 * Real(2764) / 31185)));
    return;
  }
  // sech^2 from exp(-2y), which underflows gracefully for large y (1 - tanh^2 would cancel)
  const Real th = ::tanh(y);
  const Real e = ::exp(-2 * y);
  const Real sech2 = 4 * e / ((1 + e) * (1 + e));
  T = th / y;
  dT_over_y = (y * sech2 - th) / (y * y * y);
}

}  // namespace detail
}  // namespace slender
