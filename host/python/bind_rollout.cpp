// Python bindings: gradients through time (slender.Rollout; slender/adjoint.h, docs/gradients.md).

#include "python/bindings_common.h"

namespace slender {
namespace python {

namespace {

// an optional array argument of the given shape, copied (None: empty); a wrong shape or a value
// that is not a number is a ValueError naming `what`
std::vector<Real> optional_array(const py::object& o,
                                 const std::vector<py::ssize_t>& shape,
                                 const char* what) {
  std::vector<Real> v;
  if (o.is_none()) return v;
  const Array a = real_array(o, what);
  size_t n = 1;
  for (py::ssize_t d : shape)
    n *= size_t(d);
  const double* p = checked(a, shape, what);
  v.assign(p, p + n);
  return v;
}

}  // namespace

void bind_rollout(py::module_& m) {
  // gradients through time (slender/adjoint.h, docs/gradients.md)
  struct PyRollout {
    std::shared_ptr<Model> model;
    std::unique_ptr<RolloutAdjoint> ad;
    int steps = 0;
  };
  py::class_<PyRollout>(m, "Rollout")
      .def(py::init([](std::shared_ptr<Model> md, int checkpoint_every, const std::string& solver,
                       const std::string& backend) {
             auto r = std::make_unique<PyRollout>();
             r->model = md;
             RolloutOptions o;
             o.checkpoint_every = checkpoint_every;
             o.solver = solver_kind(solver);
             o.backend = backend_kind(backend);
             r->ad = std::make_unique<RolloutAdjoint>(md, md->scene.integrator, o);
             return r;
           }),
           py::arg("model"), py::arg("checkpoint_every") = 1, py::arg("solver") = "auto",
           py::arg("backend") = "cpu")
      .def(
          "run",
          [](PyRollout& r, int steps, const py::object& kappa_bar, const py::object& tau_bar,
             const py::object& forces, const py::object& q0, const py::object& u0,
             const py::object& part_youngs_scale, double youngs_scale, double density_scale,
             double mass_damping, const py::object& phi_bar, const py::object& fixed_targets,
             const py::object& loads, double kelvin_voigt_scale, const py::object& a0,
             const py::object& midedge_kappa_bar, const py::object& stretch_bar) {
            const Model& md = *r.model;
            const py::ssize_t nfix = py::ssize_t(md.fixed_dof.size());
            const py::ssize_t nsig = py::ssize_t(md.signals.size());
            RolloutActions a;
            a.kappa_bar = optional_array(kappa_bar, {steps, md.nbend, 2}, "kappa_bar");
            a.tau_bar = optional_array(tau_bar, {steps, md.nbend}, "tau_bar");
            a.phi_bar = optional_array(phi_bar, {steps, md.nhinge}, "phi_bar");
            a.midedge_kappa_bar =
                optional_array(midedge_kappa_bar, {steps, md.nmid, 3}, "midedge_kappa_bar");
            a.stretch_bar = optional_array(stretch_bar, {steps, md.nedge}, "stretch_bar");
            a.forces = optional_array(forces, {steps, md.nnode, 3}, "forces");
            a.fixed_targets = optional_array(fixed_targets, {steps, nfix}, "fixed_targets");
            a.loads = optional_array(loads, {steps, nsig}, "loads");
            RolloutParams p;
            p.part_youngs_scale =
                optional_array(part_youngs_scale, {md.npart}, "part_youngs_scale");
            p.youngs_scale = youngs_scale;
            p.density_scale = density_scale;
            p.mass_damping = mass_damping;
            p.kelvin_voigt_scale = kelvin_voigt_scale;
            State s0 = initial_state(md);
            if (!q0.is_none()) s0 = transported_state(md, s0, optional_array(q0, {md.ndof}, "q0"));
            if (!u0.is_none()) s0.u = optional_array(u0, {md.ndof}, "u0");
            if (!a0.is_none()) s0.a = optional_array(a0, {md.ndof}, "a0");
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
          py::arg("density_scale") = 1.0, py::arg("mass_damping") = -1.0,
          py::arg("phi_bar") = py::none(), py::arg("fixed_targets") = py::none(),
          py::arg("loads") = py::none(), py::arg("kelvin_voigt_scale") = 1.0,
          py::arg("a0") = py::none(), py::arg("midedge_kappa_bar") = py::none(),
          py::arg("stretch_bar") = py::none())
      .def(
          "gradient",
          [](PyRollout& r, const py::object& dq, const py::object& du) {
            const Model& md = *r.model;
            SLENDER_CHECK(r.steps > 0, "gradient: run a rollout first");
            const std::vector<py::ssize_t> shape{r.steps + 1, md.ndof};
            const RolloutGradient g = r.ad->gradient(optional_array(dq, shape, "dL_dq"),
                                                     optional_array(du, shape, "dL_du"));
            auto arr = [](const std::vector<Real>& v, std::vector<py::ssize_t> sh) {
              return py::array_t<double>(sh, v.data());
            };
            py::dict d;
            d["q0"] = arr(g.q0, {md.ndof});
            d["u0"] = arr(g.u0, {md.ndof});
            d["a0"] = arr(g.a0, {md.ndof});
            d["kappa_bar"] = arr(g.kappa_bar, {r.steps, md.nbend, 2});
            d["tau_bar"] = arr(g.tau_bar, {r.steps, md.nbend});
            d["phi_bar"] = arr(g.phi_bar, {r.steps, md.nhinge});
            d["midedge_kappa_bar"] = arr(g.midedge_kappa_bar, {r.steps, md.nmid, 3});
            d["stretch_bar"] = arr(g.stretch_bar, {r.steps, md.nedge});
            d["forces"] = arr(g.forces, {r.steps, md.nnode, 3});
            d["fixed_targets"] = arr(g.fixed_targets, {r.steps, py::ssize_t(md.fixed_dof.size())});
            d["loads"] = arr(g.loads, {r.steps, py::ssize_t(md.signals.size())});
            d["part_youngs_scale"] = arr(g.part_youngs_scale, {md.npart});
            d["youngs_scale"] = g.youngs_scale;
            d["kelvin_voigt_scale"] = g.kelvin_voigt_scale;
            d["density_scale"] = g.density_scale;
            d["mass_damping"] = g.mass_damping;
            return d;
          },
          py::arg("dL_dq") = py::none(), py::arg("dL_du") = py::none())
      .def_property_readonly("checkpoint_bytes",
                             [](const PyRollout& r) { return r.ad->checkpoint_bytes(); })
      .def_property_readonly("recomputed_steps",
                             [](const PyRollout& r) { return r.ad->recomputed_steps(); });

  // a batch of rollouts, each environment its own inputs and gradient (BatchRolloutAdjoint)
  struct PyBatchRollout {
    std::shared_ptr<Model> model;
    std::unique_ptr<BatchRolloutAdjoint> ad;
    int steps = 0;
  };
  py::class_<PyBatchRollout>(m, "BatchRollout")
      .def(py::init([](std::shared_ptr<Model> md, int num_envs, int checkpoint_every,
                       const std::string& solver, const std::string& backend) {
             auto r = std::make_unique<PyBatchRollout>();
             r->model = md;
             RolloutOptions o;
             o.checkpoint_every = checkpoint_every;
             o.solver = solver_kind(solver);
             o.backend = backend_kind(backend);
             r->ad = std::make_unique<BatchRolloutAdjoint>(md, num_envs, md->scene.integrator, o);
             return r;
           }),
           py::arg("model"), py::arg("num_envs"), py::arg("checkpoint_every") = 1,
           py::arg("solver") = "auto", py::arg("backend") = "cpu")
      .def_property_readonly("num_envs", [](const PyBatchRollout& r) { return r.ad->nenv(); })
      .def(
          "run",
          [](PyBatchRollout& r, int steps, const py::object& kappa_bar, const py::object& tau_bar,
             const py::object& forces, const py::object& q0, const py::object& u0,
             const py::object& part_youngs_scale, const py::object& youngs_scale,
             const py::object& density_scale, const py::object& mass_damping,
             const py::object& phi_bar, const py::object& fixed_targets, const py::object& loads,
             const py::object& kelvin_voigt_scale, const py::object& a0,
             const py::object& midedge_kappa_bar, const py::object& stretch_bar) {
            const Model& md = *r.model;
            const int B = r.ad->nenv();
            const py::ssize_t nfix = py::ssize_t(md.fixed_dof.size());
            const py::ssize_t nsig = py::ssize_t(md.signals.size());
            SLENDER_CHECK(steps >= 1, "run: steps must be at least 1, got ", steps);
            // an argument's values per environment (B x shape), or none
            // each argument with a leading num_envs
            auto take = [&](const py::object& o, std::vector<py::ssize_t> shape, const char* what) {
              shape.insert(shape.begin(), B);
              return optional_array(o, shape, what);
            };
            auto slice = [](const std::vector<Real>& v, int B, int e) {
              const size_t n = v.size() / size_t(B);
              return v.empty() ? v : std::vector<Real>(v.begin() + e * n, v.begin() + (e + 1) * n);
            };
            const std::vector<Real> kb = take(kappa_bar, {steps, md.nbend, 2}, "kappa_bar");
            const std::vector<Real> tb = take(tau_bar, {steps, md.nbend}, "tau_bar");
            const std::vector<Real> pb = take(phi_bar, {steps, md.nhinge}, "phi_bar");
            const std::vector<Real> mk =
                take(midedge_kappa_bar, {steps, md.nmid, 3}, "midedge_kappa_bar");
            const std::vector<Real> sb = take(stretch_bar, {steps, md.nedge}, "stretch_bar");
            const std::vector<Real> fo = take(forces, {steps, md.nnode, 3}, "forces");
            const std::vector<Real> ft = take(fixed_targets, {steps, nfix}, "fixed_targets");
            const std::vector<Real> ld = take(loads, {steps, nsig}, "loads");
            const std::vector<Real> pys = take(part_youngs_scale, {md.npart}, "part_youngs_scale");
            const std::vector<Real> ys = take(youngs_scale, {}, "youngs_scale");
            const std::vector<Real> ds = take(density_scale, {}, "density_scale");
            const std::vector<Real> md_ = take(mass_damping, {}, "mass_damping");
            const std::vector<Real> kvs = take(kelvin_voigt_scale, {}, "kelvin_voigt_scale");
            const std::vector<Real> qs = take(q0, {md.ndof}, "q0");
            const std::vector<Real> us = take(u0, {md.ndof}, "u0");
            const std::vector<Real> as = take(a0, {md.ndof}, "a0");
            std::vector<RolloutActions> a(static_cast<size_t>(B));
            std::vector<RolloutParams> p(static_cast<size_t>(B));
            std::vector<State> s0(static_cast<size_t>(B), initial_state(md));
            for (int e = 0; e < B; ++e) {
              a[size_t(e)].kappa_bar = slice(kb, B, e);
              a[size_t(e)].tau_bar = slice(tb, B, e);
              a[size_t(e)].phi_bar = slice(pb, B, e);
              a[size_t(e)].midedge_kappa_bar = slice(mk, B, e);
              a[size_t(e)].stretch_bar = slice(sb, B, e);
              a[size_t(e)].forces = slice(fo, B, e);
              a[size_t(e)].fixed_targets = slice(ft, B, e);
              a[size_t(e)].loads = slice(ld, B, e);
              p[size_t(e)].part_youngs_scale = slice(pys, B, e);
              if (!ys.empty()) p[size_t(e)].youngs_scale = ys[size_t(e)];
              if (!ds.empty()) p[size_t(e)].density_scale = ds[size_t(e)];
              if (!md_.empty()) p[size_t(e)].mass_damping = md_[size_t(e)];
              if (!kvs.empty()) p[size_t(e)].kelvin_voigt_scale = kvs[size_t(e)];
              if (!qs.empty())
                s0[size_t(e)] = transported_state(md, s0[size_t(e)], slice(qs, B, e));
              if (!us.empty()) s0[size_t(e)].u = slice(us, B, e);
              if (!as.empty()) s0[size_t(e)].a = slice(as, B, e);
            }
            std::vector<Real> q, u;
            {
              py::gil_scoped_release free;
              r.ad->run(s0, steps, a, p, &q, &u);
            }
            r.steps = steps;
            const std::vector<py::ssize_t> shape{B, steps + 1, md.ndof};
            return py::make_tuple(py::array_t<double>(shape, q.data()),
                                  py::array_t<double>(shape, u.data()));
          },
          py::arg("steps"), py::arg("kappa_bar") = py::none(), py::arg("tau_bar") = py::none(),
          py::arg("forces") = py::none(), py::arg("q0") = py::none(), py::arg("u0") = py::none(),
          py::arg("part_youngs_scale") = py::none(), py::arg("youngs_scale") = py::none(),
          py::arg("density_scale") = py::none(), py::arg("mass_damping") = py::none(),
          py::arg("phi_bar") = py::none(), py::arg("fixed_targets") = py::none(),
          py::arg("loads") = py::none(), py::arg("kelvin_voigt_scale") = py::none(),
          py::arg("a0") = py::none(), py::arg("midedge_kappa_bar") = py::none(),
          py::arg("stretch_bar") = py::none(),
          "every environment's rollout of `steps` steps, each argument with a leading num_envs "
          "(None: the model's); returns q, u (num_envs, steps + 1, ndof)")
      .def(
          "gradient",
          [](PyBatchRollout& r, const py::object& dq, const py::object& du) {
            const Model& md = *r.model;
            const int B = r.ad->nenv();
            SLENDER_CHECK(r.steps > 0, "gradient: run the rollouts first");
            const std::vector<py::ssize_t> shape{B, r.steps + 1, md.ndof};
            const std::vector<Real> gq = optional_array(dq, shape, "dL_dq"),
                                    gu = optional_array(du, shape, "dL_du");
            std::vector<RolloutGradient> g;
            {
              py::gil_scoped_release free;
              g = r.ad->gradient(gq, gu);
            }
            auto stack = [&](auto get, std::vector<py::ssize_t> sh) {
              sh.insert(sh.begin(), B);
              py::array_t<double> a(sh);
              double* out = a.mutable_data();
              size_t k = 0;
              for (const RolloutGradient& x : g) {
                const std::vector<Real>& v = get(x);
                std::copy(v.begin(), v.end(), out + k);
                k += v.size();
              }
              return a;
            };
            auto scalars = [&](auto get) {
              py::array_t<double> a(B);
              for (int e = 0; e < B; ++e)
                a.mutable_at(e) = get(g[size_t(e)]);
              return a;
            };
            py::dict d;
            d["q0"] =
                stack([](const RolloutGradient& x) -> const std::vector<Real>& { return x.q0; },
                      {md.ndof});
            d["u0"] =
                stack([](const RolloutGradient& x) -> const std::vector<Real>& { return x.u0; },
                      {md.ndof});
            d["a0"] =
                stack([](const RolloutGradient& x) -> const std::vector<Real>& { return x.a0; },
                      {md.ndof});
            d["kappa_bar"] = stack(
                [](const RolloutGradient& x) -> const std::vector<Real>& { return x.kappa_bar; },
                {r.steps, md.nbend, 2});
            d["tau_bar"] = stack(
                [](const RolloutGradient& x) -> const std::vector<Real>& { return x.tau_bar; },
                {r.steps, md.nbend});
            d["phi_bar"] = stack(
                [](const RolloutGradient& x) -> const std::vector<Real>& { return x.phi_bar; },
                {r.steps, md.nhinge});
            d["midedge_kappa_bar"] = stack(
                [](const RolloutGradient& x) -> const std::vector<Real>& {
                  return x.midedge_kappa_bar;
                },
                {r.steps, md.nmid, 3});
            d["stretch_bar"] = stack(
                [](const RolloutGradient& x) -> const std::vector<Real>& { return x.stretch_bar; },
                {r.steps, md.nedge});
            d["forces"] =
                stack([](const RolloutGradient& x) -> const std::vector<Real>& { return x.forces; },
                      {r.steps, md.nnode, 3});
            d["fixed_targets"] = stack(
                [](const RolloutGradient& x) -> const std::vector<Real>& {
                  return x.fixed_targets;
                },
                {r.steps, py::ssize_t(md.fixed_dof.size())});
            d["loads"] =
                stack([](const RolloutGradient& x) -> const std::vector<Real>& { return x.loads; },
                      {r.steps, py::ssize_t(md.signals.size())});
            d["part_youngs_scale"] = stack(
                [](const RolloutGradient& x) -> const std::vector<Real>& {
                  return x.part_youngs_scale;
                },
                {md.npart});
            d["youngs_scale"] = scalars([](const RolloutGradient& x) { return x.youngs_scale; });
            d["kelvin_voigt_scale"] =
                scalars([](const RolloutGradient& x) { return x.kelvin_voigt_scale; });
            d["density_scale"] = scalars([](const RolloutGradient& x) { return x.density_scale; });
            d["mass_damping"] = scalars([](const RolloutGradient& x) { return x.mass_damping; });
            return d;
          },
          py::arg("dL_dq") = py::none(), py::arg("dL_du") = py::none(),
          "every environment's gradient of the last run's loss (dL_dq, dL_du: num_envs, steps + 1, "
          "ndof): a dict of arrays with a leading num_envs");
}

}  // namespace python
}  // namespace slender
