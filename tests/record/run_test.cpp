// Run-loop tests on a small cantilever: needs the real simulator and model builder.

#include "slender/run.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "record_test_util.h"
#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/model.h"
#include "slender/simulator.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

namespace fs = std::filesystem;
using test::files_ending;
using test::read_lines;
using test::ScratchDir;

// a 10 cm steel rod along x with 11 nodes, clamped at its first edge, sagging under gravity;
// 50 steps of 1 ms, recorded every 10 steps, with the tip in nodes.csv
SceneSpec cantilever(const std::string& out_dir) {
  SceneBuilder b;
  b.name("cantilever");
  const int steel = b.material("steel", 7800, 2e11, 0.3);
  const int rod =
      b.straight_rod("rod", vec3(0, 0, 0), vec3(0.1, 0, 0), 11, steel, SceneBuilder::circle(1e-3));
  b.fix_edge(rod, 0);
  b.gravity(vec3(0, 0, -9.81));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 1e-3;
  b.integrator().duration = 0.05;
  b.output().dir = out_dir;
  b.output().every = 10;
  b.output().csv_nodes = {NodeRef{rod, -1, {}}};
  return b.build();
}

// Newton settings under which no step can converge: one iteration and zero tolerances
// one iteration to a residual of 1e-300: no step converges (all three tolerances 0 is refused
// by validate_scene)
void make_newton_fail(SceneSpec& sc) {
  sc.integrator.newton.max_iters = 1;
  sc.integrator.newton.abs_tol = 1e-300;
  sc.integrator.newton.rel_tol = 0;
  sc.integrator.newton.step_tol = 0;
}

RunOptions quiet_options() {
  RunOptions o;
  o.progress = false;
  return o;
}

TEST(RunSimulation, CantileverRunsToTheEndAndWritesOutputs) {
  ScratchDir dir;
  Simulator sim(build_model(cantilever(dir.str())));
  std::ostringstream log;
  const RunResult r = run_simulation(sim, quiet_options(), log);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.steps, 50);
  EXPECT_NEAR(r.sim_time, 0.05, 1e-12);
  EXPECT_NEAR(sim.state().time, 0.05, 1e-12);
  EXPECT_GE(r.newton_iters, r.steps);
  EXPECT_EQ(r.dt_halvings, 0);
  EXPECT_EQ(r.message.rfind("done: 50 steps, t = 0.05 s in ", 0), 0u) << r.message;
  EXPECT_NE(r.message.find("outputs in " + dir.str()), std::string::npos) << r.message;

  // the series, both CSV files, and every recorded frame; nothing left half-written
  ASSERT_EQ(r.files.size(), 3u);
  for (const std::string& f : r.files)
    EXPECT_TRUE(fs::exists(f)) << f;
  EXPECT_TRUE(fs::exists(dir.path() / "cantilever.pvd"));
  EXPECT_EQ(files_ending(dir.path() / "frames", ".vtp").size(), 6u);  // steps 0, 10, ..., 50
  EXPECT_TRUE(files_ending(dir.path(), ".part").empty());
  const auto energies = read_lines(dir.path() / "energies.csv");
  EXPECT_EQ(energies.size(), 7u);

  // the tip (node 10, given as -1) sags; its columns are named by part and node
  const auto nodes = read_lines(dir.path() / "nodes.csv");
  ASSERT_EQ(nodes.size(), 7u);
  EXPECT_EQ(nodes[0].rfind("time,rod_n10_x,rod_n10_y,rod_n10_z,", 0), 0u) << nodes[0];
  const auto last = test::split(nodes.back(), ',');
  ASSERT_EQ(last.size(), 7u);
  EXPECT_LT(std::stod(last[3]), 0.0);
}

TEST(RunSimulation, OptionsOverrideTheScene) {
  ScratchDir dir;
  Simulator sim(build_model(cantilever((dir.path() / "unused").string())));
  RunOptions o = quiet_options();
  o.out_dir = (dir.path() / "here").string();
  o.dt = 2e-3;
  o.duration = 0.01;
  o.every = 0;  // first and last state only
  std::ostringstream log;
  const RunResult r = run_simulation(sim, o, log);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.steps, 5);
  EXPECT_FALSE(fs::exists(dir.path() / "unused"));
  EXPECT_EQ(read_lines(dir.path() / "here" / "energies.csv").size(), 3u);
}

TEST(RunSimulation, LastStepIsShortenedToLandOnTheDuration) {
  ScratchDir dir;
  Simulator sim(build_model(cantilever(dir.str())));
  RunOptions o = quiet_options();
  o.write_outputs = false;
  o.dt = 3e-3;
  o.duration = 0.01;  // 3 full steps and one of 1 ms
  std::ostringstream log;
  const RunResult r = run_simulation(sim, o, log);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.steps, 4);
  EXPECT_NEAR(r.sim_time, 0.01, 1e-12);
  EXPECT_TRUE(r.files.empty());
  EXPECT_NE(r.message.find("no outputs written"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() / "energies.csv"));
}

