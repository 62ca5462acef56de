// Python bindings: batches of environments (slender.BatchedSimulator) and the DLPack views of
// their live state (LiveView).

#include "python/bindings_common.h"

namespace slender {
namespace python {

void bind_batch(py::module_& m) {
  py::class_<LiveView>(m, "LiveView",
                       "A zero-copy view of a simulator's live state for DLPack consumers "
                       "(numpy.from_dlpack, torch.from_dlpack)")
      .def(
          "__dlpack__",
          [](const LiveView& v, py::object stream) {
            // every call that changes the batch's state returns with its device work done
            // (BatchedSimulatorEngineOn), so the data is ready on any consumer stream
            (void)stream;
            return make_capsule(v);
          },
          py::arg("stream") = py::none())
      .def("__dlpack_device__",
           [](const LiveView& v) { return py::make_tuple(v.cuda ? 2 : 1, v.cuda ? v.device : 0); })
      .def_property_readonly("shape", [](const LiveView& v) { return v.shape; })
      .def_property_readonly("device", [](const LiveView& v) { return v.cuda ? "cuda" : "cpu"; });

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
          "energies",
          [](const PyBatch& b) {
            const std::vector<Energies> en = b.batch->energies();
            const py::ssize_t B = py::ssize_t(en.size());
            py::dict d;
            auto field = [&](const char* name, auto get) {
              py::array_t<double> a(B);
              for (py::ssize_t e = 0; e < B; ++e)
                a.mutable_at(e) = get(en[size_t(e)]);
              d[name] = a;
            };
            field("kinetic", [](const Energies& e) { return e.kinetic; });
            field("stretch", [](const Energies& e) { return e.stretch; });
            field("bend", [](const Energies& e) { return e.bend; });
            field("twist", [](const Energies& e) { return e.twist; });
            field("gravity", [](const Energies& e) { return e.gravity; });
            field("user", [](const Energies& e) { return e.user; });
            field("load", [](const Energies& e) { return e.load; });
            field("total", [](const Energies& e) { return e.total(); });
            return d;
          },
          "every environment's energies by kind (num_envs each), as Simulator.energies: "
          "kinetic, stretch, bend, twist, gravity, user, load, total [J]")
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

}  // namespace python
}  // namespace slender
