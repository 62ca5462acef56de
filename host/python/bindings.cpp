// Python bindings (pybind11): the scene loader, the single and batched simulators, numpy arrays.
// Observations of a batch are written into arrays the simulator keeps (one per kind), and the
// methods return numpy views of them: no copy per call, and numpy's __dlpack__ hands them to
// torch.from_dlpack without a copy either. A view stays valid until the same observation is
// asked for again (then it holds the new values).

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "backend/memory_budget.h"
#include "python/control_bindings.h"
#include "slender/adjoint.h"
#include "slender/backend.h"
#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/checkpoint.h"
#include "slender/compare.h"
#include "slender/core/error.h"
#include "slender/info.h"
#include "slender/model.h"
#include "slender/record.h"
#include "slender/run.h"
#include "slender/simulator.h"

namespace py = pybind11;
using namespace slender;

namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

LinearSolverKind solver_kind(const std::string& name) {
  LinearSolverKind kind;
  if (!linear_solver_from_name(name, kind)) {
    throw InputError("<python>", 0, "solver",
                     "unknown solver '" + name + "' (" + linear_solver_names() + ")");
  }
  return kind;
}

BackendKind backend_kind(const std::string& name) {
  BackendKind kind;
  if (backend_from_name(name, kind)) return kind;
  throw InputError("<python>", 0, "backend", "unknown backend '" + name + "' (cpu or cuda)");
}

// a numpy view of `data` (shape), owned by `owner`
py::array view(std::vector<double>& data, std::vector<py::ssize_t> shape, py::handle owner) {
  return py::array_t<double>(shape, data.data(), owner);
}

// a read-only numpy array of a listed array (stencils/model_arrays.h): (count,) or (count,
// width), a view owned by `owner` or, without one, a copy
template <class T>
py::array listed_array(const std::vector<T>& v, long count, int width, py::handle owner) {
  std::vector<py::ssize_t> shape{py::ssize_t(count)};
  if (width > 1) shape.push_back(width);
  py::array_t<T> a =
      owner ? py::array_t<T>(shape, v.data(), owner) : py::array_t<T>(shape, v.data());
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

// an argument as an array of doubles: numbers (lists, or arrays of float, int or unsigned
// dtype) are converted; complex values (whose imaginary part a conversion would drop), strings,
// objects and booleans are refused, naming the argument
Array real_array(const py::handle& o, const char* what) {
  if (py::isinstance<py::array>(o)) {
    const char k = py::reinterpret_borrow<py::array>(o).dtype().kind();
    if (k == 'c') throw InputError("<python>", 0, what, "complex values: give real numbers");
    if (k != 'f' && k != 'i' && k != 'u') {
      throw InputError("<python>", 0, what,
                       std::string("an array of dtype kind '") + k + "': give real numbers");
    }
  }
  try {
    return o.cast<Array>();
  } catch (const py::cast_error&) {
    throw InputError(
        "<python>", 0, what,
        "not an array of numbers (got " + std::string(Py_TYPE(o.ptr())->tp_name) + ")");
  } catch (const py::error_already_set& e) {  // numpy's conversion failed (a string, ...)
    throw InputError("<python>", 0, what, std::string("not an array of numbers: ") + e.what());
  }
}

// a shape as the messages write it: "(2, 3)"
template <class T>
std::string shape_text(const T* dims, long n) {
  std::string s = "(";
  for (long i = 0; i < n; ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + ")";
}

// checks an action array's shape and returns a pointer to its data
const double* checked(const Array& a, std::vector<py::ssize_t> shape, const char* what) {
  bool ok = a.ndim() == py::ssize_t(shape.size());
  for (size_t i = 0; ok && i < shape.size(); ++i)
    ok = a.shape(i) == shape[i];
  if (!ok) {
    throw InputError("<python>", 0, what,
                     "expected an array of shape " + shape_text(shape.data(), long(shape.size())) +
                         ", got " + shape_text(a.shape(), long(a.ndim())));
  }
  return a.data();
}

// a failed SLENDER_CHECK's message without what is for C++ debugging: "FILE:LINE: check failed
// (CONDITION): message" becomes "message" (the condition's parentheses balanced); any other
// message as it is
std::string without_check_text(const std::string& what) {
  const std::string mark = ": check failed (";
  const size_t at = what.find(mark);
  if (at == std::string::npos) return what;
  int depth = 1;
  size_t i = at + mark.size();
  for (; i < what.size() && depth > 0; ++i)
    depth += what[i] == '(' ? 1 : what[i] == ')' ? -1 : 0;
  if (depth != 0 || what.compare(i, 2, ": ") != 0) return what;
  return what.substr(i + 2);
}

// refuses a NaN or infinite value among n values (rows of `width`), naming the argument, the
// row (`row`: "node", "environment", ...) and the column
void check_finite(const double* v, size_t n, size_t width, const char* what, const char* row) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i]))
      throw InputError("<python>", 0, what,
                       std::string(row) + " " + std::to_string(i / width) + ", component " +
                           std::to_string(i % width) + " is " + std::to_string(v[i]) +
                           ": give finite values");
}

// ---- DLPack (the data-interchange protocol of array libraries) -----------------------------
// The structures as the DLPack specification lays them out (version 0.x ABI, which
// torch.from_dlpack and numpy.from_dlpack accept as a "dltensor" capsule).
struct DLDevice {
  int32_t device_type;  // 1 CPU, 2 CUDA
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;  // 2 float
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};

// what a capsule owns: its shape and strides, and a reference to the array's owner
struct DlpackContext {
  int64_t shape[3];
  int64_t strides[3];
  PyObject* owner;
  DLManagedTensor managed;
};

void dlpack_delete(DLManagedTensor* t) {
  auto* ctx = static_cast<DlpackContext*>(t->manager_ctx);
  {
    py::gil_scoped_acquire gil;
    Py_XDECREF(ctx->owner);
  }
  delete ctx;
}

// a zero-copy view (shape, strides in elements) of memory that `owner` keeps alive, as an object
// with __dlpack__ and __dlpack_device__
struct LiveView {
  const double* data = nullptr;
  bool cuda = false;
  int device = 0;  // the CUDA device that holds the data
  std::vector<int64_t> shape, strides;
  py::object owner;
};

