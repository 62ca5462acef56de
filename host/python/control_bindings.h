#pragma once

// Python bindings of the feedback controllers (slender.StrainController, docs/control.md): a
// view of a simulator's or a batch's controllers that keeps its owner alive.

#include <pybind11/pybind11.h>

#include <functional>
#include <vector>

#include "slender/control.h"

namespace slender {
namespace python {

/// registers the StrainController class in the module
void bind_control(pybind11::module_& m);

/// a view of the controllers `get` returns (a simulator's or a batch's: `batch` gives its
/// arrays an environment dimension), owned by `owner`; None when there are none
pybind11::object controller_view(std::function<StrainController*()> get,
                                 bool batch,
                                 pybind11::object owner);

/// controllers from a list of dicts (a scene's "controllers" entries) or its JSON text, read
/// and checked as a scene's for `scene`; errors name "<python>", the entry and the field
std::vector<ControllerSpec> controllers_from(const pybind11::object& specs, const SceneSpec& scene);

}  // namespace python
}  // namespace slender
