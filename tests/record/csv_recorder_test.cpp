#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "record_test_util.h"
#include "slender/core/error.h"
#include "slender/record.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

namespace fs = std::filesystem;
using test::make_rod_model;
using test::make_state;
using test::read_lines;
using test::ScratchDir;
using test::split;

RecordFrame frame(const Model& m, const State& s, long step) {
  RecordFrame f;
  f.step = step;
  f.time = s.time;
  f.model = &m;
  f.state = &s;
  return f;
}

TEST(NodeCsvRecorder, HeaderNamesEachNodeAndComponent) {
  ScratchDir dir;
  const Model m = make_rod_model();
  auto rec = make_node_csv_recorder({2, 0});
  rec->begin(m, dir.str());
  rec->end();
  const auto lines = read_lines(dir.path() / "nodes.csv");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "time,n2_x,n2_y,n2_z,n2_vx,n2_vy,n2_vz,n0_x,n0_y,n0_z,n0_vx,n0_vy,n0_vz");
}

TEST(NodeCsvRecorder, RowsHoldPositionsAndVelocitiesAtFullPrecision) {
  ScratchDir dir;
  const Model m = make_rod_model();
  auto rec = make_node_csv_recorder({1, 2});
  rec->begin(m, dir.str());
  const State s0 = make_state(m, 0.0, 0.0);
  const State s1 = make_state(m, 0.1, 1.0 / 3.0);
  rec->record(frame(m, s0, 0));
  rec->record(frame(m, s1, 10));
  const std::vector<std::string> files = rec->end();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(fs::path(files[0]).filename(), "nodes.csv");

  const auto lines = read_lines(dir.path() / "nodes.csv");
  ASSERT_EQ(lines.size(), 3u);
  const auto row = split(lines[2], ',');
  ASSERT_EQ(row.size(), 13u);
  // %.17g round-trips every double exactly
  EXPECT_EQ(std::stod(row[0]), 0.1);
  const int nodes[2] = {1, 2};
  for (int a = 0; a < 2; ++a) {
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(std::stod(row[1 + 6 * a + k]), s1.q[3 * nodes[a] + k]);
      EXPECT_EQ(std::stod(row[4 + 6 * a + k]), s1.u[3 * nodes[a] + k]);
    }
  }
}

TEST(NodeCsvRecorder, FileKeepsItsTemporaryNameUntilEnd) {
  ScratchDir dir;
  const Model m = make_rod_model();
  auto rec = make_node_csv_recorder({0});
  rec->begin(m, dir.str());
  const State s = make_state(m, 0.0, 0.0);
  rec->record(frame(m, s, 0));
  EXPECT_TRUE(fs::exists(dir.path() / "nodes.csv.part"));
  EXPECT_FALSE(fs::exists(dir.path() / "nodes.csv"));
  // rows are flushed as they are written, so a partial file is readable during the run
  EXPECT_EQ(read_lines(dir.path() / "nodes.csv.part").size(), 2u);
  rec->end();
  EXPECT_FALSE(fs::exists(dir.path() / "nodes.csv.part"));
  EXPECT_TRUE(fs::exists(dir.path() / "nodes.csv"));
}

TEST(NodeCsvRecorder, AbandonedRecorderLeavesNoFinalFile) {
  ScratchDir dir;
  const Model m = make_rod_model();
  {
    auto rec = make_node_csv_recorder({0});
    rec->begin(m, dir.str());
    const State s = make_state(m, 0.0, 0.0);
    rec->record(frame(m, s, 0));
  }
  EXPECT_FALSE(fs::exists(dir.path() / "nodes.csv"));
  EXPECT_TRUE(fs::exists(dir.path() / "nodes.csv.part"));
}

TEST(NodeCsvRecorder, NodeOutOfRangeIsAContractError) {
  ScratchDir dir;
  const Model m = make_rod_model();
  auto rec = make_node_csv_recorder({3});
  EXPECT_THROW(rec->begin(m, dir.str()), Error);
}

TEST(NodeCsvRecorder, UnwritableFolderThrows) {
  ScratchDir dir;
  const Model m = make_rod_model();
  auto rec = make_node_csv_recorder({0});
  EXPECT_THROW(rec->begin(m, (dir.path() / "missing" / "folder").string()), Error);
}

TEST(EnergyCsvRecorder, WritesEnergiesTotalAndIterations) {
  ScratchDir dir;
  const Model m = make_rod_model();
  auto rec = make_energy_csv_recorder();
  rec->begin(m, dir.str());
  const State s = make_state(m, 0.25, 0.0);
  RecordFrame f = frame(m, s, 5);
  f.energies.kinetic = 1.5;
  f.energies.stretch = 0.1;
  f.energies.bend = 0.2;
  f.energies.twist = 0.3;
  f.energies.gravity = -2.0 / 3.0;
  f.newton_iters = 4;
  rec->record(f);
  EXPECT_TRUE(fs::exists(dir.path() / "energies.csv.part"));
  const auto files = rec->end();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_FALSE(fs::exists(dir.path() / "energies.csv.part"));

  const auto lines = read_lines(dir.path() / "energies.csv");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "time,kinetic,stretch,bend,twist,gravity,total,newton_iters");
  const auto row = split(lines[1], ',');
  ASSERT_EQ(row.size(), 8u);
  EXPECT_EQ(std::stod(row[0]), 0.25);
  EXPECT_EQ(std::stod(row[1]), 1.5);
  EXPECT_EQ(std::stod(row[5]), -2.0 / 3.0);
  EXPECT_EQ(std::stod(row[6]), f.energies.total());
  EXPECT_EQ(row[7], "4");
}

TEST(EnergyCsvRecorder, EndWithoutBeginWritesNothing) {
  auto rec = make_energy_csv_recorder();
  EXPECT_TRUE(rec->end().empty());
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
