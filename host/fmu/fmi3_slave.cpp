// The FMI 3.0 co-simulation interface of a Slender scene (docs/fmu.md): the library that
// `slender fmu` packs as binaries/x86_64-linux/ID.so. It reads the scene and the output
// selection from the FMU's resources, rebuilds the variables (include/slender/fmu.h: the same
// code wrote modelDescription.xml, whose hash is the instantiation token it checks), and steps
// a Simulator: fmi3DoStep runs the scene's own steps to the communication point, the last one
// shortened to land on it, as `slender run` does (host/run.cpp); a step that fails rolls the
// state back to the communication point and returns fmi3Discard. Every call that is refused
// (an unknown value reference, a value that is not finite, a communication step below the
// scene's dt, a call out of order) returns fmi3Error with the reason through the logger and
// changes nothing.

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fmi3Functions.h"
#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/fmu.h"
#include "slender/simulator.h"
#include "slender/state.h"

namespace {

using slender::actuated_value;
using slender::ActuatedSpring;
using slender::FmuDescription;
using slender::FmuVariable;
using slender::FmuVarKind;
using slender::Model;
using slender::Real;
using slender::series_position;
using slender::Simulator;
using slender::State;

constexpr Real kLandTol = 1e-9;       // as host/run.cpp: a remaining time below this * dt is there
constexpr int kRegrowAfter = 4;       // as host/run.cpp
constexpr Real kMinDtDivisor = 1024;  // as host/run.cpp
constexpr Real kTimeTol = 1e-6;       // the master's and the FMU's time may differ by this * dt

enum class Mode { kInstantiated, kInitialization, kStep, kTerminated };

// what get / set FMU state copies: the simulator's state, the inputs, the run loop's cursor
struct Snapshot {
  State state;
  std::vector<double> inputs;
  bool targets_set = false;
  std::vector<unsigned char> loads_set;
  Real h_cur = 0;
  int good_in_row = 0;
  Mode mode = Mode::kStep;
};

struct Instance {
  std::string name;
  fmi3InstanceEnvironment env = nullptr;
  fmi3LogMessageCallback logger = nullptr;
  bool logging = false;
  Mode mode = Mode::kInstantiated;

  std::shared_ptr<const Model> model;
  FmuDescription desc;
  std::unique_ptr<Simulator> sim;
  State initial;
  std::vector<double> inputs, input_start;
  bool targets_set = false;  // fixed_target was set: it replaces the scene's motions
  // the load values' variables, and whether each was set (then it replaces the field's time
  // functions)
  std::vector<const FmuVariable*> loads;
  std::vector<unsigned char> loads_set;
  // the actuation groups' factors (by the scene's actuation index)
  std::vector<const FmuVariable*> gains;
  std::vector<double> outputs;
  bool outputs_valid = false;
  Real h_cur = 0;
  int good_in_row = 0;
  const FmuVariable* curvature = nullptr;
  const FmuVariable* twist = nullptr;
  const FmuVariable* hinge = nullptr;
  const FmuVariable* mid = nullptr;
  const FmuVariable* load = nullptr;
  const FmuVariable* targets = nullptr;

  void log(fmi3Status status, const char* category, const std::string& msg) const {
    if (logger) logger(env, status, category, msg.c_str());
  }
  fmi3Status error(const std::string& msg) const {
    log(fmi3Error, "logStatusError", msg);
    return fmi3Error;
  }
  const FmuVariable* var(fmi3ValueReference vr) const {
    return vr < desc.vars.size() ? &desc.vars[vr] : nullptr;
  }

  // the inputs that go through the simulator's setters (the natural shape goes through the
  // actuation callback at every step)
  void apply_inputs() {
    if (load) {
      const double* f = inputs.data() + load->offset;
      const bool any = std::any_of(f, f + load->size(), [](double v) { return v != 0; });
      sim->set_external_forces(any ? std::vector<Real>(f, f + load->size()) : std::vector<Real>{});
    }
    if (targets) {
      const double* t = inputs.data() + targets->offset;
      sim->set_fixed_targets(targets_set ? std::vector<Real>(t, t + targets->size())
                                         : std::vector<Real>{});
    }
    if (!loads.empty()) {
      sim->clear_load_values();
      for (size_t j = 0; j < loads.size(); ++j) {
        if (!loads_set[j]) continue;
        const FmuVariable& v = *loads[j];
        for (long i = 0; i < v.size(); ++i)
          sim->set_load_value(v.field, v.entries[size_t(i)], inputs[size_t(v.offset + i)]);
      }
    }
  }
  void add_shape(Real t, slender::NaturalShape& s) const {
    // a group's factor g: (g - 1) times its actuation's change of each of its springs, added
    // to the scene's (which the simulator has applied): g times the group's own
    if (!gains.empty()) {
      const Model& m = *model;
      std::vector<double> g(m.scene.actuation.size(), 1.0);
      bool any = false;
      for (const FmuVariable* v : gains) {
        g[size_t(v->index)] = inputs[size_t(v->offset)];
        any = any || g[size_t(v->index)] != 1;
      }
      if (any) {
        std::vector<int> row(g.size(), 0);
        std::vector<Real> w(g.size(), 0);
        for (size_t a = 0; a < g.size(); ++a)
          if (g[a] != 1 && m.scene.actuation[a].series.given())
            series_position(m.scene.actuation[a].series, t, row[a], w[a]);
        for (const ActuatedSpring& a : m.actuated) {
          const size_t k = size_t(a.actuation);
          if (g[k] == 1) continue;
          slender::natural_value(s, a.component, a.index) +=
              (g[k] - 1) * actuated_value(m.scene.actuation[k], a, t, row[k], w[k]);
        }
      }
    }
    auto add = [&](const FmuVariable* v, Real* dst) {
      if (!v) return;
      const double* x = inputs.data() + v->offset;
      for (long i = 0; i < v->size(); ++i)
        dst[i] += x[i];
    };
    add(curvature, s.bend_kappa_bar);
    add(twist, s.bend_tau_bar);
    add(hinge, s.hinge_phi_bar);
    add(mid, s.mid_kappa_bar);
  }