py::capsule make_capsule(const LiveView& v) {
  auto* ctx = new DlpackContext{};
  for (size_t i = 0; i < v.shape.size(); ++i) {
    ctx->shape[i] = v.shape[i];
    ctx->strides[i] = v.strides[i];
  }
  ctx->owner = v.owner.ptr();
  Py_XINCREF(ctx->owner);
  DLTensor& t = ctx->managed.dl_tensor;
  t.data = const_cast<double*>(v.data);
  t.device = DLDevice{v.cuda ? 2 : 1, v.cuda ? v.device : 0};
  t.ndim = int32_t(v.shape.size());
  t.dtype = DLDataType{2, 64, 1};
  t.shape = ctx->shape;
  t.strides = ctx->strides;
  t.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = dlpack_delete;
  // a capsule that nobody consumed deletes its tensor; a consumer renames it "used_dltensor"
  // and takes over the deleter
  PyObject* cap = PyCapsule_New(&ctx->managed, "dltensor", [](PyObject* c) {
    if (PyCapsule_IsValid(c, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
      if (m && m->deleter) m->deleter(m);
    }
  });
  if (!cap) throw py::error_already_set();
  return py::reinterpret_steal<py::capsule>(cap);
}

// the batch and its observation buffers
struct PyBatch {
  std::shared_ptr<const Model> model;
  std::unique_ptr<BatchedSimulator> batch;
  std::vector<double> pos, vel, curv, time;
  std::vector<unsigned char> contact;
  std::vector<signed char> status;
};

BatchEngine batch_engine(const std::string& engine) {
  if (engine == "vectorized") return BatchEngine::kVectorized;
  if (engine != "per-env")
    throw InputError("<python>", 0, "engine",
                     "unknown engine '" + engine + "' (per-env or vectorized)");
  return BatchEngine::kPerEnvironment;
}

// the memory of a batch and of its observation buffers (PyBatch's, per environment: positions,
// velocities, curvatures, times, ground contacts, statuses)
BatchMemory py_batch_memory(
    const Model& md, int nenv, BatchEngine engine, BackendKind backend, LinearSolverKind solver) {
  BatchMemory b =
      BatchedSimulator::memory_estimate(md, nenv, md.scene.integrator, solver, engine, backend);
  b.host_per_env += sizeof(double) * (6.0 * md.nnode + 3.0 * md.nbend + 1) + md.nnode + 1;
  return b;
}

py::dict report_dict(const StepReport& r) {
  py::dict d;
  d["ok"] = r.ok();
  d["status"] = std::string(to_string(r.status));
  d["iterations"] = r.iterations;
  d["residual"] = r.residual;
  d["residual0"] = r.residual0;
  d["dt"] = r.dt;
  return d;
}

EnvParams make_params(double youngs_scale,
                      double density_scale,
                      double ground_friction,
                      py::object gravity,
                      double mass_damping) {
  EnvParams p;
  p.youngs_scale = youngs_scale;
  p.density_scale = density_scale;
  p.ground_friction = ground_friction;
  p.mass_damping = mass_damping;
  if (!gravity.is_none()) {
    const auto g = gravity.cast<std::vector<double>>();
    if (g.size() != 3) throw InputError("<python>", 0, "gravity", "needs 3 components");
    p.override_gravity = true;
    p.gravity = vec3(g[0], g[1], g[2]);
  }
  return p;
}

// DOF indices from Python (a list or an array of integers), each in range and, to release,
// one that may be released (Model::dof_locked); ValueError naming `what` otherwise
std::vector<int> dof_list(const Model& m, const py::object& o, const char* what, bool release) {
  std::vector<int> dofs;
  try {
    dofs = o.cast<std::vector<int>>();
  } catch (const py::cast_error&) {
    throw InputError("<python>", 0, what, "expected a list or array of integer DOF indices");
  }
  for (int d : dofs) {
    if (d < 0 || d >= m.ndof)
      throw InputError(
          "<python>", 0, what,
          "DOF " + std::to_string(d) + " out of range [0, " + std::to_string(m.ndof) + ")");
    if (release && m.dof_locked[size_t(d)])
      throw InputError(
          "<python>", 0, what,
          "DOF " + std::to_string(d) + " cannot be released: a clamp at a node or two_d holds it");
  }
  return dofs;
}

// the DOFs of the positions of nodes given from Python (global node indices)
std::vector<int> node_dof_list(const Model& m,
                               const py::object& o,
                               const char* what,
                               bool release) {
  std::vector<int> nodes;
  try {
    nodes = o.cast<std::vector<int>>();
  } catch (const py::cast_error&) {
    throw InputError("<python>", 0, what, "expected a list or array of integer node indices");
  }
  py::list dofs;
  for (int n : nodes) {
    if (n < 0 || n >= m.nnode)
      throw InputError(
          "<python>", 0, what,
          "node " + std::to_string(n) + " out of range [0, " + std::to_string(m.nnode) + ")");
    for (int c = 0; c < 3; ++c)
      dofs.append(3 * n + c);
  }
  return dof_list(m, dofs, what, release);
}

// the indices of the flagged DOFs (a held-DOF mask), ascending
py::array_t<int> flagged(const std::vector<unsigned char>& mask) {
  std::vector<int> idx;
  for (size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) idx.push_back(int(i));
  py::array_t<int> a(py::ssize_t(idx.size()));
  std::copy(idx.begin(), idx.end(), a.mutable_data());
  return a;
}

// a strain kind's values as an array: (count,) or (count, 3) or (count, 3, 3), with a leading
// num_envs when nenv > 0
py::array strain_array(const std::vector<double>& v, long count, StrainKind kind, int nenv) {
  std::vector<py::ssize_t> shape;
  if (nenv > 0) shape.push_back(nenv);
  shape.push_back(count);
  if (kind == StrainKind::kBendTwist) shape.push_back(3);
  if (kind == StrainKind::kShapeOperator) shape.insert(shape.end(), {3, 3});
  py::array_t<double> a(shape);
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

// every strain kind by name ("stretch", "bend_twist", "hinge_angle", "shape_operator") from
// get(kind, count) (nenv 0: one simulator)
template <class Get>
py::dict strain_dict(const Model& m, int nenv, const Get& get) {
  const std::pair<const char*, StrainKind> kinds[] = {
      {"stretch", StrainKind::kStretch},
      {"bend_twist", StrainKind::kBendTwist},
      {"hinge_angle", StrainKind::kHingeAngle},
      {"shape_operator", StrainKind::kShapeOperator}};
  py::dict d;
  for (const auto& [name, kind] : kinds) {
    const long count = kind == StrainKind::kStretch      ? m.nedge
                       : kind == StrainKind::kBendTwist  ? m.nbend
                       : kind == StrainKind::kHingeAngle ? m.nhinge
                                                         : m.nmid;
    d[name] = strain_array(get(kind), count, kind, nenv);
  }
  return d;
}

// the global indices of a part's nodes or rod edges (part: its name or index)
py::array_t<int> part_items(const Model& md, const py::object& part, bool edges) {
  int p = -1;
  if (py::isinstance<py::str>(part)) {
    const std::string name = part.cast<std::string>();
    for (int k = 0; k < md.npart; ++k)
      if (md.part_name[size_t(k)] == name) p = k;
    if (p < 0) throw InputError("<python>", 0, "part", "unknown part '" + name + "'");
  } else {
    p = part.cast<int>();
    if (p < 0 || p >= md.npart)
      throw InputError(
          "<python>", 0, "part",
          "part " + std::to_string(p) + " out of range [0, " + std::to_string(md.npart) + ")");
  }
  const std::vector<int>& adr = edges ? md.part_edge_adr : md.part_node_adr;
  const std::vector<int>& item = edges ? md.part_edge : md.part_node;
  const int n = adr[size_t(p) + 1] - adr[size_t(p)];
  py::array_t<int> a(n);
  std::copy(item.begin() + adr[size_t(p)], item.begin() + adr[size_t(p) + 1], a.mutable_data());
  return a;
}

}  // namespace

// An action given as an array on a CUDA device (a torch tensor, a CuPy array: anything with
// __dlpack__ whose __dlpack_device__ is CUDA) goes to the batch as a device pointer: checked
// (float64, the action's shape, C-contiguous, the batch's device) and copied on the device with
// no trip through the host. Returns false, doing nothing, for an array that is not on a CUDA
// device (numpy, a CPU tensor): the caller takes the host path.
bool device_action(PyBatch& b,
                   const py::object& o,
                   std::vector<int64_t> shape,
                   const char* what,
                   void (BatchedSimulator::*set)(const Real*, BatchedSimulator::ArrayPlace)) {
  if (py::isinstance<py::array>(o) || !py::hasattr(o, "__dlpack_device__")) return false;
  const auto dev = o.attr("__dlpack_device__")().cast<std::pair<int, int>>();
  if (dev.first != 2) return false;  // kDLCUDA
  if (b.batch->backend() != BackendKind::kCuda) {
    throw InputError("<python>", 0, what,
                     "a CUDA array for a batch on the CPU backend: give a host array");
  }
  // stream 1: the legacy default stream, on which the copy runs, waits for the producer's work
  py::object cap = o.attr("__dlpack__")(py::arg("stream") = 1);
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  if (!m) throw py::error_already_set();
  struct Consume {  // the consumer's duty: mark the capsule used, then free the tensor
    PyObject* cap;
    DLManagedTensor* m;
    ~Consume() {
      PyCapsule_SetName(cap, "used_dltensor");
      if (m->deleter) m->deleter(m);
    }
  } consume{cap.ptr(), m};
  const DLTensor& t = m->dl_tensor;
  if (t.dtype.code != 2 || t.dtype.bits != 64 || t.dtype.lanes != 1)
    throw InputError("<python>", 0, what, "a CUDA array of float64 values is needed");
  bool ok = t.ndim == int32_t(shape.size());
  int64_t stride = 1;
  for (int i = int(shape.size()) - 1; ok && i >= 0; --i) {
    ok = t.shape[i] == shape[i] && (!t.strides || shape[i] == 1 || t.strides[i] == stride);
    stride *= shape[i];
  }
  if (!ok) {
    throw InputError("<python>", 0, what,
                     "expected a C-contiguous CUDA array of shape " +
                         shape_text(shape.data(), long(shape.size())) + ", got " +
                         shape_text(t.shape, long(t.ndim)));
  }
  const BatchedSimulator::LiveArray live = b.batch->live_positions();
  const int device = live.data ? cuda_device_of(live.data) : 0;
  if (t.device.device_id != device) {
    throw InputError("<python>", 0, what,
                     "the array is on CUDA device " + std::to_string(t.device.device_id) +
                         ", the batch on device " + std::to_string(device));
  }
  const auto* data =
      reinterpret_cast<const Real*>(static_cast<const char*>(t.data) + t.byte_offset);
  py::gil_scoped_release nogil;
  ((*b.batch).*set)(data, BatchedSimulator::ArrayPlace::kEngine);
  return true;
}

// a natural-shape action (num_envs x shape...): a CUDA array through device_action, anything
// else as a host array of that shape
void natural_action(PyBatch& b,
                    const py::object& o,
                    std::vector<py::ssize_t> shape,
                    const char* what,
                    void (BatchedSimulator::*set)(const Real*, BatchedSimulator::ArrayPlace)) {
  shape.insert(shape.begin(), b.batch->nenv());
  if (device_action(b, o, std::vector<int64_t>(shape.begin(), shape.end()), what, set)) return;
  const Array a = real_array(o, what);
  ((*b.batch).*set)(checked(a, shape, what), BatchedSimulator::ArrayPlace::kHost);
}

// a live DLPack view of a batch's positions or velocities (the vectorized engine's state)
LiveView live_view(py::object self, bool velocities) {
  PyBatch& b = self.cast<PyBatch&>();
  const BatchedSimulator::LiveArray a =
      velocities ? b.batch->live_velocities() : b.batch->live_positions();
  if (!a.data) {
    throw Error(
        "live views need the vectorized engine (BatchedSimulator(..., engine=\"vectorized\")); "
        "positions() and velocities() give numpy views");
  }
  LiveView v;
  v.data = a.data;
  v.cuda = a.cuda;
  if (v.cuda) v.device = cuda_device_of(v.data);
  v.shape = {b.batch->nenv(), b.model->nnode, 3};
  v.strides = {a.env_stride, 3, 1};
  v.owner = self;
  return v;
}

PYBIND11_MODULE(_core, m) {
  m.doc() = "Slender: discrete elastic rods and shells (native core)";

  py::class_<LiveView>(m, "LiveView",
                       "A zero-copy view of a simulator's live state for DLPack consumers "
                       "(numpy.from_dlpack, torch.from_dlpack)")
      .def(
          "__dlpack__",
          [](const LiveView& v, py::object stream) {
            // every call that changes the batch's state returns with its device work done
            // (VectorEngineOf), so the data is ready on any consumer stream
            (void)stream;
            return make_capsule(v);
          },
          py::arg("stream") = py::none())
      .def("__dlpack_device__",
           [](const LiveView& v) { return py::make_tuple(v.cuda ? 2 : 1, v.cuda ? v.device : 0); })
      .def_property_readonly("shape", [](const LiveView& v) { return v.shape; })
      .def_property_readonly("device", [](const LiveView& v) { return v.cuda ? "cuda" : "cpu"; });

  // errors: InputError (bad scene or argument) -> ValueError, MemoryLimitError (a request
  // refused before it is allocated) -> MemoryError, others -> RuntimeError
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const MemoryLimitError& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, without_check_text(e.what()).c_str());
    }
  });

  python::bind_control(m);

  py::class_<Model, std::shared_ptr<Model>>(m, "Model")
      .def_property_readonly("name", [](const Model& md) { return md.scene.name; })
      .def_readonly("nnode", &Model::nnode)
      .def_readonly("nedge", &Model::nedge)
      .def_readonly("nbend", &Model::nbend)
      .def_readonly("ndof", &Model::ndof)
      .def_readonly("ntri", &Model::ntri)
      .def_readonly("nhinge", &Model::nhinge)
      .def_readonly("nmid", &Model::nmid)
      .def_readonly("npart", &Model::npart)
      .def_property_readonly(
          "part_names",
          [](const Model& md) {
            std::vector<std::string> names;
            for (const PartSpec& p : md.scene.parts)
              names.push_back(p.name);
            return names;
          },
          "the parts' names, in part index order")
      .def_readonly("nmid", &Model::nmid)
      .def(
          "part_nodes",
          [](const Model& md, py::object part) { return part_items(md, part, false); },
          py::arg("part"),
          "the global indices of a part's nodes (part: its name or index), in the part's order "
          "(node i's coordinate c is DOF 3 i + c)")
      .def(
          "part_edges", [](const Model& md, py::object part) { return part_items(md, part, true); },
          py::arg("part"),
          "the global indices of a part's rod edges (edge j's twist is DOF 3 nnode + j)")
      .def_property_readonly("nfree", [](const Model& md) { return md.plan.nfree; })
      .def_property_readonly("dt", [](const Model& md) { return md.scene.integrator.dt; })
      .def_property_readonly("duration",
                             [](const Model& md) { return md.scene.integrator.duration; })
      .def_property_readonly("node_mass",
                             [](const Model& md) {
                               return py::array_t<double>(md.node_mass.size(), md.node_mass.data());
                             })
      .def_property_readonly("initial_positions",
                             [](const Model& md) {
                               py::array_t<double> a({py::ssize_t(md.nnode), py::ssize_t(3)});
                               std::copy(md.node_x0.begin(), md.node_x0.end(), a.mutable_data());
                               return a;
                             })
      .def_property_readonly(
          "fixed_dofs",
          [](const Model& md) {
            return py::array_t<int>(md.fixed_dof.size(), md.fixed_dof.data());
          },
          "the fixed DOFs, ascending: node i's coordinate c is DOF 3 i + c, edge j's twist "
          "3 nnode + j (the order of set_fixed_targets)")
      .def(
          "arrays",
          [](py::object self) {
            const Model& m = self.cast<const Model&>();
            py::dict d;
#define SLENDER_PY_ARRAY(type, name, count, width, doc) \
  d[#name] = listed_array(m.name, (count), (width), self);
            SLENDER_VIEW_ARRAYS(SLENDER_PY_ARRAY)
            SLENDER_HOST_ARRAYS(SLENDER_PY_ARRAY)
#undef SLENDER_PY_ARRAY
            // the families' own tables: <field>_int (rows, ni) and <field>_real (rows, nr)
            for (const FamilyTable& t : m.tables)
              if (!t.name.empty()) {
                d[(t.name + "_int").c_str()] = listed_array(t.i, t.rows, t.ni, self);
                d[(t.name + "_real").c_str()] = listed_array(t.r, t.rows, t.nr, self);
              }
            return d;
          },
          "every per-element array of the model by name (include/slender/stencils/model_arrays.h), "
          "as read-only numpy views of shape (count,) or (count, width), and the tables of the "
          "families that keep their own (<field>_int, <field>_real)")
      .def(
          "midedge_curvature_components",
          [](const Model& md, py::object direction) {
            Vec3 d = Vec3::zero();
            if (!direction.is_none()) {
              const auto v = direction.cast<std::vector<double>>();
              if (v.size() != 3) throw InputError("<python>", 0, "direction", "expected 3 numbers");
              d = vec3(v[0], v[1], v[2]);
            }
            const std::vector<Real> c = midedge_curvature_components(md, d);
            py::array_t<double> a({py::ssize_t(md.nmid), py::ssize_t(3)});
            std::copy(c.begin(), c.end(), a.mutable_data());
            return a;
          },
          py::arg("direction") = py::none(),
          "the actuation components of a unit natural curvature on every mid-edge triangle "
          "(nmid x 3, the layout of set_natural_midedge_curvature): bending along direction "
          "(taken in each triangle's rest plane), or the same in every direction (a dome) when "
          "None; multiply by a curvature [1/m] (positive curls the shell away from its normal)")
      .def("info", [](const Model& md) { return model_info(md); })
      .def("__repr__", [](const Model& md) {
        return "<slender.Model '" + md.scene.name + "': " + std::to_string(md.nnode) + " nodes, " +
               std::to_string(md.plan.nfree) + " free DOFs>";
      });

  m.def(
      "load_model",
      [](const std::string& path, py::object dt, py::object duration) {
        SceneSpec sc = read_scene_file(path);
        if (!dt.is_none()) sc.integrator.dt = dt.cast<double>();
        if (!duration.is_none()) sc.integrator.duration = duration.cast<double>();
        return std::const_pointer_cast<Model>(build_model(sc));
      },
      py::arg("path"), py::arg("dt") = py::none(), py::arg("duration") = py::none(),
      "Reads a scene file (JSON) and builds its model; dt and duration override the scene's.");

  m.def(
      "_build_model_text",
      [](const std::string& text, const std::string& file, const std::string& base_dir,
         py::object dt, py::object duration) {
        SceneSpec sc = read_scene_text(text, file, base_dir);
        if (!dt.is_none()) sc.integrator.dt = dt.cast<double>();
        if (!duration.is_none()) sc.integrator.duration = duration.cast<double>();
        return std::const_pointer_cast<Model>(build_model(sc));
      },
      py::arg("text"), py::arg("file"), py::arg("base_dir"), py::arg("dt") = py::none(),
      py::arg("duration") = py::none(),
      "Builds a model from a scene's JSON text (slender.build_model wraps it); relative paths "
      "in it resolve against base_dir; errors name `file`, the line and the field.");

  m.def("cuda_device_count", &cuda_device_count);

  m.def(
      "export_usd",
      [](const py::object& run, const py::object& out, const py::object& scene,
         const py::object& up_axis) {
        UsdExportOptions o;
        if (!out.is_none()) o.out = py::str(out).cast<std::string>();
        if (!scene.is_none()) o.scene = py::str(scene).cast<std::string>();
        if (!up_axis.is_none()) {
          const std::string a = up_axis.cast<std::string>();
          if (a != "y" && a != "Y" && a != "z" && a != "Z") {
            throw InputError("<arguments>", 0, "up_axis", "must be 'y' or 'z', got '" + a + "'");
          }
          o.up_axis = a == "y" || a == "Y" ? 'Y' : 'Z';
        }
        const UsdExportResult r = export_usd(py::str(run).cast<std::string>(), o);
        py::dict d;
        d["path"] = r.path;
        d["frames"] = r.frames;
        return d;
      },
      py::arg("run"), py::arg("out") = py::none(), py::arg("scene") = py::none(),
      py::arg("up_axis") = py::none(),
      "`slender export-usd`: a run's VTK frames (the .pvd in the folder `run`, or that .pvd) "
      "into one .usda (docs/usd.md): `out` the file (default NAME.usda beside NAME.pvd), "
      "`scene` the run's scene file (part names, gravity's up axis), `up_axis` 'y' or 'z'. "
      "Returns a dict: path, frames. Bad input raises ValueError naming the file");

  // gradients through time (slender/adjoint.h, docs/gradients.md)
  struct PyRollout {
    std::shared_ptr<Model> model;
    std::unique_ptr<RolloutAdjoint> ad;
    int steps = 0;
  };
  py::class_<PyRollout>(m, "Rollout")
      .def(py::init([](std::shared_ptr<Model> md, int checkpoint_every, const std::string& solver) {
             auto r = std::make_unique<PyRollout>();
             r->model = md;
             RolloutOptions o;
             o.checkpoint_every = checkpoint_every;
             o.solver = solver_kind(solver);
             r->ad = std::make_unique<RolloutAdjoint>(md, md->scene.integrator, o);
             return r;
           }),
           py::arg("model"), py::arg("checkpoint_every") = 1, py::arg("solver") = "auto")
      .def(
          "run",
          [](PyRollout& r, int steps, const py::object& kappa_bar, const py::object& tau_bar,
             const py::object& forces, const py::object& q0, const py::object& u0,
             const py::object& part_youngs_scale, double youngs_scale, double density_scale,
             double mass_damping) {
            const Model& md = *r.model;
            auto take = [&](const py::object& o, std::vector<py::ssize_t> shape, const char* what) {
              std::vector<Real> v;
              if (o.is_none()) return v;
              const Array a = real_array(o, what);
              size_t n = 1;
              for (py::ssize_t d : shape)
                n *= size_t(d);
              const double* p = checked(a, shape, what);
              v.assign(p, p + n);
              return v;
            };
            RolloutActions a;
            a.kappa_bar = take(kappa_bar, {steps, md.nbend, 2}, "kappa_bar");
            a.tau_bar = take(tau_bar, {steps, md.nbend}, "tau_bar");
            a.forces = take(forces, {steps, md.nnode, 3}, "forces");
            RolloutParams p;
            p.part_youngs_scale = take(part_youngs_scale, {md.npart}, "part_youngs_scale");
            p.youngs_scale = youngs_scale;
            p.density_scale = density_scale;
            p.mass_damping = mass_damping;
            State s0 = initial_state(md);
            if (!q0.is_none()) s0 = transported_state(md, s0, take(q0, {md.ndof}, "q0"));
            if (!u0.is_none()) s0.u = take(u0, {md.ndof}, "u0");
            std::vector<Real> q, u;
            r.ad->run(s0, steps, a, p, &q, &u);
            r.steps = steps;
            const std::vector<py::ssize_t> shape{steps + 1, md.ndof};
            return py::make_tuple(py::array_t<double>(shape, q.data()),
                                  py::array_t<double>(shape, u.data()));
          },
          py::arg("steps"), py::arg("kappa_bar") = py::none(), py::arg("tau_bar") = py::none(),
          py::arg("forces") = py::none(), py::arg("q0") = py::none(), py::arg("u0") = py::none(),
          py::arg("part_youngs_scale") = py::none(), py::arg("youngs_scale") = 1.0,
          py::arg("density_scale") = 1.0, py::arg("mass_damping") = -1.0)
      .def(
          "gradient",
          [](PyRollout& r, const py::object& dq, const py::object& du) {
            const Model& md = *r.model;
            SLENDER_CHECK(r.steps > 0, "gradient: run a rollout first");
            const std::vector<py::ssize_t> shape{r.steps + 1, md.ndof};
            auto take = [&](const py::object& o, const char* what) {
              std::vector<Real> v;
              if (o.is_none()) return v;
              const Array a = real_array(o, what);
              const double* p = checked(a, shape, what);
              v.assign(p, p + size_t(r.steps + 1) * size_t(md.ndof));
              return v;
            };
            const RolloutGradient g = r.ad->gradient(take(dq, "dL_dq"), take(du, "dL_du"));
            auto arr = [](const std::vector<Real>& v, std::vector<py::ssize_t> sh) {
              return py::array_t<double>(sh, v.data());
            };
            py::dict d;
            d["q0"] = arr(g.q0, {md.ndof});
            d["u0"] = arr(g.u0, {md.ndof});
            d["kappa_bar"] = arr(g.kappa_bar, {r.steps, md.nbend, 2});
            d["tau_bar"] = arr(g.tau_bar, {r.steps, md.nbend});
            d["forces"] = arr(g.forces, {r.steps, md.nnode, 3});
            d["part_youngs_scale"] = arr(g.part_youngs_scale, {md.npart});
            d["youngs_scale"] = g.youngs_scale;
            d["density_scale"] = g.density_scale;
            d["mass_damping"] = g.mass_damping;
            return d;
          },
          py::arg("dL_dq") = py::none(), py::arg("dL_du") = py::none())
      .def_property_readonly("checkpoint_bytes",
                             [](const PyRollout& r) { return r.ad->checkpoint_bytes(); })
      .def_property_readonly("recomputed_steps",
                             [](const PyRollout& r) { return r.ad->recomputed_steps(); });

  py::class_<Simulator>(m, "Simulator")
      .def(py::init([](std::shared_ptr<Model> md, const std::string& backend,
                       const std::string& solver) {
             return std::make_unique<Simulator>(md, md->scene.integrator, solver_kind(solver),
                                                backend_kind(backend));
           }),
           py::arg("model"), py::arg("backend") = "cpu", py::arg("solver") = "auto")
      .def(
          "step",
          [](Simulator& s, py::object dt) {
            StepReport r;
            {
              // the step size is read while the GIL is held (a Python object's conversion needs
              // it); only the step runs without it
              const bool own_dt = !dt.is_none();
              const double h = own_dt ? dt.cast<double>() : 0.0;
              py::gil_scoped_release release;
              r = own_dt ? s.step(h) : s.step();
            }
            return report_dict(r);
          },
          py::arg("dt") = py::none())
      .def(
          "set_force",
          [](Simulator& s, py::object fn, bool symmetric) {
            if (fn.is_none()) {
              s.set_force_callback(nullptr);
              return;
            }
            // the step runs without the GIL: the callback takes it back
            auto call = [fn](ForceEval& e) {
              py::gil_scoped_acquire gil;
              const std::vector<py::ssize_t> shape{py::ssize_t(e.ndof)};
              py::array_t<double> q(shape, e.q), u(shape, e.u);
              py::object out = fn(e.t, q, u);
              py::object force = out;
              py::tuple jac;
              bool with_jac = false;
              if (py::isinstance<py::tuple>(out)) {
                py::tuple t = out.cast<py::tuple>();
                if (t.size() != 5)
                  throw InputError("<python>", 0, "set_force",
                                   "the force function returns F or (F, rows, cols, dF_dq, dF_du), "
                                   "got a tuple of " +
                                       std::to_string(t.size()));
                force = t[0];
                jac = t;
                with_jac = true;
              }
              const Array f = force.cast<Array>();
              const double* fv = checked(f, {py::ssize_t(e.ndof)}, "set_force: F");
              for (int i = 0; i < e.ndof; ++i)
                e.force[i] += fv[i];
              if (!with_jac || !e.want_jacobian) return;
              const auto rows = jac[1].cast<py::array_t<int, py::array::forcecast>>();
              const auto cols = jac[2].cast<py::array_t<int, py::array::forcecast>>();
              const Array dq = jac[3].cast<Array>(), du = jac[4].cast<Array>();
              const py::ssize_t n = rows.size();
              if (rows.ndim() != 1 || cols.size() != n || dq.size() != n || du.size() != n)
                throw InputError("<python>", 0, "set_force",
                                 "rows, cols, dF_dq and dF_du must be 1-d arrays of one length");
              for (py::ssize_t k = 0; k < n; ++k)
                e.add_jacobian(rows.at(k), cols.at(k), dq.data()[k], du.data()[k]);
            };
            s.set_force_callback(call, symmetric);
          },
          py::arg("fn"), py::arg("symmetric") = false,
          "A state-dependent external force: fn(t, q, u) -> F (ndof,) or (F, rows, cols, dF_dq, "
          "dF_du), the Jacobian's entries dF[row]/dq[col] and dF[row]/du[col]; called at every "
          "Newton evaluation (CPU backend). symmetric=True keeps the symmetric factorizations "
          "(a spring). None removes it.")
      .def_property_readonly("time", [](const Simulator& s) { return s.time(); })
      .def(
          "save", [](const Simulator& s, const std::string& path) { save_checkpoint(s, path); },
          py::arg("path"),
          "writes the whole state to a checkpoint file (atomically); load() continues from it "
          "bit for bit")
      .def(
          "load", [](Simulator& s, const std::string& path) { load_checkpoint(s, path); },
          py::arg("path"),
          "the state of a checkpoint that save() wrote for this model (ValueError naming the "
          "file for another model's or a damaged one)")
      .def(
          "state_arrays",
          [](const Simulator& s) {
            const Model& m = s.model();
            const State& st = s.state();
            py::dict d;
#define SLENDER_PY_STATE(type, name, count, width, doc) \
  d[#name] = listed_array(st.name, (count), (width), py::handle());
            SLENDER_STATE_ARRAYS(SLENDER_PY_STATE)
#undef SLENDER_PY_STATE
            return d;
          },
          "copies of the state's arrays by name (q, u, a, edge_d1, edge_t, bend_ref_twist, "
          "sedge_tau0), read-only, of shape (count,) or (count, width)")
      .def_property_readonly("positions",
                             [](const Simulator& s) {
                               const Model& md = s.model();
                               py::array_t<double> a({py::ssize_t(md.nnode), py::ssize_t(3)});
                               std::copy(s.state().q.begin(), s.state().q.begin() + 3 * md.nnode,
                                         a.mutable_data());
                               return a;
                             })
      .def_property_readonly("velocities",
                             [](const Simulator& s) {
                               const Model& md = s.model();
                               py::array_t<double> a({py::ssize_t(md.nnode), py::ssize_t(3)});
                               std::copy(s.state().u.begin(), s.state().u.begin() + 3 * md.nnode,
                                         a.mutable_data());
                               return a;
                             })
      .def("energies",
           [](const Simulator& s) {
             const Energies e = s.energies();
             py::dict d;
             d["kinetic"] = e.kinetic;
             d["stretch"] = e.stretch;
             d["bend"] = e.bend;
             d["twist"] = e.twist;
             d["gravity"] = e.gravity;
             d["user"] = e.user;
             d["load"] = e.load;
             d["total"] = e.total();
             return d;
           })
      .def("set_external_forces",
           [](Simulator& s, const py::object& o) {
             const Array f = real_array(o, "forces");
             const Model& md = s.model();
             const double* p = checked(f, {md.nnode, 3}, "forces");
             check_finite(p, 3 * size_t(md.nnode), 3, "forces", "node");
             s.set_external_forces(std::vector<double>(p, p + 3 * md.nnode));
           })
      .def(
          "set_part_youngs_scale",
          [](Simulator& s, py::object v) {
            if (v.is_none()) return s.set_part_youngs_scale({});
            const py::ssize_t np = s.model().npart;
            const Array a = real_array(v, "part_youngs_scale");
            const double* p = checked(a, {np}, "part_youngs_scale");
            s.set_part_youngs_scale(std::vector<double>(p, p + np));
          },
          py::arg("scale"),
          "each part's Young's modulus times a factor (npart, positive), from the next step on; "
          "None: all 1")
      .def("set_load_value", &Simulator::set_load_value, py::arg("field"), py::arg("entry"),
           py::arg("value"),
           "the load of entry `entry` of the scene field forces.<field> takes `value` in place of "
           "its signal from the next step on: a pressure chamber's pressure [Pa], a wrench's or "
           "a shell pressure's factor")
      .def("clear_load_values", &Simulator::clear_load_values,
           "every load back to its time function")
      .def(
          "set_natural_stretch",
          [](Simulator& s, py::object v) {
            if (v.is_none()) return s.set_natural_stretch({});
            const py::ssize_t ne = s.model().nedge;
            const Array a = real_array(v, "natural_stretch");
            const double* p = checked(a, {ne}, "natural_stretch");
            s.set_natural_stretch(std::vector<double>(p, p + ne));
          },
          py::arg("stretch"),
          "natural stretch of every rod edge (nedge, finite and positive): each edge's natural "
          "length becomes its rest length times the value (1: at rest; 0.9: contracted by 10 %), "
          "from the next step on, in place of the scene's rod_stretch actuation; None: back to "
          "the scene's")
      .def(
          "set_fixed_targets",
          [](Simulator& s, py::object v) {
            if (v.is_none()) return s.set_fixed_targets({});
            const Model& md = s.model();
            const py::ssize_t nf = py::ssize_t(md.fixed_dof.size());
            const Array a = real_array(v, "fixed_targets");
            const double* p = checked(a, {nf}, "fixed_targets");
            s.set_fixed_targets(std::vector<double>(p, p + nf));
          },
          py::arg("targets"),
          "prescribed motion: every fixed DOF's value at the end of each following step "
          "(Model.fixed_dofs order); None goes back to the scene's motions")
      .def(
          "fix_dofs",
          [](Simulator& s, py::object dofs) {
            s.fix_dofs(dof_list(s.model(), dofs, "fix_dofs", false));
          },
          py::arg("dofs"),
          "fixes DOFs now (node i's coordinate c is DOF 3 i + c, edge j's twist 3 nnode + j): "
          "each holds where it is from here on, its velocity set to 0")
      .def(
          "release_dofs",
          [](Simulator& s, py::object dofs) {
            s.release_dofs(dof_list(s.model(), dofs, "release_dofs", true));
          },
          py::arg("dofs"), "releases DOFs now: each moves on freely with the velocity it has")
      .def(
          "fix_nodes",
          [](Simulator& s, py::object nodes) {
            s.fix_dofs(node_dof_list(s.model(), nodes, "fix_nodes", false));
          },
          py::arg("nodes"), "fix_dofs of the three coordinates of each node (global indices)")
      .def(
          "release_nodes",
          [](Simulator& s, py::object nodes) {
            s.release_dofs(node_dof_list(s.model(), nodes, "release_nodes", true));
          },
          py::arg("nodes"), "release_dofs of the three coordinates of each node")
      .def_property_readonly(
          "fixed_dofs", [](const Simulator& s) { return flagged(s.dof_fixed()); },
          "the DOFs held now, ascending (Model.fixed_dofs as the scene's events and the fix / "
          "release calls changed them)")
      .def_property_readonly(
          "twist_angles",
          [](const Simulator& s) {
            const Model& md = s.model();
            py::array_t<double> a(md.nedge);
            std::copy(s.state().q.begin() + 3 * md.nnode,
                      s.state().q.begin() + 3 * md.nnode + md.nedge, a.mutable_data());
            return a;
          },
          "the twist angle theta of every rod edge (nedge) [rad]")
      .def_property_readonly(
          "twist_velocities",
          [](const Simulator& s) {
            const Model& md = s.model();
            py::array_t<double> a(md.nedge);
            std::copy(s.state().u.begin() + 3 * md.nnode,
                      s.state().u.begin() + 3 * md.nnode + md.nedge, a.mutable_data());
            return a;
          },
          "the twist velocity omega of every rod edge (nedge) [rad/s]")
      .def(
          "set_twist_angles",
          [](Simulator& s, const py::object& o) {
            const Array a = real_array(o, "twist_angles");
            const double* p = checked(a, {s.model().nedge}, "twist_angles");
            s.set_twist_angles(std::vector<double>(p, p + s.model().nedge));
          },
          py::arg("theta"),
          "the twist angles of every rod edge (nedge) [rad] become theta now (the rest of the "
          "state stays)")
      .def(
          "set_twist_velocities",
          [](Simulator& s, const py::object& o) {
            const Array a = real_array(o, "twist_velocities");
            const double* p = checked(a, {s.model().nedge}, "twist_velocities");
            s.set_twist_velocities(std::vector<double>(p, p + s.model().nedge));
          },
          py::arg("omega"),
          "the twist velocities of every rod edge (nedge) [rad/s] become omega now")
      .def(
          "strains",
          [](const Simulator& s) {
            return strain_dict(s.model(), 0, [&](StrainKind k) { return s.strains(k); });
          },
          "the strains of the current state by name: 'stretch' l / l_bar - 1 per rod edge "
          "(nedge,), 'bend_twist' kappa1, kappa2, tau per bend-twist stencil (nbend, 3), "
          "'hinge_angle' per hinge [rad] (nhinge,), 'shape_operator' the mid-edge shape "
          "operator per mid-edge triangle [1/m] (nmid, 3, 3)")
      .def(
          "run",
          [](Simulator& s, py::object out_dir, py::object duration, py::object dt, py::object every,
             bool write_outputs, py::object usd) {
            RunOptions o;
            o.progress = false;
            o.write_outputs = write_outputs;
            if (!usd.is_none()) {
              if (!write_outputs) {
                throw InputError("<arguments>", 0, "usd", "write_outputs=False writes no .usda");
              }
              o.usd_path = py::str(usd).cast<std::string>();
            }
            if (!out_dir.is_none()) o.out_dir = py::str(out_dir).cast<std::string>();
            if (!duration.is_none()) o.duration = duration.cast<double>();
            if (!dt.is_none()) o.dt = dt.cast<double>();
            if (!every.is_none()) o.every = every.cast<int>();
            std::ostringstream log;
            RunResult r;
            {
              py::gil_scoped_release release;  // a force callback takes it back
              r = run_simulation(s, o, log);
            }
            py::dict d;
            d["ok"] = r.ok;
            d["interrupted"] = r.interrupted;
            d["steps"] = r.steps;
            d["sim_time"] = r.sim_time;
            d["wall_seconds"] = r.wall_seconds;
            d["newton_iters"] = r.newton_iters;
            d["steps_without_iteration"] = r.steps_without_iteration;
            d["dt_halvings"] = r.dt_halvings;
            d["message"] = r.message;
            d["files"] = r.files;
            d["log"] = log.str();
            return d;
          },
          py::arg("out_dir") = py::none(), py::arg("duration") = py::none(),
          py::arg("dt") = py::none(), py::arg("every") = py::none(),
          py::arg("write_outputs") = true, py::arg("usd") = py::none(),
          "the run loop of `slender run` (include/slender/run.h) from the current state: "
          "steps to the scene's duration (or `duration` [s]) at its dt (or `dt`), the last "
          "step shortened to land on the end time, an adaptive integrator halving dt on "
          "failure; records the scene's outputs (every `every`-th step) into its output.dir "
          "(or `out_dir`). Returns a dict: ok, interrupted, steps, sim_time, wall_seconds, "
          "newton_iters, steps_without_iteration, dt_halvings, message (the summary, or why "
          "the run stopped), files (written), log (notes made during the run). `usd`: also write "
          "the records into this .usda file (slender run --usd, docs/usd.md)")
      .def_property_readonly(
          "controller",
          [](py::object self) {
            Simulator* s = &self.cast<Simulator&>();
            return python::controller_view([s] { return s->controller(); }, false, self);
          },
          "the feedback controllers on natural strains (slender.StrainController, "
          "docs/control.md): the scene's, or those of set_controllers; None without any")
      .def(
          "set_controllers",
          [](py::object self, const py::object& specs) {
            Simulator* s = &self.cast<Simulator&>();
            s->set_controllers(python::controllers_from(specs, s->model().scene));
            return python::controller_view([s] { return s->controller(); }, false, self);
          },
          py::arg("controllers"),
          "replaces the controllers: a list of dicts as a scene's \"controllers\" (or its JSON "
          "text; [] removes them); returns the new StrainController (ValueError naming the "
          "entry and field for bad input)")
      .def_property_readonly("backend",
                             [](const Simulator& s) { return backend_name(s.backend()); })
      .def_property_readonly("linear_solver", &Simulator::linear_solver_name);

  py::class_<PyBatch>(m, "BatchedSimulator")
      .def(py::init([](std::shared_ptr<Model> md, int nenv, const std::string& engine,
                       const std::string& backend, const std::string& solver) {
             const BatchEngine eng = batch_engine(engine);
             // refused before anything is allocated when it would not fit (MemoryError)
             if (nenv >= 1) {
               const BackendKind bk = backend_kind(backend);
               BatchedSimulator::require_memory(
                   py_batch_memory(*md, nenv, eng, bk, solver_kind(solver)), nenv,
                   bk == BackendKind::kCuda ? BatchEngine::kVectorized : eng, bk, "num_envs");
             }
             auto b = std::make_unique<PyBatch>();
             b->model = md;
             b->batch = std::make_unique<BatchedSimulator>(
                 md, nenv, md->scene.integrator, solver_kind(solver), eng, backend_kind(backend));
             return b;
           }),
           py::arg("model"), py::arg("num_envs"), py::arg("engine") = "per-env",
           py::arg("backend") = "cpu", py::arg("solver") = "auto",
           "num_envs copies of the model; engine 'per-env' (every model, per-environment "
           "parameters) or 'vectorized' (rods, shells and rod-shell models without contact "
           "between bodies, one masked Newton iteration over all environments; solver 'auto', "
           "'banded', 'dense' or 'pcg'); backend 'cuda' runs the vectorized engine on the GPU. "
           "A batch whose estimated memory (memory_estimate) does not fit in the memory "
           "available is a MemoryError, raised before anything is allocated")
      .def_static(
          "memory_estimate",
          [](std::shared_ptr<Model> md, int nenv, const std::string& engine,
             const std::string& backend, const std::string& solver) {
            const BatchMemory b = py_batch_memory(*md, nenv, batch_engine(engine),
                                                  backend_kind(backend), solver_kind(solver));
            py::dict d;
            d["host_per_env"] = b.host_per_env;
            d["host_fixed"] = b.host_fixed;
            d["host"] = b.host(nenv);
            d["device_per_env"] = b.device_per_env;
            d["device_fixed"] = b.device_fixed;
            d["device"] = b.device(nenv);
            d["available"] = double(available_memory_bytes());
            return d;
          },
          py::arg("model"), py::arg("num_envs"), py::arg("engine") = "per-env",
          py::arg("backend") = "cpu", py::arg("solver") = "auto",
          "The memory [bytes] a BatchedSimulator of these arguments needs, estimated from the "
          "sizes of the arrays its engine allocates, without allocating them: a dict of "
          "host_per_env, host_fixed and host (the total), device_per_env, device_fixed and "
          "device (the CUDA backend's GPU memory), and available (the host memory this process "
          "may still allocate: MemAvailable, the cgroup's limit, RLIMIT_AS, or "
          "SLENDER_MEMORY_LIMIT)")
      .def_property_readonly("engine",
                             [](const PyBatch& b) {
                               return b.batch->engine() == BatchEngine::kVectorized ? "vectorized"
                                                                                    : "per-env";
                             })
      .def_property_readonly("num_envs", [](const PyBatch& b) { return b.batch->nenv(); })
      .def_property_readonly(
          "linear_solver", [](const PyBatch& b) { return b.batch->solver_name(); },
          "the linear solver in use (the vectorized engine: 'banded-lu', 'dense-cholesky', "
          "'dense-lu' or 'pcg')")
      .def_property_readonly(
          "model", [](const PyBatch& b) { return std::const_pointer_cast<Model>(b.model); })
      .def(
          "step",
          [](py::object self) {
            PyBatch& b = self.cast<PyBatch&>();
            {
              py::gil_scoped_release release;
              b.batch->step();
            }
            const auto& reports = b.batch->reports();
            b.status.resize(reports.size());
            for (size_t e = 0; e < reports.size(); ++e)
              b.status[e] = static_cast<signed char>(reports[e].status);
            return py::array_t<signed char>(py::ssize_t(b.status.size()), b.status.data(), self);
          },
          "One step of every environment; returns each one's status code (0 = converged; "
          "otherwise the step failed and that environment kept its state).")
      .def(
          "reset",
          [](PyBatch& b, py::object mask, py::object from_env) {
            std::vector<unsigned char> mk;
            if (!mask.is_none()) {
              // booleans, or integers 0 and 1; floats (whose NaN would count as True) refused
              const py::array a = py::array::ensure(mask);
              const char kind = a ? a.dtype().kind() : '?';
              if (kind != 'b' && kind != 'i' && kind != 'u')
                throw py::type_error("reset: mask must be booleans (or integers 0 and 1), got " +
                                     (a ? "an array of dtype " + std::string(py::str(a.dtype()))
                                        : std::string(Py_TYPE(mask.ptr())->tp_name)));
              if (a.ndim() != 1 || a.shape(0) != b.batch->nenv()) {
                throw InputError("<python>", 0, "mask",
                                 "expected " + std::to_string(b.batch->nenv()) + " booleans");
              }
              const auto ints =
                  a.cast<py::array_t<long long, py::array::c_style | py::array::forcecast>>();
              for (py::ssize_t e = 0; e < ints.shape(0); ++e) {
                const long long v = ints.data()[e];
                if (v != 0 && v != 1)
                  throw InputError("<python>", 0, "mask",
                                   "environment " + std::to_string(e) + "'s entry is " +
                                       std::to_string(v) + ": give booleans or 0 and 1");
                mk.push_back(static_cast<unsigned char>(v));
              }
            }
            if (from_env.is_none()) return b.batch->reset(mk);
            // an environment index: an int (or numpy integer), not a float or a bool
            if (py::isinstance<py::bool_>(from_env) || !PyIndex_Check(from_env.ptr()))
              throw py::type_error("reset: from_env must be an environment index (an int), got " +
                                   std::string(Py_TYPE(from_env.ptr())->tp_name) + " " +
                                   std::string(py::repr(from_env)));
            const long long k =
                py::reinterpret_steal<py::int_>(PyNumber_Index(from_env.ptr())).cast<long long>();
            if (k < 0 || k >= b.batch->nenv())
              throw InputError("<python>", 0, "from_env",
                               "environment " + std::to_string(k) + " out of range (0.." +
                                   std::to_string(b.batch->nenv() - 1) + ")");
            const State src = b.batch->state(k);  // a copy: env k may be among those reset
            b.batch->reset(mk, src);
          },
          py::arg("mask") = py::none(), py::arg("from_env") = py::none(),
          "environments in mask (all when None) back to the initial state, or to environment "
          "from_env's state")
      .def(
          "set_natural_curvature",
          [](PyBatch& b, const py::object& o) {
            natural_action(b, o, {b.model->nbend, 2}, "natural_curvature",
                           &BatchedSimulator::set_natural_curvature);
          },
          "natural curvatures (num_envs x nbend x 2): a host array, or a CUDA array (torch, "
          "CuPy: float64, C-contiguous, on the batch's device) that the CUDA backend copies on "
          "the device")
      .def(
          "set_natural_twist",
          [](PyBatch& b, const py::object& o) {
            natural_action(b, o, {b.model->nbend}, "natural_twist",
                           &BatchedSimulator::set_natural_twist);
          },
          "natural twists (num_envs x nbend) [rad]; a host or a CUDA array, as "
          "set_natural_curvature")
      .def(
          "set_natural_hinge_angle",
          [](PyBatch& b, const py::object& o) {
            natural_action(b, o, {b.model->nhinge}, "natural_hinge_angle",
                           &BatchedSimulator::set_natural_hinge_angle);
          },
          "natural hinge angles (num_envs x nhinge) [rad]; a host or a CUDA array, as "
          "set_natural_curvature")
      .def(
          "set_natural_midedge_curvature",
          [](PyBatch& b, const py::object& o) {
            natural_action(b, o, {b.model->nmid, 3}, "natural_midedge_curvature",
                           &BatchedSimulator::set_natural_midedge_curvature);
          },
          "actuated natural curvature of the mid-edge triangles (num_envs x nmid x 3) [1/m], "
          "components as Model.midedge_curvature_components gives them (0: the rest shape); a "
          "host or a CUDA array, as set_natural_curvature")
      .def(
          "set_natural_stretch",
          [](PyBatch& b, const py::object& o) {
            natural_action(b, o, {b.model->nedge}, "natural_stretch",
                           &BatchedSimulator::set_natural_stretch);
          },
          "natural stretch of every rod edge (num_envs x nedge) [-], finite and positive: an "
          "edge's natural length is its rest length times the value (1: the rest shape); a host "
          "or a CUDA array, as set_natural_curvature")
      .def("set_external_forces",
           [](PyBatch& b, const py::object& o) {
             const Array a = real_array(o, "external_forces");
             b.batch->set_external_forces(
                 checked(a, {b.batch->nenv(), b.model->nnode, 3}, "external_forces"));
           })
      .def(
          "set_fixed_targets",
          [](PyBatch& b, const py::object& o) {
            const Array a = real_array(o, "fixed_targets");
            b.batch->set_fixed_targets(checked(
                a, {b.batch->nenv(), py::ssize_t(b.model->fixed_dof.size())}, "fixed_targets"));
          },
          "prescribed motion: each environment's fixed-DOF values at the end of each following "
          "step (num_envs x len(Model.fixed_dofs)); clear_actions goes back to the scene's")
      .def(
          "fix_dofs",
          [](PyBatch& b, int env, py::object dofs) {
            b.batch->fix_dofs(env, dof_list(*b.model, dofs, "fix_dofs", false));
          },
          py::arg("env"), py::arg("dofs"),
          "fixes DOFs of environment env now (Simulator.fix_dofs); the others keep theirs")
      .def(
          "release_dofs",
          [](PyBatch& b, int env, py::object dofs) {
            b.batch->release_dofs(env, dof_list(*b.model, dofs, "release_dofs", true));
          },
          py::arg("env"), py::arg("dofs"), "releases DOFs of environment env now")
      .def(
          "fix_nodes",
          [](PyBatch& b, int env, py::object nodes) {
            b.batch->fix_dofs(env, node_dof_list(*b.model, nodes, "fix_nodes", false));
          },
          py::arg("env"), py::arg("nodes"), "fixes nodes of environment env now (global indices)")
      .def(
          "release_nodes",
          [](PyBatch& b, int env, py::object nodes) {
            b.batch->release_dofs(env, node_dof_list(*b.model, nodes, "release_nodes", true));
          },
          py::arg("env"), py::arg("nodes"), "releases nodes of environment env now")
      .def(
          "fixed_dofs", [](const PyBatch& b, int env) { return flagged(b.batch->dof_fixed(env)); },
          py::arg("env"), "the DOFs environment env holds now, ascending")
      .def(
          "set_twist_angles",
          [](PyBatch& b, const py::object& o) {
            const Array a = real_array(o, "twist_angles");
            b.batch->set_twist_angles(
                checked(a, {b.batch->nenv(), b.model->nedge}, "twist_angles"));
          },
          py::arg("theta"), "every environment's rod-edge twist angles (num_envs x nedge) [rad]")
      .def(
          "set_twist_velocities",
          [](PyBatch& b, const py::object& o) {
            const Array a = real_array(o, "twist_velocities");
            b.batch->set_twist_velocities(
                checked(a, {b.batch->nenv(), b.model->nedge}, "twist_velocities"));
          },
          py::arg("omega"),
          "every environment's rod-edge twist velocities (num_envs x nedge) [rad/s]")
      .def(
          "twist_angles",
          [](const PyBatch& b) {
            py::array_t<double> a({py::ssize_t(b.batch->nenv()), py::ssize_t(b.model->nedge)});
            b.batch->twist_angles(a.mutable_data());
            return a;
          },
          "the twist angle of every environment's rod edges (num_envs, nedge) [rad]")
      .def(
          "twist_velocities",
          [](const PyBatch& b) {
            py::array_t<double> a({py::ssize_t(b.batch->nenv()), py::ssize_t(b.model->nedge)});
            b.batch->twist_velocities(a.mutable_data());
            return a;
          },
          "the twist velocity of every environment's rod edges (num_envs, nedge) [rad/s]")
      .def(
          "strains",
          [](const PyBatch& b) {
            const int B = b.batch->nenv();
            return strain_dict(*b.model, B, [&](StrainKind k) {
              const Model& m = *b.model;
              const long n = k == StrainKind::kStretch      ? m.nedge
                             : k == StrainKind::kBendTwist  ? 3L * m.nbend
                             : k == StrainKind::kHingeAngle ? m.nhinge
                                                            : 9L * m.nmid;
              std::vector<double> v(size_t(B) * size_t(n));
              if (!v.empty()) b.batch->strains(k, v.data());
              return v;
            });
          },
          "every environment's strains by name, as Simulator.strains with a leading num_envs")
      .def(
          "set_part_youngs_scale",
          [](PyBatch& b, const py::object& o) {
            const Array a = real_array(o, "part_youngs_scale");
            b.batch->set_part_youngs_scale(
                checked(a, {b.batch->nenv(), py::ssize_t(b.model->npart)}, "part_youngs_scale"));
          },
          "each environment's factor of each part's Young's modulus (num_envs x npart, "
          "positive): a limb stiffened or softened by the policy (either engine); "
          "clear_actions goes back to 1")
      .def(
          "set_load_values",
          [](PyBatch& b, const std::string& field, int entry, const py::object& o) {
            const Array a = real_array(o, "load_values");
            b.batch->set_load_values(field, entry, checked(a, {b.batch->nenv()}, "load_values"));
          },
          py::arg("field"), py::arg("entry"), py::arg("values"),
          "each environment's value (num_envs) of the load of entry `entry` of the scene field "
          "forces.<field>, in place of its signal from the next step on: a pressure chamber's "
          "pressure [Pa], a wrench's or a shell pressure's factor (either engine); "
          "clear_actions goes back to the time functions")
      .def("clear_actions", [](PyBatch& b) { b.batch->clear_actions(); })
      .def(
          "set_params",
          [](PyBatch& b, int env, double youngs_scale, double density_scale, double ground_friction,
             py::object gravity, double mass_damping) {
            b.batch->set_params(env, make_params(youngs_scale, density_scale, ground_friction,
                                                 gravity, mass_damping));
          },
          py::arg("env"), py::arg("youngs_scale") = 1.0, py::arg("density_scale") = 1.0,
          py::arg("ground_friction") = -1.0, py::arg("gravity") = py::none(),
          py::arg("mass_damping") = -1.0)
      .def(
          "save",
          [](const PyBatch& b, int env, const std::string& path) {
            save_checkpoint(*b.batch, env, path);
          },
          py::arg("env"), py::arg("path"),
          "writes environment env's whole state to a checkpoint file (atomically; the format of "
          "Simulator.save): load(env, path) continues from it bit for bit")
      .def(
          "load",
          [](PyBatch& b, int env, const std::string& path) {
            load_checkpoint(*b.batch, env, path);
          },
          py::arg("env"), py::arg("path"),
          "environment env takes the state of a checkpoint written for this model (by save or "
          "Simulator.save); the others keep theirs. Actions and parameters are the caller's to "
          "set again (ValueError naming the file for another model's or a damaged one)")
      .def(
          "live_positions", [](py::object self) { return live_view(self, false); },
          "The node positions (num_envs, nnode, 3) as the simulator holds them (device memory "
          "on the CUDA backend): a DLPack producer, e.g. "
          "torch.from_dlpack(batch.live_positions()); "
          "the values follow the steps without copies")
      .def(
          "live_velocities", [](py::object self) { return live_view(self, true); },
          "The node velocities, as live_positions")
      .def("positions",
           [](py::object self) {
             PyBatch& b = self.cast<PyBatch&>();
             b.pos.resize(size_t(b.batch->nenv()) * b.model->nnode * 3);
             b.batch->positions(b.pos.data());
             return view(b.pos, {b.batch->nenv(), b.model->nnode, 3}, self);
           })
      .def("velocities",
           [](py::object self) {
             PyBatch& b = self.cast<PyBatch&>();
             b.vel.resize(size_t(b.batch->nenv()) * b.model->nnode * 3);
             b.batch->velocities(b.vel.data());
             return view(b.vel, {b.batch->nenv(), b.model->nnode, 3}, self);
           })
      .def("curvatures",
           [](py::object self) {
             PyBatch& b = self.cast<PyBatch&>();
             b.curv.resize(size_t(b.batch->nenv()) * b.model->nbend * 3);
             b.batch->curvatures(b.curv.data());
             return view(b.curv, {b.batch->nenv(), b.model->nbend, 3}, self);
           })
      .def("ground_contacts",
           [](py::object self) {
             PyBatch& b = self.cast<PyBatch&>();
             b.contact.resize(size_t(b.batch->nenv()) * b.model->nnode);
             b.batch->ground_contacts(b.contact.data());
             return py::array_t<unsigned char>(
                 {py::ssize_t(b.batch->nenv()), py::ssize_t(b.model->nnode)}, b.contact.data(),
                 self);
           })
      .def("times",
           [](py::object self) {
             PyBatch& b = self.cast<PyBatch&>();
             b.time.resize(size_t(b.batch->nenv()));
             b.batch->times(b.time.data());
             return view(b.time, {b.batch->nenv()}, self);
           })
      .def_property_readonly(
          "controller",
          [](py::object self) {
            BatchedSimulator* b = self.cast<PyBatch&>().batch.get();
            return python::controller_view([b] { return b->controller(); }, true, self);
          },
          "the feedback controllers of every environment (slender.StrainController: arrays of "
          "shape (num_envs, springs)); None without any")
      .def(
          "set_controllers",
          [](py::object self, const py::object& specs) {
            BatchedSimulator* b = self.cast<PyBatch&>().batch.get();
            b->set_controllers(python::controllers_from(specs, b->model().scene));
            return python::controller_view([b] { return b->controller(); }, true, self);
          },
          py::arg("controllers"),
          "replaces every environment's controllers (as Simulator.set_controllers)");
}
