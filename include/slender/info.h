#pragma once

// A plain-text description of a built model, for `slender info`: sizes, parts, DOFs, mass,
// Jacobian size, memory and the integrator settings.

#include <string>

#include "slender/model.h"

namespace slender {

/// Several lines of "label  value" text, ending with a newline.
std::string model_info(const Model& m);

/// Name of an integrator kind: "implicit-euler", "implicit-midpoint", "newmark", "static".
const char* integrator_name(IntegratorKind k);

/// Bytes of one environment's State (q, u, a, reference frames and twists) for model m.
size_t state_bytes_per_env(const Model& m);

}  // namespace slender