  void compute_outputs() {
    if (outputs_valid) return;
    outputs.assign(size_t(desc.noutput_values), 0.0);
    const State& s = sim->state();
    bool energies = false;
    slender::Energies e;
    std::vector<Real> reac;
    for (const FmuVariable& v : desc.vars) {
      double* out = outputs.data() + v.offset;
      auto copy = [&](const std::vector<Real>& a) { std::copy(a.begin(), a.end(), out); };
      switch (v.kind) {
        case FmuVarKind::kNodePosition:
          *out = s.q[3 * size_t(v.node) + v.index];
          break;
        case FmuVarKind::kNodeVelocity:
          *out = s.u[3 * size_t(v.node) + v.index];
          break;
        case FmuVarKind::kEnergy: {
          if (!energies) e = sim->energies();
          energies = true;
          const Real vals[8] = {e.kinetic, e.stretch, e.bend, e.twist,
                                e.gravity, e.user,    e.load, e.total()};
          *out = vals[v.index];
          break;
        }
        case FmuVarKind::kStrainStretch:
          copy(sim->strains(slender::StrainKind::kStretch));
          break;
        case FmuVarKind::kStrainBendTwist:
          copy(sim->strains(slender::StrainKind::kBendTwist));
          break;
        case FmuVarKind::kStrainHingeAngle:
          copy(sim->strains(slender::StrainKind::kHingeAngle));
          break;
        case FmuVarKind::kReaction: {
          if (reac.empty()) reac = sim->reactions();
          for (size_t j = 0; j < model->fixed_dof.size(); ++j)
            out[j] = reac[size_t(model->fixed_dof[j])];
          break;
        }
        default:
          break;
      }
    }
    outputs_valid = true;
  }

