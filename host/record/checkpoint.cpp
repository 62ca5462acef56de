// Checkpoint files (include/slender/checkpoint.h). Layout, little-endian as the machine writes
// it: the magic "SLENDERCK", a format version (5), a 64-bit FNV-1a checksum of every byte after
// it (the payload), then the payload: the scene's fingerprint (its named parts, each a name and
// a 64-bit hash), the state's counts, the time, step and warning counters, the run cursor (its
// outputs' marks as a count, then a name and a 64-bit count each; format 3 has none), each
// State array as (length, doubles) in the order of SLENDER_STATE_ARRAYS, the held DOFs (length
// 0: the model's, or ndof bytes), the count of boundary events applied (int32) and the state
// of the simulator's feedback controllers (control.h): their count, per controller its name
// and the model indices of its springs, then StrainController::save_state's values (format 4
// has no controllers' section: read, with none). Formats 1 and 2 (before the checksum and the
// scene's fingerprint) are refused: they cannot be verified.

#include "slender/checkpoint.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "io/input_file.h"
#include "record/part_file.h"
#include "slender/control.h"
#include "slender/core/error.h"

namespace slender {

namespace {

constexpr char kMagic[10] = "SLENDERCK";  // with its terminating zero: 10 bytes
constexpr std::uint32_t kVersion = 5;
// format 4 is format 5 without the controllers' state, format 3 format 4 without the outputs'
// marks: both read, with none
constexpr std::uint32_t kVersionWithoutControllers = 4;
constexpr std::uint32_t kVersionWithoutMarks = 3;
// the most controllers a checkpoint may name (a scene has a few)
constexpr std::uint32_t kMaxControllers = 4096;
// the most output marks a checkpoint may hold (a run has a few recorders of one or two files)
constexpr std::uint32_t kMaxMarks = 64;
// a run cursor's end is at most this many nominal steps after its time
constexpr Real kMaxStepsLeft = 1e9;

struct Fnv {
  std::uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, size_t n) {
    const unsigned char* c = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= c[i];
      h *= 1099511628211ull;
    }
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    const std::uint64_t n = v.size();
    bytes(&n, sizeof n);
    if (!v.empty()) bytes(v.data(), v.size() * sizeof(T));
  }
  // one value (arithmetic, bool or enum) by its bytes
  template <class T>
  Fnv& operator()(const T& v) {
    bytes(&v, sizeof v);
    return *this;
  }
  Fnv& operator()(const Vec3& v) {
    for (int k = 0; k < 3; ++k) {
      const Real x = v[k];
      bytes(&x, sizeof x);
    }
    return *this;
  }
  Fnv& operator()(const TimeFunction& f) {
    (*this)(f.kind)(f.frequency)(f.amplitude)(f.phase)(f.offset)(f.ramp_time);
    const std::uint64_t n = f.table.size();
    bytes(&n, sizeof n);
    for (const auto& row : f.table)
      (*this)(row[0])(row[1]);
    return (*this)(f.sma_n)(f.sma_tau)(f.sma_t_bar)(f.sma_t0)(f.sma_start)(f.sma_period);
  }
};

class Writer {
 public:
  void raw(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    buf_.insert(buf_.end(), c, c + n);
  }
  template <class T>
  void put(const T& v) {
    raw(&v, sizeof v);
  }
  void str(const std::string& v) {
    put(std::uint32_t(v.size()));
    raw(v.data(), v.size());
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    put(std::uint64_t(v.size()));
    raw(v.data(), v.size() * sizeof(T));
  }
  const std::string& bytes() const { return buf_; }

 private:
  std::string buf_;
};

