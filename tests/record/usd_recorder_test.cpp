// The USD series (host/record/usd.cpp) and the export of a run's VTK frames into one
// (usd_export.cpp): the text's structure, one time sample per record at the right time code,
// the values as the floats USD stores, escaped prim names, whole files only, resumption, and
// the errors that name the file. tests/python/test_usd.py reads the files back with usd-core.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "record_test_util.h"
#include "slender/builder.h"
#include "slender/core/error.h"
#include "slender/record.h"
#include "slender/run.h"
#include "slender/simulator.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

namespace fs = std::filesystem;
using test::files_ending;
using test::make_rod_model;
using test::make_state;
using test::read_text;
using test::ScratchDir;

RecordFrame frame(const Model& m, const State& s, std::vector<Real> strains = {}) {
  RecordFrame f;
  f.time = s.time;
  f.model = &m;
  f.state = &s;
  f.bend_strains = std::move(strains);
  return f;
}

// the block of prim `name` in a .usda text: from its "def" line to the next prim's
std::string prim_block(const std::string& text, const std::string& type, const std::string& name) {
  const size_t at = text.find("def " + type + " \"" + name + "\"");
  if (at == std::string::npos) return "";
  const size_t next = text.find("\n    def ", at + 1);
  return text.substr(at, next == std::string::npos ? std::string::npos : next - at);
}

// the numbers of a value written as [(a, b, c), ...] or [a, b, ...], as the floats USD reads
// (the shortest text of a float, read as a double and rounded to a float, is that float)
std::vector<double> numbers(std::string s) {
  for (char& c : s)
    if (c == '[' || c == ']' || c == '(' || c == ')' || c == ',') c = ' ';
  std::istringstream is(s);
  std::vector<double> v;
  double x = 0;
  while (is >> x)
    v.push_back(double(float(x)));
  return v;
}

// the time samples of an attribute in a prim's block: (time code, values) in the file's order
std::vector<std::pair<double, std::vector<double>>> samples(const std::string& block,
                                                            const std::string& attr) {
  std::vector<std::pair<double, std::vector<double>>> out;
  const std::string open = " " + attr + ".timeSamples = {\n";
  size_t at = block.find(open);
  if (at == std::string::npos) return out;
  at += open.size();
  while (true) {
    const size_t eol = block.find('\n', at);
    const std::string line = block.substr(at, eol - at);
    if (line.find('}') != std::string::npos || eol == std::string::npos) break;
    const size_t colon = line.find(':');
    out.emplace_back(std::stod(line.substr(0, colon)), numbers(line.substr(colon + 1)));
    at = eol + 1;
  }
  return out;
}

// the value of a static attribute line "NAME = VALUE" in a block
std::vector<double> static_value(const std::string& block, const std::string& decl) {
  const size_t at = block.find(decl + " = ");
  if (at == std::string::npos) return {};
  const size_t eol = block.find('\n', at);
  return numbers(block.substr(at + decl.size() + 3, eol - at - decl.size() - 3));
}

// a square sheet of two triangles in the plane z = 0 (counter-clockwise seen from +z) beside a
// rod of 3 nodes
Model make_rod_and_sheet_model() {
  Model m = make_rod_model();
  m.nnode = 7;
  m.ndof = 3 * m.nnode + m.nedge;
  m.npart = 2;
  m.node_x0 = {0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 1, 1, 0, 1, 2, 0, 0, 2, 0};
  m.ntri = 2;
  m.tri_node = {3, 4, 5, 3, 5, 6};
  m.tri_part = {1, 1};
  m.dof_fixed.assign(m.ndof, 0);
  m.part_name = {"rod", "sheet"};
  m.part_node_adr = {0, 3, 7};
  m.part_node = {0, 1, 2, 3, 4, 5, 6};
  m.part_edge_adr = {0, 2, 2};
  return m;
}

// a model whose states are written by both recorders
void record_three(const Model& m, const std::string& dir, const std::string& usd) {
  auto vtk = make_vtk_recorder(m.scene.name);
  auto rec = make_usd_recorder(usd, 0.5);
  vtk->begin(m, dir);
  rec->begin(m, dir);
  for (int k = 0; k < 3; ++k) {
    const State s = make_state(m, 0.5 * k, 0.1 * k + 0.013);
    RecordFrame f = frame(m, s, {0.3 * k, 0.4, -0.7});
    f.shell_energy_density.assign(m.ntri, 0);
    for (int t = 0; t < m.ntri; ++t)
      f.shell_energy_density[t] = 1.5 * (t + 1) + k;
    vtk->record(f);
    rec->record(f);
  }
  vtk->end();
  rec->end();
}

