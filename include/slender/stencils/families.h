#pragma once

// Every stencil family with its binding, in pool order: the one list the backends' evaluations
// loop over (the stepper of both backends, the vectorized batch), so that a family added
// here is evaluated everywhere. The grain is the CPU loop's threading threshold for the family's
// cost per stencil (include/slender/core/parallel_for.h).

#include <type_traits>

#include "slender/core/parallel_for.h"
#include "slender/stencils/bindings.h"
#include "slender/stencils/shell_membrane.h"
#include "slender/stencils/shell_pressure.h"

namespace slender {

/// Stencil families, in their order in the local pools; the contact families last (their pairs
/// change from step to step, the others' layout does not).
enum Family : int {
  kFamStretch,          ///< rod edges: stretching
  kFamBendTwist,        ///< rod bend-twist springs
  kFamShellStretch,     ///< shell edges: stretching (the rod stretching stencil)
  kFamHinge,            ///< shell hinges: dihedral-angle bending
  kFamMidEdge,          ///< shell triangles: mid-edge normal bending
  kFamMembrane,         ///< shell triangles: constant-strain membrane (table from the parts)
  kFamDrag,             ///< shell triangles: aerodynamic drag (non-symmetric)
  kFamGround,           ///< nodes: ground contact and friction (non-symmetric with friction)
  kFamRft,              ///< rod edges: resistive-force-theory drag (non-symmetric)
  kFamPressure,         ///< shell triangles: a pressure inside a closed shell (table)
  kFamContact,          ///< edge pairs in contact (IMC); the pairs change every step
  kFamContactPointTri,  ///< vertex - shell triangle pairs in contact
  kNumFamilies
};
/// The elastic families, which a Young's modulus scale multiplies: [kFamElasticBegin,
/// kFamElasticEnd), one contiguous range of every pool.
constexpr Family kFamElasticBegin = kFamStretch;
constexpr Family kFamElasticEnd = kFamDrag;
/// The families whose stencils change from step to step (the contact pairs): [kFamPairsBegin,
/// kNumFamilies), the last range of every pool; the assembly plan keeps the others' layout.
constexpr Family kFamPairsBegin = kFamContact;
/// Whether a family's gradient enters the support reactions (Simulator::reactions): the
/// internal forces do; the external-force families (drag, the ground, RFT) are loads, which
/// the static problem of the reactions leaves out.
constexpr bool family_in_reactions(Family f) {
  return f != kFamDrag && f != kFamGround && f != kFamRft && f != kFamPressure;
}
static_assert(kNumFamilies <= kMaxFamilies, "raise kMaxFamilies (family_table.h)");

/// v(Binding{}, family, grain) for every family, in pool order
template <class V>
void for_each_family(V&& v) {
  v(RodStretchBinding{}, kFamStretch, kParallelGrainMedium);
  v(RodBendTwistBinding{}, kFamBendTwist, kParallelGrainHeavy);
  v(ShellStretchBinding{}, kFamShellStretch, kParallelGrainMedium);
  v(ShellHingeBinding{}, kFamHinge, kParallelGrainHeavy);
  v(ShellMidEdgeBinding{}, kFamMidEdge, kParallelGrainHeavy);
  v(ShellMembraneBinding<kFamMembrane>{}, kFamMembrane, kParallelGrainHeavy);
  v(ShellDragBinding{}, kFamDrag, kParallelGrainMedium);
  v(GroundBinding{}, kFamGround, kParallelGrainMedium);
  v(RodRftBinding{}, kFamRft, kParallelGrainMedium);
  v(ShellPressureBinding<kFamPressure>{}, kFamPressure, kParallelGrainMedium);
  v(ContactEdgeEdgeBinding{}, kFamContact, kParallelGrainHeavy);
  v(ContactPointTriangleBinding{}, kFamContactPointTri, kParallelGrainHeavy);
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

/// for_each_family over the elastic families only (kFamElasticBegin .. kFamElasticEnd)
template <class V>
void for_each_elastic_family(V&& v) {
  for_each_family([&](auto binding, Family f, long grain) {
    if (f >= kFamElasticBegin && f < kFamElasticEnd) v(binding, f, grain);
  });
}

}  // namespace slender
