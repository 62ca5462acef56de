#include "slender/info.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

namespace slender {
namespace {

std::string num(double v, int digits = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// bytes in binary units: "812 B", "3.4 KiB", "12.0 MiB"
std::string bytes(size_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%zu B", b);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  }
  return buf;
}

// one "label  value" line, labels padded to one column
void line(std::ostringstream& os, const char* label, const std::string& value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%-12s", label);
  os << buf << value << '\n';
}

std::string parts_text(const Model& m) {
  const int npart = int(m.part_name.size());
  std::string s = std::to_string(npart);
  for (int p = 0; p < npart; ++p) {
    const bool has_nodes = int(m.part_node_adr.size()) > p + 1;
    const bool has_edges = int(m.part_edge_adr.size()) > p + 1;
    const int nn = has_nodes ? m.part_node_adr[p + 1] - m.part_node_adr[p] : 0;
    const int ne = has_edges ? m.part_edge_adr[p + 1] - m.part_edge_adr[p] : 0;
    s += p == 0 ? ": " : ", ";
    s += (m.part_name[p].empty() ? "#" + std::to_string(p) : m.part_name[p]) + " (" +
         std::to_string(nn) + " nodes, " + std::to_string(ne) + " edges)";
  }
  return s;
}

std::string integrator_text(const IntegratorSpec& in) {
  std::string s = integrator_name(in.kind);
  if (in.kind == IntegratorKind::kNewmark) {
    s += " (beta " + num(in.beta) + ", gamma " + num(in.gamma) + ")";
  }
  const bool is_static = in.kind == IntegratorKind::kStatic;
  s += ", dt = " + num(in.dt) + " s, duration " + num(in.duration) + " s";
  if (in.dt > 0 && in.duration >= 0) {
    const long steps = long(std::ceil(in.duration / in.dt - 1e-9));
    s += ", " + std::to_string(steps < 0 ? 0 : steps) + (is_static ? " load steps" : " steps");
  }
  if (in.adaptive) {
    const Real min_dt = in.min_dt > 0 ? in.min_dt : in.dt / 1024;
    s += ", adaptive (min_dt " + num(min_dt, 3) + " s)";
  }
  if (in.two_d) s += ", 2D (x-z plane)";
  return s;
}

std::string output_text(const OutputSpec& o) {
  std::string s =
      o.dir + " (every " + std::to_string(o.every) + (o.every == 1 ? " step" : " steps");
  if (o.vtk) s += ", vtk";
  if (o.energies) s += ", energies.csv";
  if (!o.csv_nodes.empty()) s += ", nodes.csv of " + std::to_string(o.csv_nodes.size()) + " nodes";
  return s + ")";
}

}  // namespace

const char* integrator_name(IntegratorKind k) {
  switch (k) {
    case IntegratorKind::kImplicitEuler:
      return "implicit-euler";
    case IntegratorKind::kImplicitMidpoint:
      return "implicit-midpoint";
    case IntegratorKind::kNewmark:
      return "newmark";
    case IntegratorKind::kStatic:
      return "static";
  }
  return "unknown";
}

size_t state_bytes_per_env(const Model& m) {
  // q, u, a (ndof each), edge_d1 and edge_t (nedge x 3 each), bend_ref_twist (nbend),
  // sedge_tau0 (nsedge x 3)
  const size_t reals =
      3 * size_t(m.ndof) + 6 * size_t(m.nedge) + size_t(m.nbend) + 3 * size_t(m.nsedge);
  return reals * sizeof(Real);
}

std::string model_info(const Model& m) {
  std::ostringstream os;
  const SceneSpec& sc = m.scene;
  line(os, "scene", sc.name + (sc.file.empty() ? "" : " (" + sc.file + ")"));
  line(os, "nodes", std::to_string(m.nnode));
  line(os, "edges", std::to_string(m.nedge));
  line(os, "bend-twist", std::to_string(m.nbend) + " stencils");
  if (m.ntri > 0) {
    line(os, "shells",
         std::to_string(m.ntri) + " triangles, " + std::to_string(m.nsedge) + " edges, " +
             std::to_string(m.nhinge) + " hinges, " + std::to_string(m.nmid) +
             " mid-edge triangles (" + std::to_string(m.nxi) + " xi DOFs)");
  }
  line(os, "parts", parts_text(m));
  // the families with their own tables (stencils/family_table.h) that have rows
  std::string tables;
  for (const FamilyTable& t : m.tables)
    if (t.rows > 0)
      tables +=
          (tables.empty() ? "" : ", ") + t.name + " (" + std::to_string(t.rows) + " stencils)";
  if (!tables.empty()) line(os, "families", tables);

  // DOFs: fixed ones counted from the model, free ones from the assembly plan
  int nfixed = 0;
  for (unsigned char f : m.dof_fixed)
    nfixed += f ? 1 : 0;
  const size_t nevent = m.event_time.size();
  line(os, "DOFs",
       std::to_string(m.ndof) + " total, " + std::to_string(m.plan.nfree) + " free, " +
           std::to_string(nfixed) + " fixed" +
           (nevent ? " at t = 0 (" + std::to_string(nevent) + " boundary event" +
                         (nevent > 1 ? "s change" : " changes") + " them)"
                   : ""));

  Real mass = 0;
  for (Real w : m.node_mass)
    mass += w;
  line(os, "mass", num(mass) + " kg");
  const double density = m.plan.nfree > 0 ? double(m.plan.nnz()) / m.plan.nfree : 0.0;
  line(os, "Jacobian",
       std::to_string(m.plan.nnz()) + " nonzeros (" + num(density, 3) + " per row, free DOFs)");
  line(os, "memory",
       "model " + bytes(m.memory_bytes()) + ", state " + bytes(state_bytes_per_env(m)) +
           " per environment");
  std::string loads = "gravity (" + num(m.gravity[0]) + ", " + num(m.gravity[1]) + ", " +
                      num(m.gravity[2]) + ") m/s^2, " + std::to_string(m.point_loads.size()) +
                      " point loads";
  if (m.viscosity > 0) loads += ", viscosity " + num(m.viscosity) + " Pa s";
  if (m.mass_damping > 0) loads += ", mass damping " + num(m.mass_damping) + " 1/s";
  line(os, "loads", loads);
  line(os, "integrator", integrator_text(sc.integrator));
  line(os, "backend", backend_name(sc.backend));
  line(os, "output", output_text(sc.output));
  return os.str();
}

}  // namespace slender