  Snapshot snapshot() const {
    return Snapshot{sim->state(), inputs, targets_set, loads_set, h_cur, good_in_row, mode};
  }
  void restore(const Snapshot& s) {
    sim->set_state(s.state);
    inputs = s.inputs;
    targets_set = s.targets_set;
    loads_set = s.loads_set;
    h_cur = s.h_cur;
    good_in_row = s.good_in_row;
    mode = s.mode;
    apply_inputs();
    outputs_valid = false;
  }
};

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw slender::Error("cannot read '" + path + "'");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

Instance* self(fmi3Instance i) { return static_cast<Instance*>(i); }

// runs f, turning an exception into fmi3Error with its message
template <class F>
fmi3Status guarded(fmi3Instance instance, const char* call, F&& f) {
  if (!instance) return fmi3Error;
  Instance* in = self(instance);
  try {
    return f(*in);
  } catch (const std::exception& e) {
    return in->error(std::string(call) + ": " + e.what());
  } catch (...) {
    return in->error(std::string(call) + ": unknown failure");
  }
}

// the values of a list of value references: checks every reference and the count first
fmi3Status check_refs(const Instance& in,
                      const char* call,
                      const fmi3ValueReference vrs[],
                      size_t nvr,
                      size_t nvalues,
                      bool setting) {
  size_t total = 0;
  for (size_t k = 0; k < nvr; ++k) {
    const FmuVariable* v = in.var(vrs[k]);
    if (!v) {
      return in.error(std::string(call) + ": unknown value reference " + std::to_string(vrs[k]) +
                      " (this FMU has " + std::to_string(in.desc.vars.size()) + " variables)");
    }
    if (setting && !v->input) {
      return in.error(std::string(call) + ": '" + v->name + "' (value reference " +
                      std::to_string(vrs[k]) + ") is not an input");
    }
    total += size_t(v->size());
  }
  if (total != nvalues) {
    return in.error(std::string(call) + ": the value references hold " + std::to_string(total) +
                    " values, the call gives " + std::to_string(nvalues));
  }
  return fmi3OK;
}

// the other types: this FMU has no variables of them
fmi3Status no_such_type(fmi3Instance instance,
                        const char* call,
                        const fmi3ValueReference vrs[],
                        size_t nvr) {
  if (!instance) return fmi3Error;
  if (nvr == 0) return fmi3OK;
  const Instance& in = *self(instance);
  const FmuVariable* v = in.var(vrs[0]);
  return in.error(std::string(call) + ": value reference " + std::to_string(vrs[0]) +
                  (v ? " ('" + v->name + "') is a Float64" : std::string(" is unknown")) +
                  "; this FMU has only Float64 variables");
}

fmi3Status not_supported(fmi3Instance instance, const char* call) {
  if (!instance) return fmi3Error;
  return self(instance)->error(std::string(call) +
                               " is not supported: this FMU is for co-simulation, without "
                               "event mode, clocks or derivatives");
}

// serialized FMU state: a tag, the counts, then every value
constexpr char kTag[8] = {'S', 'L', 'F', 'M', 'U', 'S', '1', 0};

struct Writer {
  std::vector<fmi3Byte> b;
  template <class T>
  void put(const T& v) {
    const auto* p = reinterpret_cast<const fmi3Byte*>(&v);
    b.insert(b.end(), p, p + sizeof(T));
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    put(std::uint64_t(v.size()));
    const auto* p = reinterpret_cast<const fmi3Byte*>(v.data());
    b.insert(b.end(), p, p + v.size() * sizeof(T));
  }
};
struct Reader {
  const fmi3Byte* p;
  size_t left;
  template <class T>
  void get(T& v) {
    if (left < sizeof(T)) throw slender::Error("the serialized state is cut short");
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    left -= sizeof(T);
  }
  template <class T>
  void vec(std::vector<T>& v) {
    std::uint64_t n = 0;
    get(n);
    if (n > left / sizeof(T)) throw slender::Error("the serialized state is cut short");
    v.resize(size_t(n));
    std::memcpy(v.data(), p, size_t(n) * sizeof(T));
    p += n * sizeof(T);
    left -= size_t(n) * sizeof(T);
  }
};

void serialize(const Snapshot& s, Writer& w) {
  w.b.insert(w.b.end(), kTag, kTag + 8);
  const State& st = s.state;
  w.put(std::int64_t(st.nenv));
  w.put(std::int64_t(st.ndof));
  w.put(st.time);
  w.put(std::int64_t(st.step));
#define SLENDER_FMU_PUT(type, name, count, width, doc) w.vec(st.name);
  SLENDER_STATE_ARRAYS(SLENDER_FMU_PUT)
#undef SLENDER_FMU_PUT
  w.vec(st.dof_fixed);
  w.put(std::int64_t(st.events_done));
  w.put(std::int64_t(st.warn_degenerate));
  w.put(std::int64_t(st.warn_linear_fallback));
  w.put(std::int64_t(st.warn_line_search));
  w.vec(s.inputs);
  w.put(std::int64_t(s.targets_set));
  w.vec(s.loads_set);
  w.put(s.h_cur);
  w.put(std::int64_t(s.good_in_row));
  w.put(std::int64_t(s.mode));
}

Snapshot deserialize(const Instance& in, const fmi3Byte* bytes, size_t size) {
  Reader r{bytes, size};
  if (size < 8 || std::memcmp(bytes, kTag, 8) != 0)
    throw slender::Error("not a serialized state of a Slender FMU");
  r.p += 8;
  r.left -= 8;
  Snapshot s;
  State& st = s.state;
  std::int64_t i = 0;
  r.get(i);
  st.nenv = int(i);
  r.get(i);
  st.ndof = int(i);
  r.get(st.time);
  r.get(i);
  st.step = long(i);
#define SLENDER_FMU_GET(type, name, count, width, doc) r.vec(st.name);
  SLENDER_STATE_ARRAYS(SLENDER_FMU_GET)
#undef SLENDER_FMU_GET
  r.vec(st.dof_fixed);
  r.get(i);
  st.events_done = int(i);
  r.get(i);
  st.warn_degenerate = long(i);
  r.get(i);
  st.warn_linear_fallback = long(i);
  r.get(i);
  st.warn_line_search = long(i);
  r.vec(s.inputs);
  r.get(i);
  s.targets_set = i != 0;
  r.vec(s.loads_set);
  r.get(s.h_cur);
  r.get(i);
  s.good_in_row = int(i);
  r.get(i);
  if (i < 0 || i > int(Mode::kTerminated)) throw slender::Error("the serialized mode is unknown");
  s.mode = Mode(i);
  if (r.left != 0)
    throw slender::Error("the serialized state has " + std::to_string(r.left) + " bytes too many");
  if (!slender::state_fits(*in.model, st) || s.inputs.size() != in.inputs.size() ||
      s.loads_set.size() != in.loads_set.size()) {
    throw slender::Error("the serialized state is of another model");
  }
  slender::check_state_finite(st, "the serialized state");
  return s;
}

}  // namespace

