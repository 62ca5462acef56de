// slender_batch_bench: S8 on the CPU, env-steps per second of the batched simulator for the
// snake of apps/scenes/snake.json (101 nodes, implicit Euler, dt = 1e-2, resistive-force
// medium, converged Newton) crawling under a travelling curvature wave, for B = 1 ... N
// environments on all cores: wall time per batch step (min/median/max over the repeats),
// env-steps/s, Newton iterations per env-step and the split of CPU time into phases.
//
//   slender_batch_bench [--sizes 1,4,16,64,256] [--steps 50] [--repeats 3] [--solver auto|...]
//                       [--engine per-env|vectorized] [--backend cpu|cuda] [--markdown]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "slender/batch.h"
#include "slender/builder.h"

namespace {

using slender::bench::fmt;
using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<long> sizes = {1, 4, 16, 64, 256};
  int steps = 50;
  int repeats = 3;
  bool markdown = false;
  std::string solver = "auto";
  std::string engine = "per-env";
  std::string backend = "cpu";
};

struct Run {
  double wall = 0;  // seconds per batch step
  slender::PhaseTimes phases;
};

Run run_once(const std::shared_ptr<const slender::Model>& m,
             int nenv,
             int steps,
             const Options& o) {
  slender::BatchedSimulator batch(
      m, nenv, m->scene.integrator, slender::bench::parse_solver(o.solver),
      o.engine == "vectorized" ? slender::BatchEngine::kVectorized
                               : slender::BatchEngine::kPerEnvironment,
      o.backend == "cuda" ? slender::BackendKind::kCuda : slender::BackendKind::kCpu);
  const int nb = m->nbend;
  const double L = 0.5, dl = L / (m->nnode - 1);
  std::vector<double> kappa(2 * size_t(nenv) * nb, 0.0);
  int failed = 0;
  const auto t0 = Clock::now();
  for (int k = 0; k < steps; ++k) {
    const double t = (k + 1) * m->scene.integrator.dt;
    for (int e = 0; e < nenv; ++e) {
      // every env its own wave: amplitudes 10-15 1/m, the learned wavelength and frequency
      const double amp = 10 + 5.0 * e / std::max(1, nenv - 1);
      for (int j = 0; j < nb; ++j) {
        const double s = (j + 1) * dl;
        kappa[(size_t(e) * nb + j) * 2 + 1] = amp * dl * std::sin(2 * M_PI * (s / 0.53 + 1.9 * t));
      }
    }
    batch.set_natural_curvature(kappa.data());
    for (slender::StepStatus st : batch.step())
      failed += st != slender::StepStatus::kConverged;
  }
  Run r;
  r.wall = std::chrono::duration<double>(Clock::now() - t0).count() / steps;
  r.phases = batch.phase_times();
  if (failed) std::fprintf(stderr, "warning: %d env-steps failed\n", failed);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
        return argv[++i];
      };
      if (a == "--sizes") {
        o.sizes.clear();
        for (const std::string& s : slender::bench::split(value()))
          o.sizes.push_back(slender::bench::parse_size(s));
      } else if (a == "--steps") {
        o.steps = int(slender::bench::parse_size(value()));
      } else if (a == "--repeats") {
        o.repeats = int(slender::bench::parse_size(value()));
      } else if (a == "--solver") {
        o.solver = value();
        slender::bench::parse_solver(o.solver);
      } else if (a == "--engine") {
        o.engine = value();
        if (o.engine != "per-env" && o.engine != "vectorized")
          throw std::runtime_error("--engine per-env|vectorized");
      } else if (a == "--backend") {
        o.backend = value();
        if (o.backend != "cpu" && o.backend != "cuda")
          throw std::runtime_error("--backend cpu|cuda");
      } else if (a == "--markdown") {
        o.markdown = true;
      } else {
        std::cout << "usage: slender_batch_bench [--sizes 1,4,16,64,256] [--steps 50] "
                     "[--repeats 3] [--solver auto|sparse-lu|banded|...] "
                     "[--engine per-env|vectorized] [--backend cpu|cuda] [--markdown]\n";
        return a == "--help" || a == "-h" ? 0 : 2;
      }
    }
    const auto model = slender::build_model(
        slender::read_scene_file(std::string(SLENDER_BENCH_APP_SCENES_DIR) + "/snake.json"));
    slender::bench::Table t;
    t.head = {"B", "ms/batch step min/med/max", "env-steps/s (median)", "Newton it/env-step",
              "CPU split eval/assemble/factor+solve/other %"};
    for (long B : o.sizes) {
      std::vector<double> walls;
      Run last;
      for (int r = 0; r < o.repeats; ++r) {
        last = run_once(model, int(B), o.steps, o);
        walls.push_back(last.wall);
      }
      std::sort(walls.begin(), walls.end());
      const double med = walls[walls.size() / 2];
      const slender::PhaseTimes& p = last.phases;
      const double total = p.frames + p.eval + p.assemble + p.factor + p.solve;
      const double lin = p.factor + p.solve;
      t.rows.push_back(
          {std::to_string(B),
           fmt("%.3f", 1e3 * walls.front()) + " / " + fmt("%.3f", 1e3 * med) + " / " +
               fmt("%.3f", 1e3 * walls.back()),
           fmt("%.0f", double(B) / med), fmt("%.2f", double(p.newton_iters) / double(p.steps)),
           fmt("%.0f", 100 * p.eval / total) + " / " + fmt("%.0f", 100 * p.assemble / total) +
               " / " + fmt("%.0f", 100 * lin / total) + " / " +
               fmt("%.0f", 100 * p.frames / total)});
      std::fprintf(stderr, "B = %ld done\n", B);
    }
    std::cout << "slender_batch_bench (S8, CPU): snake " << model->nnode << " nodes, "
              << model->plan.nfree
              << " free DOF, implicit Euler dt = " << model->scene.integrator.dt << " s, "
              << o.steps << " steps, " << o.repeats << " repeats, solver " << o.solver
              << ", engine " << o.engine << ", backend " << o.backend << "; "
              << slender::bench::cpu_model() << ", " << slender::bench::omp_threads()
              << " threads; load " << slender::bench::loadavg() << "\n\n";
    if (o.markdown) {
      slender::bench::print_markdown(std::cout, t);
    } else {
      slender::bench::print_text(std::cout, t);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "slender_batch_bench: " << e.what() << '\n';
    return 2;
  }
}
