// Gradients through time (issue 51, item 2; docs/gradients.md): the cost of a rollout's
// gradient against the rollout itself on a snake-like rod (41 nodes, 0.5 m) crawling on the
// ground with friction under a travelling wave of natural curvature, N = 200 steps of 5 ms,
// loss = the head's final position. Times the rollout alone (a Simulator-equivalent run: the
// adjoint's forward run keeping no states, checkpoint_every = N), the forward run keeping
// every state and its backward sweep (checkpoint_every = 1), and with sqrt(N) checkpoints
// (the sweep recomputes the steps between); min / median / max of `reps` repetitions, and the
// bytes kept per step. With --scene FILE, the scene instead (its own actuation and contact; its
// integrator's dt or --dt, fixed: every step must converge), loss = its last node's final position;
// apps/scenes/gripper.json is the other bench (five fingers coiling into each other with
// rod-rod friction).
// --integrator midpoint|newmark replaces the integrator (Newmark's with pointwise contact forces,
// integrator.energy_consistent false, as the 2026-11-29 results measured it; its secant contact
// forces are differentiated since 2026-11-30).
// --backend cuda: every phase on the CUDA backend (the steps and their linearization on the GPU,
// the sweep on the host: docs/gradients.md#on-the-gpu), and the gradient's largest difference
// from the CPU backend's, measured in the same run.
//   slender_adjoint_bench [--repeats 5] [--steps 200] [--scene FILE] [--integrator KIND]
//                         [--backend cpu|cuda] [--markdown FILE]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "slender/adjoint.h"
#include "slender/builder.h"

using namespace slender;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Stats {
  double min, median, max;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2], v.back()};
}

}  // namespace

