#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "record_test_util.h"
#include "slender/record.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

namespace fs = std::filesystem;
using test::files_ending;
using test::make_rod_model;
using test::make_state;
using test::parse_xml;
using test::read_text;
using test::ScratchDir;
using test::XmlNode;

RecordFrame frame(const Model& m, const State& s, long step, std::vector<Real> strains) {
  RecordFrame f;
  f.step = step;
  f.time = s.time;
  f.model = &m;
  f.state = &s;
  f.bend_strains = std::move(strains);
  return f;
}

std::vector<double> array_values(const XmlNode& doc, const std::string& name) {
  const XmlNode* a = doc.array(name);
  if (!a) ADD_FAILURE() << "no DataArray " << name;
  return a ? a->numbers() : std::vector<double>{};
}

// a rod part (nodes 0-2) and a network part (nodes 3-6) whose edges 3-4, 4-5 run on and 3-6
// starts a new branch
Model make_two_part_model() {
  Model m = make_rod_model();
  m.nnode = 7;
  m.nedge = 5;
  m.ndof = 3 * m.nnode + m.nedge;
  m.npart = 2;
  m.node_x0 = {0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 1, 1, 0, 2, 1, 0, 0, 2, 0};
  m.edge_node = {0, 1, 1, 2, 3, 4, 4, 5, 3, 6};
  m.edge_radius = {0.01, 0.01, 0.03, 0.03, 0.04};
  m.dof_fixed.assign(m.ndof, 0);
  m.part_name = {"rod", "net"};
  m.part_node_adr = {0, 3, 7};
  m.part_node = {0, 1, 2, 3, 4, 5, 6};
  m.part_edge_adr = {0, 2, 5};
  m.part_edge = {0, 1, 2, 3, 4};
  return m;
}

TEST(VtkRecorder, WritesOneWellFormedFramePerRecordAndASeries) {
  ScratchDir dir;
  const Model m = make_rod_model();
  auto rec = make_vtk_recorder(m.scene.name);
  rec->begin(m, dir.str());
  const State s0 = make_state(m, 0.0, 0.0);
  const State s1 = make_state(m, 0.5, 0.25);
  rec->record(frame(m, s0, 0, {0, 0, 0}));
  rec->record(frame(m, s1, 50, {0.3, 0.4, -0.7}));
  // frames appear whole, the series under its temporary name until the end
  EXPECT_EQ(files_ending(dir.path(), ".part"), std::vector<std::string>{"rod_test.pvd.part"});
  EXPECT_TRUE(fs::exists(dir.path() / "frames" / "rod_test_000000.vtp"));
  EXPECT_TRUE(fs::exists(dir.path() / "frames" / "rod_test_000001.vtp"));
  EXPECT_FALSE(fs::exists(dir.path() / "rod_test.pvd"));
  const auto files = rec->end();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(fs::path(files[0]), dir.path() / "rod_test.pvd");
  EXPECT_TRUE(files_ending(dir.path(), ".part").empty());

  // the series lists both frames with their times
  const auto pvd = parse_xml(read_text(dir.path() / "rod_test.pvd"));
  EXPECT_EQ(pvd->name, "VTKFile");
  EXPECT_EQ(pvd->attr.at("type"), "Collection");
  const auto sets = pvd->find_all("DataSet");
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(std::stod(sets[0]->attr.at("timestep")), 0.0);
  EXPECT_EQ(std::stod(sets[1]->attr.at("timestep")), 0.5);
  EXPECT_EQ(sets[1]->attr.at("file"), "frames/rod_test_000001.vtp");
  for (const XmlNode* d : sets)
    EXPECT_TRUE(fs::exists(dir.path() / d->attr.at("file")));
}

