// Checkpoints (include/slender/checkpoint.h): a run resumed from a checkpoint ends in the same
// bits as the run that was not interrupted, on a scene with ground contact and friction, with
// an adaptive step size; a checkpoint of another model, a truncated file and a file that is not
// a checkpoint are refused with errors that name the file. One environment of a batch (either
// engine) saved and loaded back into a batch whose other environments are elsewhere continues
// in the same bits, and its file is a Simulator's.

#include "slender/checkpoint.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <tuple>

#include "record_test_util.h"
#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/control.h"
#include "slender/core/error.h"
#include "slender/run.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::ScratchDir;

std::shared_ptr<const Model> scene_model(const char* name, Real steps) {
  SceneSpec sc = read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + name);
  sc.backend = BackendKind::kCpu;
  sc.integrator.duration = steps * sc.integrator.dt;
  sc.integrator.adaptive = true;
  return build_model(sc);
}

RunOptions quiet() {
  RunOptions o;
  o.progress = false;
  o.write_outputs = false;
  return o;
}

TEST(Checkpoint, AResumedRunEndsInTheSameBits) {
  ScratchDir dir;
  const auto model = scene_model("rod_drop.json", 40);
  std::ostringstream log;
  // the whole run, and the same run writing a checkpoint every 15 steps (the last at step 30)
  Simulator whole(model);
  ASSERT_TRUE(run_simulation(whole, quiet(), log).ok);
  Simulator first(model);
  RunOptions o = quiet();
  o.checkpoint_every = 15;
  o.checkpoint_path = (dir.path() / "run.slck").string();
  ASSERT_TRUE(run_simulation(first, o, log).ok);
  EXPECT_EQ(first.state().q, whole.state().q);  // checkpoints change nothing
  // a fresh simulator from the checkpoint: 10 more steps to the same end
  Simulator resumed(model);
  const RunCursor c = load_checkpoint(resumed, o.checkpoint_path);
  EXPECT_EQ(c.steps, 30);
  EXPECT_EQ(resumed.state().step, 30);
  EXPECT_NE(resumed.state().q, whole.state().q);
  RunOptions r = quiet();
  r.resume = &c;
  const RunResult res = run_simulation(resumed, r, log);
  ASSERT_TRUE(res.ok) << res.message;
  EXPECT_EQ(res.steps, 40);
  EXPECT_EQ(resumed.state().time, whole.state().time);
  EXPECT_EQ(resumed.state().q, whole.state().q);
  EXPECT_EQ(resumed.state().u, whole.state().u);
  EXPECT_EQ(resumed.state().edge_d1, whole.state().edge_d1);
  EXPECT_EQ(resumed.state().bend_ref_twist, whole.state().bend_ref_twist);
  EXPECT_FALSE(std::filesystem::exists(o.checkpoint_path + ".part"));
}

// every file of a run's folder but its checkpoint, by its path inside it, and its bytes
std::map<std::string, std::string> folder_bytes(const std::filesystem::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != "checkpoint.slck")
      files[std::filesystem::relative(e.path(), dir).string()] = test::read_text(e.path());
  return files;
}

