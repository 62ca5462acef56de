#pragma once

// Every stencil family with its binding, in pool order: the one list the backends' evaluations
// loop over (the stepper of both backends, the vectorized batch), so that a family added
// here is evaluated everywhere. What the engine, the model and the Simulator need of a family
// (elastic, in the reactions, symmetric, its energy, its loop's grain) is its binding's
// kTraits (family_traits.h), from which this header derives the rest.

#include <cstddef>
#include <type_traits>
#include <utility>

#include "slender/core/parallel_for.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/rod_pressure_chamber.h"
#include "slender/stencils/rod_quadratic_drag.h"
#include "slender/stencils/rod_tendon.h"
#include "slender/stencils/rod_wrench.h"
#include "slender/stencils/shell_follower_pressure.h"
#include "slender/stencils/shell_membrane.h"
#include "slender/stencils/shell_pressure.h"
#include "slender/stencils/shell_thrust.h"

namespace slender {

/// Stencil families, in their order in the local pools; the contact families last (their pairs
/// change from step to step, the others' layout does not).
enum Family : int {
  kFamStretch,           ///< rod edges: stretching
  kFamBendTwist,         ///< rod bend-twist springs
  kFamShellStretch,      ///< shell edges: stretching (the rod stretching stencil)
  kFamHinge,             ///< shell hinges: dihedral-angle bending
  kFamMidEdge,           ///< shell triangles: mid-edge normal bending
  kFamMembrane,          ///< shell triangles: constant-strain membrane (table from the parts)
  kFamDrag,              ///< shell triangles: aerodynamic drag (non-symmetric)
  kFamGround,            ///< nodes: ground contact and friction (non-symmetric with friction)
  kFamRft,               ///< rod edges: resistive-force-theory drag (non-symmetric)
  kFamPressure,          ///< shell triangles: a pressure inside a closed shell (table)
  kFamQuadraticDrag,     ///< rod edges: quadratic (form) drag in a fluid (table, non-symmetric)
  kFamWrench,            ///< rod edges: a force and moment, world or follower (table)
  kFamFollowerPressure,  ///< shell triangles: a follower pressure on a sheet (table, non-symmetric)
  kFamThrust,            ///< shell triangles: a bell's jet thrust (table, non-symmetric)
  kFamPressureChamber,   ///< rod edges: a pressure chamber's follower wrenches (table, non-sym.)
  kFamTendon,            ///< rod edges: a tendon's straight cable segments (table)
  kFamContact,           ///< edge pairs in contact (IMC); the pairs change every step
  kFamContactPointTri,   ///< vertex - shell triangle pairs in contact
  kNumFamilies
};
/// The bindings, in the order of the Family enum (pool order): the one registration of a
/// family. Each binding declares its traits (kTraits, family_traits.h); what follows derives
/// from them.
template <class... B>
struct FamilyList {
  static constexpr int kSize = int(sizeof...(B));
  static constexpr FamilyTraits kTraits[sizeof...(B)] = {B::kTraits...};
};
using FamilyBindings = FamilyList<RodStretchBinding,
                                  RodBendTwistBinding,
                                  ShellStretchBinding,
                                  ShellHingeBinding,
                                  ShellMidEdgeBinding,
                                  ShellMembraneBinding<kFamMembrane>,
                                  ShellDragBinding,
                                  GroundBinding,
                                  RodRftBinding,
                                  ShellPressureBinding<kFamPressure>,
                                  RodQuadraticDragBinding<kFamQuadraticDrag>,
                                  RodWrenchBinding<kFamWrench>,
                                  ShellFollowerPressureBinding<kFamFollowerPressure>,
                                  ShellThrustBinding<kFamThrust>,
                                  RodPressureChamberBinding<kFamPressureChamber>,
                                  RodTendonBinding<kFamTendon>,
                                  ContactEdgeEdgeBinding,
                                  ContactPointTriangleBinding>;
static_assert(FamilyBindings::kSize == kNumFamilies,
              "one binding in FamilyBindings for each value of Family, in its order");
static_assert(kNumFamilies <= kMaxFamilies, "raise kMaxFamilies (family_table.h)");

/// family f's traits (its binding's kTraits)
constexpr const FamilyTraits& family_traits(Family f) { return FamilyBindings::kTraits[f]; }

namespace detail {
constexpr int first_elastic_family() {
  for (int f = 0; f < kNumFamilies; ++f)
    if (FamilyBindings::kTraits[f].elastic) return f;
  return 0;
}
constexpr int elastic_family_end() {
  int end = first_elastic_family();
  for (int f = 0; f < kNumFamilies; ++f)
    if (FamilyBindings::kTraits[f].elastic) end = f + 1;
  return end;
}
constexpr bool elastic_families_contiguous() {
  for (int f = first_elastic_family(); f < elastic_family_end(); ++f)
    if (!FamilyBindings::kTraits[f].elastic) return false;
  return true;
}
}  // namespace detail

/// The elastic families (kTraits.elastic), which a Young's modulus scale multiplies:
/// [kFamElasticBegin, kFamElasticEnd), one contiguous range of every pool.
constexpr Family kFamElasticBegin = Family(detail::first_elastic_family());
constexpr Family kFamElasticEnd = Family(detail::elastic_family_end());
static_assert(detail::elastic_families_contiguous(),
              "the elastic families (kTraits.elastic) must be one contiguous range of Family: "
              "register an elastic family next to the others");
/// The families whose stencils change from step to step (the contact pairs): [kFamPairsBegin,
/// kNumFamilies), the last range of every pool; the assembly plan keeps the others' layout.
constexpr Family kFamPairsBegin = kFamContact;
/// Whether a family's gradient enters the support reactions (Simulator::reactions): the
/// internal forces do (kTraits.in_reactions); the loads, which the static problem of the
/// reactions leaves out, do not.
constexpr bool family_in_reactions(Family f) { return family_traits(f).in_reactions; }

namespace detail {
template <class V, class... B, size_t... I>
void for_each_family_in(V& v, FamilyList<B...>*, std::index_sequence<I...>) {
  (v(B{}, Family(I), B::kTraits.grain), ...);
}
template <class B, class M, class = void>
struct HasSymmetricIn : std::false_type {};
template <class B, class M>
struct HasSymmetricIn<B, M, std::void_t<decltype(B::symmetric(std::declval<const M&>()))>>
    : std::true_type {};
}  // namespace detail

/// v(Binding{}, family, grain) for every family, in pool order
template <class V>
void for_each_family(V&& v) {
  detail::for_each_family_in(v, static_cast<FamilyBindings*>(nullptr),
                             std::make_index_sequence<size_t(kNumFamilies)>{});
}

/// Whether family f (binding B) of model m has symmetric local Jacobians: always, by its
/// traits; else as its binding's symmetric(m) says; else where its table has no rows.
template <class B, class M>
bool family_symmetric(const M& m, Family f) {
  if constexpr (B::kTraits.symmetric) {
    (void)m, (void)f;
    return true;
  } else if constexpr (detail::HasSymmetricIn<B, M>::value) {
    (void)f;
    return B::symmetric(m);
  } else {
    return m.tables[size_t(f)].rows == 0;
  }
}

namespace detail {
template <class B, class M, class = void>
struct HasPotentialIn : std::false_type {};
template <class B, class M>
struct HasPotentialIn<B, M, std::void_t<decltype(B::has_potential(std::declval<const M&>()))>>
    : std::true_type {};
}  // namespace detail

/// Whether every family's energy E is the potential of its forces, so that Newton's line search
/// may weigh the energy: false where a family's binding says, through
/// `template <class M> static bool has_potential(const M&)`, that its loads have none (a moment
/// or a follower wrench), and the line search then measures the residual. Families without it
/// keep the energy as it is (the drag laws' velocity-dependent forces, measured with the step's
/// inertia).
template <class M>
bool families_have_potential(const M& m) {
  bool all = true;
  for_each_family([&](auto b, Family, long) {
    using B = decltype(b);
    if constexpr (detail::HasPotentialIn<B, M>::value) all = all && B::has_potential(m);
  });
  return all;
}

/// Whether a family's binding keeps its own table and scene field (stencils/family_table.h):
/// B::kSceneField, B::kFields, B::kInts, B::kReals and B::build(model, input, table).
template <class B, class = void>
struct HasFamilyTable : std::false_type {};
template <class B>
struct HasFamilyTable<B, std::void_t<decltype(B::kSceneField)>> : std::true_type {};
/// Whether a family's binding keeps its own table filled from the model's parts, without a
/// scene field of its own (the parts' fields choose it): B::kTableName, B::kInts, B::kReals
/// and B::build(model, table).
template <class B, class = void>
struct HasModelTable : std::false_type {};
template <class B>
struct HasModelTable<B, std::void_t<decltype(B::kTableName)>> : std::true_type {};

/// for_each_family over the elastic families only (kTraits.elastic)
template <class V>
void for_each_elastic_family(V&& v) {
  for_each_family([&](auto binding, Family f, long grain) {
    if constexpr (decltype(binding)::kTraits.elastic) v(binding, f, grain);
  });
}

}  // namespace slender
