// slender_executor_counts: what the engine asks of its executor per Newton iteration and per
// step, counted by the host executor as the CUDA executor would do it (slender/backend.h,
// ExecutorCounts; issue 47, item 4). A GPU pays a launch about 4-6 us and a host read more: these
// counts bound a small scene's Newton iteration on any GPU from below, and they are measured in
// CI without one. Scenes: S1 and S7 (rods, the direct solver), cloth_drop (S9's scene file: shell,
// self-contact; from rest and in its contact phase) on the CPU Simulator; S8 (the snake, under its
// curvature wave) on the vectorized batch. The engine reads the predictor's sums with the first
// direction's, as on the device (SLENDER_FUSED_PREDICTOR_READ=0 counts the host's order).
//
//   slender_executor_counts [--steps N] [--envs B] [--markdown]

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "slender/backend.h"
#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/simulator.h"

namespace {

using slender::bench::fmt;

struct Options {
  int steps = 20;
  int envs = 16;
  bool markdown = false;
};

struct Row {
  std::string scene, front;
  long steps = 0, newton = 0;
  slender::ExecutorCounts c;
};

// the Simulator on the CPU backend (the engine on the host executor): `warm` steps, then the
// counted ones
Row simulator_row(const std::string& path, int steps, int warm = 3) {
  const auto m = slender::build_model(slender::read_scene_file(path));
  slender::Simulator sim(m);
  for (int k = 0; k < warm; ++k)
    sim.step();
  Row r;
  r.scene = path.substr(path.find_last_of('/') + 1);
  if (warm != 3) r.scene += " from step " + std::to_string(warm);
  r.front = "Simulator (" + sim.linear_solver_name() + ")";
  slender::reset_executor_counts();
  for (int k = 0; k < steps; ++k) {
    const slender::StepReport rep = sim.step();
    if (!rep.ok()) throw slender::Error(r.scene + ": a step failed");
    r.newton += rep.iterations;
  }
  r.c = slender::executor_counts();
  r.steps = steps;
  return r;
}

// S8: the vectorized batch on the CPU under its travelling waves (bench::snake_wave)
Row snake_row(int nenv, int steps) {
  const auto m = slender::build_model(
      slender::read_scene_file(std::string(SLENDER_BENCH_APP_SCENES_DIR) + "/snake.json"));
  slender::BatchedSimulator batch(m, nenv, m->scene.integrator, slender::LinearSolverKind::kAuto,
                                  slender::BatchEngine::kVectorized);
  const int nb = m->nbend;
  std::vector<double> kappa(2 * size_t(nenv) * nb, 0.0);
  Row r;
  r.scene = "snake.json (S8), B = " + std::to_string(nenv);
  r.front = "vectorized batch (" + batch.solver_name() + ")";
  long newton0 = 0;
  for (int k = 0; k < steps + 3; ++k) {
    if (k == 3) {
      slender::reset_executor_counts();
      newton0 = batch.phase_times().newton_iters;
    }
    const double t = (k + 1) * m->scene.integrator.dt;
    slender::bench::snake_wave(kappa, nenv, nb, m->nnode, t);
    batch.set_natural_curvature(kappa.data());
    for (slender::StepStatus st : batch.step())
      if (st != slender::StepStatus::kConverged) throw slender::Error("S8: a step failed");
  }
  r.c = slender::executor_counts();
  r.steps = steps;
  // (the batch's Newton iterations are per environment: the batched ones are their maximum per
  // step, which the per-environment mean bounds from below)
  r.newton = (batch.phase_times().newton_iters - newton0) / nenv;
  return r;
}

int run(const Options& o) {
  const std::string b = SLENDER_BENCH_SCENES_DIR, a = SLENDER_BENCH_APP_SCENES_DIR;
  std::vector<Row> rows;
  for (const std::string& p :
       {b + "/s1_cantilever_e1e5.json", b + "/s7_steel_rod.json", a + "/cloth_drop.json"})
    rows.push_back(simulator_row(p, o.steps));
  // cloth_drop in its self-contact phase (pairs from about step 370, their number changing
  // every step: the pair finder's launches, sorts and reads, and the plan's changes)
  rows.push_back(simulator_row(a + "/cloth_drop.json", o.steps, 400));
  rows.push_back(snake_row(o.envs, o.steps));
  slender::bench::Table t;
  t.head = {"scene",
            "front end (solver)",
            "Newton it/step",
            "launches per it / step",
            "host reads per it / step",
            "uploads per step",
            "syncs per step",
            "sorts per step",
            "allocations per step",
            "direct-solver calls per it"};
  for (const Row& r : rows) {
    const double it = double(std::max(1L, r.newton)), st = double(r.steps);
    t.rows.push_back({r.scene, r.front, fmt("%.2f", r.newton / st),
                      fmt("%.1f", r.c.launches / it) + " / " + fmt("%.1f", r.c.launches / st),
                      fmt("%.1f", r.c.host_reads / it) + " / " + fmt("%.1f", r.c.host_reads / st),
                      fmt("%.1f", r.c.uploads / st), fmt("%.1f", r.c.syncs / st),
                      fmt("%.1f", r.c.sorts / st), fmt("%.1f", r.c.allocations / st),
                      fmt("%.2f", r.c.direct_calls / it)});
  }
  const char* fused = std::getenv("SLENDER_FUSED_PREDICTOR_READ");
  std::cout << "slender_executor_counts: " << o.steps << " steps after 3 (host executor; "
            << "counted as the CUDA executor would run them; the predictor's read "
            << (fused && fused[0] == '0' ? "apart" : "with the first direction's")
            << "). Syncs: the phase boundaries the "
               "CPU Simulator times (the CUDA Simulator does not by default). The direct "
               "solver's own kernels are not counted: on CUDA the band adds 2 launches (3 for its "
               "LU) per iteration, and its status is read with the slope (a host read more per "
               "iteration where the predictor's read is apart; kernels/device_solver.cu)\n\n";
  if (o.markdown) {
    slender::bench::print_markdown(std::cout, t);
  } else {
    slender::bench::print_text(std::cout, t);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  // the engine's choices as on the device: the predictor's sums read with the first direction's
  // (engine/engine.h, fused_first_mask; off on the host executor unless asked for)
  setenv("SLENDER_FUSED_PREDICTOR_READ", "1", /*overwrite=*/0);
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--steps") {
        o.steps = slender::bench::option_count(argc, argv, i);
      } else if (a == "--envs") {
        o.envs = slender::bench::option_count(argc, argv, i);
      } else if (a == "--markdown") {
        o.markdown = true;
      } else {
        std::cout << "usage: slender_executor_counts [--steps N] [--envs B] [--markdown]\n";
        return a == "--help" || a == "-h" ? 0 : 2;
      }
    }
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "slender_executor_counts: " << e.what() << '\n';
    return 1;
  }
}