int run(int argc, char** argv) {
  int reps = 5, N = 200;
  double dt_arg = 0;
  std::string markdown, scene, integrator = "euler";
  BackendKind backend = BackendKind::kCpu;
  for (int i = 1; i < argc; ++i) {
    const bool more = i + 1 < argc;
    if (!std::strcmp(argv[i], "--help")) {
      std::printf(
          "slender_adjoint_bench [--repeats N=5] [--steps N=200] [--scene FILE [--dt S]] "
          "[--integrator euler|midpoint|newmark] [--backend cpu|cuda] [--markdown FILE]\n"
          "  a rollout's gradient against the rollout (docs/gradients.md)\n");
      return 0;
    } else if (!std::strcmp(argv[i], "--repeats") && more) {
      reps = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--steps") && more) {
      N = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--dt") && more) {
      dt_arg = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--scene") && more) {
      scene = argv[++i];
    } else if (!std::strcmp(argv[i], "--integrator") && more) {
      integrator = argv[++i];
      if (integrator != "euler" && integrator != "midpoint" && integrator != "newmark") {
        std::fprintf(stderr, "--integrator: euler, midpoint or newmark, got %s\n",
                     integrator.c_str());
        return 2;
      }
    } else if (!std::strcmp(argv[i], "--backend") && more) {
      const std::string b = argv[++i];
      if (b != "cpu" && b != "cuda") {
        std::fprintf(stderr, "--backend: cpu or cuda, got %s\n", b.c_str());
        return 2;
      }
      backend = b == "cuda" ? BackendKind::kCuda : BackendKind::kCpu;
    } else if (!std::strcmp(argv[i], "--markdown") && more) {
      markdown = argv[++i];
    } else {
      std::fprintf(stderr, "unknown argument %s (--help)\n", argv[i]);
      return 2;
    }
  }
  if (reps < 1 || N < 1) {
    std::fprintf(stderr, "--repeats and --steps must be >= 1\n");
    return 2;
  }
  std::shared_ptr<const Model> m;
  RolloutActions a;
  int nn = 41;
  if (scene.empty()) {
    SceneBuilder b;
    const int mat = b.material("skin", 1100, 2e6, 0.45);
    b.straight_rod("snake", vec3(0, 0, 5e-3), vec3(0.5, 0, 5e-3), nn, mat,
                   SceneBuilder::circle(5e-3));
    GroundSpec g;
    g.friction = 0.3;
    g.slip_velocity = 5e-3;
    b.ground(g);
    b.gravity(vec3(0, 0, -9.8));
    b.integrator().dt = 5e-3;
    m = build_model(b.build());
    const Real dt = m->scene.integrator.dt;
    a.kappa_bar.assign(size_t(N) * m->nbend * 2, 0);
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < m->nbend; ++k)  // a wave of curvature kappa2 (in the ground's plane)
        a.kappa_bar[(size_t(n) * m->nbend + k) * 2 + 1] =
            0.05 * std::sin(2 * M_PI * (k / 20.0 - 1.5 * (n + 1) * dt));
  } else {
    SceneSpec sc = read_scene_file(scene);
    if (dt_arg > 0) sc.integrator.dt = dt_arg;
    // a fixed step must converge where an adaptive run would halve it: Newton may take longer
    sc.integrator.newton.max_iters = std::max(sc.integrator.newton.max_iters, 200);
    m = build_model(sc);
    nn = m->nnode;
  }
  if (integrator != "euler") {
    SceneSpec sc = m->scene;
    sc.integrator.kind =
        integrator == "midpoint" ? IntegratorKind::kImplicitMidpoint : IntegratorKind::kNewmark;
    if (integrator == "newmark") sc.integrator.energy_consistent = false;
    m = build_model(sc);
  }
  const Real dt = m->scene.integrator.dt;
  const int head = 3 * (nn - 1);
  auto loss = [&](int n, const Real*, const Real*, Real* dq, Real*) {
    if (n == N) dq[head] = 1;
  };
  std::vector<double> t_roll, t_fwd1, t_bwd1, t_fwdk, t_bwdk;
  double bytes1 = 0, bytesk = 0;
  for (int r = 0; r < reps; ++r) {
    {
      RolloutOptions o;
      o.checkpoint_every = N;
      o.backend = backend;
      RolloutAdjoint ad(m, m->scene.integrator, o);
      const auto t0 = std::chrono::steady_clock::now();
      ad.run(initial_state(*m), N, a);
      t_roll.push_back(seconds_since(t0));
    }
    for (int k : {1, 0}) {
      RolloutOptions o;
      o.checkpoint_every = k;
      o.backend = backend;
      RolloutAdjoint ad(m, m->scene.integrator, o);
      auto t0 = std::chrono::steady_clock::now();
      ad.run(initial_state(*m), N, a);
      (k == 1 ? t_fwd1 : t_fwdk).push_back(seconds_since(t0));
      t0 = std::chrono::steady_clock::now();
      const RolloutGradient gr = ad.gradient(loss);
      (k == 1 ? t_bwd1 : t_bwdk).push_back(seconds_since(t0));
      (k == 1 ? bytes1 : bytesk) = ad.checkpoint_bytes() + ad.segment_bytes();
      if (r == 0 && k == 1) {
        std::printf("dL/d youngs_scale %.4e m, dL/d density_scale %.4e m\n", gr.youngs_scale,
                    gr.density_scale);
        if (backend == BackendKind::kCuda) {  // the CPU backend's gradient, for the difference
          RolloutAdjoint cpu(m, m->scene.integrator, RolloutOptions{});
          cpu.run(initial_state(*m), N, a);
          const RolloutGradient gc = cpu.gradient(loss);
          double diff = 0, scale = 0;
          for (const auto& [x, y] : {std::pair{&gr.kappa_bar, &gc.kappa_bar},
                                     std::pair{&gr.q0, &gc.q0}, std::pair{&gr.u0, &gc.u0}})
            for (size_t i = 0; i < x->size(); ++i) {
              diff = std::max(diff, std::fabs((*x)[i] - (*y)[i]));
              scale = std::max(scale, std::fabs((*y)[i]));
            }
          std::printf(
              "CUDA against the CPU backend: kappa_bar, q0, u0 differ by %.2e of the "
              "largest entry; youngs_scale %.2e relative\n",
              scale > 0 ? diff / scale : 0.0,
              std::fabs(gr.youngs_scale - gc.youngs_scale) /
                  std::max(std::fabs(gc.youngs_scale), 1e-300));
        }
      }
    }
  }
  std::printf("%s: %d nodes, ndof %d, N = %d steps of %g s (%s), %d repetitions, %s backend\n",
              scene.empty() ? "snake" : m->scene.name.c_str(), nn, m->ndof, N, dt,
              integrator.c_str(), reps, backend == BackendKind::kCuda ? "CUDA" : "CPU");
  FILE* md = markdown.empty() ? nullptr : std::fopen(markdown.c_str(), "w");
  if (md)
    std::fprintf(md,
                 "| phase (N = %d, %d repetitions) | min (s) | median (s) | max (s) |\n"
                 "|---|---|---|---|\n",
                 N, reps);
  auto row = [&](const char* what, const std::vector<double>& v) {
    const Stats s = stats(v);
    std::printf("  %-38s min %8.4f  median %8.4f  max %8.4f s\n", what, s.min, s.median, s.max);
    if (md) std::fprintf(md, "| %s | %.4f | %.4f | %.4f |\n", what, s.min, s.median, s.max);
  };
  row("rollout (no states kept)", t_roll);
  row("forward, every state kept", t_fwd1);
  row("backward sweep, every state kept", t_bwd1);
  row("forward, sqrt(N) checkpoints", t_fwdk);
  row("backward sweep, sqrt(N) checkpoints", t_bwdk);
  const double roll = stats(t_roll).median;
  std::printf(
      "gradient / rollout (medians): every state %.2f x (sweep alone %.2f x), sqrt(N) "
      "checkpoints %.2f x (sweep alone %.2f x)\n",
      (stats(t_fwd1).median + stats(t_bwd1).median) / roll, stats(t_bwd1).median / roll,
      (stats(t_fwdk).median + stats(t_bwdk).median) / roll, stats(t_bwdk).median / roll);
  std::printf("memory kept: every state %.1f kB (%.0f B per step), sqrt(N) checkpoints %.1f kB\n",
              bytes1 / 1e3, bytes1 / N, bytesk / 1e3);
  if (md) std::fclose(md);
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // (a model, a backend or a step that cannot be had)
    std::fprintf(stderr, "slender_adjoint_bench: %s\n", e.what());
    return 1;
  }
}