// the float USD stores of a double, printed shortest and read back: exact to the float
double as_float(double v) { return double(float(v)); }

TEST(UsdRecorder, WritesOneWholeFileWithATimeSamplePerRecord) {
  ScratchDir dir;
  Model m = make_rod_model();
  m.gravity = Vec3{{0, 0, -9.81}};
  const std::string path = (dir.path() / "run.usda").string();
  auto rec = make_usd_recorder(path, 0.5);
  rec->begin(m, dir.str());
  std::vector<State> states;
  for (int k = 0; k < 3; ++k)
    states.push_back(make_state(m, 0.5 * k, 0.25 * k + 0.1));
  for (const State& s : states)
    rec->record(frame(m, s, {0.3, 0.4, -0.7}));
  // the records are spooled; no .usda until the end
  EXPECT_EQ(files_ending(dir.path(), ".part"), std::vector<std::string>{"run.usda.samples.part"});
  EXPECT_FALSE(fs::exists(path));
  ASSERT_EQ(rec->marks().size(), 1u);
  EXPECT_EQ(rec->marks()[0].count, 3u);
  EXPECT_EQ(rec->end(), std::vector<std::string>{path});
  EXPECT_TRUE(files_ending(dir.path(), ".part").empty());

  const std::string text = read_text(path);
  EXPECT_EQ(text.rfind("#usda 1.0\n(\n", 0), 0u);
  EXPECT_NE(text.find("    defaultPrim = \"rod_test\"\n"), std::string::npos);
  EXPECT_NE(text.find("    metersPerUnit = 1\n"), std::string::npos);
  EXPECT_NE(text.find("    upAxis = \"Z\"\n"), std::string::npos);
  // one time code per 0.5 s: records 0, 1, 2
  EXPECT_NE(text.find("    timeCodesPerSecond = 2\n"), std::string::npos);
  EXPECT_NE(text.find("    startTimeCode = 0\n"), std::string::npos);
  EXPECT_NE(text.find("    endTimeCode = 2\n"), std::string::npos);
  EXPECT_NE(text.find("def Xform \"rod_test\""), std::string::npos);
  EXPECT_EQ(text.back(), '\n');

  const std::string rod = prim_block(text, "BasisCurves", "rod");
  ASSERT_FALSE(rod.empty());
  EXPECT_NE(rod.find("uniform token type = \"linear\""), std::string::npos);
  EXPECT_EQ(static_value(rod, "int[] curveVertexCounts"), (std::vector<double>{3}));
  // widths: twice the node radius (the larger of its edges')
  EXPECT_EQ(static_value(rod, "float[] widths"),
            (std::vector<double>{as_float(0.02), as_float(0.04), as_float(0.04)}));
  EXPECT_EQ(static_value(rod, "int[] primvars:node"), (std::vector<double>{0, 1, 2}));

  const auto points = samples(rod, "points");
  ASSERT_EQ(points.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(points[k].first, double(k));
    ASSERT_EQ(points[k].second.size(), 9u);
    for (int d = 0; d < 9; ++d)
      EXPECT_EQ(points[k].second[d], as_float(states[k].q[d])) << "record " << k << " value " << d;
  }
  // every time-sampled attribute has a sample per record, of one value (tuple) per point
  for (const char* attr : {"velocities", "primvars:speed", "primvars:curvature", "primvars:twist",
                           "primvars:twist_angle"}) {
    const auto s = samples(rod, attr);
    ASSERT_EQ(s.size(), 3u) << attr;
    EXPECT_EQ(s[2].second.size(), std::string(attr) == "velocities" ? 9u : 3u) << attr;
  }
  const auto speed = samples(rod, "primvars:speed")[1].second;
  const Real* u = states[1].u.data() + 3;
  EXPECT_EQ(speed[1], as_float(std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])));
  EXPECT_EQ(samples(rod, "primvars:curvature")[0].second,
            (std::vector<double>{0, as_float(0.5), 0}));  // |(0.3, 0.4)| at the centre node
  EXPECT_EQ(samples(rod, "primvars:twist")[0].second, (std::vector<double>{0, as_float(-0.7), 0}));
  // the extent: the points' bounds widened by the radius there
  const auto extent = samples(rod, "extent")[0].second;
  ASSERT_EQ(extent.size(), 6u);
  EXPECT_EQ(extent[0], as_float(states[0].q[0] - 0.01));
  EXPECT_EQ(extent[3], as_float(states[0].q[6] + 0.02));
}

