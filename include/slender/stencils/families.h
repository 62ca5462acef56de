#pragma once

// Every stencil family with its binding, in pool order: the one list the backends' evaluations
// loop over (the CPU Simulator, the CUDA stepper, the vectorized batch), so that a family added
// here is evaluated everywhere. The grain is the CPU loop's threading threshold for the family's
// cost per stencil (include/slender/core/parallel_for.h).

#include "slender/core/parallel_for.h"
#include "slender/model.h"
#include "slender/stencils/bindings.h"

namespace slender {

/// v(Binding{}, family, grain) for every family, in pool order
template <class V>
void for_each_family(V&& v) {
  v(RodStretchBinding{}, kFamStretch, kParallelGrainMedium);
  v(RodBendTwistBinding{}, kFamBendTwist, kParallelGrainHeavy);
  v(ShellStretchBinding{}, kFamShellStretch, kParallelGrainMedium);
  v(ShellHingeBinding{}, kFamHinge, kParallelGrainHeavy);
  v(ShellMidEdgeBinding{}, kFamMidEdge, kParallelGrainHeavy);
  v(ShellDragBinding{}, kFamDrag, kParallelGrainMedium);
  v(GroundBinding{}, kFamGround, kParallelGrainMedium);
  v(RodRftBinding{}, kFamRft, kParallelGrainMedium);
  v(ContactEdgeEdgeBinding{}, kFamContact, kParallelGrainHeavy);
  v(ContactPointTriangleBinding{}, kFamContactPointTri, kParallelGrainHeavy);
}

}  // namespace slender