class Reader {
 public:
  Reader(const std::string& data, size_t pos, const std::string& path)
      : data_(data), pos_(pos), path_(path) {}
  void raw(void* p, size_t n, const char* what) {
    if (n > data_.size() - pos_) throw InputError(path_, 0, what, "the checkpoint is cut short");
    if (n > 0) std::memcpy(p, data_.data() + pos_, n);
    pos_ += n;
  }
  template <class T>
  T get(const char* what) {
    T v{};
    raw(&v, sizeof v, what);
    return v;
  }
  std::string str(const char* what) {
    const std::uint32_t n = get<std::uint32_t>(what);
    if (n > data_.size() - pos_) throw InputError(path_, 0, what, "the checkpoint is cut short");
    std::string v = data_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  template <class T>
  void vec(std::vector<T>& v, size_t expected, const char* what) {
    const std::uint64_t n = get<std::uint64_t>(what);
    if (n != expected)
      throw InputError(path_, 0, what,
                       "the checkpoint holds " + std::to_string(n) + " values, the model " +
                           std::to_string(expected));
    v.resize(size_t(n));
    raw(v.data(), v.size() * sizeof(T), what);
  }
  bool at_end() const { return pos_ == data_.size(); }

 private:
  const std::string& data_;
  size_t pos_;
  const std::string& path_;
};

std::uint64_t checksum(const char* p, size_t n) {
  Fnv f;
  f.bytes(p, n);
  return f.h;
}

std::string num(Real v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

}  // namespace

std::uint64_t model_fingerprint(const Model& m) {
  Fnv f;
  const int counts[] = {m.nnode, m.nedge, m.nbend, m.ndof, m.npart, m.ntri, m.nsedge};
  f.bytes(counts, sizeof counts);
#define SLENDER_FINGERPRINT_ARRAY(type, name, count, width, doc) f.vec(m.name);
  SLENDER_VIEW_ARRAYS(SLENDER_FINGERPRINT_ARRAY)
  SLENDER_HOST_ARRAYS(SLENDER_FINGERPRINT_ARRAY)
#undef SLENDER_FINGERPRINT_ARRAY
  for (const FamilyTable& t : m.tables)
    if (t.rows > 0) f.vec(t.i), f.vec(t.r);
  return f.h;
}

SceneFingerprint scene_fingerprint(const Model& m, const IntegratorSpec& in) {
  SceneFingerprint fp;
  auto add = [&](const char* name, const Fnv& f) { fp.parts.emplace_back(name, f.h); };
  Fnv arrays;
  arrays.h = model_fingerprint(m);
  add("model (topology, rest shape, masses, stiffnesses, fixed DOFs)", arrays);
  add("gravity", Fnv()(m.gravity));
  add("damping", Fnv()(m.viscosity)(m.mass_damping)(m.stiffness_damping)(m.kelvin_voigt)(
                     m.mass_damping_per_part));
  add("buoyancy and drag", Fnv()(m.buoyancy_density)(m.drag_density)(m.drag_coefficient)(
                               m.rft_tangential)(m.rft_normal));
  {
    const GroundSpec& g = m.ground;
    Fnv f;
    f(g.enabled)(g.wavy)(g.point)(g.normal)(g.amplitude)(g.length_x)(g.length_y)(g.phase_x)(
        g.phase_y)(g.offset)(g.stiffness)(g.contact_distance)(g.slip_velocity)(g.restitution)(
        m.ground_stiffness)(m.ground_stiffness_per_kg);
    add("ground", f);
    add("ground friction", Fnv()(g.friction));
  }
  {
    const ContactSpec& c = m.contact;
    add("contact", Fnv()(c.enabled)(c.stiffness)(c.tolerance)(c.restitution)(m.contact_stiffness));
    Fnv f;
    f(c.friction)(c.slip_velocity)(m.nmaterial);
    f.vec(m.contact_mu);
    add("contact friction", f);
  }
  {
    Fnv f;
    for (const PointLoad& l : m.point_loads)
      f(l.node)(l.force)(l.time);
    for (const TimeFunction& t : m.signals)
      f(t);
    // the signals' amplitudes where not 1 (a pressure chamber's pressure), so that the models
    // of scenes without any keep their fingerprints
    for (size_t k = 0; k < m.signal_gain.size(); ++k)
      if (m.signal_gain[k] != 1) f(int(k))(m.signal_gain[k]);
    f.vec(m.youngs_time_part);
    for (const TimeFunction& t : m.youngs_time)
      f(t);
    add("loads and time functions", f);
  }
  {
    Fnv f;
    for (const TimeFunction& t : m.motion_time)
      f(t);
    f.vec(m.motion_dof), f.vec(m.motion_of), f.vec(m.motion_base), f.vec(m.motion_amount);
    add("motions", f);
  }
  {
    Fnv f;
    f.vec(m.event_time), f.vec(m.event_release), f.vec(m.event_dof_adr), f.vec(m.event_dof);
    add("boundary events", f);
  }
  {
    Fnv f;
    for (const ActuatedSpring& a : m.actuated) {
      f(a.actuation)(a.index)(a.component)(a.scale)(a.phase);
      if (a.column >= 0) f(a.column);  // (as before where there is no series)
    }
    for (const ActuationSpec& a : m.scene.actuation) {
      f(a.target)(a.part)(a.amplitude)(a.direction)(a.ramp_in)(a.time)(a.phase_per_length);
      if (a.series.given()) {  // a per-spring series: its values
        f(a.series.columns);
        f.vec(a.series.time), f.vec(a.series.value);
      }
    }
    add("actuation", f);
  }
  if (!m.scene.controllers.empty()) {
    // (only where the scene has controllers, so that the other scenes keep their fingerprints)
    Fnv f;
    for (const ControllerSpec& c : m.scene.controllers) {
      const ActuationSpec& a = c.reference;
      f.bytes(c.name.data(), c.name.size());
      f(a.target)(a.part)(a.amplitude)(a.direction)(a.ramp_in)(a.time)(a.phase_per_length);
      if (a.series.given()) {
        f(a.series.columns);
        f.vec(a.series.time), f.vec(a.series.value);
      }
      f.vec(c.profile), f.vec(c.kp), f.vec(c.ki);
      f(c.filter_time)(c.spatial_smoothing)(c.rate_limit)(c.command_min)(c.command_max);
      f(c.anti_windup)(c.tracking_time)(c.feedforward);
    }
    add("controllers", f);
  }
  {
    const NewtonSpec& n = in.newton;
    Fnv f;
    f(in.kind)(in.beta)(in.gamma)(in.adaptive)(in.min_dt)(in.two_d)(in.energy_consistent);
    f(n.max_iters)(n.abs_tol)(n.rel_tol)(n.step_tol)(n.line_search);
    if (n.inexact) f(n.inexact);  // (only when set: the fingerprints of earlier checkpoints hold)
    add("integrator", f);
  }
  add("dt", Fnv()(in.dt));
  add("user energies", Fnv()(std::uint64_t(m.user_energies.size())));
  return fp;
}

namespace {

// the controllers' state of a checkpoint (format 5): which controllers, and their values
struct ControllerSection {
  std::vector<std::string> names;
  std::vector<std::vector<int>> springs;
  std::vector<Real> values;
};

void write_state(const Model& m,
                 const IntegratorSpec& in,
                 const State& s,
                 const std::string& path,
                 const RunCursor& cursor,
                 const SceneFingerprint* fingerprint,
                 const StrainController* ctl,
                 int env) {
  Writer w;
  const SceneFingerprint own = fingerprint ? SceneFingerprint{} : scene_fingerprint(m, in);
  const SceneFingerprint& fp = fingerprint ? *fingerprint : own;
  w.put(std::uint32_t(fp.parts.size()));
  for (const auto& [name, hash] : fp.parts) {
    w.str(name);
    w.put(hash);
  }
  w.put(std::int64_t(s.ndof));
  w.put(s.time);
  w.put(std::int64_t(s.step));
  w.put(std::int64_t(s.warn_degenerate));
  w.put(std::int64_t(s.warn_linear_fallback));
  w.put(std::int64_t(s.warn_line_search));
  w.put(std::int64_t(cursor.steps));
  w.put(cursor.h_cur);
  w.put(std::int32_t(cursor.good_in_row));
  w.put(cursor.t_end);
  w.put(std::uint32_t(cursor.outputs.size()));
  for (const OutputMark& k : cursor.outputs) {
    w.str(k.name);
    w.put(k.count);
  }
#define SLENDER_WRITE_ARRAY(type, name, count, width, doc) w.vec(s.name);
  SLENDER_STATE_ARRAYS(SLENDER_WRITE_ARRAY)
#undef SLENDER_WRITE_ARRAY
  w.vec(s.dof_fixed);
  w.put(std::int32_t(s.events_done));
  const int nctl = ctl ? ctl->size() : 0;
  w.put(std::uint32_t(nctl));
  for (int c = 0; c < nctl; ++c) {
    w.str(ctl->name(c));
    w.vec(ctl->spring_index(c));
  }
  std::vector<Real> values(ctl ? ctl->state_size() : 0);
  if (ctl) ctl->save_state(env, values.data());
  w.vec(values);

  const std::string part = path + ".part";
  std::FILE* f = open_part(part, "wb");
  const std::string& payload = w.bytes();
  const std::uint64_t sum = checksum(payload.data(), payload.size());
  bool bad = std::fwrite(kMagic, 1, sizeof kMagic, f) != sizeof kMagic;
  bad = bad || std::fwrite(&kVersion, sizeof kVersion, 1, f) != 1;
  bad = bad || std::fwrite(&sum, sizeof sum, 1, f) != 1;
  bad = bad || std::fwrite(payload.data(), 1, payload.size(), f) != payload.size();
  close_and_rename(f, part, path, bad);
}

// reads `path` into s (sized for the model m, run with integrator `in`) and the controllers'
// state into cs (empty for a file without) and returns the cursor
RunCursor read_state(const Model& m,
                     const IntegratorSpec& in,
                     State& s,
                     ControllerSection& cs,
                     const std::string& path) {
  const long long size = check_input_file(path, kMaxCheckpointFileBytes, "checkpoint file");
  std::string data(size_t(size), '\0');
  {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw InputError(path, 0, "", "cannot open checkpoint file");
    const size_t got = std::fread(data.data(), 1, data.size(), f);
    std::fclose(f);
    data.resize(got);
  }
  const size_t header = sizeof kMagic + sizeof(std::uint32_t) + sizeof(std::uint64_t);
  if (data.size() < sizeof kMagic || std::memcmp(data.data(), kMagic, sizeof kMagic) != 0)
    throw InputError(path, 0, "", "not a Slender checkpoint");
  Reader head(data, sizeof kMagic, path);
  const auto version = head.get<std::uint32_t>("version");
  if (version == 1 || version == 2)
    throw InputError(path, 0, "version",
                     "checkpoint format " + std::to_string(version) +
                         " (before checksums and scene fingerprints, format 3) cannot be "
                         "verified and is not read: run again from the scene");
  if (version < kVersionWithoutMarks || version > kVersion)
    throw InputError(path, 0, "version",
                     "checkpoint format " + std::to_string(version) + ", this build reads " +
                         std::to_string(kVersionWithoutMarks) + " to " + std::to_string(kVersion));
  const auto sum = head.get<std::uint64_t>("checksum");
  if (checksum(data.data() + header, data.size() - header) != sum)
    throw InputError(path, 0, "checksum",
                     "the checkpoint is damaged or cut short: the checksum of its " +
                         std::to_string(data.size() - header) +
                         " bytes of data does not match the one it was written with");
  Reader r(data, header, path);

  // the scene's fingerprint: every part that differs is named
  const SceneFingerprint own = scene_fingerprint(m, in);
  const std::uint32_t nparts = r.get<std::uint32_t>("fingerprint");
  std::vector<std::pair<std::string, std::uint64_t>> theirs;
  for (std::uint32_t k = 0; k < nparts && k < 1024; ++k) {
    std::string name = r.str("fingerprint");
    const auto hash = r.get<std::uint64_t>("fingerprint");
    theirs.emplace_back(std::move(name), hash);
  }
  std::string differ;
  for (const auto& [name, hash] : own.parts) {
    bool same = false;
    for (const auto& t : theirs)
      if (t.first == name) same = t.second == hash;
    if (!same) differ += (differ.empty() ? "" : ", ") + name;
  }
  if (!differ.empty() || theirs.size() != own.parts.size())
    throw InputError(path, 0, "fingerprint",
                     "the checkpoint was written for another model or other settings: its " +
                         (differ.empty() ? std::string("fingerprint's parts") : differ) +
                         " differ from this simulator's");

  if (r.get<std::int64_t>("ndof") != m.ndof)
    throw InputError(path, 0, "ndof", "the checkpoint's DOF count is not the model's");
  s.time = r.get<Real>("time");
  s.step = long(r.get<std::int64_t>("step"));
  s.warn_degenerate = long(r.get<std::int64_t>("warnings"));
  s.warn_linear_fallback = long(r.get<std::int64_t>("warnings"));
  s.warn_line_search = long(r.get<std::int64_t>("warnings"));
  RunCursor c;
  c.steps = long(r.get<std::int64_t>("cursor"));
  c.h_cur = r.get<Real>("cursor");
  c.good_in_row = r.get<std::int32_t>("cursor");
  c.t_end = r.get<Real>("cursor");
  if (version >= kVersionWithoutControllers) {
    // the names are only compared with the recorders' own, never opened
    const auto nmarks = r.get<std::uint32_t>("outputs");
    if (nmarks > kMaxMarks)
      throw InputError(path, 0, "outputs",
                       "the checkpoint names " + std::to_string(nmarks) +
                           " output files, more than the " + std::to_string(kMaxMarks) +
                           " a run writes");
    for (std::uint32_t k = 0; k < nmarks; ++k) {
      OutputMark mark;
      mark.name = r.str("outputs");
      mark.count = r.get<std::uint64_t>("outputs");
      c.outputs.push_back(std::move(mark));
    }
  }
#define SLENDER_READ_ARRAY(type, name, count, width, doc) \
  r.vec(s.name, size_t(count) * size_t(width), #name);
  SLENDER_STATE_ARRAYS(SLENDER_READ_ARRAY)
#undef SLENDER_READ_ARRAY
  // the held DOFs: none stored (the model's set) or one byte per DOF
  const std::uint64_t n = r.get<std::uint64_t>("dof_fixed");
  if (n != 0 && n != std::uint64_t(m.ndof))
    throw InputError(path, 0, "dof_fixed",
                     "the checkpoint holds " + std::to_string(n) + " held-DOF flags, the model " +
                         std::to_string(m.ndof) + " DOFs");
  s.dof_fixed.resize(size_t(n));
  r.raw(s.dof_fixed.data(), s.dof_fixed.size(), "dof_fixed");
  s.events_done = r.get<std::int32_t>("events_done");
  if (s.events_done < 0 || s.events_done > int(m.event_time.size()))
    throw InputError(path, 0, "events_done",
                     "the checkpoint has applied " + std::to_string(s.events_done) +
                         " boundary events, the scene has " + std::to_string(m.event_time.size()));
  cs = ControllerSection{};
  if (version >= kVersion) {
    const auto nctl = r.get<std::uint32_t>("controllers");
    if (nctl > kMaxControllers)
      throw InputError(path, 0, "controllers",
                       "the checkpoint names " + std::to_string(nctl) + " controllers, more than " +
                           std::to_string(kMaxControllers));
    for (std::uint32_t c = 0; c < nctl; ++c) {
      cs.names.push_back(r.str("controllers"));
      std::vector<int> idx;
      const auto n = r.get<std::uint64_t>("controllers");
      if (n > std::uint64_t(m.nbend + m.nedge + m.nhinge))
        throw InputError(path, 0, "controllers",
                         "controller '" + cs.names.back() + "' of the checkpoint has " +
                             std::to_string(n) + " springs, more than the model has");
      idx.resize(size_t(n));
      r.raw(idx.data(), idx.size() * sizeof(int), "controllers");
      cs.springs.push_back(std::move(idx));
    }
    const auto nv = r.get<std::uint64_t>("controllers");
    if (nv > data.size()) throw InputError(path, 0, "controllers", "the checkpoint is cut short");
    cs.values.resize(size_t(nv));
    r.raw(cs.values.data(), cs.values.size() * sizeof(Real), "controllers");
  }
  if (!r.at_end()) throw InputError(path, 0, "", "the checkpoint has more bytes than its arrays");

  // the values: counters, the cursor and every array
  if (s.step < 0 || s.warn_degenerate < 0 || s.warn_linear_fallback < 0 || s.warn_line_search < 0)
    throw InputError(path, 0, "step", "the checkpoint's step or warning counts are negative");
#define SLENDER_CHECK_ARRAY(type, name, count, width, doc)                              \
  for (size_t i = 0; i < s.name.size(); ++i)                                            \
    if (!std::isfinite(s.name[i]))                                                      \
      throw InputError(path, 0, #name,                                                  \
                       "value " + std::to_string(i) + " of the state's " #name " is " + \
                           num(s.name[i]) + ": the checkpoint holds a state that is not finite");
  SLENDER_STATE_ARRAYS(SLENDER_CHECK_ARRAY)
#undef SLENDER_CHECK_ARRAY
  if (!(std::isfinite(s.time) && s.time >= 0))
    throw InputError(path, 0, "time",
                     "the checkpoint's time " + num(s.time) + " s is not a time of 0 s or more");
  if (c.steps < 0 || c.good_in_row < 0)
    throw InputError(path, 0, "cursor", "the run cursor's step counts are negative");
  const Real min_dt = in.min_dt > 0 ? in.min_dt : in.dt / 1024;
  if (!(std::isfinite(c.h_cur) && (c.h_cur == 0 || (c.h_cur > 0 && c.h_cur <= in.dt * (1 + 1e-12) &&
                                                    c.h_cur >= min_dt * (1 - 1e-12)))))
    throw InputError(path, 0, "cursor",
                     "the run cursor's step size " + num(c.h_cur) + " s is not within [" +
                         num(min_dt) + ", " + num(in.dt) + "] s (min_dt to dt)");
  if (c.t_end >= 0 || !std::isfinite(c.t_end)) {
    // a run's checkpoint: its end is the scene's duration, or a --duration it was taken to
    const Real land = 1e-6 * in.dt;
    if (!(std::isfinite(c.t_end) && s.time <= c.t_end + land &&
          (c.t_end - s.time) <= kMaxStepsLeft * in.dt))
      throw InputError(path, 0, "cursor",
                       "the run cursor's end time " + num(c.t_end) + " s is not a finite time at " +
                           "or after the checkpoint's time " + num(s.time) + " s and within " +
                           num(kMaxStepsLeft) + " steps of dt = " + num(in.dt) + " s of it");
  } else if (c.t_end != -1) {
    throw InputError(path, 0, "cursor",
                     "the run cursor's end time " + num(c.t_end) +
                         " s is neither -1 (none) nor a " + "time of 0 s or more");
  }
  return c;
}

// the checkpoint's controllers into environment env of `ctl` (null: none): the same controllers
// (names and springs, in order) or none in the file, which leaves them as they are. Checked
// before anything changes
void load_controllers(const ControllerSection& cs,
                      StrainController* ctl,
                      int env,
                      const std::string& path) {
  if (cs.names.empty()) return;
  const auto list = [](const std::vector<std::string>& names) {
    std::string l;
    for (const std::string& n : names)
      l += (l.empty() ? "'" : ", '") + n + "'";
    return l.empty() ? std::string("none") : l;
  };
  std::vector<std::string> own;
  bool same = ctl && ctl->size() == int(cs.names.size());
  for (int c = 0; ctl && c < ctl->size(); ++c) {
    own.push_back(ctl->name(c));
    same = same && c < int(cs.names.size()) && cs.names[size_t(c)] == ctl->name(c) &&
           cs.springs[size_t(c)] == ctl->spring_index(c);
  }
  if (!same)
    throw InputError(path, 0, "controllers",
                     "the checkpoint holds the state of the controllers " + list(cs.names) +
                         " (their springs in order), this simulator has " + list(own));
  if (cs.values.size() != ctl->state_size())
    throw InputError(path, 0, "controllers",
                     "the checkpoint holds " + std::to_string(cs.values.size()) +
                         " values of the controllers' state, they have " +
                         std::to_string(ctl->state_size()));
  try {
    ctl->load_state(env, cs.values.data());
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {
    throw InputError(path, 0, "controllers", e.what());
  }
}

}  // namespace

void save_checkpoint(const Simulator& sim,
                     const std::string& path,
                     const RunCursor& cursor,
                     const SceneFingerprint* fingerprint) {
  write_state(sim.model(), sim.integrator(), sim.state(), path, cursor, fingerprint,
              sim.controller(), 0);
}

RunCursor load_checkpoint(Simulator& sim, const std::string& path) {
  State s = sim.state();
  ControllerSection cs;
  const RunCursor c = read_state(sim.model(), sim.integrator(), s, cs, path);
  load_controllers(cs, sim.controller(), 0, path);
  sim.set_state(s);
  return c;
}

void save_checkpoint(const BatchedSimulator& batch,
                     int env,
                     const std::string& path,
                     const SceneFingerprint* fingerprint) {
  // batch.state(env) refuses an environment out of range
  write_state(batch.model(), batch.integrator(), batch.state(env), path, RunCursor{}, fingerprint,
              batch.controller(), env);
}

void load_checkpoint(BatchedSimulator& batch, int env, const std::string& path) {
  State s = batch.state(env);  // refuses an environment out of range
  ControllerSection cs;
  read_state(batch.model(), batch.integrator(), s, cs, path);
  load_controllers(cs, batch.controller(), env, path);
  batch.set_state(env, s);
}

}  // namespace slender