TEST(UsdRecorder, ShellsAreMeshesWithUnitNormalsAndAFaceDensity) {
  ScratchDir dir;
  const Model m = make_rod_and_sheet_model();
  const std::string path = (dir.path() / "both.usda").string();
  record_three(m, dir.str(), path);
  const std::string text = read_text(path);
  EXPECT_FALSE(prim_block(text, "BasisCurves", "rod").empty());
  const std::string sheet = prim_block(text, "Mesh", "sheet");
  ASSERT_FALSE(sheet.empty());
  EXPECT_NE(sheet.find("uniform token subdivisionScheme = \"none\""), std::string::npos);
  EXPECT_EQ(static_value(sheet, "int[] faceVertexCounts"), (std::vector<double>{3, 3}));
  // the sheet's own points: nodes 3-6 as 0-3
  EXPECT_EQ(static_value(sheet, "int[] faceVertexIndices"),
            (std::vector<double>{0, 1, 2, 0, 2, 3}));
  EXPECT_EQ(static_value(sheet, "int[] primvars:node"), (std::vector<double>{3, 4, 5, 6}));
  // area-weighted vertex normals: triangle A = (3, 4, 5) alone at node 4, B = (3, 5, 6) at 6,
  // both at 3 and 5; counter-clockwise about +z, so about +z still after the small shifts
  const auto normals = samples(sheet, "normals");
  ASSERT_EQ(normals.size(), 3u);
  ASSERT_EQ(normals[0].second.size(), 12u);
  const State s0 = make_state(m, 0, 0.013);  // the first record's
  auto x = [&](int n) { return vec3(s0.q[3 * n], s0.q[3 * n + 1], s0.q[3 * n + 2]); };
  const Vec3 na = cross(x(4) - x(3), x(5) - x(3)), nb = cross(x(5) - x(3), x(6) - x(3));
  const Vec3 expected[4] = {na + nb, na, na + nb, nb};
  for (int i = 0; i < 4; ++i) {
    for (int d = 0; d < 3; ++d) {
      // a unit vector's components as floats: within 1e-7
      EXPECT_NEAR(normals[0].second[3 * i + d], expected[i][d] / norm(expected[i]), 1e-7);
    }
    EXPECT_GT(expected[i][2], 0.9 * norm(expected[i]));
  }
  const auto density = samples(sheet, "primvars:bending_energy_density");
  ASSERT_EQ(density.size(), 3u);
  EXPECT_EQ(density[2].second, (std::vector<double>{3.5, 5.0}));  // 1.5 (t + 1) + k, k = 2
  EXPECT_NE(sheet.find("interpolation = \"uniform\""), std::string::npos);
}

TEST(UsdRecorder, PartNamesBecomeUniqueEscapedPrimNames) {
  ScratchDir dir;
  Model m = make_rod_and_sheet_model();
  m.part_name = {"my rod #1", "my rod %1"};  // both escape to my_rod__1
  m.scene.name = "2 rods";
  m.gravity = Vec3{{0, -9.81, 0}};
  const std::string path = (dir.path() / "names.usda").string();
  record_three(m, dir.str(), path);
  const std::string text = read_text(path);
  EXPECT_NE(text.find("defaultPrim = \"_2_rods\""), std::string::npos);
  EXPECT_NE(text.find("def Xform \"_2_rods\""), std::string::npos);
  EXPECT_NE(text.find("def BasisCurves \"my_rod__1\""), std::string::npos);
  EXPECT_NE(text.find("def Mesh \"my_rod__1_2\""), std::string::npos);
  // the part's own name kept in the prim's doc
  EXPECT_NE(text.find("doc = \"part 'my rod #1'\""), std::string::npos);
  EXPECT_NE(text.find("upAxis = \"Y\""), std::string::npos);  // gravity along -y
}

TEST(UsdRecorder, AnAbortedSeriesLeavesNothingAndAnEmptyOneIsAnError) {
  ScratchDir dir;
  const Model m = make_rod_model();
  const std::string path = (dir.path() / "a.usda").string();
  auto rec = make_usd_recorder(path, 0.1);
  rec->begin(m, dir.str());
  rec->record(frame(m, make_state(m, 0, 0)));
  rec->abort();
  EXPECT_TRUE(files_ending(dir.path(), ".part").empty());
  EXPECT_FALSE(fs::exists(path));

  rec->begin(m, dir.str());
  try {
    rec->end();
    ADD_FAILURE() << "a series without records was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no records"), std::string::npos) << e.what();
  }
  rec->abort();
  EXPECT_TRUE(files_ending(dir.path(), ".part").empty());
  EXPECT_FALSE(fs::exists(path));
}