// Issue 49, case 6: a run resumed into its own folder continues its files from the checkpoint:
// nodes.csv, energies.csv, the frames and the .pvd end byte for byte as the uninterrupted run's,
// whether the stopped run completed its files (an interrupt, or a shorter run) or was killed
// (only the .part files there); a folder without its run's files, or with other ones, is refused
TEST(Checkpoint, ARunResumedIntoItsOwnFolderWritesTheUninterruptedRunsFiles) {
  ScratchDir dir;
  const auto model = scene_model("rod_drop.json", 40);
  std::ostringstream log;
  RunOptions o;
  o.progress = false;
  o.every = 4;
  o.checkpoint_every = 15;
  auto run_to = [&](const std::string& sub, Real duration, const RunCursor* resume) {
    Simulator sim(model);
    RunOptions r = o;
    r.out_dir = (dir.path() / sub).string();
    r.checkpoint_path = (dir.path() / sub / "checkpoint.slck").string();
    r.duration = duration;
    // resumed: from the folder's checkpoint, to resume->t_end
    RunCursor c;
    if (resume) {
      c = load_checkpoint(sim, r.checkpoint_path);
      c.t_end = resume->t_end;
      r.resume = &c;
    }
    const RunResult res = run_simulation(sim, r, log);
    EXPECT_TRUE(res.ok) << res.message;
    return res;
  };
  const Real t_whole = model->scene.integrator.duration;
  run_to("whole", -1, nullptr);
  const auto whole = folder_bytes(dir.path() / "whole");
  ASSERT_EQ(whole.size(), 14u);  // 2 CSV files, the .pvd, 11 frames (steps 0, 4, ..., 40)
  RunCursor to_end;
  to_end.t_end = t_whole;

  // stopped at step 34 with its files complete (the last state recorded, frames past the
  // step-30 checkpoint), then resumed in place
  run_to("stopped", 34 * model->scene.integrator.dt, nullptr);
  EXPECT_NE(folder_bytes(dir.path() / "stopped"), whole);
  run_to("stopped", -1, &to_end);
  EXPECT_EQ(folder_bytes(dir.path() / "stopped"), whole);

  // killed at step 34: the files under their temporary names only
  run_to("killed", 34 * model->scene.integrator.dt, nullptr);
  for (const char* f : {"energies.csv", "nodes.csv", "rod_drop.pvd"}) {
    const auto p = dir.path() / "killed" / f;
    std::filesystem::rename(p, p.string() + ".part");
  }
  run_to("killed", -1, &to_end);
  EXPECT_EQ(folder_bytes(dir.path() / "killed"), whole);

  // the folder of another run (other columns in nodes.csv): refused, the files left as they were
  run_to("other", 34 * model->scene.integrator.dt, nullptr);
  {
    std::ofstream(dir.path() / "other" / "nodes.csv") << "time,a_x\n0,1\n";
    const auto before = folder_bytes(dir.path() / "other");
    Simulator sim(model);
    RunCursor c = load_checkpoint(sim, (dir.path() / "other" / "checkpoint.slck").string());
    RunOptions r = o;
    r.out_dir = (dir.path() / "other").string();
    r.resume = &c;
    try {
      run_simulation(sim, r, log);
      ADD_FAILURE() << "a folder with another nodes.csv was continued";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("nodes.csv"), std::string::npos) << e.what();
    }
    EXPECT_EQ(folder_bytes(dir.path() / "other"), before);
  }
}

