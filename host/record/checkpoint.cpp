// Checkpoint files (include/slender/checkpoint.h). Layout, little-endian as the machine writes
// it: the magic "SLENDERCK", a format version, the model's fingerprint, the state's counts, the
// time, step and warning counters, the run cursor, then each State array as (length, doubles),
// in the order of SLENDER_STATE_ARRAYS; from format 2 on, the held DOFs (length 0: the model's,
// or ndof bytes) and the count of boundary events applied (int32). Format 1 files (before the
// held DOFs could change) read with the model's set and no event applied.

#include "slender/checkpoint.h"

#include <cstdio>
#include <cstring>
#include <vector>

#include "record/part_file.h"
#include "slender/core/error.h"

namespace slender {

namespace {

constexpr char kMagic[10] = "SLENDERCK";  // with its terminating zero: 10 bytes
constexpr std::uint32_t kVersion = 2;

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
};

class Writer {
 public:
  explicit Writer(std::FILE* f) : f_(f) {}
  void raw(const void* p, size_t n) {
    if (n > 0 && std::fwrite(p, 1, n, f_) != n) ok_ = false;
  }
  template <class T>
  void put(const T& v) {
    raw(&v, sizeof v);
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    put(std::uint64_t(v.size()));
    raw(v.data(), v.size() * sizeof(T));
  }
  bool ok() const { return ok_; }

 private:
  std::FILE* f_;
  bool ok_ = true;
};

class Reader {
 public:
  Reader(std::FILE* f, const std::string& path) : f_(f), path_(path) {}
  void raw(void* p, size_t n, const char* what) {
    if (n > 0 && std::fread(p, 1, n, f_) != n)
      throw InputError(path_, 0, what, "the checkpoint is cut short");
  }
  template <class T>
  T get(const char* what) {
    T v{};
    raw(&v, sizeof v, what);
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

 private:
  std::FILE* f_;
  const std::string& path_;
};

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

namespace {

void write_state(const Model& m,
                 const State& s,
                 const std::string& path,
                 const RunCursor& cursor,
                 std::uint64_t fingerprint) {
  const std::string part = path + ".part";
  std::FILE* f = open_part(part, "wb");
  Writer w(f);
  w.raw(kMagic, sizeof kMagic);
  w.put(kVersion);
  w.put(fingerprint != 0 ? fingerprint : model_fingerprint(m));
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
#define SLENDER_WRITE_ARRAY(type, name, count, width, doc) w.vec(s.name);
  SLENDER_STATE_ARRAYS(SLENDER_WRITE_ARRAY)
#undef SLENDER_WRITE_ARRAY
  w.vec(s.dof_fixed);
  w.put(std::int32_t(s.events_done));
  close_and_rename(f, part, path, !w.ok());
}

// reads `path` into s (sized for the model m) and returns the cursor
RunCursor read_state(const Model& m, State& s, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw InputError(path, 0, "", "cannot open checkpoint file");
  struct Closer {
    std::FILE* f;
    ~Closer() { std::fclose(f); }
  } closer{f};
  Reader r(f, path);
  char magic[sizeof kMagic] = {};
  if (std::fread(magic, 1, sizeof magic, f) != sizeof magic ||
      std::memcmp(magic, kMagic, sizeof kMagic) != 0)
    throw InputError(path, 0, "", "not a Slender checkpoint");
  const auto version = r.get<std::uint32_t>("version");
  if (version != kVersion && version != 1)
    throw InputError(path, 0, "version",
                     "checkpoint format " + std::to_string(version) + ", this build reads 1 to " +
                         std::to_string(kVersion));
  if (r.get<std::uint64_t>("model") != model_fingerprint(m))
    throw InputError(path, 0, "model",
                     "the checkpoint was written for another model (its arrays differ from "
                     "this scene's)");
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
#define SLENDER_READ_ARRAY(type, name, count, width, doc) \
  r.vec(s.name, size_t(count) * size_t(width), #name);
  SLENDER_STATE_ARRAYS(SLENDER_READ_ARRAY)
#undef SLENDER_READ_ARRAY
  s.dof_fixed.clear();
  s.events_done = 0;
  if (version >= 2) {
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
                           " boundary events, the scene has " +
                           std::to_string(m.event_time.size()));
  }
  if (std::fgetc(f) != EOF)
    throw InputError(path, 0, "", "the checkpoint has more bytes than its arrays");
  return c;
}

}  // namespace

void save_checkpoint(const Simulator& sim,
                     const std::string& path,
                     const RunCursor& cursor,
                     std::uint64_t fingerprint) {
  write_state(sim.model(), sim.state(), path, cursor, fingerprint);
}

RunCursor load_checkpoint(Simulator& sim, const std::string& path) {
  State s = sim.state();
  const RunCursor c = read_state(sim.model(), s, path);
  sim.set_state(s);
  return c;
}

void save_checkpoint(const BatchedSimulator& batch,
                     int env,
                     const std::string& path,
                     std::uint64_t fingerprint) {
  // batch.state(env) refuses an environment out of range
  write_state(batch.model(), batch.state(env), path, RunCursor{}, fingerprint);
}

void load_checkpoint(BatchedSimulator& batch, int env, const std::string& path) {
  State s = batch.state(env);  // refuses an environment out of range
  read_state(batch.model(), s, path);
  batch.set_state(env, s);
}

}  // namespace slender
