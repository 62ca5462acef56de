// The FMU of a scene: its variables, modelDescription.xml (FMI 3.0 co-simulation) and the .fmu
// archive (a zip of stored entries). See include/slender/fmu.h and docs/fmu.md.

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "io/json.h"
#include "model/model_internal.h"
#include "slender/builder.h"
#include "slender/config.h"
#include "slender/core/error.h"
#include "slender/fmu.h"
#include "slender/state.h"

namespace slender {
namespace {

namespace fs = std::filesystem;

const char* const kEnergyNames[8] = {"kinetic", "stretch", "bend", "twist",
                                     "gravity", "user",    "load", "total"};
const char* const kAxis[3] = {"x", "y", "z"};

std::string num17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        // control characters are not allowed in XML 1.0 attributes: a space instead
        o += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
    }
  }
  return o;
}

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a])))
    ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1])))
    --b;
  return s.substr(a, b - a);
}

// a C identifier from the scene's name (the modelIdentifier names the binary and may prefix
// the functions)
std::string c_identifier(const std::string& name) {
  std::string id;
  for (char c : name)
    id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "slender_" + id;
  return id;
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

[[noreturn]] void bad_outputs(const std::string& item, const std::string& why) {
  throw InputError("<outputs>", 0, item, why);
}

struct Builder {
  const Model& m;
  FmuDescription d;

  void add(FmuVariable v) {
    v.vr = std::uint32_t(d.vars.size());
    if (v.input) {
      v.offset = d.ninput_values;
      d.ninput_values += v.size();
    } else if (v.kind != FmuVarKind::kTime) {
      v.offset = d.noutput_values;
      d.noutput_values += v.size();
    }
    d.vars.push_back(std::move(v));
  }
  void input(FmuVarKind k,
             const std::string& name,
             std::vector<int> dims,
             const std::string& unit,
             const std::string& desc,
             std::vector<double> start = {}) {
    FmuVariable v;
    v.kind = k;
    v.name = name;
    v.dims = std::move(dims);
    v.unit = unit;
    v.description = desc;
    v.input = true;
    v.start = start.empty() ? std::vector<double>(size_t(v.size()), 0.0) : std::move(start);
    add(std::move(v));
  }
  void output(FmuVarKind k,
              const std::string& name,
              std::vector<int> dims,
              const std::string& unit,
              const std::string& desc,
              int node = -1,
              int index = 0) {
    for (const FmuVariable& v : d.vars)
      if (v.name == name) return;  // a node named twice: once
    FmuVariable v;
    v.kind = k;
    v.name = name;
    v.dims = std::move(dims);
    v.unit = unit;
    v.description = desc;
    v.node = node;
    v.index = index;
    add(std::move(v));
  }

  void node(int part, int local) {
    const int n = m.part_node_adr[part + 1] - m.part_node_adr[part];
    const int li = local < 0 ? n + local : local;
    if (li < 0 || li >= n) {
      bad_outputs(m.part_name[part] + ":" + std::to_string(local),
                  "part '" + m.part_name[part] + "' has " + std::to_string(n) + " nodes");
    }
    const int g = m.part_node[m.part_node_adr[part] + li];
    const std::string stem = m.part_name[part] + "_n" + std::to_string(li);
    for (int c = 0; c < 3; ++c)
      output(FmuVarKind::kNodePosition, stem + "_" + kAxis[c], {}, "m",
             std::string(kAxis[c]) + " of node " + std::to_string(li) + " of part '" +
                 m.part_name[part] + "'",
             g, c);
    for (int c = 0; c < 3; ++c)
      output(FmuVarKind::kNodeVelocity, stem + "_v" + kAxis[c], {}, "m/s",
             std::string("velocity along ") + kAxis[c] + " of node " + std::to_string(li) +
                 " of part '" + m.part_name[part] + "'",
             g, c);
  }
  void scene_nodes() {
    if (!m.scene.output.csv_nodes.empty()) {
      for (const NodeRef& r : m.scene.output.csv_nodes)
        node(r.part, r.index);
      return;
    }
    for (int p = 0; p < m.npart; ++p) {
      node(p, 0);
      if (m.part_node_adr[p + 1] - m.part_node_adr[p] > 1) node(p, -1);
    }
  }
  void energies() {
    for (int k = 0; k < 8; ++k)
      output(FmuVarKind::kEnergy, std::string("energy_") + kEnergyNames[k], {}, "J",
             std::string(kEnergyNames[k]) + " energy", -1, k);
  }
  void strains() {
    if (m.nedge > 0)
      output(FmuVarKind::kStrainStretch, "strain_stretch", {m.nedge}, "",
             "axial strain l / l_bar - 1 of every rod edge");
    if (m.nbend > 0)
      output(FmuVarKind::kStrainBendTwist, "strain_bend_twist", {m.nbend, 3}, "",
             "discrete material curvatures kappa1, kappa2 (2 tan(phi / 2) of the turning angle "
             "phi) and twist tau [rad] of every bend-twist stencil");
    if (m.nhinge > 0)
      output(FmuVarKind::kStrainHingeAngle, "strain_hinge_angle", {m.nhinge}, "rad",
             "signed dihedral angle of every hinge");
  }
  void reactions() {
    if (m.fixed_dof.empty()) bad_outputs("reactions", "the scene has no fixed DOFs");
    output(FmuVarKind::kReaction, "reaction", {int(m.fixed_dof.size())}, "",
           "force [N] (moment [N m] for a twist DOF) the supports exert on every fixed DOF, in "
           "the order of the model's fixed DOFs");
  }
  void selection(const std::string& spec) {
    std::stringstream ss(spec);
    std::string item;
    bool any = false;
    while (std::getline(ss, item, ',')) {
      item = trim(item);
      if (item.empty()) continue;
      any = true;
      if (item == "default") {
        scene_nodes();
        energies();
        strains();
      } else if (item == "nodes") {
        scene_nodes();
      } else if (item == "energies") {
        energies();
      } else if (item == "strains") {
        strains();
      } else if (item == "reactions") {
        reactions();
      } else {
        const size_t colon = item.rfind(':');
        if (colon == std::string::npos) {
          bad_outputs(item,
                      "unknown output (default, nodes, energies, strains, reactions or "
                      "PART:NODE)");
        }
        const std::string part = item.substr(0, colon), idx = item.substr(colon + 1);
        int p = -1;
        for (int k = 0; k < m.npart; ++k)
          if (m.part_name[k] == part) p = k;
        if (p < 0) bad_outputs(item, "the scene has no part '" + part + "'");
        char* end = nullptr;
        const long li = std::strtol(idx.c_str(), &end, 10);
        if (idx.empty() || *end != '\0' || li < -(1L << 30) || li > (1L << 30)) {
          bad_outputs(item, "'" + idx + "' is not a node index");
        }
        node(p, int(li));
      }
    }
    if (!any) bad_outputs("outputs", "the selection is empty");
  }
};

void dims_xml(std::ostringstream& x, const FmuVariable& v) {
  for (int n : v.dims)
    x << "      <Dimension start=\"" << n << "\"/>\n";
}

std::string make_xml(const Model& m, const FmuDescription& d) {
  const IntegratorSpec& in = m.scene.integrator;
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"" << xml_escape(d.model_name)
    << "\" description=\"Slender scene '" << xml_escape(d.model_name)
    << "' (discrete elastic rods and shells)\" generationTool=\"slender " << SLENDER_VERSION
    << "\" instantiationToken=\"@TOKEN@\" variableNamingConvention=\"flat\">\n"
    << "  <CoSimulation modelIdentifier=\"" << d.identifier
    << "\" canHandleVariableCommunicationStepSize=\"true\" canGetAndSetFMUState=\"true\" "
       "canSerializeFMUState=\"true\" canReturnEarlyAfterIntermediateUpdate=\"false\" "
       "hasEventMode=\"false\" providesIntermediateUpdate=\"false\" fixedInternalStepSize=\""
    << num17(in.dt) << "\"/>\n"
    << "  <UnitDefinitions>\n"
       "    <Unit name=\"s\"><BaseUnit s=\"1\"/></Unit>\n"
       "    <Unit name=\"m\"><BaseUnit m=\"1\"/></Unit>\n"
       "    <Unit name=\"m/s\"><BaseUnit m=\"1\" s=\"-1\"/></Unit>\n"
       "    <Unit name=\"1/m\"><BaseUnit m=\"-1\"/></Unit>\n"
       "    <Unit name=\"rad\"><BaseUnit rad=\"1\"/></Unit>\n"
       "    <Unit name=\"N\"><BaseUnit kg=\"1\" m=\"1\" s=\"-2\"/></Unit>\n"
       "    <Unit name=\"J\"><BaseUnit kg=\"1\" m=\"2\" s=\"-2\"/></Unit>\n"
       "    <Unit name=\"Pa\"><BaseUnit kg=\"1\" m=\"-1\" s=\"-2\"/></Unit>\n"
       "  </UnitDefinitions>\n"
    << "  <LogCategories>\n"
       "    <Category name=\"logStatusError\" description=\"bad calls and failed steps\"/>\n"
       "    <Category name=\"logStatusDiscard\" description=\"steps that did not converge\"/>\n"
       "    <Category name=\"logEvents\" description=\"dt halvings of an adaptive integrator\"/>\n"
       "  </LogCategories>\n"
    << "  <DefaultExperiment startTime=\"0\" stopTime=\"" << num17(in.duration) << "\" stepSize=\""
    << num17(in.dt) << "\"/>\n"
    << "  <ModelVariables>\n";
  for (const FmuVariable& v : d.vars) {
    x << "    <Float64 name=\"" << xml_escape(v.name) << "\" valueReference=\"" << v.vr << "\"";
    if (!v.description.empty()) x << " description=\"" << xml_escape(v.description) << "\"";
    if (v.kind == FmuVarKind::kTime) {
      x << " causality=\"independent\" variability=\"continuous\"";
    } else if (v.input) {
      x << " causality=\"input\" variability=\"continuous\"";
    } else {
      x << " causality=\"output\" variability=\"continuous\"";
    }
    if (!v.unit.empty()) x << " unit=\"" << v.unit << "\"";
    if (v.input) {
      x << " start=\"";
      for (size_t i = 0; i < v.start.size(); ++i)
        x << (i ? " " : "") << num17(v.start[i]);
      x << "\"";
    }
    if (v.dims.empty()) {
      x << "/>\n";
    } else {
      x << ">\n";
      dims_xml(x, v);
      x << "    </Float64>\n";
    }
  }
  x << "  </ModelVariables>\n  <ModelStructure>\n";
  for (const FmuVariable& v : d.vars)
    if (!v.input && v.kind != FmuVarKind::kTime)
      x << "    <Output valueReference=\"" << v.vr << "\"/>\n";
  for (const FmuVariable& v : d.vars)
    if (!v.input && v.kind != FmuVarKind::kTime)
      x << "    <InitialUnknown valueReference=\"" << v.vr << "\"/>\n";
  x << "  </ModelStructure>\n</fmiModelDescription>\n";
  return x.str();
}

// ---- the archive ----------------------------------------------------------------------------

std::uint32_t crc32(const std::string& data) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data)
    c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void put16(std::string& o, unsigned v) {
  o += char(v & 0xFF);
  o += char((v >> 8) & 0xFF);
}
void put32(std::string& o, std::uint32_t v) {
  put16(o, v & 0xFFFF);
  put16(o, v >> 16);
}