TEST(Checkpoint, ForeignTruncatedAndNonCheckpointFilesAreRefused) {
  ScratchDir dir;
  const auto model = scene_model("rod_drop.json", 5);
  Simulator sim(model);
  const std::string path = (dir.path() / "a.slck").string();
  save_checkpoint(sim, path);
  // another model
  Simulator other(scene_model("gripper.json", 5));
  try {
    load_checkpoint(other, path);
    ADD_FAILURE() << "a checkpoint of another model was taken";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(e.message().find("another model"), std::string::npos) << e.what();
  }
  // cut short
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 8);
  try {
    load_checkpoint(sim, path);
    ADD_FAILURE() << "a truncated checkpoint was taken";
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("cut short"), std::string::npos) << e.what();
  }
  // not a checkpoint at all
  const std::string text = (dir.path() / "b.slck").string();
  std::ofstream(text) << "{\"not\": \"a checkpoint\"}";
  try {
    load_checkpoint(sim, text);
    ADD_FAILURE() << "a JSON file was taken for a checkpoint";
  } catch (const InputError& e) {
    EXPECT_NE(e.message().find("not a Slender checkpoint"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sim.state().time, 0.0);  // nothing was loaded
}

// the held DOFs and the scene's events applied are state: rod_pin.json with its rod caught at
// step 20 and, by a call, one end pinned at step 25; checkpoints before the event and after
// both resume in the same bits as the run that went through; a format 1 file (before the held
// DOFs were saved) reads with the model's set and no event applied
TEST(Checkpoint, HeldDofsAndEventsResumeInTheSameBits) {
  ScratchDir dir;
  SceneSpec sc = read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/rod_pin.json");
  sc.events[0].time = 0.02;
  const auto model = build_model(sc);
  const std::string early = (dir.path() / "early.slck").string();
  const std::string late = (dir.path() / "late.slck").string();
  Simulator whole(model);
  for (int k = 0; k < 40; ++k) {
    if (k == 10) save_checkpoint(whole, early);
    if (k == 25) whole.fix_nodes({0});
    if (k == 30) save_checkpoint(whole, late);
    ASSERT_TRUE(whole.step().ok());
  }
  EXPECT_EQ(whole.state().events_done, 1);
  EXPECT_EQ(whole.dof_fixed()[0], 1);
  for (const std::string& path : {early, late}) {
    Simulator resumed(model);
    load_checkpoint(resumed, path);
    const long from = resumed.state().step;
    for (long k = from; k < 40; ++k) {
      if (k == 25) resumed.fix_nodes({0});
      ASSERT_TRUE(resumed.step().ok());
    }
    EXPECT_EQ(resumed.state().dof_fixed, whole.state().dof_fixed) << path;
    EXPECT_EQ(resumed.state().q, whole.state().q) << path;
    EXPECT_EQ(resumed.state().u, whole.state().u) << path;
  }
  // formats 1 and 2 (without checksum and scene fingerprint) are refused, the format named
  {
    std::fstream f(early, std::ios::in | std::ios::out | std::ios::binary);
    const std::uint32_t v2 = 2;
    f.seekp(10);
    f.write(reinterpret_cast<const char*>(&v2), sizeof v2);
  }
  Simulator old(model);
  try {
    load_checkpoint(old, early);
    ADD_FAILURE() << "a format 2 checkpoint was read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "version");
    EXPECT_NE(e.message().find("format 2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(old.state().step, 0);
}

std::string message_of(Simulator& sim, const std::string& path) {
  try {
    load_checkpoint(sim, path);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    return e.message();
  }
  return "(taken)";
}

// a checkpoint cannot lie (issue 49, item 3): one coordinate changed by 1 cm in the file is
// caught by the checksum; the same model with another gravity, ground friction, integrator or
// dt is refused with what differs named; a cursor whose end is 1e300 s or whose time is
// -1000 s, and a NaN in the state, are refused though the file is intact
TEST(Checkpoint, DamageOtherSettingsAndBadCursorsAreRefused) {
  ScratchDir dir;
  SceneSpec sc = read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/rod_drop.json");
  sc.backend = BackendKind::kCpu;
  ASSERT_TRUE(sc.forces.ground.enabled);
  const auto model = build_model(sc);
  Simulator sim(model);
  for (int k = 0; k < 3; ++k)
    ASSERT_TRUE(sim.step().ok());
  const std::string path = (dir.path() / "a.slck").string();
  save_checkpoint(sim, path);
  {
    Simulator same(model);  // the intact file loads
    load_checkpoint(same, path);
    EXPECT_EQ(same.state().q, sim.state().q);
  }
  // damage: node 1's z raised by 1 cm where it is in the file
  {
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const Real z = sim.state().q[5];
    const size_t at = bytes.find(std::string(reinterpret_cast<const char*>(&z), sizeof z));
    ASSERT_NE(at, std::string::npos);
    const Real moved = z + 0.01;
    bytes.replace(at, sizeof moved, reinterpret_cast<const char*>(&moved), sizeof moved);
    const std::string damaged = (dir.path() / "damaged.slck").string();
    std::ofstream(damaged, std::ios::binary) << bytes;
    Simulator fresh(model);
    EXPECT_NE(message_of(fresh, damaged).find("damaged"), std::string::npos);
    EXPECT_EQ(fresh.state().step, 0);
  }
  // other settings, each named
  auto other = [&](SceneSpec changed, const char* part) {
    Simulator o(build_model(changed));
    const std::string msg = message_of(o, path);
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
    EXPECT_EQ(msg.find("model ("), std::string::npos) << msg;  // the arrays are the same
  };
  SceneSpec g = sc;
  g.forces.gravity[2] = -1.62;
  other(g, "gravity");
  SceneSpec mu = sc;
  mu.forces.ground.friction += 0.1;
  other(mu, "ground friction");
  for (const auto& [kind, dt, part] :
       {std::tuple{IntegratorKind::kNewmark, sc.integrator.dt, "integrator"},
        std::tuple{sc.integrator.kind, sc.integrator.dt / 2, "dt"}}) {
    IntegratorSpec in = sc.integrator;
    in.kind = kind;
    in.dt = dt;
    Simulator o(model, in);
    const std::string msg = message_of(o, path);
    EXPECT_NE(msg.find(std::string("its ") + part + " differ"), std::string::npos) << msg;
  }
  // cursors outside the run, in intact files
  {
    const std::string far = (dir.path() / "far.slck").string();
    save_checkpoint(sim, far, RunCursor{3, 0, 0, 1e300, {}});
    Simulator o(model);
    EXPECT_NE(message_of(o, far).find("end time 1e+300"), std::string::npos);
    save_checkpoint(sim, far, RunCursor{3, 0, 0, 0.5 * sim.time(), {}});  // ends before its time
    EXPECT_NE(message_of(o, far).find("end time"), std::string::npos);
    State s = sim.state();
    s.time = -1000;
    Simulator back(model);
    back.set_state(s);
    save_checkpoint(back, far, RunCursor{3, 0, 0, 1.0, {}});
    EXPECT_NE(message_of(o, far).find("time -1000"), std::string::npos);
    EXPECT_EQ(o.state().step, 0);
  }
  // a FIFO is not opened (it would block); a NaN state is not set into a Simulator or into an
  // environment of a batch (issue 49, item 4)
  const std::string fifo = (dir.path() / "pipe.slck").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(message_of(sim, fifo).find("a FIFO"), std::string::npos);
  State nan = sim.state();
  nan.q[4] = std::nan("");
  try {
    sim.set_state(nan);
    ADD_FAILURE() << "a NaN state was set";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("state: q[4] is nan"), std::string::npos) << e.what();
  }
  for (const BatchEngine engine : {BatchEngine::kPerEnvironment, BatchEngine::kVectorized}) {
    BatchedSimulator b(model, 2, sc.integrator, LinearSolverKind::kAuto, engine);
    try {
      b.set_state(1, nan);
      ADD_FAILURE() << "a NaN state was set into environment 1";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("environment 1's state: q[4] is nan"), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(b.state(1).q, b.state(0).q);
  }
}

// environment 1 of three, each with its own natural curvature (so that they differ), saved at
// step 10 and loaded at step 25 into a fresh batch's environment 1 while the others are at
// other states: 10 more steps end where the uninterrupted environment was at step 20
TEST(Checkpoint, OneEnvironmentOfABatchResumesInTheSameBits) {
  ScratchDir dir;
  const auto model = scene_model("snake.json", 40);
  const int n = model->nbend;
  std::vector<Real> kappa(size_t(3) * 2 * n, 0);
  for (int e = 0; e < 3; ++e)
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < 2; ++c)
        kappa[size_t(2 * (e * n + i) + c)] = 0.3 * (e + 1) * std::sin(0.3 * i);
  for (const BatchEngine engine : {BatchEngine::kPerEnvironment, BatchEngine::kVectorized}) {
    const std::string path = (dir.path() / "env1.slck").string();
    BatchedSimulator whole(model, 3, model->scene.integrator, LinearSolverKind::kAuto, engine);
    whole.set_natural_curvature(kappa.data());
    for (int k = 0; k < 20; ++k) {
      whole.step();
      if (k == 9) save_checkpoint(whole, 1, path);
    }
    BatchedSimulator later(model, 3, model->scene.integrator, LinearSolverKind::kAuto, engine);
    later.set_natural_curvature(kappa.data());
    for (int k = 0; k < 25; ++k)
      later.step();
    const State env0 = later.state(0);
    load_checkpoint(later, 1, path);
    EXPECT_EQ(later.state(0).q, env0.q);  // the others keep their states
    EXPECT_EQ(later.state(1).step, 10);
    for (int k = 0; k < 10; ++k)
      later.step();
    EXPECT_NE(whole.state(0).q, whole.state(1).q);  // the environments differ
    EXPECT_EQ(whole.state(1).step, 20);             // and every step converged
    EXPECT_EQ(later.state(1).time, whole.state(1).time);
    EXPECT_EQ(later.state(1).q, whole.state(1).q) << "engine " << int(engine);
    EXPECT_EQ(later.state(1).u, whole.state(1).u) << "engine " << int(engine);
    // the file is a Simulator's: it loads into one of the same model
    Simulator sim(model);
    load_checkpoint(sim, path);
    EXPECT_EQ(sim.state().step, 10);
  }
  // an environment out of range; another model's file
  BatchedSimulator b(model, 2);
  try {
    save_checkpoint(b, 2, (dir.path() / "x.slck").string());
    ADD_FAILURE() << "environment 2 of 2 was saved";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("environment 2"), std::string::npos) << e.what();
  }
  Simulator other(scene_model("rod_drop.json", 5));
  const std::string foreign = (dir.path() / "rod.slck").string();
  save_checkpoint(other, foreign);
  EXPECT_THROW(load_checkpoint(b, 0, foreign), InputError);
}

// Issue 51: the feedback controllers' state (filtered strains, integrals, commands) is in the
// checkpoint: a PI-controlled run resumed from one ends in the same bits as the run that was not
// interrupted, controllers included; a batch environment's file carries its own controllers'
// state into a Simulator; the state of other controllers (another name, other springs) is
// refused, naming the field, and leaves the simulator as it was
TEST(Checkpoint, ControllersResumeInTheSameBits) {
  ScratchDir dir;
  const auto model = scene_model("pi_s_shape.json", 40);
  ASSERT_FALSE(model->scene.controllers.empty());
  std::ostringstream log;
  Simulator whole(model);
  ASSERT_TRUE(run_simulation(whole, quiet(), log).ok);
  Simulator first(model);
  RunOptions o = quiet();
  o.checkpoint_every = 15;
  o.checkpoint_path = (dir.path() / "pi.slck").string();
  ASSERT_TRUE(run_simulation(first, o, log).ok) << log.str();
  Simulator resumed(model);
  const RunCursor c = load_checkpoint(resumed, o.checkpoint_path);
  ASSERT_EQ(c.steps, 30);
  const StrainController& rc = *resumed.controller();
  EXPECT_NE(rc.integral(0), std::vector<Real>(rc.integral(0).size(), 0));  // (a state to carry)
  RunOptions r = quiet();
  r.resume = &c;
  ASSERT_TRUE(run_simulation(resumed, r, log).ok);
  EXPECT_EQ(resumed.state().q, whole.state().q);
  EXPECT_EQ(resumed.state().u, whole.state().u);
  const StrainController& wc = *whole.controller();
  EXPECT_EQ(rc.command(0), wc.command(0));
  EXPECT_EQ(rc.integral(0), wc.integral(0));
  EXPECT_EQ(rc.measured(0), wc.measured(0));
  EXPECT_EQ(rc.time(0), wc.time(0));

  // environment 1 of a batch (gains of its own) into a Simulator
  BatchedSimulator batch(model, 2);
  batch.controller()->set_gains(0, 1, {2 * model->scene.controllers[0].kp[0]}, {0.5});
  for (int k = 0; k < 12; ++k)
    batch.step();
  const std::string path = (dir.path() / "env1.slck").string();
  save_checkpoint(batch, 1, path);
  Simulator sim(model);
  load_checkpoint(sim, path);
  EXPECT_EQ(sim.controller()->integral(0),
            std::vector<Real>(
                batch.controller()->integral(0).begin() + long(batch.controller()->springs(0)),
                batch.controller()->integral(0).end()));
  EXPECT_EQ(sim.controller()->time(0), batch.controller()->time(1));

  // other controllers: refused, the simulator untouched
  std::vector<ControllerSpec> renamed = model->scene.controllers;
  renamed[0].name = "other";
  Simulator foreign(model);
  foreign.set_controllers(renamed);
  const State before = foreign.state();
  try {
    load_checkpoint(foreign, path);
    ADD_FAILURE() << "another controller's state was loaded";
  } catch (const InputError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("controllers"), std::string::npos) << w;
    EXPECT_NE(w.find("'other'"), std::string::npos) << w;
  }
  EXPECT_EQ(foreign.state().q, before.q);
  EXPECT_EQ(foreign.controller()->time(0), -1);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
