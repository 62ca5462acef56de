// slender_backend_bench: the scenes of the speed cases (S1-S7, S10 and the cloth of S9's scene
// file, rod_drop and plate_contact) on the CPU and the CUDA backend in the same run: wall time per
// step (min/median/max over the repeats), Newton iterations, the median time per Newton
// iteration of each backend (issue 47's measure of small scenes), the speed-up of the median
// step and the largest relative difference of the final states. Without a CUDA device the CUDA
// columns say why they are empty.
//
//   slender_backend_bench [--scenes a.json,b.json] [--steps N] [--repeats R]
//                         [--solver auto|pcg|...] [--markdown]

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "slender/backend.h"
#include "slender/builder.h"
#include "slender/compare.h"
#include "slender/core/error.h"

namespace {

using slender::bench::fmt;

struct Options {
  std::vector<std::string> scenes;
  int steps = 20;
  int repeats = 3;
  std::string solver = "auto";
  bool markdown = false;
};

std::vector<std::string> default_scenes() {
  const std::string b = SLENDER_BENCH_SCENES_DIR, a = SLENDER_BENCH_APP_SCENES_DIR;
  return {b + "/s1_cantilever_e1e5.json",
          b + "/s2_cantilever_e1e7.json",
          b + "/s3_helix_e1e7.json",
          b + "/s4_helix_e1e9.json",
          b + "/s6_cantilever101_e1e6.json",
          b + "/s7_steel_rod.json",
          a + "/gripper.json",
          a + "/cloth_drop.json",
          a + "/parachute.json",
          a + "/rod_drop.json",
          a + "/plate_contact.json"};
}

std::string min_med_max(std::vector<double> v, double scale) {
  if (v.empty()) return "-";
  std::sort(v.begin(), v.end());
  return fmt("%.3f", scale * v.front()) + " / " + fmt("%.3f", scale * v[v.size() / 2]) + " / " +
         fmt("%.3f", scale * v.back());
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int run(const Options& o) {
  slender::bench::Table t;
  t.head = {"scene",
            "free DOF",
            "steps",
            "cpu ms/step min/med/max",
            "cuda ms/step min/med/max",
            "speed-up",
            "Newton cpu/cuda",
            "ms/Newton it cpu / cuda",
            "max rel diff q",
            "solvers"};
  std::string cuda_note;
  for (const std::string& path : o.scenes) {
    slender::SceneSpec sc = slender::read_scene_file(path);
    sc.backend = slender::BackendKind::kCpu;
    const auto model = slender::build_model(sc);
    std::vector<double> cpu_t, cuda_t;
    slender::CompareResult last;
    for (int r = 0; r < o.repeats; ++r) {
      last =
          slender::compare_backends(model, o.steps, slender::bench::parse_solver(o.solver), false);
      if (last.cpu.ok) cpu_t.push_back(last.cpu.wall_seconds / double(last.cpu.steps));
      if (last.cuda.ok) cuda_t.push_back(last.cuda.wall_seconds / double(last.cuda.steps));
      if (!last.cuda.available) cuda_note = last.cuda.error;
    }
    const double speed = median(cpu_t) / median(cuda_t);
    // (every repeat runs the same steps: the last one's iterations stand for each)
    auto per_it = [&](const std::vector<double>& t, long iters) {
      return iters > 0 && !t.empty() ? fmt("%.3f", 1e3 * median(t) * o.steps / double(iters))
                                     : std::string("-");
    };
    t.rows.push_back(
        {std::filesystem::path(path).stem().string(), std::to_string(model->plan.nfree),
         std::to_string(o.steps), min_med_max(cpu_t, 1e3), min_med_max(cuda_t, 1e3),
         std::isfinite(speed) ? fmt("%.2fx", speed) : "-",
         std::to_string(last.cpu.times.newton_iters) + " / " +
             (last.cuda.available ? std::to_string(last.cuda.times.newton_iters) : "-"),
         per_it(cpu_t, last.cpu.times.newton_iters) + " / " +
             per_it(cuda_t, last.cuda.available ? last.cuda.times.newton_iters : 0),
         std::isfinite(last.q_rel_diff) ? fmt("%.2e", last.q_rel_diff) : "-",
         last.cpu.solver + " / " + (last.cuda.available ? last.cuda.solver : "-")});
    std::fprintf(stderr, "%s done\n", path.c_str());
  }
  std::cout << "slender_backend_bench: CPU " << slender::bench::cpu_model() << ", "
            << slender::bench::omp_threads() << " OpenMP threads, " << slender::cuda_device_count()
            << " CUDA device(s); " << o.repeats << " repeats of " << o.steps
            << " steps; load average " << slender::bench::loadavg() << "\n\n";
  if (o.markdown) {
    slender::bench::print_markdown(std::cout, t);
  } else {
    slender::bench::print_text(std::cout, t);
  }
  if (!cuda_note.empty()) std::cout << "\ncuda: " << cuda_note << '\n';
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&] { return slender::bench::option_value(argc, argv, i); };
      if (a == "--scenes") {
        o.scenes = slender::bench::split(value());
      } else if (a == "--steps") {
        o.steps = slender::bench::option_count(argc, argv, i);
      } else if (a == "--repeats") {
        o.repeats = slender::bench::option_count(argc, argv, i);
      } else if (a == "--solver") {
        o.solver = value();
        slender::bench::parse_solver(o.solver);
      } else if (a == "--markdown") {
        o.markdown = true;
      } else {
        std::cout << "usage: slender_backend_bench [--scenes a.json,b.json] [--steps N] "
                     "[--repeats R] [--solver auto|pcg|...] [--markdown]\n";
        return a == "--help" || a == "-h" ? 0 : 2;
      }
    }
    if (o.scenes.empty()) o.scenes = default_scenes();
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "slender_backend_bench: " << e.what() << '\n';
    return 2;
  }
}
