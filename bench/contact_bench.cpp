// S10 (BENCHMARKS.md): the active entanglement gripper of DisMech §V-A2 with rod-rod contact,
// without friction and with mu = 0.5. Each repeat builds the model from apps/scenes/gripper.json
// and runs it for the given simulated time through the CLI's run loop (adaptive dt), timing the
// loop. The table gives min/median/max wall time over the repeats, steps per second, Newton
// iterations per step, the time per Newton iteration and how the time splits into phases
// (the line search's evaluations count as evaluation; broad phase and pair setup are in
// "other").
//
// usage: slender_contact_bench [--duration S] [--repeats N] [--markdown FILE]

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_util.h"
#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/run.h"

#ifndef SLENDER_BENCH_APP_SCENES_DIR
#define SLENDER_BENCH_APP_SCENES_DIR "apps/scenes"
#endif

namespace {

using slender::Real;
using slender::bench::fmt;

struct Outcome {
  double wall = 0;
  long steps = 0, iters = 0, halvings = 0;
  int dof = 0;  // free DOFs
  slender::PhaseTimes times;
  bool ok = false;
};

Outcome run_once(const slender::SceneSpec& scene, Real duration) {
  const auto model = slender::build_model(scene);
  slender::Simulator sim(model, scene.integrator);
  slender::RunOptions opt;
  opt.duration = duration;
  opt.progress = false;
  opt.write_outputs = false;
  std::ostringstream log;
  const slender::RunResult r = slender::run_simulation(sim, opt, log);
  Outcome o;
  o.ok = r.ok;
  o.wall = r.wall_seconds;
  o.steps = r.steps;
  o.iters = r.newton_iters;
  o.halvings = r.dt_halvings;
  o.times = sim.phase_times();
  o.dof = model->plan.nfree;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Real duration = 0.1;
  int repeats = 3;
  std::string markdown;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--duration") {
        duration = slender::bench::option_number(argc, argv, i);
        if (!(duration > 0)) throw std::runtime_error("--duration: must be positive");
      } else if (a == "--repeats") {
        repeats = slender::bench::option_count(argc, argv, i);
      } else if (a == "--markdown") {
        markdown = slender::bench::option_value(argc, argv, i);
      } else {
        throw std::runtime_error("unknown argument '" + a + "'");
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "slender_contact_bench: " << e.what()
              << "\nusage: slender_contact_bench [--duration S] [--repeats N] [--markdown FILE]\n";
    return 2;
  }
  const std::string head = slender::bench::machine_head();
  try {
    const std::string path = std::string(SLENDER_BENCH_APP_SCENES_DIR) + "/gripper.json";
    slender::bench::Table t;
    t.head = {"case",   "DOF",        "wall min [s]",   "median",       "max",
              "steps",  "steps/s",    "Newton/step",    "ms/iteration", "halvings",
              "eval %", "assemble %", "factor+solve %", "other %"};
    for (Real mu : {0.0, 0.5}) {
      slender::SceneSpec scene = slender::read_scene_file(path);
      scene.contact.friction = mu;
      std::vector<Outcome> runs;
      for (int r = 0; r < repeats; ++r)
        runs.push_back(run_once(scene, duration));
      std::vector<double> w;
      for (const Outcome& o : runs)
        w.push_back(o.wall);
      std::sort(w.begin(), w.end());
      const Outcome& o = runs[0];  // counts are deterministic: the same in every repeat
      const double med = w[w.size() / 2];
      const auto& pt = o.times;
      const double phases = pt.eval + pt.assemble + pt.factor + pt.solve;
      const double pct = 100.0 / o.wall;
      t.rows.push_back(
          {std::string("S10 gripper, mu ") + fmt("%.1f", mu) + (o.ok ? "" : " FAILED"),
           std::to_string(o.dof), fmt("%.2f", w.front()), fmt("%.2f", med), fmt("%.2f", w.back()),
           std::to_string(o.steps), fmt("%.2f", double(o.steps) / med),
           fmt("%.1f", double(o.iters) / double(o.steps)), fmt("%.1f", 1e3 * med / double(o.iters)),
           std::to_string(o.halvings), fmt("%.0f", pct * pt.eval), fmt("%.0f", pct * pt.assemble),
           fmt("%.0f", pct * (pt.factor + pt.solve)),
           fmt("%.0f", std::max(0.0, 100.0 - pct * phases))});
    }
    std::cout << head << "S10 entanglement gripper, " << duration << " s simulated, " << repeats
              << " repeats\n";
    slender::bench::print_text(std::cout, t);
    if (!markdown.empty()) {
      std::ofstream md = slender::bench::open_markdown(
          markdown, "slender_contact_bench", slender::bench::command_line(argc, argv), head);
      if (!md) return 1;
      md << "- S10 entanglement gripper, " << duration << " s simulated, " << repeats
         << " repeats\n\n";
      slender::bench::print_markdown(md, t);
      if (!slender::bench::close_markdown(md, markdown, "slender_contact_bench")) return 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "slender_contact_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
