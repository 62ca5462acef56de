#pragma once

// What the engine, the model and the Simulator need to know of a stencil family, declared once
// in its binding (`static constexpr FamilyTraits kTraits`) next to its stencil, so that no list
// elsewhere follows the families' order: families.h derives from the bindings the elastic range
// of the pools, the families of the support reactions, the model's symmetry and the energy
// categories of Simulator::energies.

#include "slender/core/parallel_for.h"

namespace slender {

/// The field of Simulator::energies (Energies, simulator.h) a family's energy adds to.
enum class EnergyKind : int {
  kNone,       ///< not reported: a force without a potential (drag, RFT) or a contact penalty
  kStretch,    ///< Energies::stretch (rod and shell stretching, the membrane)
  kBend,       ///< Energies::bend (shell bending)
  kBendTwist,  ///< Energies::bend and ::twist, split by the stencil's strains (the rods')
  kLoad,       ///< Energies::load (the potential of a load: the pressure's)
};

/// A family's traits (its binding's kTraits).
struct FamilyTraits {
  /// elastic: a Young's modulus scale (Simulator::set_params, the parts' moduli in time)
  /// multiplies it, and Rayleigh stiffness damping and Kelvin-Voigt damping act on it. The
  /// elastic families are one contiguous range of the pools (families.h checks it).
  bool elastic;
  /// an internal force: its gradient enters the support reactions (Simulator::reactions); a
  /// load (drag, the ground, RFT, a pressure) does not
  bool in_reactions;
  /// whether its local Jacobians are always symmetric (an energy's Hessian). A family that may
  /// be non-symmetric (a force without a potential, friction) says when it is through
  /// `template <class M> static bool symmetric(const M& model)`; without that, it is
  /// non-symmetric whenever its table has rows. A non-symmetric model is solved by LU or
  /// BiCGSTAB (Model::nonsymmetric).
  bool symmetric;
  /// the field of Simulator::energies its energy adds to
  EnergyKind energy;
  /// the CPU loop's threading threshold for its cost per stencil (core/parallel_for.h)
  long grain;
};

}  // namespace slender