extern "C" {

const char* fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance instance,
                               fmi3Boolean loggingOn,
                               size_t,
                               const fmi3String[]) {
  if (!instance) return fmi3Error;
  self(instance)->logging = loggingOn;
  return fmi3OK;
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName,
                                          fmi3String,
                                          fmi3String,
                                          fmi3Boolean,
                                          fmi3Boolean,
                                          fmi3InstanceEnvironment env,
                                          fmi3LogMessageCallback logMessage) {
  if (logMessage) {
    logMessage(
        env, fmi3Error, "logStatusError",
        (std::string(instanceName ? instanceName : "") + ": this FMU supports co-simulation only")
            .c_str());
  }
  return nullptr;
}

fmi3Instance fmi3InstantiateScheduledExecution(fmi3String instanceName,
                                               fmi3String,
                                               fmi3String,
                                               fmi3Boolean,
                                               fmi3Boolean,
                                               fmi3InstanceEnvironment env,
                                               fmi3LogMessageCallback logMessage,
                                               fmi3ClockUpdateCallback,
                                               fmi3LockPreemptionCallback,
                                               fmi3UnlockPreemptionCallback) {
  if (logMessage) {
    logMessage(
        env, fmi3Error, "logStatusError",
        (std::string(instanceName ? instanceName : "") + ": this FMU supports co-simulation only")
            .c_str());
  }
  return nullptr;
}

fmi3Instance fmi3InstantiateCoSimulation(fmi3String instanceName,
                                         fmi3String instantiationToken,
                                         fmi3String resourcePath,
                                         fmi3Boolean,
                                         fmi3Boolean loggingOn,
                                         fmi3Boolean eventModeUsed,
                                         fmi3Boolean,
                                         const fmi3ValueReference[],
                                         size_t,
                                         fmi3InstanceEnvironment env,
                                         fmi3LogMessageCallback logMessage,
                                         fmi3IntermediateUpdateCallback) {
  auto in = std::make_unique<Instance>();
  in->name = instanceName ? instanceName : "";
  in->env = env;
  in->logger = logMessage;
  in->logging = loggingOn;
  try {
    if (eventModeUsed) throw slender::Error("event mode is not supported (hasEventMode=false)");
    if (!resourcePath || !*resourcePath) {
      throw slender::Error("no resource path: the FMU's resources hold its scene");
    }
    std::string res = resourcePath;
    if (res.rfind("file://", 0) == 0) res = res.substr(7);  // a URI from an FMI 2.0-minded master
    if (res.back() != '/') res += '/';
    std::string outputs = read_text(res + "slender_fmu.txt");
    while (!outputs.empty() && (outputs.back() == '\n' || outputs.back() == '\r'))
      outputs.pop_back();
    const slender::SceneSpec sc = slender::read_scene_file(res + "scene.json");
    in->model = slender::build_model(sc);
    in->desc = slender::describe_fmu(*in->model, outputs);
    if (!instantiationToken || in->desc.token != instantiationToken) {
      throw slender::Error(std::string("the instantiation token '") +
                           (instantiationToken ? instantiationToken : "(null)") +
                           "' is not this FMU's ('" + in->desc.token +
                           "': its modelDescription.xml and its library or scene do not match)");
    }
    in->sim = std::make_unique<Simulator>(in->model, in->model->scene.integrator,
                                          slender::LinearSolverKind::kAuto, sc.backend);
    in->initial = in->sim->state();
    in->inputs.assign(size_t(in->desc.ninput_values), 0.0);
    for (const FmuVariable& v : in->desc.vars) {
      if (!v.input) continue;
      std::copy(v.start.begin(), v.start.end(), in->inputs.begin() + v.offset);
      switch (v.kind) {
        case FmuVarKind::kNaturalCurvature:
          in->curvature = &v;
          break;
        case FmuVarKind::kNaturalTwist:
          in->twist = &v;
          break;
        case FmuVarKind::kNaturalHingeAngle:
          in->hinge = &v;
          break;
        case FmuVarKind::kNaturalMidCurvature:
          in->mid = &v;
          break;
        case FmuVarKind::kPointLoad:
          in->load = &v;
          break;
        case FmuVarKind::kFixedTarget:
          in->targets = &v;
          break;
        case FmuVarKind::kLoadValue:
          in->loads.push_back(&v);
          in->loads_set.push_back(0);
          break;
        case FmuVarKind::kActuationGain:
          in->gains.push_back(&v);
          break;
        default:
          break;
      }
    }
    in->input_start = in->inputs;
    Instance* p = in.get();
    in->sim->set_actuation([p](Real t, slender::NaturalShape& s) { p->add_shape(t, s); });
    in->h_cur = in->model->scene.integrator.dt;
  } catch (const std::exception& e) {
    in->error(in->name + ": cannot instantiate: " + e.what());
    return nullptr;
  }
  return in.release();
}

