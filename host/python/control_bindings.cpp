// Python bindings of the feedback controllers: slender.StrainController, a view of a simulator's
// (arrays of shape (springs,)) or a batch's controllers (arrays of shape (num_envs, springs)).
// Each call asks its owner for the controllers it holds now (set_controllers replaces them).

#include "python/control_bindings.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <utility>

#include "slender/builder.h"
#include "slender/core/error.h"

namespace py = pybind11;

namespace slender {
namespace python {
namespace {

struct PyController {
  std::function<StrainController*()> get;
  bool batch = false;
  py::object owner;

  StrainController& ctrl() const {
    StrainController* c = get();
    if (!c) throw Error("the controllers were removed (set_controllers([]))");
    return *c;
  }
  // a controller by its index or its name
  int index(const py::object& which) const {
    const StrainController& c = ctrl();
    if (py::isinstance<py::str>(which)) {
      const std::string name = which.cast<std::string>();
      const int k = c.find(name);
      if (k < 0) {
        std::string names;
        for (int i = 0; i < c.size(); ++i)
          names += (i ? ", " : "") + c.name(i);
        throw InputError("<python>", 0, "controller",
                         "no controller named '" + name + "' (controllers: " + names + ")");
      }
      return k;
    }
    const int k = which.cast<int>();
    if (k < 0 || k >= c.size())
      throw InputError("<python>", 0, "controller",
                       "index " + std::to_string(k) + " out of range (" + std::to_string(c.size()) +
                           " controllers)");
    return k;
  }
  // an array of the controller's per-environment values, (springs,) or (num_envs, springs)
  template <class T>
  py::array values(int c, const std::vector<T>& v) const {
    const StrainController& k = ctrl();
    std::vector<py::ssize_t> shape{py::ssize_t(k.springs(c))};
    if (batch) shape.insert(shape.begin(), py::ssize_t(k.nenv()));
    py::array_t<T> a(shape);
    std::copy(v.begin(), v.end(), a.mutable_data());
    return std::move(a);
  }
};

// gains as one value or one per spring
std::vector<Real> gain_values(const py::object& o, const char* what) {
  py::array_t<double, py::array::c_style | py::array::forcecast> a;
  try {
    a = o.cast<py::array_t<double, py::array::c_style | py::array::forcecast>>();
  } catch (const py::cast_error&) {
    throw InputError("<python>", 0, what, "not a number or an array of numbers");
  }
  if (a.ndim() > 1) throw InputError("<python>", 0, what, "one value or one per spring");
  return std::vector<Real>(a.data(), a.data() + a.size());
}

}  // namespace

py::object controller_view(std::function<StrainController*()> get, bool batch, py::object owner) {
  if (!get()) return py::none();
  return py::cast(PyController{std::move(get), batch, std::move(owner)});
}

std::vector<ControllerSpec> controllers_from(const py::object& specs, const SceneSpec& scene) {
  std::string text;
  if (py::isinstance<py::str>(specs)) {
    text = specs.cast<std::string>();
  } else {
    text = py::module_::import("json").attr("dumps")(specs).cast<std::string>();
  }
  return read_controllers_text(text, scene, "<python>");
}

void bind_control(py::module_& m) {
  py::class_<PyController>(m, "StrainController",
                           "The feedback controllers on natural strains of a Simulator "
                           "(arrays of shape (springs,)) or a BatchedSimulator (shape (num_envs, "
                           "springs)); a controller is named by its index or its name. Strains in "
                           "the scene's units: curvature [1/m], twist [rad/m], stretch strain "
                           "[-], hinge angle [rad] (docs/control.md)")
      .def_property_readonly("names",
                             [](const PyController& p) {
                               std::vector<std::string> n;
                               for (int c = 0; c < p.ctrl().size(); ++c)
                                 n.push_back(p.ctrl().name(c));
                               return n;
                             })
      .def_property_readonly("num_envs", [](const PyController& p) { return p.ctrl().nenv(); })
      .def(
          "springs",
          [](const PyController& p, const py::object& c) {
            return p.ctrl().spring_index(p.index(c));
          },
          py::arg("controller"),
          "the model index of each spring: bend stencil, rod edge or hinge, ascending")
      .def(
          "set_gains",
          [](const PyController& p, const py::object& c, const py::object& kp, const py::object& ki,
             const py::object& env) {
            StrainController& k = p.ctrl();
            const int i = p.index(c);
            const std::vector<Real> vp = gain_values(kp, "kp"), vi = gain_values(ki, "ki");
            if (env.is_none()) {
              for (int e = 0; e < k.nenv(); ++e)
                k.set_gains(i, e, vp, vi);
            } else {
              k.set_gains(i, env.cast<int>(), vp, vi);
            }
          },
          py::arg("controller"), py::arg("kp"), py::arg("ki"), py::arg("env") = py::none(),
          "kp [-] and ki [1/s] of a controller: each one value or one per spring, >= 0; for "
          "environment env, or every one (None)")
      .def(
          "gains",
          [](const PyController& p, const py::object& c) {
            const int i = p.index(c);
            return py::make_tuple(p.values(i, p.ctrl().kp(i)), p.values(i, p.ctrl().ki(i)));
          },
          py::arg("controller"), "(kp, ki) of every spring")
      .def(
          "set_reference",
          [](const PyController& p, const py::object& c, const py::object& values,
             const py::object& env) {
            StrainController& k = p.ctrl();
            const int i = p.index(c);
            const auto a =
                values.cast<py::array_t<double, py::array::c_style | py::array::forcecast>>();
            const py::ssize_t n = k.springs(i), ne = k.nenv();
            const bool all = p.batch && env.is_none();
            const bool ok = all ? a.ndim() == 2 && a.shape(0) == ne && a.shape(1) == n
                                : a.ndim() == 1 && a.shape(0) == n;
            if (!ok)
              throw InputError("<python>", 0, "reference",
                               "expected " +
                                   (all ? "(" + std::to_string(ne) + ", " + std::to_string(n) + ")"
                                        : "(" + std::to_string(n) + ",)") +
                                   " values (one per spring" + (all ? " and environment" : "") +
                                   "), got " + std::to_string(a.size()));
            if (all) return k.set_reference(i, a.data());
            k.set_reference(i, env.is_none() ? 0 : env.cast<int>(), a.data());
          },
          py::arg("controller"), py::arg("values"), py::arg("env") = py::none(),
          "the reference of every spring in place of the controller's time function, from the "
          "next step until clear_reference: of environment env (values (springs,)), or of every "
          "environment (a batch's: values (num_envs, springs))")
      .def(
          "clear_reference",
          [](const PyController& p, const py::object& c, const py::object& env) {
            if (env.is_none()) return p.ctrl().clear_reference(p.index(c));
            p.ctrl().clear_reference(p.index(c), env.cast<int>());
          },
          py::arg("controller"), py::arg("env") = py::none(),
          "back to the reference function (of environment env, or of all)")
      .def(
          "reference_at",
          [](const PyController& p, const py::object& c, double t, int env) {
            const StrainController& k = p.ctrl();
            const int i = p.index(c);
            SLENDER_CHECK(env >= 0 && env < k.nenv(), "environment ", env, " out of range");
            py::array_t<double> a(py::ssize_t(k.springs(i)));
            for (int s = 0; s < k.springs(i); ++s)
              a.mutable_data()[s] = k.reference_at(i, env, s, t);
            return a;
          },
          py::arg("controller"), py::arg("t"), py::arg("env") = 0,
          "the reference of every spring at time t")
      .def(
          "command",
          [](const PyController& p, const py::object& c) {
            const int i = p.index(c);
            return p.values(i, p.ctrl().command(i));
          },
          py::arg("controller"), "the natural strain set over the last step")
      .def(
          "error",
          [](const PyController& p, const py::object& c) {
            const int i = p.index(c);
            return p.values(i, p.ctrl().error(i));
          },
          py::arg("controller"), "r(t) - y_f of the last update (t: its step's start)")
      .def(
          "reference",
          [](const PyController& p, const py::object& c) {
            const int i = p.index(c);
            return p.values(i, p.ctrl().reference(i));
          },
          py::arg("controller"), "r(t) of the last update")
      .def(
          "measured",
          [](const PyController& p, const py::object& c) {
            const int i = p.index(c);
            return p.values(i, p.ctrl().measured(i));
          },
          py::arg("controller"), "the filtered measurement y_f of the last update")
      .def(
          "integral",
          [](const PyController& p, const py::object& c) {
            const int i = p.index(c);
            return p.values(i, p.ctrl().integral(i));
          },
          py::arg("controller"), "the integral term z of the command")
      .def(
          "limited",
          [](const PyController& p, const py::object& c) {
            const int i = p.index(c);
            return p.values(i, p.ctrl().limited(i)).attr("astype")("bool");
          },
          py::arg("controller"), "where the last command was limited (its limits or rate)")
      .def(
          "reset",
          [](const PyController& p, const py::object& env) {
            StrainController& k = p.ctrl();
            if (!env.is_none()) return k.reset(env.cast<int>());
            for (int e = 0; e < k.nenv(); ++e)
              k.reset(e);
          },
          py::arg("env") = py::none(),
          "controllers (of environment env, or all) back to their start: no filter history, no "
          "integral, the rest value as the command");
}

}  // namespace python
}  // namespace slender
