// slender_pair_finder_bench: the contact pair finders side by side on the host. The host's
// finder (contact/pairs.h: a hashed grid broad phase, the triangle pairs' sub-pairs culled before
// their sort) against the executor's pipeline (engine/contact_pipeline.h: a linear BVH, sorts and
// scans) run by the host executor, on the same recorded states.
//
// Cases: the 2k- and 20k-triangle cloths of S9 (bench/cloth_scene.h) and apps/scenes/gripper.json
// (rod-rod contact). Each case's Simulator runs --steps steps (S9's cloths from a state part way
// down, --skip steps in, so that the fold's self-contact is among them where the run reaches it);
// every --every-th state (positions, velocities, the step) is kept. A repeat calls each finder
// once on every kept state, the two finders in turn (A then B, then B then A), and times the
// pass. The table gives min/median/max per call over the repeats, the ratio of the medians
// (pipeline / host) and the sub-pairs found, which must be equal: the lists are compared entry
// for entry once per state before timing.
//
//   slender_pair_finder_bench [--cases cloth2k,cloth20k,gripper] [--repeats N] [--markdown FILE]
//                             [--profile host|pipeline]  (only that finder's passes, no table)

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
#include "contact/host_pair_finder.h"
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

long count(const slender::contact::ContactPairLists& l) { return long(l.nee() + l.npt()); }

bool same(const slender::contact::ContactPairLists& a,
          const slender::contact::ContactPairLists& b) {
  return a.ee_node == b.ee_node && a.ee_d == b.ee_d && a.ee_mu == b.ee_mu &&
         a.pt_node == b.pt_node && a.pt_d == b.pt_d && a.pt_mu == b.pt_mu;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) try {
  using namespace slender;
  std::vector<std::string> cases = {"cloth2k", "cloth20k", "gripper"};
  int repeats = 9;
  std::string markdown, profile;
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
      profile = next();
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
            "host finder [ms/call] min / median / max",
            "pipeline on the host [ms/call] min / median / max",
            "pipeline / host (median)"};
  for (const std::string& name : cases) {
    Case c;
    const auto t0 = Clock::now();
    if (name == "cloth2k" || name == "cloth20k" || name == "cloth200k") {
      const long tris = name == "cloth2k" ? 2000 : name == "cloth20k" ? 20000 : 200000;
      auto m = build_model(bench::cloth::make_scene(bench::cloth::rings_for(tris), 2e6));
      // the 2k cloth folds onto itself after about 0.25 s; the 20k one reaches the ground
      // near step 340
      // (the 200k cloth: its first state only, flat and at rest, the broad phase's whole work)
      c = name == "cloth2k"    ? record(name, m, 150, 250, 10)
          : name == "cloth20k" ? record(name, m, 100, 30, 3)
                               : record(name, m, 0, 1, 1);
    } else if (name == "gripper") {
      auto m =
          build_model(read_scene_file(std::string(SLENDER_BENCH_APP_SCENES_DIR) + "/gripper.json"));
      c = record(name, m, 0, 300, 10);
    } else {
      throw std::runtime_error("unknown case " + name);
    }
    std::cerr << name << ": " << c.states.size() << " states recorded in "
              << fmt("%.1f", seconds_since(t0)) << " s\n";
    contact::HostPairFinder host(*c.model);
    contact::ContactPipeline<HostExecutor> pipe(*c.model);
    long pairs = 0;
    for (const Snapshot& s : c.states) {
      contact::ContactPairLists a, b;
      host.find(s.q.data(), s.u.data(), s.dt);
      host.download(a);
      pipe.find(s.q.data(), s.u.data(), s.dt);
      pipe.download(b);
      if (!same(a, b)) throw std::runtime_error(name + ": the finders' lists differ");
      pairs += count(a);
    }
    if (!profile.empty()) {  // only one finder, for a profiler: no table
      for (int r = 0; r < repeats; ++r)
        for (const Snapshot& s : c.states)
          profile == "host" ? void(host.find(s.q.data(), s.u.data(), s.dt))
                            : void(pipe.find(s.q.data(), s.u.data(), s.dt));
      continue;
    }
    std::vector<double> th, tp;
    auto pass = [&](auto& finder) {
      const auto s0 = Clock::now();
      for (const Snapshot& s : c.states)
        finder.find(s.q.data(), s.u.data(), s.dt);
      return 1e3 * seconds_since(s0) / double(c.states.size());
    };
    for (int r = 0; r < repeats; ++r) {
      if (r % 2 == 0) {
        th.push_back(pass(host));
        tp.push_back(pass(pipe));
      } else {
        tp.push_back(pass(pipe));
        th.push_back(pass(host));
      }
    }
    auto mmm = [](const std::vector<double>& v) {
      return fmt("%.3f", *std::min_element(v.begin(), v.end())) + " / " + fmt("%.3f", median(v)) +
             " / " + fmt("%.3f", *std::max_element(v.begin(), v.end()));
    };
    t.rows.push_back({name, std::to_string(c.states.size()),
                      std::to_string(pairs / long(c.states.size())), mmm(th), mmm(tp),
                      fmt("%.2f", median(tp) / median(th))});
  }
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