// a zip archive of stored (uncompressed) entries, with a fixed date (1980-01-01): the same
// inputs give the same bytes
std::string zip(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out, central;
  const unsigned kDate = (0 << 9) | (1 << 5) | 1, kTime = 0;
  for (const auto& [name, data] : entries) {
    if (data.size() >= 0xFFFFFFFFu || out.size() >= 0xFFFFFFFFu) {
      throw Error("FMU: the entry '" + name + "' does not fit a zip archive without ZIP64");
    }
    const std::uint32_t crc = crc32(data), offset = std::uint32_t(out.size());
    const std::uint32_t size = std::uint32_t(data.size());
    put32(out, 0x04034b50);
    put16(out, 20);  // version needed
    put16(out, 0);   // flags
    put16(out, 0);   // stored
    put16(out, kTime);
    put16(out, kDate);
    put32(out, crc);
    put32(out, size);
    put32(out, size);
    put16(out, unsigned(name.size()));
    put16(out, 0);
    out += name;
    out += data;
    put32(central, 0x02014b50);
    put16(central, (3 << 8) | 20);  // made by: Unix
    put16(central, 20);
    put16(central, 0);
    put16(central, 0);
    put16(central, kTime);
    put16(central, kDate);
    put32(central, crc);
    put32(central, size);
    put32(central, size);
    put16(central, unsigned(name.size()));
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);  // disk
    put16(central, 0);  // internal attributes
    // external attributes: a regular file, rw-r--r-- (rwxr-xr-x for the libraries)
    const bool lib = name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0;
    put32(central, std::uint32_t((lib ? 0100755u : 0100644u) << 16));
    put32(central, offset);
    central += name;
  }
  if (entries.size() >= 0xFFFF) throw Error("FMU: too many files for a zip archive");
  const std::uint32_t cd_offset = std::uint32_t(out.size());
  out += central;
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, unsigned(entries.size()));
  put16(out, unsigned(entries.size()));
  put32(out, std::uint32_t(central.size()));
  put32(out, cd_offset);
  put16(out, 0);
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("FMU: cannot read '" + path + "'");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// the folder of the shared object that holds this function (libslender_host.so)
std::string own_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&own_folder), &info) == 0 || !info.dli_fname) {
    return "";
  }
  return fs::path(info.dli_fname).parent_path().string();
}

