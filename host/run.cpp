#include "slender/run.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/model_internal.h"
#include "record/progress.h"
#include "slender/control.h"
#include "slender/core/error.h"
#include "slender/record.h"

namespace slender {
namespace {

constexpr int kRegrowAfter = 4;       // good steps in a row before a halved dt is doubled
constexpr int kMaxDtNotes = 10;       // dt halvings noted in the log, then one line for the rest
constexpr Real kLandTol = 1e-9;       // a remaining time below kLandTol * dt counts as arrived
constexpr Real kMaxSteps = 1e12;      // the most steps a run may take
constexpr Real kMinDtDivisor = 1024;  // default min_dt = dt / kMinDtDivisor
constexpr size_t kMaxFileName = 255;  // bytes of one file name (NAME_MAX on Linux and macOS)

// a number for messages: %g with the given significant digits
std::string num(double v, int digits = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string sci(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

// the recorders the scene's output spec asks for, each begun in out_dir
struct Recording {
  std::vector<std::unique_ptr<Recorder>> recorders;
  std::vector<char> is_vtk;  // per recorder: the VTK series (its own cadence) or a CSV file
  bool want_energies = false;
  bool want_strains = false;
  const StrainController* controllers = nullptr;  // whose values controllers.csv records
  long last_step = -1;                            // run step of the last record

  // every output path, checked before anything is written: each name within the file system's
  // limit (with the temporary ".part"), no folder where a file goes, the folders writable
  static void check_paths(const std::vector<std::string>& paths) {
    namespace fs = std::filesystem;
    for (const std::string& p : paths) {
      const fs::path path(p);
      for (const fs::path& part : path) {
        const std::string name = part.string() + (part == path.filename() ? ".part" : "");
        if (name.size() > kMaxFileName) {
          throw Error("output '" + p + "': the file name '" + name + "' has " +
                      std::to_string(name.size()) + " bytes, more than the " +
                      std::to_string(kMaxFileName) +
                      " a file system allows (shorten the scene's \"name\" or the output "
                      "folder)");
        }
      }
      std::error_code ec;
      if (fs::is_directory(path, ec)) {
        throw Error("output '" + p + "' is a folder, where the run writes a file");
      }
    }
    // the folders: a probe file created and removed in each
    std::vector<fs::path> dirs;
    for (const std::string& p : paths) {
      const fs::path d = fs::path(p).parent_path();
      if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
    }
    for (const fs::path& d : dirs) {
      std::error_code ec;
      fs::create_directories(d, ec);
      if (ec) throw Error("cannot create the output folder '" + d.string() + "': " + ec.message());
      const fs::path probe = d / ".slender-write-check";
      std::FILE* f = std::fopen(probe.string().c_str(), "w");
      if (!f) {
        throw Error("cannot write in the output folder '" + d.string() +
                    "': " + std::strerror(errno));
      }
      std::fclose(f);
      fs::remove(probe, ec);
    }
  }

  // the recorders the scene and the options ask for, their paths checked; the USD series
  // (usd_interval [s] between its records) follows the VTK frames' cadence
  void make(const Model& m,
            const std::string& out_dir,
            const std::string& usd_path,
            Real usd_interval,
            const StrainController* ctrl) {
    const OutputSpec& o = m.scene.output;
    if (ctrl) {
      recorders.push_back(make_controller_csv_recorder(ctrl->csv_columns()));
      is_vtk.push_back(0);
      controllers = ctrl;
    }
    if (o.vtk) {
      recorders.push_back(make_vtk_recorder(m.scene.name));
      is_vtk.push_back(1);
      want_strains = true;
    }
    if (!usd_path.empty()) {
      recorders.push_back(make_usd_recorder(usd_path, usd_interval));
      is_vtk.push_back(1);
      want_strains = true;
    }
    if (o.energies) {
      recorders.push_back(make_energy_csv_recorder());
      is_vtk.push_back(0);
      want_energies = true;
    }
    if (!o.csv_nodes.empty()) {
      // columns named by part and part-local node (a negative index resolved)
      std::vector<int> nodes;
      std::vector<std::string> labels;
      for (const NodeRef& r : o.csv_nodes) {
        nodes.push_back(m.resolve_node(r));
        const PartSpec& part = m.scene.parts[size_t(r.part)];
        const int local = local_index(r.index, int(part.nodes.size()));
        labels.push_back(part.name + "_n" + std::to_string(local));
      }
      recorders.push_back(make_node_csv_recorder(std::move(nodes), std::move(labels)));
      is_vtk.push_back(0);
    }
    std::vector<std::string> paths;
    for (const auto& r : recorders)
      for (std::string& p : r->outputs(m, out_dir))
        paths.push_back(std::move(p));
    check_paths(paths);
  }

  // whether out_dir holds any of the files (or their temporary ones) these recorders write:
  // the outputs of the run a checkpoint came from, which a resumed run continues
  bool present(const Model& m, const std::string& out_dir) const {
    for (const auto& r : recorders) {
      for (const std::string& p : r->outputs(m, out_dir)) {
        std::error_code ec;
        if (std::filesystem::exists(p, ec) || std::filesystem::exists(p + ".part", ec)) return true;
      }
    }
    return false;
  }

  std::vector<OutputMark> marks() const {
    std::vector<OutputMark> all;
    for (const auto& r : recorders)
      for (OutputMark& k : r->marks())
        all.push_back(std::move(k));
    return all;
  }

  // the state of `step` to the CSV recorders (csv), the VTK series (vtk) or both
  void record(const Simulator& sim, long step, int newton_iters, bool csv = true, bool vtk = true) {
    last_step = step;
    if (recorders.empty() || !(csv || vtk)) return;
    RecordFrame f;
    f.step = step;
    f.time = sim.state().time;
    f.model = &sim.model();
    f.state = &sim.state();
    if (want_energies && csv) f.energies = sim.energies();
    if (want_strains && vtk) {
      f.bend_strains = sim.bend_strains();
      f.shell_energy_density = sim.shell_bending_energy_density();
    }
    f.newton_iters = newton_iters;
    if (controllers && csv) {
      // the errors at this state, by the engine's strain queries
      std::vector<Real> bend, stretch, hinge;
      StrainReadings y;
      if (controllers->reads(StrainKind::kBendTwist)) {
        bend = sim.strains(StrainKind::kBendTwist);
        y.bend_twist = bend.data();
      }
      if (controllers->reads(StrainKind::kStretch)) {
        stretch = sim.strains(StrainKind::kStretch);
        y.stretch = stretch.data();
      }
      if (controllers->reads(StrainKind::kHingeAngle)) {
        hinge = sim.strains(StrainKind::kHingeAngle);
        y.hinge = hinge.data();
      }
      controllers->csv_row(0, f.time, y, f.controller_values);
    }
    for (size_t i = 0; i < recorders.size(); ++i)
      if (is_vtk[i] ? vtk : csv) recorders[i]->record(f);
  }

  std::vector<std::string> end() {
    std::vector<std::string> files;
    for (auto& r : recorders) {
      for (std::string& p : r->end())
        files.push_back(std::move(p));
    }
    return files;
  }

  // after an error: what is unfinished is removed
  void abort() noexcept {
    for (auto& r : recorders)
      r->abort();
  }
};

// the warning counters of a state, one log line each
void log_warnings(const State& s, std::ostream& log) {
  if (s.warn_degenerate > 0) {
    log << "warning: " << s.warn_degenerate
        << " stencil evaluations met a zero-length edge (their forces were skipped)\n";
  }
  if (s.warn_linear_fallback > 0) {
    log << "warning: " << s.warn_linear_fallback
        << " linear solves fell back (sparse LU for a Jacobian that was not positive definite; "
           "the direct solve for a Krylov solver's; matrix-free: BiCGSTAB or an inexact "
           "direction)\n";
  }
  if (s.warn_line_search > 0) {
    log << "warning: " << s.warn_line_search << " line searches hit their smallest step length\n";
  }
}

// why a step failed and what to try; adaptive runs get here only at min_dt
std::string failure_message(
    long step, Real t, Real t_left, Real h, const StepReport& rep, bool adaptive) {
  std::string msg = "step " + std::to_string(step) + " at t = " + num(t) +
                    " s failed: " + to_string(rep.status) + " after " +
                    std::to_string(rep.iterations) + " Newton iterations (residual " +
                    sci(rep.residual) + ")";
  if (adaptive) msg += " at dt = " + num(h, 3) + " s, the smallest allowed";
  msg += "; the state was left at t = " + num(t_left) + " s. ";
  if (adaptive) {
    msg += "Try a smaller --dt or a smaller \"min_dt\" in the integrator.";
  } else {
    msg += "Try a smaller --dt or set \"adaptive\": true in the integrator.";
  }
  return msg;
}

}  // namespace

RunResult run_simulation(Simulator& sim, const RunOptions& opt, std::ostream& log) {
  const Model& m = sim.model();
  const IntegratorSpec& in = sim.integrator();

  // resolve the options against the scene
  const Real dt = opt.dt < 0 ? in.dt : opt.dt;
  const Real duration = opt.duration < 0 ? in.duration : opt.duration;
  const int every = opt.every < 0 ? m.scene.output.every : opt.every;
  // the VTK series' cadence: the scene's vtk_every, unless the options set both
  const int vtk_every =
      opt.every < 0 && m.scene.output.vtk_every > 0 ? m.scene.output.vtk_every : every;
  if (!(dt > 0) || !std::isfinite(dt)) {
    throw InputError("<options>", 0, "dt", "must be a positive time step, got " + num(dt));
  }
  if (!std::isfinite(duration)) {
    throw InputError("<options>", 0, "duration", "must be finite, got " + num(duration));
  }
  if (every < 0) {
    throw InputError("<options>", 0, "every", "must be 0 or more, got " + std::to_string(every));
  }
  // the simulated time must be able to advance by dt, in at most kMaxSteps steps
  const Real t_start = sim.state().time;
  if (duration / dt > kMaxSteps) {
    throw InputError("<options>", 0, "duration",
                     "a run of " + num(duration) + " s at dt = " + num(dt) + " s takes " +
                         num(duration / dt) + " steps, more than " + num(kMaxSteps));
  }
  if (!(t_start + duration + dt > t_start + duration)) {
    throw InputError("<options>", 0, "dt",
                     num(dt) + " s is below the resolution of the simulated time at t = " +
                         num(t_start + duration) + " s: the time would not advance");
  }
  const Real min_dt = in.min_dt > 0 ? in.min_dt : dt / kMinDtDivisor;
  RunResult res;
  if (opt.resume) res.steps = opt.resume->steps;  // the recording cadence goes on
  const long first_step = res.steps;
  std::string out_dir = opt.out_dir.empty() ? m.scene.output.dir : opt.out_dir;
  if (out_dir.empty()) out_dir = ".";

  const auto wall0 = std::chrono::steady_clock::now();
  Recording rec;
  bool failed = false;
  bool continued = false;  // the outputs of the checkpoint's run continued in place
  try {
    if (opt.write_outputs) {
      std::error_code ec;
      std::filesystem::create_directories(out_dir, ec);
      if (ec) throw Error("cannot create the output folder '" + out_dir + "': " + ec.message());
      // the USD series' time code: one VTK interval (with "every" 0, the whole run)
      const Real usd_interval = vtk_every > 0 ? vtk_every * dt : duration > 0 ? duration : dt;
      rec.make(m, out_dir, opt.usd_path, usd_interval, sim.controller());
      // a resumed run whose folder holds its run's outputs continues them, as if that run had
      // not stopped; elsewhere it begins new ones at its first state
      continued = opt.resume && rec.present(m, out_dir);
      if (continued && opt.resume->outputs.empty()) {
        throw Error("the output folder '" + out_dir +
                    "' holds outputs, and the checkpoint does not say how far its run had "
                    "written them (a run without outputs, or a checkpoint of format 3): "
                    "resume into another folder");
      }
      for (auto& r : rec.recorders) {
        if (continued) {
          r->resume(m, out_dir, opt.resume->outputs);
        } else {
          r->begin(m, out_dir);
        }
      }
    }
    // a continued run's files hold what its run had recorded up to the checkpoint's step
    if (continued) {
      rec.last_step = res.steps;
    } else {
      rec.record(sim, res.steps, 0);
    }

    Progress progress;
    if (opt.progress) progress.start(duration);

    // step to the end time; the last step is shortened to land on it
    const Real t0 = sim.time();
    const Real t_end = opt.resume && opt.resume->t_end >= 0 ? opt.resume->t_end : t0 + duration;
    // (a dt longer than the whole run is one step of the duration)
    const Real land = kLandTol * std::min(dt, duration);
    Real h_cur = dt;      // current step size, below dt after a halving
    int good_in_row = 0;  // good steps since the last change of h_cur
    if (opt.resume) {
      if (opt.resume->h_cur > 0) h_cur = opt.resume->h_cur;
      good_in_row = opt.resume->good_in_row;
    }
    int last_iters = 0;  // Newton iterations of the last good step
    // the scene's fingerprint for the checkpoints, once (it reads every array of the model),
    // with the dt this run steps with (its files are read back by a simulator of that dt)
    IntegratorSpec run_in = in;
    run_in.dt = dt;
    const SceneFingerprint fingerprint =
        opt.checkpoint_every > 0 ? scene_fingerprint(m, run_in) : SceneFingerprint{};
    while (true) {
      const Real t = sim.time();
      const Real left = t_end - t;
      if (left <= land) break;
      if (opt.interrupt && *opt.interrupt) {
        res.interrupted = true;
        break;
      }
      Real h = std::min(h_cur, left);
      if (left - h <= land) h = left;

      const StepReport rep = sim.step(h);
      res.newton_iters += rep.iterations;
      if (!rep.ok()) {
        // adaptive: retry the step with half the size, unless that goes below min_dt
        const bool can_halve = in.adaptive && h * 0.5 >= min_dt * (1 - 1e-12);
        if (can_halve) {
          h_cur = h * 0.5;
          good_in_row = 0;
          ++res.dt_halvings;
          if (res.dt_halvings <= kMaxDtNotes) {
            log << "note: step " << res.steps + 1 << " at t = " << num(t)
                << " s: " << to_string(rep.status) << " at dt = " << num(h, 3)
                << " s; retrying with dt = " << num(h_cur, 3) << " s\n";
            if (res.dt_halvings == kMaxDtNotes) log << "note: further dt halvings not shown\n";
          }
          continue;
        }
        res.message = failure_message(res.steps + 1, t, sim.time(), h, rep, in.adaptive);
        failed = true;
        break;
      }
      SLENDER_CHECK(sim.time() > t, "a converged step of dt = ", h,
                    " did not advance the time from t = ", t);
      ++res.steps;
      if (rep.iterations == 0) ++res.steps_without_iteration;
      last_iters = rep.iterations;

      // after a few good steps at a reduced size, grow back toward the nominal dt
      if (h_cur < dt && ++good_in_row >= kRegrowAfter) {
        h_cur = std::min(dt, 2 * h_cur);
        good_in_row = 0;
      }
      const bool csv = every > 0 && res.steps % every == 0;
      const bool vtk = vtk_every > 0 && res.steps % vtk_every == 0;
      if (csv || vtk) rec.record(sim, res.steps, rep.iterations, csv, vtk);
      if (opt.checkpoint_every > 0 && res.steps % opt.checkpoint_every == 0)
        save_checkpoint(sim, opt.checkpoint_path,
                        RunCursor{res.steps, h_cur, good_in_row, t_end, rec.marks()}, &fingerprint);
      if (opt.progress) progress.update(sim.time() - t0, res.steps);
    }
    if (opt.progress) progress.finish();

    // the last state is always recorded, also when a step failed (it is the last good one)
    if (rec.last_step != res.steps) rec.record(sim, res.steps, last_iters);
    res.files = rec.end();
  } catch (...) {
    rec.abort();  // no unfinished file stays behind
    throw;
  }

  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall0;
  res.wall_seconds = wall.count();
  res.sim_time = sim.state().time;
  res.ok = !failed && !res.interrupted;
  log_warnings(sim.state(), log);
  if (failed) return res;
  if (res.interrupted) {
    res.message =
        "interrupted after " + std::to_string(res.steps) + " steps at t = " + num(res.sim_time) +
        " s" +
        (opt.write_outputs ? "; the outputs recorded so far are complete in " + out_dir : "");
    return res;
  }

  // summary
  // (a resumed run counts on from the checkpoint's steps; its rates are of its own steps)
  const long taken = res.steps - first_step;
  std::string msg = "done: " + std::to_string(taken) + " steps, t = " + num(res.sim_time) +
                    " s in " + fixed(res.wall_seconds, 2) + " s wall (";
  if (res.wall_seconds > 0 && taken > 0) {
    msg += fixed(taken / res.wall_seconds, 0) + " steps/s, ";
  }
  // per step that iterated (a step whose predictor meets the tolerances takes none: counted
  // apart, so that a mostly resting scene does not read as 0.3 iterations per step)
  const long iterated = taken - res.steps_without_iteration;
  const double iters_per_step = iterated > 0 ? double(res.newton_iters) / iterated : 0.0;
  msg += fixed(iters_per_step, 1) + " Newton iterations per step that iterated";
  if (res.steps_without_iteration > 0)
    msg += ", " + std::to_string(res.steps_without_iteration) + " steps needed none";
  if (res.dt_halvings > 0) msg += ", " + std::to_string(res.dt_halvings) + " dt halvings";
  msg += ")";
  msg += opt.write_outputs ? "; outputs in " + out_dir : "; no outputs written";
  res.message = msg;
  return res;
}

}  // namespace slender