TEST(RunSimulation, StaticLoadStepsRunTheSameWay) {
  ScratchDir dir;
  SceneSpec sc = cantilever(dir.str());
  sc.integrator.kind = IntegratorKind::kStatic;
  sc.integrator.dt = 0.25;
  sc.integrator.duration = 1;
  Simulator sim(build_model(sc));
  std::ostringstream log;
  const RunResult r = run_simulation(sim, quiet_options(), log);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.steps, 4);
}

TEST(RunSimulation, FailedStepStopsTheRunAndSaysWhere) {
  ScratchDir dir;
  SceneSpec sc = cantilever(dir.str());
  make_newton_fail(sc);
  Simulator sim(build_model(sc));
  std::ostringstream log;
  const RunResult r = run_simulation(sim, quiet_options(), log);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.steps, 0);
  EXPECT_EQ(sim.state().time, 0.0);  // a failed step leaves the state as it was
  EXPECT_EQ(r.sim_time, 0.0);
  EXPECT_EQ(r.message.rfind("step 1 at t = 0 s failed: ", 0), 0u) << r.message;
  EXPECT_NE(r.message.find("the state was left at t = 0 s"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("\"adaptive\": true"), std::string::npos) << r.message;

  // the files written so far are complete, under their final names
  EXPECT_TRUE(fs::exists(dir.path() / "cantilever.pvd"));
  EXPECT_TRUE(files_ending(dir.path(), ".part").empty());
  EXPECT_EQ(read_lines(dir.path() / "energies.csv").size(), 2u);  // header and t = 0
}

TEST(RunSimulation, AdaptiveRunGivesUpAtMinDt) {
  ScratchDir dir;
  SceneSpec sc = cantilever(dir.str());
  make_newton_fail(sc);
  sc.integrator.adaptive = true;  // min_dt = dt / 1024: ten halvings
  Simulator sim(build_model(sc));
  RunOptions o = quiet_options();
  o.write_outputs = false;
  std::ostringstream log;
  const RunResult r = run_simulation(sim, o, log);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.dt_halvings, 10);
  EXPECT_EQ(sim.state().time, 0.0);
  EXPECT_NE(r.message.find("the smallest allowed"), std::string::npos) << r.message;
  EXPECT_NE(log.str().find("retrying with dt = 0.0005 s"), std::string::npos) << log.str();
}

// issue 18, fault 10: a dt below the time's resolution failed a step, a dt longer than the run
// ran no step and said it had arrived, and a run of 1e300 s would step forever
TEST(RunSimulation, TimeStepsTheRunCannotTakeAreRefusedAndALongDtIsOneStep) {
  ScratchDir dir;
  const auto model = build_model(cantilever(dir.str()));
  std::ostringstream log;
  auto error_of = [&](Real dt, Real duration) {
    Simulator sim(model);
    RunOptions o = quiet_options();
    o.write_outputs = false;
    o.dt = dt;
    o.duration = duration;
    try {
      run_simulation(sim, o, log);
    } catch (const InputError& e) {
      return e.field() + ": " + e.message();
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(1e-320, 0.01).find("duration: a run of 0.01 s at dt = 9.99989e-321 s takes"),
            std::string::npos)
      << error_of(1e-320, 0.01);
  EXPECT_NE(error_of(1e-3, 1e300).find("duration: a run of 1e+300 s"), std::string::npos)
      << error_of(1e-3, 1e300);
  Simulator sim(model);
  RunOptions o = quiet_options();
  o.write_outputs = false;
  o.dt = 1e308;
  o.duration = 0.002;
  const RunResult r = run_simulation(sim, o, log);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.steps, 1);
  EXPECT_NEAR(r.sim_time, 0.002, 1e-15);
}

TEST(RunSimulation, NonPositiveDtIsAnInputError) {
  ScratchDir dir;
  Simulator sim(build_model(cantilever(dir.str())));
  RunOptions o = quiet_options();
  o.dt = 0;
  std::ostringstream log;
  EXPECT_THROW(run_simulation(sim, o, log), InputError);
}

// issue 19: the summary counts Newton iterations per step that iterated, and the steps whose
// predictor already converged apart (a resting scene read as "0.3 iterations/step")
TEST(RunSimulation, TheSummaryCountsStepsThatNeededNoIteration) {
  ScratchDir dir;
  SceneSpec sc = cantilever(dir.str());
  sc.forces.gravity = Vec3{{0, 0, 0}};  // at rest: every predictor is the solution
  Simulator rest(build_model(sc));
  RunOptions o = quiet_options();
  o.write_outputs = false;
  std::ostringstream log;
  const RunResult r = run_simulation(rest, o, log);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.steps_without_iteration, r.steps);
  EXPECT_NE(r.message.find("50 steps needed none"), std::string::npos) << r.message;
  Simulator sag(build_model(cantilever(dir.str())));
  const RunResult s = run_simulation(sag, o, log);
  ASSERT_LT(s.steps_without_iteration, s.steps);
  const double per_step = double(s.newton_iters) / double(s.steps - s.steps_without_iteration);
  char want[64];
  std::snprintf(want, sizeof want, "%.1f Newton iterations per step that iterated", per_step);
  EXPECT_NE(s.message.find(want), std::string::npos) << s.message;
}