TEST(VtkRecorder, FrameHoldsGeometryAndFields) {
  ScratchDir dir;
  const Model m = make_rod_model();
  auto rec = make_vtk_recorder("rod");
  rec->begin(m, dir.str());
  const State s = make_state(m, 0.5, 0.25);
  rec->record(frame(m, s, 7, {0.3, 0.4, -0.7}));
  rec->end();

  const std::string text = read_text(dir.path() / "frames" / "rod_000000.vtp");
  const auto doc = parse_xml(text);
  EXPECT_EQ(doc->attr.at("type"), "PolyData");
  const auto pieces = doc->find_all("Piece");
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0]->attr.at("NumberOfPoints"), "3");
  EXPECT_EQ(pieces[0]->attr.at("NumberOfLines"), "1");

  // one polyline through the rod's three nodes
  EXPECT_EQ(array_values(*doc, "connectivity"), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(array_values(*doc, "offsets"), (std::vector<double>{3}));
  EXPECT_EQ(array_values(*doc, "part"), (std::vector<double>{0}));

  // points and point data of every node
  const auto x = array_values(*doc, "position");
  const auto v = array_values(*doc, "velocity");
  ASSERT_EQ(x.size(), 9u);
  ASSERT_EQ(v.size(), 9u);
  for (int d = 0; d < 9; ++d) {
    EXPECT_NEAR(x[d], s.q[d], 1e-11 * (1 + std::fabs(s.q[d])));
    EXPECT_NEAR(v[d], s.u[d], 1e-11 * (1 + std::fabs(s.u[d])));
  }
  const auto radius = array_values(*doc, "radius");
  ASSERT_EQ(radius.size(), 3u);
  EXPECT_DOUBLE_EQ(radius[0], 0.01);
  EXPECT_DOUBLE_EQ(radius[1], 0.02);  // the larger of its two edges
  EXPECT_DOUBLE_EQ(radius[2], 0.02);
  const auto kappa = array_values(*doc, "curvature");
  const auto tau = array_values(*doc, "twist");
  ASSERT_EQ(kappa.size(), 3u);
  ASSERT_EQ(tau.size(), 3u);
  EXPECT_DOUBLE_EQ(kappa[0], 0.0);
  EXPECT_NEAR(kappa[1], 0.5, 1e-12);  // |(0.3, 0.4)| at the stencil's centre node
  EXPECT_DOUBLE_EQ(kappa[2], 0.0);
  EXPECT_DOUBLE_EQ(tau[1], -0.7);
  EXPECT_DOUBLE_EQ(tau[0], 0.0);

  // twist angles: exact per edge, averaged per node
  EXPECT_EQ(array_values(*doc, "edge_twist_angle"), (std::vector<double>{0.1, 0.2}));
  const auto theta = array_values(*doc, "twist_angle");
  ASSERT_EQ(theta.size(), 3u);
  EXPECT_DOUBLE_EQ(theta[0], 0.1);
  EXPECT_NEAR(theta[1], 0.15, 1e-12);
  EXPECT_DOUBLE_EQ(theta[2], 0.2);
  EXPECT_EQ(array_values(*doc, "TimeValue"), (std::vector<double>{0.5}));
  EXPECT_EQ(array_values(*doc, "step"), (std::vector<double>{7}));
}

TEST(VtkRecorder, EveryArrayHasOneTuplePerPointOrCell) {
  ScratchDir dir;
  const Model m = make_two_part_model();
  auto rec = make_vtk_recorder("two");
  rec->begin(m, dir.str());
  const State s = make_state(m, 0.0, 0.1);
  rec->record(frame(m, s, 0, {0.1, 0.2, 0.3}));
  rec->end();
  const auto doc = parse_xml(read_text(dir.path() / "frames" / "two_000000.vtp"));
  const XmlNode* piece = doc->find_all("Piece").at(0);
  const size_t npoint = std::stoul(piece->attr.at("NumberOfPoints"));
  const size_t ncell = std::stoul(piece->attr.at("NumberOfLines"));
  EXPECT_EQ(npoint, 7u);
  for (const XmlNode* pd : doc->find_all("PointData")) {
    for (const XmlNode* a : pd->find_all("DataArray")) {
      const size_t ncomp = std::stoul(a->attr.at("NumberOfComponents"));
      EXPECT_EQ(a->numbers().size(), ncomp * npoint) << a->attr.at("Name");
    }
  }
  for (const XmlNode* cd : doc->find_all("CellData")) {
    for (const XmlNode* a : cd->find_all("DataArray")) {
      EXPECT_EQ(a->numbers().size(), ncell) << a->attr.at("Name");
    }
  }
  for (const XmlNode* fd : doc->find_all("FieldData")) {
    for (const XmlNode* a : fd->find_all("DataArray")) {
      EXPECT_EQ(a->numbers().size(), std::stoul(a->attr.at("NumberOfTuples")));
    }
  }
  // offsets end at the connectivity's length and every id is a point
  const auto conn = array_values(*doc, "connectivity");
  const auto offsets = array_values(*doc, "offsets");
  ASSERT_EQ(offsets.size(), ncell);
  EXPECT_EQ(offsets.back(), double(conn.size()));
  for (double id : conn)
    EXPECT_LT(id, double(npoint));
}

