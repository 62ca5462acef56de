// Python bindings: one simulation (slender.Simulator).

#include "python/bindings_common.h"

namespace slender {
namespace python {

void bind_simulator(py::module_& m) {
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
          "reactions",
          [](const Simulator& s) {
            const std::vector<Real> r = s.reactions();
            const Model& md = s.model();
            py::array_t<double> a(py::ssize_t(md.ndof));
            std::copy(r.begin(), r.end(), a.mutable_data());
            return a;
          },
          "the forces the supports exert at the current state (ndof,) [N, N m]: at every held "
          "DOF grad E - F of the static problem (internal forces against gravity, buoyancy, the "
          "point loads and external forces at the current time); 0 at the free DOFs")
      .def(
          "shell_bending_energy_density",
          [](const Simulator& s) {
            const std::vector<Real> d = s.shell_bending_energy_density();
            py::array_t<double> a(py::ssize_t(d.size()));
            std::copy(d.begin(), d.end(), a.mutable_data());
            return a;
          },
          "every triangle's shell bending energy per rest area at the current state (ntri,) "
          "[J/m^2]")
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
}

}  // namespace python
}  // namespace slender
