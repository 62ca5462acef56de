// Checkpoints (include/slender/checkpoint.h): a run resumed from a checkpoint ends in the same
// bits as the run that was not interrupted, on a scene with ground contact and friction, with
// an adaptive step size; a checkpoint of another model, a truncated file and a file that is not
// a checkpoint are refused with errors that name the file.

#include "slender/checkpoint.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "record_test_util.h"
#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/run.h"

namespace slender {
namespace {

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

}  // namespace
}  // namespace slender