TEST(VtkRecorder, PolylinesFollowRunsOfConsecutiveEdges) {
  ScratchDir dir;
  const Model m = make_two_part_model();
  auto rec = make_vtk_recorder("two");
  rec->begin(m, dir.str());
  const State s = make_state(m, 0.0, 0.0);
  rec->record(frame(m, s, 0, {0, 0, 0}));
  rec->end();
  const auto doc = parse_xml(read_text(dir.path() / "frames" / "two_000000.vtp"));
  // rod 0-1-2; network run 3-4-5, then the branch 3-6 as its own line
  EXPECT_EQ(array_values(*doc, "connectivity"), (std::vector<double>{0, 1, 2, 3, 4, 5, 3, 6}));
  EXPECT_EQ(array_values(*doc, "offsets"), (std::vector<double>{3, 6, 8}));
  EXPECT_EQ(array_values(*doc, "part"), (std::vector<double>{0, 1, 1}));
  const auto radius = array_values(*doc, "radius");
  ASSERT_EQ(radius.size(), 7u);
  EXPECT_DOUBLE_EQ(radius[3], 0.04);
  EXPECT_DOUBLE_EQ(radius[6], 0.04);
}

TEST(VtkRecorder, MissingStrainsGiveZeroCurvature) {
  ScratchDir dir;
  const Model m = make_rod_model();
  auto rec = make_vtk_recorder("rod");
  rec->begin(m, dir.str());
  const State s = make_state(m, 0.0, 0.0);
  rec->record(frame(m, s, 0, {}));
  rec->end();
  const auto doc = parse_xml(read_text(dir.path() / "frames" / "rod_000000.vtp"));
  EXPECT_EQ(array_values(*doc, "curvature"), (std::vector<double>{0, 0, 0}));
}

// a recorder dropped without end() (a killed run) leaves its series under the temporary name,
// which a resumed run continues; abort() (an error) removes it
TEST(VtkRecorder, AbandonedRecorderLeavesItsSeriesUnfinished) {
  ScratchDir dir;
  const Model m = make_rod_model();
  const State s = make_state(m, 0.0, 0.0);
  {
    auto rec = make_vtk_recorder("rod");
    rec->begin(m, dir.str());
    rec->record(frame(m, s, 0, {}));
  }
  EXPECT_FALSE(fs::exists(dir.path() / "rod.pvd"));
  EXPECT_TRUE(fs::exists(dir.path() / "rod.pvd.part"));
  auto rec = make_vtk_recorder("rod");
  rec->begin(m, dir.str());
  rec->record(frame(m, s, 0, {}));
  rec->abort();
  EXPECT_FALSE(fs::exists(dir.path() / "rod.pvd"));
  EXPECT_TRUE(files_ending(dir.path(), ".part").empty());
}

TEST(XmlReader, RejectsMalformedDocuments) {
  EXPECT_NO_THROW(parse_xml("<?xml version=\"1.0\"?>\n<a x=\"1\"><b/><c>1 2</c></a>\n"));
  EXPECT_THROW(parse_xml("<a><b></a>"), std::runtime_error);
  EXPECT_THROW(parse_xml("<a><b/>"), std::runtime_error);
  EXPECT_THROW(parse_xml("<a/><b/>"), std::runtime_error);
  EXPECT_THROW(parse_xml("<a x=1/>"), std::runtime_error);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