// the files a scene names (every string of it that is a file relative to its folder), each
// checked to lie inside that folder
void referenced_files(const JsonValue& v,
                      const std::string& file,
                      const fs::path& base,
                      std::vector<std::string>& out) {
  if (v.is_string() && !v.string.empty() && v.string.size() < 4096) {
    std::error_code ec;
    const fs::path p(v.string);
    const fs::path full = p.is_absolute() ? p : base / p;
    if (!fs::is_regular_file(full, ec)) return;
    const std::string rel = p.lexically_normal().generic_string();
    if (p.is_absolute() || rel.rfind("..", 0) == 0) {
      throw InputError(file, v.line, v.string,
                       "an FMU carries the files its scene names inside its resources: name "
                       "this file relative to the scene's folder, inside it");
    }
    for (const std::string& o : out)
      if (o == rel) return;
    out.push_back(rel);
    return;
  }
  for (const JsonValue& e : v.array)
    referenced_files(e, file, base, out);
  for (const JsonMember& e : v.object)
    referenced_files(e.value, file, base, out);
}

}  // namespace

FmuDescription describe_fmu(const Model& m, const std::string& outputs) {
  Builder b{m, {}};
  FmuDescription& d = b.d;
  d.model_name = m.scene.name;
  d.identifier = c_identifier(m.scene.name);
  d.outputs = outputs;
  FmuVariable time;
  time.name = "time";
  time.unit = "s";
  time.description = "simulated time";
  b.add(time);
  // inputs: the natural shape (added to the scene's rest values and actuation), point loads,
  // the fixed DOFs' targets
  if (m.nbend > 0) {
    b.input(FmuVarKind::kNaturalCurvature, "natural_curvature", {m.nbend, 2}, "",
            "discrete natural curvatures kappa1, kappa2 (2 tan(phi / 2) of the natural turning "
            "angle phi) of every bend-twist stencil, added to the scene's natural shape and "
            "actuation");
    b.input(FmuVarKind::kNaturalTwist, "natural_twist", {m.nbend}, "rad",
            "natural twist of every bend-twist stencil, added to the scene's");
  }
  if (m.nhinge > 0)
    b.input(FmuVarKind::kNaturalHingeAngle, "natural_hinge_angle", {m.nhinge}, "rad",
            "natural dihedral angle of every hinge, added to the scene's");
  if (m.nmid > 0)
    b.input(FmuVarKind::kNaturalMidCurvature, "natural_midedge_curvature", {m.nmid, 3}, "1/m",
            "natural curvature of every mid-edge triangle (components along its edge normals), "
            "added to the scene's");
  b.input(FmuVarKind::kPointLoad, "point_load", {m.nnode, 3}, "N",
          "force on every node, added to the scene's loads");
  if (!m.fixed_dof.empty()) {
    const State s0 = initial_state(m);
    std::vector<double> start;
    for (int dof : m.fixed_dof)
      start.push_back(s0.q[size_t(dof)]);
    b.input(FmuVarKind::kFixedTarget, "fixed_target", {int(m.fixed_dof.size())}, "",
            "value [m, rad] of every fixed DOF at the end of each step (the model's fixed DOFs "
            "in order); once set, it replaces the scene's motions",
            std::move(start));
  }
  // a factor per actuation group of the scene (its part or selection, its target), each
  // starting at 1
  for (size_t a = 0; a < m.scene.actuation.size(); ++a) {
    const ActuationSpec& act = m.scene.actuation[a];
    b.input(FmuVarKind::kActuationGain, "actuation_gain_" + std::to_string(a), {}, "",
            "factor on actuation[" + std::to_string(a) + "] (" + target_name(act.target) +
                " of part '" +
                (act.part >= 0 && act.part < int(m.scene.parts.size())
                     ? m.scene.parts[size_t(act.part)].name
                     : std::string("?")) +
                "'): its change of the natural strains times this (1: the scene's own, 0: "
                "off), from the step after it is set",
            {1.0});
    d.vars.back().index = int(a);
  }
  // the loads of the families' scene fields that have a time function per entry, a variable
  // per field (in the order the fields first appear among the signals), starting at their
  // values at t = 0
  {
    std::vector<Real> at0(kMaxSignals, 0);
    eval_signals(m, 0, 1, at0.data());
    std::vector<std::string> fields;
    for (const std::string& f : m.signal_field)
      if (std::find(fields.begin(), fields.end(), f) == fields.end()) fields.push_back(f);
    for (const std::string& f : fields) {
      std::vector<int> entries;
      std::vector<double> start;
      for (size_t k = 0; k < m.signal_field.size(); ++k) {
        if (m.signal_field[k] != f) continue;
        // (one signal per entry: the first of an entry is the one load_signal names)
        if (!entries.empty() && entries.back() == m.signal_entry[k]) continue;
        entries.push_back(m.signal_entry[k]);
        start.push_back(at0[k]);
      }
      const bool pressure = f == "pressure_chambers", tension = f == "tendons";
      const std::string what =
          pressure  ? "the pressure of every entry of forces.pressure_chambers"
          : tension ? "the tension of every entry of forces.tendons (negative: a slack cable)"
                    : "the factor on the load of every entry of forces." + f;
      b.input(FmuVarKind::kLoadValue, "load_" + f, {int(entries.size())},
              pressure ? "Pa" : (tension ? "N" : ""),
              what +
                  ", in the scene's order; starts at its value at t = 0 and follows the "
                  "scene's time function until set, then replaces it",
              std::move(start));
      d.vars.back().field = f;
      d.vars.back().entries = std::move(entries);
    }
  }
  b.selection(outputs);
  const std::string xml = make_xml(m, d);
  char token[64];
  std::snprintf(token, sizeof token, "{slender-%016llx}",
                static_cast<unsigned long long>(fnv1a(xml)));
  d.token = token;
  const size_t at = xml.find("@TOKEN@");
  d.xml = xml.substr(0, at) + d.token + xml.substr(at + 7);
  return d;
}

