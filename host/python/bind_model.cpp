// Python bindings: the model (slender.Model, its arrays and queries) and the module's functions
// that load, build and export (load_model, _build_model_text, cuda_device_count, export_usd).

#include "python/bindings_common.h"

namespace slender {
namespace python {

void bind_model(py::module_& m) {
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
      .def_property_readonly(
          "load_names",
          [](const Model& md) {
            std::vector<std::string> names;
            for (size_t k = 0; k < md.signals.size(); ++k)
              names.push_back(md.signal_field[k] + "[" + std::to_string(md.signal_entry[k]) + "]");
            return names;
          },
          "the actuators' loads an action may set (set_load_value; a Rollout's loads), in their "
          "order: \"field[entry]\", such as \"tendons[0]\"")
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
}

}  // namespace python
}  // namespace slender