void fmi3FreeInstance(fmi3Instance instance) { delete self(instance); }

fmi3Status fmi3EnterInitializationMode(fmi3Instance instance,
                                       fmi3Boolean,
                                       fmi3Float64,
                                       fmi3Float64 startTime,
                                       fmi3Boolean,
                                       fmi3Float64) {
  return guarded(instance, "fmi3EnterInitializationMode", [&](Instance& in) {
    if (in.mode != Mode::kInstantiated)
      return in.error("fmi3EnterInitializationMode: called twice");
    if (startTime != 0) {
      return in.error(
          "fmi3EnterInitializationMode: the start time must be 0 (the scene starts "
          "at rest at t = 0, its actuation and motions are functions of time from "
          "there), got " +
          num(startTime));
    }
    in.mode = Mode::kInitialization;
    return fmi3OK;
  });
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance instance) {
  return guarded(instance, "fmi3ExitInitializationMode", [&](Instance& in) {
    if (in.mode != Mode::kInitialization)
      return in.error("fmi3ExitInitializationMode: not in initialization mode");
    in.apply_inputs();
    in.mode = Mode::kStep;
    in.outputs_valid = false;
    return fmi3OK;
  });
}

fmi3Status fmi3EnterEventMode(fmi3Instance instance) {
  return not_supported(instance, "fmi3EnterEventMode");
}

fmi3Status fmi3Terminate(fmi3Instance instance) {
  return guarded(instance, "fmi3Terminate", [&](Instance& in) {
    in.mode = Mode::kTerminated;
    return fmi3OK;
  });
}

fmi3Status fmi3Reset(fmi3Instance instance) {
  return guarded(instance, "fmi3Reset", [&](Instance& in) {
    in.inputs = in.input_start;
    in.targets_set = false;
    std::fill(in.loads_set.begin(), in.loads_set.end(), 0);
    in.sim->set_state(in.initial);
    in.apply_inputs();
    in.h_cur = in.model->scene.integrator.dt;
    in.good_in_row = 0;
    in.outputs_valid = false;
    in.mode = Mode::kInstantiated;
    return fmi3OK;
  });
}

fmi3Status fmi3GetFloat64(fmi3Instance instance,
                          const fmi3ValueReference vrs[],
                          size_t nvr,
                          fmi3Float64 values[],
                          size_t nValues) {
  return guarded(instance, "fmi3GetFloat64", [&](Instance& in) {
    const fmi3Status st = check_refs(in, "fmi3GetFloat64", vrs, nvr, nValues, false);
    if (st != fmi3OK) return st;
    size_t k = 0;
    for (size_t j = 0; j < nvr; ++j) {
      const FmuVariable& v = *in.var(vrs[j]);
      if (v.kind == FmuVarKind::kTime) {
        values[k++] = in.sim->time();
        continue;
      }
      const double* src;
      if (v.input) {
        src = in.inputs.data() + v.offset;
      } else {
        in.compute_outputs();
        src = in.outputs.data() + v.offset;
      }
      std::copy(src, src + v.size(), values + k);
      k += size_t(v.size());
    }
    return fmi3OK;
  });
}

fmi3Status fmi3SetFloat64(fmi3Instance instance,
                          const fmi3ValueReference vrs[],
                          size_t nvr,
                          const fmi3Float64 values[],
                          size_t nValues) {
  return guarded(instance, "fmi3SetFloat64", [&](Instance& in) {
    if (in.mode == Mode::kTerminated) return in.error("fmi3SetFloat64: the FMU is terminated");
    const fmi3Status st = check_refs(in, "fmi3SetFloat64", vrs, nvr, nValues, true);
    if (st != fmi3OK) return st;
    // every value checked before any is stored: a refused call changes nothing
    size_t k = 0;
    for (size_t j = 0; j < nvr; ++j) {
      const FmuVariable& v = *in.var(vrs[j]);
      for (long i = 0; i < v.size(); ++i, ++k) {
        if (!std::isfinite(values[k])) {
          return in.error("fmi3SetFloat64: '" + v.name + "'" +
                          (v.dims.empty() ? std::string() : "[" + std::to_string(i) + "]") +
                          " (value reference " + std::to_string(v.vr) + ") is " + num(values[k]) +
                          ": inputs must be finite");
        }
      }
    }
    k = 0;
    bool targets = false;
    for (size_t j = 0; j < nvr; ++j) {
      const FmuVariable& v = *in.var(vrs[j]);
      std::copy(values + k, values + k + v.size(), in.inputs.begin() + v.offset);
      k += size_t(v.size());
      targets = targets || v.kind == FmuVarKind::kFixedTarget;
      for (size_t l = 0; l < in.loads.size(); ++l)
        if (in.loads[l] == &v) in.loads_set[l] = 1;
    }
    in.targets_set = in.targets_set || targets;
    if (in.mode == Mode::kStep) in.apply_inputs();
    return fmi3OK;
  });
}