FmuPackResult pack_fmu(const FmuPackOptions& opt) {
  const SceneSpec sc = read_scene_file(opt.scene);
  const std::shared_ptr<const Model> model = build_model(sc);
  const FmuDescription d = describe_fmu(*model, opt.outputs);

  // the library: given, from the environment, or beside libslender_host.so
  std::string lib = opt.library;
  if (lib.empty()) {
    const char* env = std::getenv("SLENDER_FMU_LIBRARY");
    if (env && *env) lib = env;
  }
  const std::string here = own_folder();
  if (lib.empty()) lib = (fs::path(here) / "libslender_fmu.so").string();
  std::error_code ec;
  if (!fs::is_regular_file(lib, ec)) {
    throw Error("FMU: the FMU library '" + lib +
                "' is not there (build the target slender_fmu: CMake builds it where it finds "
                "the FMI 3.0 headers, from fmpy or SLENDER_FMI3_INCLUDE_DIR; or set "
                "SLENDER_FMU_LIBRARY)");
  }
  // the library and the one beneath it (libslender_base.so), which find each other in their
  // own folder ($ORIGIN), as they do in the FMU's binaries/x86_64-linux/
  const std::string host_lib = (fs::path(here) / "libslender_host.so").string();
  const std::string base_lib = (fs::path(here) / "libslender_base.so").string();
  for (const std::string& l : {host_lib, base_lib}) {
    if (!fs::is_regular_file(l, ec)) {
      throw Error("FMU: " + fs::path(l).filename().string() + " is not beside '" + here + "'");
    }
  }

  std::vector<std::pair<std::string, std::string>> entries;
  entries.emplace_back("modelDescription.xml", d.xml);
  const std::string bin = "binaries/x86_64-linux/";
  entries.emplace_back(bin + d.identifier + ".so", read_file(lib));
  entries.emplace_back(bin + "libslender_host.so", read_file(host_lib));
  entries.emplace_back(bin + "libslender_base.so", read_file(base_lib));
  const std::string cuda_lib = (fs::path(here) / "libslender_cuda.so").string();
  if (fs::is_regular_file(cuda_lib, ec))
    entries.emplace_back(bin + "libslender_cuda.so", read_file(cuda_lib));
  // the scene as written, the files it names beside it, and the output selection
  const std::string text = read_file(opt.scene);
  entries.emplace_back("resources/scene.json", text);
  std::vector<std::string> files;
  referenced_files(parse_json(text, opt.scene), opt.scene, fs::path(opt.scene).parent_path(),
                   files);
  for (const std::string& f : files) {
    if (f == "scene.json" || f == "slender_fmu.txt") {
      throw InputError(opt.scene, 0, f, "this name is the FMU's own resource: rename the file");
    }
    entries.emplace_back("resources/" + f,
                         read_file((fs::path(opt.scene).parent_path() / f).string()));
  }
  entries.emplace_back("resources/slender_fmu.txt", d.outputs + "\n");

  const std::string bytes = zip(entries);
  const fs::path out(opt.out);
  if (out.has_parent_path()) fs::create_directories(out.parent_path(), ec);
  const std::string part = opt.out + ".part";
  {
    std::ofstream f(part, std::ios::binary | std::ios::trunc);
    if (!f) throw Error("FMU: cannot write '" + part + "'");
    f.write(bytes.data(), std::streamsize(bytes.size()));
    if (!f) throw Error("FMU: cannot write '" + part + "'");
  }
  fs::rename(part, out, ec);
  if (ec) throw Error("FMU: cannot rename '" + part + "' to '" + opt.out + "': " + ec.message());

  FmuPackResult r;
  r.path = opt.out;
  for (const FmuVariable& v : d.vars) {
    if (v.input) ++r.inputs;
    if (!v.input && v.kind != FmuVarKind::kTime) ++r.outputs;
  }
  for (const auto& e : entries)
    r.files.push_back(e.first);
  return r;
}

}  // namespace slender