TEST(UsdRecorder, AResumedSeriesEndsAsTheUninterruptedOne) {
  ScratchDir dir;
  const Model m = make_rod_model();
  std::vector<State> states;
  for (int k = 0; k < 4; ++k)
    states.push_back(make_state(m, 0.5 * k, 0.1 * k));
  const std::string whole = (dir.path() / "whole.usda").string();
  {
    auto rec = make_usd_recorder(whole, 0.5);
    rec->begin(m, dir.str());
    for (const State& s : states)
      rec->record(frame(m, s));
    rec->end();
  }
  // a run killed after its fourth record, whose checkpoint was taken after the second
  const std::string path = (dir.path() / "cut.usda").string();
  std::vector<OutputMark> marks;
  {
    auto rec = make_usd_recorder(path, 0.5);
    rec->begin(m, dir.str());
    for (int k = 0; k < 4; ++k) {
      rec->record(frame(m, states[size_t(k)]));
      if (k == 1) marks = rec->marks();
    }
  }  // (killed: the spool stays)
  EXPECT_FALSE(fs::exists(path));
  auto rec = make_usd_recorder(path, 0.5);
  rec->resume(m, dir.str(), marks);
  for (int k = 2; k < 4; ++k)
    rec->record(frame(m, states[size_t(k)]));
  rec->end();
  EXPECT_EQ(read_text(path), read_text(whole));
  EXPECT_TRUE(files_ending(dir.path(), ".part").empty());

  // a run that finished its series (an interrupt completes the outputs) is resumed from the
  // records its file holds: the text read back gives the same floats and times
  {
    auto again = make_usd_recorder(path, 0.5);
    again->resume(m, dir.str(), marks);
    EXPECT_EQ(read_text(path), read_text(whole));  // the finished file stays until the end
    for (int k = 2; k < 4; ++k)
      again->record(frame(m, states[size_t(k)]));
    again->end();
  }
  EXPECT_EQ(read_text(path), read_text(whole));
  EXPECT_TRUE(files_ending(dir.path(), ".part").empty());

  // the file of another model is refused, and left as it was
  Model other = make_rod_and_sheet_model();
  auto wrong = make_usd_recorder(path, 0.5);
  try {
    wrong->resume(other, dir.str(), marks);
    ADD_FAILURE() << "the series of another model was continued";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find(path + "' from the checkpoint: it lacks some of this run's "
                                          "prims"),
        std::string::npos)
        << e.what();
  }
  EXPECT_EQ(read_text(path), read_text(whole));
  EXPECT_TRUE(files_ending(dir.path(), ".part").empty());
}

TEST(UsdExport, VtkFramesExportAsTheRecorderWritesThem) {
  ScratchDir dir;
  Model m = make_rod_and_sheet_model();
  m.scene.name = "pair";
  const std::string recorded = (dir.path() / "recorded.usda").string();
  record_three(m, dir.str(), recorded);
  const UsdExportResult r = export_usd(dir.str());
  EXPECT_EQ(r.frames, 3u);
  EXPECT_EQ(fs::path(r.path), dir.path() / "pair.usda");
  const std::string a = read_text(recorded), b = read_text(r.path);
  // the same prims (named by index without the scene), time codes and values: the frames
  // print 12 digits, more than a float holds, so a value may differ in its last float bit
  for (const auto& [type, name, exported] :
       {std::tuple<std::string, std::string, std::string>{"BasisCurves", "rod", "part_0"},
        {"Mesh", "sheet", "part_1"}}) {
    const std::string pa = prim_block(a, type, name), pb = prim_block(b, type, exported);
    ASSERT_FALSE(pb.empty()) << exported;
    for (const char* attr : {"points", "velocities", "extent", "primvars:speed"}) {
      const auto sa = samples(pa, attr), sb = samples(pb, attr);
      ASSERT_EQ(sa.size(), 3u);
      ASSERT_EQ(sb.size(), 3u);
      for (size_t k = 0; k < 3; ++k) {
        EXPECT_EQ(sa[k].first, sb[k].first);
        ASSERT_EQ(sa[k].second.size(), sb[k].second.size());
        for (size_t i = 0; i < sa[k].second.size(); ++i)
          EXPECT_NEAR(sa[k].second[i], sb[k].second[i], 1.2e-7 * std::fabs(sa[k].second[i]))
              << attr;
      }
    }
  }
  EXPECT_NE(b.find("timeCodesPerSecond = 2\n"), std::string::npos);  // the median spacing
  EXPECT_NE(b.find("defaultPrim = \"pair\""), std::string::npos);
  EXPECT_TRUE(files_ending(dir.path(), ".part").empty());
}

