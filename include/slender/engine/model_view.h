#pragma once

// The model's arrays as the stencils and the engine read them (implemented in
// host/model/frames.cpp).

#include "slender/model.h"
#include "slender/stencils/bindings.h"

namespace slender {

/// Counts and host pointers of a Model's arrays.
ModelView host_view(const Model& m);

}  // namespace slender
