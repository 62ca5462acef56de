// slender_batch_bench: S8 on the CPU, env-steps per second of the batched simulator for B = 1
// ... N environments on all cores: wall time per batch step (min/median/max over the repeats)
// of the engine's calls, the actions' upload and the step (the host's computation of the waves,
// 100 sines per environment, is timed apart and not counted: it is the policy's work; on the
// CUDA backend the process's GPU memory with the batch alive, from nvidia-smi: the slope over B
// is the memory per environment),
// env-steps/s, Newton iterations per env-step, CG iterations per Newton iteration (pcg) and the
// split into phases (the per-environment engine's CPU time; the vectorized engine's wall time of
// its batched evaluation and solve, each ended by a read of its results). Models:
// - snake: apps/scenes/snake.json (101 nodes, implicit Euler, dt = 1e-2, resistive-force
//   medium, converged Newton) crawling under a travelling curvature wave, each environment its
//   own amplitude;
// - plate-hinge, plate-midedge: a 0.1 m square plate of 1 mm (9 x 9 nodes, E 1 MPa), clamped
//   along one edge, sagging under gravity (implicit Euler, dt = 5e-3), each environment its
//   own Young's modulus scale (0.5 to 2);
// - sma-limb: apps/scenes/sma_limb.json (a rod limb curled by the scene's own SMA actuation,
//   which the vectorized engine computes for each environment at its time), each environment
//   its own Young's modulus scale (0.5 to 2).
// --reference also runs the per-environment engine (solver auto) at each B and prints the
// ratio of the two medians measured in the same run.
//
//   slender_batch_bench [--model snake|plate-hinge|plate-midedge|sma-limb]
//                       [--sizes 1,4,16,64,256]
//                       [--steps 50] [--repeats 3] [--solver auto|banded|dense|pcg|...]
//                       [--engine per-env|vectorized] [--backend cpu|cuda] [--reference]
//                       [--markdown]

#include <unistd.h>

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
  std::string model = "snake";
  bool reference = false;
  std::vector<long> sizes = {1, 4, 16, 64, 256};
  int steps = 50;
  int repeats = 3;
  bool markdown = false;
  std::string solver = "auto";
  std::string engine = "per-env";
  std::string backend = "cpu";
};

struct Run {
  double wall = 0;      // seconds per batch step: the engine's calls (the actions in, the step)
  double actions = 0;   // seconds per batch step the host spent computing the actions (waves)
  double gpu_mib = -1;  // the process's GPU memory with the batch alive (CUDA), MiB
  slender::PhaseTimes phases;
  std::string solver;  // the batch's linear solver
};

// the plate of --model plate-hinge / plate-midedge
std::shared_ptr<const slender::Model> plate_model(slender::ShellBending bending) {
  using slender::vec3;
  slender::SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.3);
  const int s = b.rectangle_shell("plate", vec3(0, 0, 0), vec3(0.1, 0, 0), vec3(0, 0.1, 0), 0.0125,
                                  true, mat, 1e-3, bending);
  b.membrane(s, slender::MembraneModel::kSprings);
  const slender::PartSpec& part = b.part(s);
  for (int i = 0; i < int(part.nodes.size()); ++i)
    if (part.nodes[i][0] <= 1e-12) b.fix_node(s, i);
  b.gravity(vec3(0, 0, -9.8));
  b.integrator().kind = slender::IntegratorKind::kImplicitEuler;
  b.integrator().dt = 5e-3;
  return slender::build_model(b.build());
}

// this process's GPU memory [MiB] as nvidia-smi reports it (its CUDA context included), or -1
// when nvidia-smi does not say
double gpu_mib_of_this_process() {
  FILE* p = popen(
      "nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits "
      "2>/dev/null",
      "r");
  if (!p) return -1;
  double mib = -1;
  long pid = 0;
  double used = 0;
  while (std::fscanf(p, "%ld, %lf", &pid, &used) == 2)
    if (pid == long(getpid())) mib = used;
  pclose(p);
  return mib;
}

