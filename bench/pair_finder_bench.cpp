// slender_pair_finder_bench: the contact pair finder (engine/contact_pipeline.h, the host
// executor's run of it) on recorded states.
//
// Cases: the 2k- and 20k-triangle cloths of S9 (bench/cloth_scene.h), the 200k one's flat first
// state, apps/scenes/cloth_drop.json (384 triangles) and apps/scenes/gripper.json (rod-rod
// contact). Each case's Simulator runs some steps
// (S9's cloths from a state part way down, so that the fold's self-contact is among them where
// the run reaches it); every few steps the state (positions, velocities, the step) is kept. A
// repeat calls the finder once on every kept state and times the pass. The table gives
// min/median/max per call over the repeats, the sub-pairs and the candidates per state, and what
// a call asks of its executor as the CUDA executor would run it (the host executor's counts,
// slender/backend.h: kernel launches, device-to-host reads, sorts; the first call left out), and
// the finder's construction with its first call (which tables the shells' rest neighbours once)
// beside the table's size. (Until
// the host's own finder was retired, this program timed the two side by side:
// bench/results/2026-11-29-one-pair-finder-xeon-2c.md.)
//
//   slender_pair_finder_bench [--cases cloth2k,cloth20k,cloth200k,cloth_drop,gripper] [--repeats N]
//                             [--markdown FILE] [--profile]  (only the passes, no table)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/host_executor.h"
#include "bench_util.h"
#include "cloth_scene.h"
#include "slender/backend.h"
#include "slender/builder.h"
#include "slender/engine/contact_pipeline.h"
#include "slender/simulator.h"

#ifndef SLENDER_BENCH_APP_SCENES_DIR
#define SLENDER_BENCH_APP_SCENES_DIR "apps/scenes"
#endif

namespace {

using slender::Real;
using slender::bench::fmt;

struct Snapshot {
  std::vector<Real> q, u;
  Real dt = 0;
};

struct Case {
  std::string name;
  std::shared_ptr<const slender::Model> model;
  std::vector<Snapshot> states;
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// one step of size dt, as two halves (each likewise) where it fails, to dt / 64; false if that
// fails too
bool step_adaptive(slender::Simulator& sim, Real dt, int depth = 0) {
  if (sim.step(dt).ok()) return true;
  if (depth == 6) return false;
  return step_adaptive(sim, dt / 2, depth + 1) && step_adaptive(sim, dt / 2, depth + 1);
}

// runs the model's Simulator for `steps` steps after `skip`, keeping every `every`-th state
Case record(const std::string& name,
            std::shared_ptr<const slender::Model> m,
            int skip,
            int steps,
            int every) {
  Case c{name, m, {}};
  slender::Simulator sim(m);
  const Real dt = m->scene.integrator.dt;
  for (int s = 0; s < skip + steps; ++s) {
    if (s >= skip && (s - skip) % every == 0) {
      c.states.push_back({sim.state().q, sim.state().u, dt});
    }
    if (!step_adaptive(sim, dt)) {
      std::cerr << name << ": step " << s << " failed; keeping the states so far\n";
      break;
    }
  }
  return c;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) try {
  using namespace slender;
  std::vector<std::string> cases = {"cloth2k", "cloth20k", "cloth_drop",
                                    "gripper"};  // (cloth200k: ~1 min)
  int repeats = 9;
  std::string markdown;
  bool profile = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--cases") {
      cases = bench::split(next());
    } else if (a == "--repeats") {
      repeats = std::max(1, std::stoi(next()));
    } else if (a == "--profile") {
      profile = true;
    } else if (a == "--markdown") {
      markdown = next();
    } else {
      throw std::runtime_error("unknown option " + a);
    }
  }
  bench::Table t;
  t.head = {"case",
            "states",
            "sub-pairs / state",
            "candidates / state",
            "finder [ms/call] min / median / max",
            "launches / host reads / sorts per call (as on a GPU)",
            "construction and first call [ms]",
            "rest-neighbour table [triangle pairs]"};
  for (const std::string& name : cases) {
    Case c;
    const auto t0 = Clock::now();
    if (name == "cloth2k" || name == "cloth20k" || name == "cloth200k") {
      const long tris = name == "cloth2k" ? 2000 : name == "cloth20k" ? 20000 : 200000;
      auto m = build_model(bench::cloth::make_scene(bench::cloth::rings_for(tris), 2e6));
      // the 2k cloth folds onto itself after about 0.25 s; the 200k one: its first state only,
      // flat and at rest (a fine cloth's rest neighbours make the most of the finder's work)
      c = name == "cloth2k"    ? record(name, m, 150, 250, 10)
          : name == "cloth20k" ? record(name, m, 100, 30, 3)
                               : record(name, m, 0, 1, 1);
    } else if (name == "cloth_drop") {  // the scene: 384 triangles, its whole run's states
      auto m = build_model(
          read_scene_file(std::string(SLENDER_BENCH_APP_SCENES_DIR) + "/cloth_drop.json"));
      c = record(name, m, 0, 2000, 20);
    } else if (name == "gripper") {
      auto m =
          build_model(read_scene_file(std::string(SLENDER_BENCH_APP_SCENES_DIR) + "/gripper.json"));
      c = record(name, m, 0, 300, 10);
    } else {
      throw std::runtime_error("unknown case " + name);
    }
    std::cerr << name << ": " << c.states.size() << " states recorded in "
              << fmt("%.1f", seconds_since(t0)) << " s\n";
    // the construction and the first call (which builds the rest-neighbour table), timed and
    // left out of the counts
    if (c.states.empty()) throw std::runtime_error(name + ": no state recorded");
    const auto s_setup = Clock::now();
    contact::ContactPipeline<HostExecutor> finder(*c.model);
    finder.find(c.states[0].q.data(), c.states[0].u.data(), c.states[0].dt);
    const double setup_ms = 1e3 * seconds_since(s_setup);
    long pairs = 0, candidates = 0;
    reset_executor_counts();
    for (const Snapshot& s : c.states) {
      finder.find(s.q.data(), s.u.data(), s.dt);
      pairs += finder.nee() + finder.npt();
      candidates += finder.candidates_ee() + finder.candidates_et() + finder.candidates_tt();
    }
    const ExecutorCounts counts = executor_counts();
    auto pass = [&]() {
      const auto s0 = Clock::now();
      for (const Snapshot& s : c.states)
        finder.find(s.q.data(), s.u.data(), s.dt);
      return 1e3 * seconds_since(s0) / double(c.states.size());
    };
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r)
      times.push_back(pass());
    if (profile) continue;
    const long ns = long(c.states.size());
    t.rows.push_back({name, std::to_string(ns), std::to_string(pairs / ns),
                      std::to_string(candidates / ns),
                      fmt("%.3f", *std::min_element(times.begin(), times.end())) + " / " +
                          fmt("%.3f", median(times)) + " / " +
                          fmt("%.3f", *std::max_element(times.begin(), times.end())),
                      fmt("%.1f", double(counts.launches) / double(ns)) + " / " +
                          fmt("%.1f", double(counts.host_reads) / double(ns)) + " / " +
                          fmt("%.1f", double(counts.sorts) / double(ns)),
                      fmt("%.1f", setup_ms), std::to_string(finder.rest_pairs())});
  }
  if (profile) return 0;
  std::cout << "CPU: " << bench::cpu_model() << ", threads " << bench::omp_threads() << "\n";
  bench::print_text(std::cout, t);
  if (!markdown.empty()) {
    std::ofstream md(markdown);
    bench::print_markdown(md, t);
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "slender_pair_finder_bench: " << e.what() << "\n";
  return 1;
}