fmi3Status fmi3DoStep(fmi3Instance instance,
                      fmi3Float64 currentCommunicationPoint,
                      fmi3Float64 communicationStepSize,
                      fmi3Boolean,
                      fmi3Boolean* eventHandlingNeeded,
                      fmi3Boolean* terminateSimulation,
                      fmi3Boolean* earlyReturn,
                      fmi3Float64* lastSuccessfulTime) {
  if (eventHandlingNeeded) *eventHandlingNeeded = fmi3False;
  if (terminateSimulation) *terminateSimulation = fmi3False;
  if (earlyReturn) *earlyReturn = fmi3False;
  return guarded(instance, "fmi3DoStep", [&](Instance& in) {
    Simulator& sim = *in.sim;
    if (lastSuccessfulTime) *lastSuccessfulTime = sim.time();
    if (in.mode != Mode::kStep) {
      return in.error("fmi3DoStep: not in step mode (call fmi3ExitInitializationMode first)");
    }
    const slender::IntegratorSpec& spec = sim.integrator();
    const Real dt = spec.dt;
    const Real t0 = currentCommunicationPoint, H = communicationStepSize;
    if (!std::isfinite(t0) || !std::isfinite(H) || !(H > 0)) {
      return in.error("fmi3DoStep: the communication step must be positive and finite, got " +
                      num(H) + " s at t = " + num(t0) + " s");
    }
    if (H < dt * (1 - kLandTol)) {
      return in.error("fmi3DoStep: the communication step " + num(H) +
                      " s is below the scene's dt = " + num(dt) +
                      " s. Slender's implicit integrator steps at the scene's dt: a shorter step "
                      "would change the integration (its numerical damping and accuracy) with "
                      "the master's step size. Use a communication step of dt or more (best a "
                      "multiple of it), or set a smaller integrator dt in the scene");
    }
    if (std::abs(t0 - sim.time()) > kTimeTol * dt) {
      return in.error("fmi3DoStep: the communication point t = " + num(t0) +
                      " s is not the FMU's time " + num(sim.time()) +
                      " s (restore a state with fmi3SetFMUState to step from another time)");
    }
    const Snapshot before = in.snapshot();
    const Real t_end = t0 + H;
    const Real land = kLandTol * dt;
    const Real min_dt = spec.min_dt > 0 ? spec.min_dt : dt / kMinDtDivisor;
    in.outputs_valid = false;
    try {
      while (true) {
        const Real t = sim.time();
        const Real left = t_end - t;
        if (left <= land) break;
        Real h = std::min(in.h_cur, left);
        if (left - h <= land) h = left;
        const slender::StepReport rep = sim.step(h);
        if (!rep.ok()) {
          if (spec.adaptive && h * 0.5 >= min_dt * (1 - 1e-12)) {
            in.h_cur = h * 0.5;
            in.good_in_row = 0;
            if (in.logging) {
              in.log(fmi3OK, "logEvents",
                     "step at t = " + num(t) + " s: " + slender::to_string(rep.status) +
                         " at dt = " + num(h) + " s; retrying with dt = " + num(in.h_cur) + " s");
            }
            continue;
          }
          const std::string why = "fmi3DoStep: the step at t = " + num(t) + " s (dt = " + num(h) +
                                  " s) failed: " + slender::to_string(rep.status) + " after " +
                                  std::to_string(rep.iterations) + " Newton iterations";
          in.restore(before);
          in.log(fmi3Discard, "logStatusDiscard",
                 why + "; the state is rolled back to t = " + num(sim.time()) +
                     " s. Try other inputs, or a smaller dt or \"adaptive\": true in the scene");
          if (lastSuccessfulTime) *lastSuccessfulTime = sim.time();
          return fmi3Discard;
        }
        if (in.h_cur < dt && ++in.good_in_row >= kRegrowAfter) {
          in.h_cur = std::min(dt, 2 * in.h_cur);
          in.good_in_row = 0;
        }
      }
    } catch (...) {
      in.restore(before);
      throw;
    }
    if (lastSuccessfulTime) *lastSuccessfulTime = sim.time();
    return fmi3OK;
  });
}

fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState* state) {
  return guarded(instance, "fmi3GetFMUState", [&](Instance& in) {
    if (!state) return in.error("fmi3GetFMUState: no state pointer");
    auto* snap = static_cast<Snapshot*>(*state);
    if (snap) {
      *snap = in.snapshot();  // a state given back to be overwritten
    } else {
      *state = new Snapshot(in.snapshot());
    }
    return fmi3OK;
  });
}

fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState state) {
  return guarded(instance, "fmi3SetFMUState", [&](Instance& in) {
    if (!state) return in.error("fmi3SetFMUState: no state");
    in.restore(*static_cast<const Snapshot*>(state));
    return fmi3OK;
  });
}

fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState* state) {
  if (!instance) return fmi3Error;
  if (state) {
    delete static_cast<Snapshot*>(*state);
    *state = nullptr;
  }
  return fmi3OK;
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState state, size_t* size) {
  return guarded(instance, "fmi3SerializedFMUStateSize", [&](Instance& in) {
    if (!state || !size) return in.error("fmi3SerializedFMUStateSize: no state");
    Writer w;
    serialize(*static_cast<const Snapshot*>(state), w);
    *size = w.b.size();
    return fmi3OK;
  });
}

fmi3Status fmi3SerializeFMUState(fmi3Instance instance,
                                 fmi3FMUState state,
                                 fmi3Byte serialized[],
                                 size_t size) {
  return guarded(instance, "fmi3SerializeFMUState", [&](Instance& in) {
    if (!state || !serialized) return in.error("fmi3SerializeFMUState: no state");
    Writer w;
    serialize(*static_cast<const Snapshot*>(state), w);
    if (w.b.size() != size) {
      return in.error("fmi3SerializeFMUState: the state takes " + std::to_string(w.b.size()) +
                      " bytes, the buffer has " + std::to_string(size));
    }
    std::memcpy(serialized, w.b.data(), size);
    return fmi3OK;
  });
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance instance,
                                   const fmi3Byte serialized[],
                                   size_t size,
                                   fmi3FMUState* state) {
  return guarded(instance, "fmi3DeserializeFMUState", [&](Instance& in) {
    if (!serialized || !state) return in.error("fmi3DeserializeFMUState: no state");
    Snapshot s = deserialize(in, serialized, size);
    if (*state) {
      *static_cast<Snapshot*>(*state) = std::move(s);
    } else {
      *state = new Snapshot(std::move(s));
    }
    return fmi3OK;
  });
}

fmi3Status fmi3EnterStepMode(fmi3Instance instance) {
  return not_supported(instance, "fmi3EnterStepMode");
}

fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance,
                                    const fmi3ValueReference[],
                                    size_t,
                                    const fmi3Int32[],
                                    fmi3Float64[],
                                    size_t) {
  return not_supported(instance, "fmi3GetOutputDerivatives");
}

fmi3Status fmi3ActivateModelPartition(fmi3Instance instance, fmi3ValueReference, fmi3Float64) {
  return not_supported(instance, "fmi3ActivateModelPartition");
}

// ---- the types this FMU has no variables of -------------------------------------------------

#define SLENDER_FMU_NO_TYPE(T)                                                             \
  fmi3Status fmi3Get##T(fmi3Instance instance, const fmi3ValueReference vrs[], size_t nvr, \
                        fmi3##T[], size_t) {                                               \
    return no_such_type(instance, "fmi3Get" #T, vrs, nvr);                                 \
  }                                                                                        \
  fmi3Status fmi3Set##T(fmi3Instance instance, const fmi3ValueReference vrs[], size_t nvr, \
                        const fmi3##T[], size_t) {                                         \
    return no_such_type(instance, "fmi3Set" #T, vrs, nvr);                                 \
  }
SLENDER_FMU_NO_TYPE(Float32)
SLENDER_FMU_NO_TYPE(Int8)
SLENDER_FMU_NO_TYPE(UInt8)
SLENDER_FMU_NO_TYPE(Int16)
SLENDER_FMU_NO_TYPE(UInt16)
SLENDER_FMU_NO_TYPE(Int32)
SLENDER_FMU_NO_TYPE(UInt32)
SLENDER_FMU_NO_TYPE(Int64)
SLENDER_FMU_NO_TYPE(UInt64)
SLENDER_FMU_NO_TYPE(Boolean)
SLENDER_FMU_NO_TYPE(String)
#undef SLENDER_FMU_NO_TYPE

fmi3Status fmi3GetBinary(fmi3Instance instance,
                         const fmi3ValueReference vrs[],
                         size_t nvr,
                         size_t[],
                         fmi3Binary[],
                         size_t) {
  return no_such_type(instance, "fmi3GetBinary", vrs, nvr);
}
fmi3Status fmi3SetBinary(fmi3Instance instance,
                         const fmi3ValueReference vrs[],
                         size_t nvr,
                         const size_t[],
                         const fmi3Binary[],
                         size_t) {
  return no_such_type(instance, "fmi3SetBinary", vrs, nvr);
}
fmi3Status fmi3GetClock(fmi3Instance instance,
                        const fmi3ValueReference vrs[],
                        size_t nvr,
                        fmi3Clock[]) {
  return no_such_type(instance, "fmi3GetClock", vrs, nvr);
}
fmi3Status fmi3SetClock(fmi3Instance instance,
                        const fmi3ValueReference vrs[],
                        size_t nvr,
                        const fmi3Clock[]) {
  return no_such_type(instance, "fmi3SetClock", vrs, nvr);
}