// InputError's message, or "" when none is thrown
template <class F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(UsdExport, BadInputNamesTheFile) {
  ScratchDir dir;
  const std::string missing = (dir.path() / "nowhere").string();
  EXPECT_NE(input_error([&] { export_usd(missing); }).find(missing + ": no such run folder"),
            std::string::npos);
  EXPECT_NE(input_error([&] { export_usd(dir.str()); }).find("no frames to export"),
            std::string::npos);

  // a series that lists no frame
  const fs::path pvd = dir.path() / "empty.pvd";
  std::ofstream(pvd) << "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n"
                        "  <Collection>\n  </Collection>\n</VTKFile>\n";
  EXPECT_NE(input_error([&] { export_usd(dir.str()); }).find("lists no frames"), std::string::npos);
  fs::remove(pvd);

  // a frame cut short, and one that is not there
  const Model m = make_rod_model();
  record_three(m, dir.str(), (dir.path() / "x.usda").string());
  const fs::path f1 = dir.path() / "frames" / "rod_test_000001.vtp";
  std::string text = read_text(f1);
  const size_t pos = text.find("Name=\"position\"");
  ASSERT_NE(pos, std::string::npos);
  std::ofstream(f1, std::ios::trunc) << text.substr(0, pos + 200);
  std::string msg = input_error([&] { export_usd(dir.str()); });
  EXPECT_NE(msg.find(f1.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("cut short"), std::string::npos) << msg;
  fs::remove(f1);
  msg = input_error([&] { export_usd(dir.str()); });
  EXPECT_NE(msg.find(f1.string() + ": cannot open VTK frame"), std::string::npos) << msg;
  // a number that is not one
  std::ofstream(f1) << text.replace(text.find(">", pos) + 1, 0, " 1.5x ");
  msg = input_error([&] { export_usd(dir.str()); });
  EXPECT_NE(msg.find(f1.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("Points/position: not a number: \"1.5x\""), std::string::npos) << msg;
  // nothing written
  EXPECT_FALSE(fs::exists(dir.path() / "rod_test.usda"));
  EXPECT_TRUE(files_ending(dir.path(), ".part").empty());
}

// slender run --usd: the records of a real run, at the VTK frames' cadence
TEST(UsdRecorder, ARunWritesItsRecordsAtTheVtkCadence) {
  ScratchDir dir;
  SceneBuilder b;
  b.name("cantilever");
  const int steel = b.material("steel", 7800, 2e11, 0.3);
  const int rod =
      b.straight_rod("rod", vec3(0, 0, 0), vec3(0.1, 0, 0), 6, steel, SceneBuilder::circle(1e-3));
  b.fix_edge(rod, 0);
  b.gravity(vec3(0, 0, -9.81));
  b.integrator().dt = 1e-3;
  b.integrator().duration = 0.013;
  b.output().dir = dir.str();
  b.output().every = 5;  // records at steps 0, 5, 10 and the last, 13
  Simulator sim(build_model(b.build()));
  RunOptions o;
  o.progress = false;
  o.usd_path = (dir.path() / "usd" / "run.usda").string();  // a folder made for it
  std::ostringstream log;
  const RunResult r = run_simulation(sim, o, log);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_NE(std::find(r.files.begin(), r.files.end(), o.usd_path), r.files.end());
  const std::string text = read_text(o.usd_path);
  EXPECT_NE(text.find("timeCodesPerSecond = 200\n"), std::string::npos);  // 1 / (5 x 1 ms)
  // the last record at 13 ms: 2.6 intervals
  const size_t end = text.find("endTimeCode = ");
  ASSERT_NE(end, std::string::npos);
  EXPECT_NEAR(std::stod(text.substr(end + 14)), 2.6, 1e-12);
  const auto points = samples(prim_block(text, "BasisCurves", "rod"), "points");
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[1].first, 1.0);
  // the last record is the final state
  for (int d = 0; d < 18; ++d)
    EXPECT_EQ(points[3].second[size_t(d)], as_float(sim.state().q[size_t(d)]));
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
