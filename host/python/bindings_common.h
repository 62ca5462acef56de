#pragma once

// What the Python bindings' topics share (bindings.cpp and bind_*.cpp): the argument readers
// (solver and backend names, arrays of a given shape, DOF lists), numpy views of kept buffers,
// the DLPack views of a batch's live state and the batch's observation buffers. Internal to the
// module _core.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "python/control_bindings.h"
#include "runtime/memory_budget.h"
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

namespace slender {
namespace python {

namespace py = pybind11;

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

inline LinearSolverKind solver_kind(const std::string& name) {
  LinearSolverKind kind;
  if (!linear_solver_from_name(name, kind)) {
    throw InputError("<python>", 0, "solver",
                     "unknown solver '" + name + "' (" + linear_solver_names() + ")");
  }
  return kind;
}

inline BackendKind backend_kind(const std::string& name) {
  BackendKind kind;
  if (backend_from_name(name, kind)) return kind;
  throw InputError("<python>", 0, "backend", "unknown backend '" + name + "' (cpu or cuda)");
}

// a numpy view of `data` (shape), owned by `owner`
inline py::array view(std::vector<double>& data, std::vector<py::ssize_t> shape, py::handle owner) {
  return py::array_t<double>(shape, data.data(), owner);
}

// a read-only numpy array of a listed array (stencils/model_arrays.h): (count,) or (count,
// width), a view owned by `owner` or, without one, a copy
template <class T>
inline py::array listed_array(const std::vector<T>& v, long count, int width, py::handle owner) {
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
inline Array real_array(const py::handle& o, const char* what) {
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
inline std::string shape_text(const T* dims, long n) {
  std::string s = "(";
  for (long i = 0; i < n; ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + ")";
}

// checks an action array's shape and returns a pointer to its data
inline const double* checked(const Array& a, std::vector<py::ssize_t> shape, const char* what) {
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

// refuses a NaN or infinite value among n values (rows of `width`), naming the argument, the
// row (`row`: "node", "environment", ...) and the column
inline void check_finite(
    const double* v, size_t n, size_t width, const char* what, const char* row) {
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

inline void dlpack_delete(DLManagedTensor* t) {
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

inline py::capsule make_capsule(const LiveView& v) {
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

inline BatchEngine batch_engine(const std::string& engine) {
  if (engine == "vectorized") return BatchEngine::kVectorized;
  if (engine != "per-env")
    throw InputError("<python>", 0, "engine",
                     "unknown engine '" + engine + "' (per-env or vectorized)");
  return BatchEngine::kPerEnvironment;
}

// the memory of a batch and of its observation buffers (PyBatch's, per environment: positions,
// velocities, curvatures, times, ground contacts, statuses)
inline BatchMemory py_batch_memory(
    const Model& md, int nenv, BatchEngine engine, BackendKind backend, LinearSolverKind solver) {
  BatchMemory b =
      BatchedSimulator::memory_estimate(md, nenv, md.scene.integrator, solver, engine, backend);
  b.host_per_env += sizeof(double) * (6.0 * md.nnode + 3.0 * md.nbend + 1) + md.nnode + 1;
  return b;
}

inline py::dict report_dict(const StepReport& r) {
  py::dict d;
  d["ok"] = r.ok();
  d["status"] = std::string(to_string(r.status));
  d["iterations"] = r.iterations;
  d["residual"] = r.residual;
  d["residual0"] = r.residual0;
  d["dt"] = r.dt;
  return d;
}

inline EnvParams make_params(double youngs_scale,
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
inline std::vector<int> dof_list(const Model& m,
                                 const py::object& o,
                                 const char* what,
                                 bool release) {
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
inline std::vector<int> node_dof_list(const Model& m,
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
inline py::array_t<int> flagged(const std::vector<unsigned char>& mask) {
  std::vector<int> idx;
  for (size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) idx.push_back(int(i));
  py::array_t<int> a(py::ssize_t(idx.size()));
  std::copy(idx.begin(), idx.end(), a.mutable_data());
  return a;
}

// a strain kind's values as an array: (count,) or (count, 3) or (count, 3, 3), with a leading
// num_envs when nenv > 0
inline py::array strain_array(const std::vector<double>& v, long count, StrainKind kind, int nenv) {
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
inline py::dict strain_dict(const Model& m, int nenv, const Get& get) {
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
inline py::array_t<int> part_items(const Model& md, const py::object& part, bool edges) {
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

// An action given as an array on a CUDA device (a torch tensor, a CuPy array: anything with
// __dlpack__ whose __dlpack_device__ is CUDA) goes to the batch as a device pointer: checked
// (float64, the action's shape, C-contiguous, the batch's device) and copied on the device with
// no trip through the host. Returns false, doing nothing, for an array that is not on a CUDA
// device (numpy, a CPU tensor): the caller takes the host path.
inline bool device_action(PyBatch& b,
                          const py::object& o,
                          std::vector<int64_t> shape,
                          const char* what,
                          void (BatchedSimulator::*set)(const Real*,
                                                        BatchedSimulator::ArrayPlace)) {
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
inline void natural_action(PyBatch& b,
                           const py::object& o,
                           std::vector<py::ssize_t> shape,
                           const char* what,
                           void (BatchedSimulator::*set)(const Real*,
                                                         BatchedSimulator::ArrayPlace)) {
  shape.insert(shape.begin(), b.batch->nenv());
  if (device_action(b, o, std::vector<int64_t>(shape.begin(), shape.end()), what, set)) return;
  const Array a = real_array(o, what);
  ((*b.batch).*set)(checked(a, shape, what), BatchedSimulator::ArrayPlace::kHost);
}

// a live DLPack view of a batch's positions or velocities (the vectorized engine's state)
inline LiveView live_view(py::object self, bool velocities) {
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

/// the topics' registrations, called in this order by PYBIND11_MODULE (bindings.cpp)
void bind_model(py::module_& m);
void bind_rollout(py::module_& m);
void bind_simulator(py::module_& m);
void bind_batch(py::module_& m);

}  // namespace python
}  // namespace slender