// ---- what co-simulation without event mode does not have -----------------------------------

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance instance, fmi3ValueReference, size_t*) {
  return not_supported(instance, "fmi3GetNumberOfVariableDependencies");
}
fmi3Status fmi3GetVariableDependencies(fmi3Instance instance,
                                       fmi3ValueReference,
                                       size_t[],
                                       fmi3ValueReference[],
                                       size_t[],
                                       fmi3DependencyKind[],
                                       size_t) {
  return not_supported(instance, "fmi3GetVariableDependencies");
}
fmi3Status fmi3GetDirectionalDerivative(fmi3Instance instance,
                                        const fmi3ValueReference[],
                                        size_t,
                                        const fmi3ValueReference[],
                                        size_t,
                                        const fmi3Float64[],
                                        size_t,
                                        fmi3Float64[],
                                        size_t) {
  return not_supported(instance, "fmi3GetDirectionalDerivative");
}
fmi3Status fmi3GetAdjointDerivative(fmi3Instance instance,
                                    const fmi3ValueReference[],
                                    size_t,
                                    const fmi3ValueReference[],
                                    size_t,
                                    const fmi3Float64[],
                                    size_t,
                                    fmi3Float64[],
                                    size_t) {
  return not_supported(instance, "fmi3GetAdjointDerivative");
}
fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance) {
  return not_supported(instance, "fmi3EnterConfigurationMode");
}
fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance) {
  return not_supported(instance, "fmi3ExitConfigurationMode");
}
fmi3Status fmi3GetIntervalDecimal(fmi3Instance instance,
                                  const fmi3ValueReference[],
                                  size_t,
                                  fmi3Float64[],
                                  fmi3IntervalQualifier[]) {
  return not_supported(instance, "fmi3GetIntervalDecimal");
}
fmi3Status fmi3GetIntervalFraction(fmi3Instance instance,
                                   const fmi3ValueReference[],
                                   size_t,
                                   fmi3UInt64[],
                                   fmi3UInt64[],
                                   fmi3IntervalQualifier[]) {
  return not_supported(instance, "fmi3GetIntervalFraction");
}
fmi3Status fmi3GetShiftDecimal(fmi3Instance instance,
                               const fmi3ValueReference[],
                               size_t,
                               fmi3Float64[]) {
  return not_supported(instance, "fmi3GetShiftDecimal");
}
fmi3Status fmi3GetShiftFraction(
    fmi3Instance instance, const fmi3ValueReference[], size_t, fmi3UInt64[], fmi3UInt64[]) {
  return not_supported(instance, "fmi3GetShiftFraction");
}
fmi3Status fmi3SetIntervalDecimal(fmi3Instance instance,
                                  const fmi3ValueReference[],
                                  size_t,
                                  const fmi3Float64[]) {
  return not_supported(instance, "fmi3SetIntervalDecimal");
}
fmi3Status fmi3SetIntervalFraction(fmi3Instance instance,
                                   const fmi3ValueReference[],
                                   size_t,
                                   const fmi3UInt64[],
                                   const fmi3UInt64[]) {
  return not_supported(instance, "fmi3SetIntervalFraction");
}
fmi3Status fmi3SetShiftDecimal(fmi3Instance instance,
                               const fmi3ValueReference[],
                               size_t,
                               const fmi3Float64[]) {
  return not_supported(instance, "fmi3SetShiftDecimal");
}
fmi3Status fmi3SetShiftFraction(fmi3Instance instance,
                                const fmi3ValueReference[],
                                size_t,
                                const fmi3UInt64[],
                                const fmi3UInt64[]) {
  return not_supported(instance, "fmi3SetShiftFraction");
}
fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance instance) {
  return not_supported(instance, "fmi3EvaluateDiscreteStates");
}
fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance,
                                    fmi3Boolean*,
                                    fmi3Boolean*,
                                    fmi3Boolean*,
                                    fmi3Boolean*,
                                    fmi3Boolean*,
                                    fmi3Float64*) {
  return not_supported(instance, "fmi3UpdateDiscreteStates");
}
fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance) {
  return not_supported(instance, "fmi3EnterContinuousTimeMode");
}
fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance,
                                       fmi3Boolean,
                                       fmi3Boolean*,
                                       fmi3Boolean*) {
  return not_supported(instance, "fmi3CompletedIntegratorStep");
}
fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64) {
  return not_supported(instance, "fmi3SetTime");
}
fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64[], size_t) {
  return not_supported(instance, "fmi3SetContinuousStates");
}
fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64[], size_t) {
  return not_supported(instance, "fmi3GetContinuousStateDerivatives");
}
fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64[], size_t) {
  return not_supported(instance, "fmi3GetEventIndicators");
}
fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64[], size_t) {
  return not_supported(instance, "fmi3GetContinuousStates");
}
fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64[], size_t) {
  return not_supported(instance, "fmi3GetNominalsOfContinuousStates");
}
fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t*) {
  return not_supported(instance, "fmi3GetNumberOfEventIndicators");
}
fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t*) {
  return not_supported(instance, "fmi3GetNumberOfContinuousStates");
}

}  // extern "C"