// issue 19: the VTK frames have their own cadence (vtk_every), the CSV files keep `every`; the
// first and the last state go to both; the command line's --every sets both
TEST(RunSimulation, VtkFramesHaveTheirOwnCadence) {
  ScratchDir dir;
  SceneSpec sc = cantilever(dir.str());
  sc.output.every = 5;
  sc.output.vtk_every = 20;
  sc.integrator.duration = 0.047;  // 47 steps: the last is neither's multiple
  {
    Simulator sim(build_model(sc));
    std::ostringstream log;
    ASSERT_TRUE(run_simulation(sim, quiet_options(), log).ok);
  }
  // VTK: steps 0, 20, 40 and 47; CSV: 0, 5, ..., 45 and 47, after the header
  EXPECT_EQ(files_ending(dir.path() / "frames", ".vtp").size(), 4u);
  EXPECT_EQ(read_lines(dir.path() / "energies.csv").size(), 1u + 11u);
  EXPECT_EQ(read_lines(dir.path() / "nodes.csv").size(), 1u + 11u);
  ScratchDir both;
  sc.output.dir = both.str();
  Simulator sim(build_model(sc));
  RunOptions o = quiet_options();
  o.every = 10;
  std::ostringstream log;
  ASSERT_TRUE(run_simulation(sim, o, log).ok);
  EXPECT_EQ(files_ending(both.path() / "frames", ".vtp").size(), 6u);  // 0, 10, ..., 40, 47
  EXPECT_EQ(read_lines(both.path() / "energies.csv").size(), 1u + 6u);
}

// issue 18, fault 9: every output path is checked before the first step, so that a run that
// cannot write its outputs fails before any work and leaves nothing behind: a scene name too
// long for a file name (it failed after the run had started, leaving .part files), and an
// energies.csv that is a folder (it failed only after the whole run)
TEST(RunSimulation, OutputPathsAreCheckedBeforeTheFirstStep) {
  {
    ScratchDir dir;
    SceneSpec sc = cantilever(dir.str());
    sc.name = std::string(260, 'n');
    Simulator sim(build_model(sc));
    std::ostringstream log;
    try {
      run_simulation(sim, quiet_options(), log);
      ADD_FAILURE() << "a file name of 264 bytes was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("more than the 255 a file system allows"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(sim.time(), 0.0);
    EXPECT_TRUE(files_ending(dir.path(), ".part").empty());
    EXPECT_TRUE(files_ending(dir.path(), ".csv").empty());
  }
  {
    ScratchDir dir;
    std::filesystem::create_directories(dir.path() / "energies.csv");
    Simulator sim(build_model(cantilever(dir.str())));
    std::ostringstream log;
    try {
      run_simulation(sim, quiet_options(), log);
      ADD_FAILURE() << "a folder named energies.csv was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("energies.csv' is a folder"), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(sim.time(), 0.0);  // no step was taken
    EXPECT_TRUE(files_ending(dir.path(), ".part").empty());
    EXPECT_TRUE(files_ending(dir.path(), ".vtp").empty());
  }
}

// an error while writing (here: the frames folder removed during the run) stops the run with
// the reason, and removes every unfinished file (the CSV files' .part)
TEST(RunSimulation, AnOutputErrorLeavesNoUnfinishedFile) {
  ScratchDir dir;
  Simulator sim(build_model(cantilever(dir.str())));
  int calls = 0;
  sim.set_actuation([&](Real, NaturalShape&) {
    if (++calls == 15) std::filesystem::remove_all(dir.path() / "frames");
  });
  std::ostringstream log;
  try {
    run_simulation(sim, quiet_options(), log);
    ADD_FAILURE() << "the run went on without its frames folder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(files_ending(dir.path(), ".part").empty());
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "energies.csv"));
}

// an interrupt (the program's SIGINT handler sets the flag) stops the run after the step in
// progress: the outputs recorded so far are complete under their final names
TEST(RunSimulation, AnInterruptStopsTheRunWithCompleteOutputs) {
  ScratchDir dir;
  Simulator sim(build_model(cantilever(dir.str())));
  volatile std::sig_atomic_t flag = 0;
  // the callback sees each step's end time (implicit Euler): t = 23 ms is step 23
  sim.set_actuation([&](Real t, NaturalShape&) {
    if (t > 22.5e-3) flag = 1;
  });
  RunOptions o = quiet_options();
  o.interrupt = &flag;
  std::ostringstream log;
  const RunResult r = run_simulation(sim, o, log);
  EXPECT_TRUE(r.interrupted);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.steps, 23);
  EXPECT_NE(r.message.find("interrupted after 23 steps"), std::string::npos) << r.message;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "cantilever.pvd"));
  EXPECT_TRUE(files_ending(dir.path(), ".part").empty());
  // header, t = 0, steps 10 and 20, and the last state (step 23)
  EXPECT_EQ(read_lines(dir.path() / "energies.csv").size(), 5u);
  EXPECT_EQ(read_lines(dir.path() / "nodes.csv").size(), 5u);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