Run run_once(const std::shared_ptr<const slender::Model>& m,
             int nenv,
             int steps,
             const Options& o,
             const std::string& engine,
             const std::string& solver) {
  slender::BatchedSimulator batch(m, nenv, m->scene.integrator,
                                  slender::bench::parse_solver(solver),
                                  engine == "vectorized" ? slender::BatchEngine::kVectorized
                                                         : slender::BatchEngine::kPerEnvironment,
                                  slender::bench::parse_backend(o.backend));
  const bool snake = o.model == "snake";
  if (!snake)
    for (int e = 0; e < nenv; ++e) {
      slender::EnvParams p;
      p.youngs_scale = 0.5 + 1.5 * e / std::max(1, nenv - 1);
      batch.set_params(e, p);
    }
  const int nb = m->nbend;
  std::vector<double> kappa(2 * size_t(nenv) * nb, 0.0);
  int failed = 0;
  double in_engine = 0, actions = 0;  // seconds: the engine's calls; the host's waves
  for (int k = 0; k < steps; ++k) {
    const auto t0 = Clock::now();
    const double t = (k + 1) * m->scene.integrator.dt;
    if (snake) slender::bench::snake_wave(kappa, nenv, nb, m->nnode, t);
    const auto t1 = Clock::now();
    if (snake) batch.set_natural_curvature(kappa.data());
    for (slender::StepStatus st : batch.step())
      failed += st != slender::StepStatus::kConverged;
    const auto t2 = Clock::now();
    actions += std::chrono::duration<double>(t1 - t0).count();
    in_engine += std::chrono::duration<double>(t2 - t1).count();
  }
  Run r;
  if (o.backend == "cuda") r.gpu_mib = gpu_mib_of_this_process();  // (the batch still alive)
  r.wall = in_engine / steps;
  r.actions = actions / steps;
  r.phases = batch.phase_times();
  r.solver = batch.solver_name();
  if (failed) std::fprintf(stderr, "warning: %d env-steps failed\n", failed);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&] { return slender::bench::option_value(argc, argv, i); };
      if (a == "--model") {
        o.model = value();
        if (o.model != "snake" && o.model != "plate-hinge" && o.model != "plate-midedge" &&
            o.model != "sma-limb")
          throw std::runtime_error("--model snake|plate-hinge|plate-midedge|sma-limb");
      } else if (a == "--reference") {
        o.reference = true;
      } else if (a == "--sizes") {
        o.sizes.clear();
        for (const std::string& s : slender::bench::split(value()))
          o.sizes.push_back(slender::bench::parse_size(s));
      } else if (a == "--steps") {
        o.steps = slender::bench::option_count(argc, argv, i);
      } else if (a == "--repeats") {
        o.repeats = slender::bench::option_count(argc, argv, i);
      } else if (a == "--solver") {
        o.solver = value();
        slender::bench::parse_solver(o.solver);
      } else if (a == "--engine") {
        o.engine = value();
        if (o.engine != "per-env" && o.engine != "vectorized")
          throw std::runtime_error("--engine per-env|vectorized");
      } else if (a == "--backend") {
        o.backend = value();
        slender::bench::parse_backend(o.backend);
      } else if (a == "--markdown") {
        o.markdown = true;
      } else {
        std::cout
            << "usage: slender_batch_bench [--model snake|plate-hinge|plate-midedge|sma-limb] "
               "[--sizes 1,4,16,64,256] [--steps 50] [--repeats 3] "
               "[--solver auto|banded|dense|pcg|sparse-lu|...] "
               "[--engine per-env|vectorized] [--backend cpu|cuda] [--reference] "
               "[--markdown]\n";
        return a == "--help" || a == "-h" ? 0 : 2;
      }
    }
    const auto model =
        o.model == "snake" || o.model == "sma-limb"
            ? slender::build_model(
                  slender::read_scene_file(std::string(SLENDER_BENCH_APP_SCENES_DIR) +
                                           (o.model == "snake" ? "/snake.json" : "/sma_limb.json")))
            : plate_model(o.model == "plate-hinge" ? slender::ShellBending::kHinge
                                                   : slender::ShellBending::kMidEdge);
    slender::bench::Table t;
    t.head = {"B",
              "ms/batch step min/med/max",
              "env-steps/s (median)",
              "Newton it/env-step",
              "CG it/Newton it",
              "phase split eval/assemble/factor+solve/frames %",
              "actions on the host ms/step (not counted)",
              "GPU MiB of the process (cuda)"};
    if (o.reference)
      t.head.insert(t.head.end(), {"per-env ms/batch step min/med/max", "per-env env-steps/s",
                                   "ratio to per-env"});
    // min, median, max of the wall time per batch step over the repeats
    auto measure = [&](long B, const std::string& engine, const std::string& solver,
                       std::vector<double>& walls) {
      Run last;
      walls.clear();
      for (int r = 0; r < o.repeats; ++r) {
        last = run_once(model, int(B), o.steps, o, engine, solver);
        walls.push_back(last.wall);
      }
      std::sort(walls.begin(), walls.end());
      return last;
    };
    auto span = [](const std::vector<double>& w) {
      return fmt("%.3f", 1e3 * w.front()) + " / " + fmt("%.3f", 1e3 * w[w.size() / 2]) + " / " +
             fmt("%.3f", 1e3 * w.back());
    };
    std::string solver_used;
    for (long B : o.sizes) {
      std::vector<double> walls, ref;
      const Run last = measure(B, o.engine, o.solver, walls);
      solver_used = last.solver;
      const double med = walls[walls.size() / 2];
      const slender::PhaseTimes& p = last.phases;
      const double total = p.frames + p.eval + p.assemble + p.factor + p.solve;
      const double lin = p.factor + p.solve;
      std::vector<std::string> row = {
          std::to_string(B),
          span(walls),
          fmt("%.0f", double(B) / med),
          fmt("%.2f", double(p.newton_iters) / double(p.steps)),
          p.linear_iters > 0 ? fmt("%.1f", double(p.linear_iters) / double(p.newton_iters))
                             : std::string("-"),
          total == 0
              ? std::string("-")
              : fmt("%.0f", 100 * p.eval / total) + " / " + fmt("%.0f", 100 * p.assemble / total) +
                    " / " + fmt("%.0f", 100 * lin / total) + " / " +
                    fmt("%.0f", 100 * p.frames / total),
          fmt("%.3f", 1e3 * last.actions),
          last.gpu_mib < 0 ? std::string("-") : fmt("%.0f", last.gpu_mib)};
      if (o.reference) {
        measure(B, "per-env", "auto", ref);
        const double ref_med = ref[ref.size() / 2];
        row.insert(row.end(),
                   {span(ref), fmt("%.0f", double(B) / ref_med), fmt("%.2fx", ref_med / med)});
      }
      t.rows.push_back(row);
      std::fprintf(stderr, "B = %ld done\n", B);
    }
    std::cout << "slender_batch_bench (S8, CPU): " << o.model << " " << model->nnode << " nodes, "
              << model->plan.nfree
              << " free DOF, implicit Euler dt = " << model->scene.integrator.dt << " s, "
              << o.steps << " steps, " << o.repeats << " repeats, solver " << o.solver << " ("
              << solver_used << "), engine " << o.engine << ", backend " << o.backend << "; "
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
