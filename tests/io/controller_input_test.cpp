// Bad controllers (docs/control.md): each fails with an InputError naming the file, the line of
// the entry (or of its field) and the field; those that need the model (the springs, the
// profile's and the gains' sizes, a spring driven twice) fail when the model is built.

#include <gtest/gtest.h>

#include <string>

#include "io_test_util.h"
#include "slender/builder.h"
#include "slender/control.h"
#include "slender/model.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::catch_input_error;

const char* const kFile = "ctl.json";

// a rod of 11 nodes (9 bend stencils, 10 edges) and a valid controller that the cases break
const std::string kHead = R"({
  "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6, "poisson_ratio": 0.5}],
  "rods": [{"name": "rod", "material": "m", "radius": 0.01,
            "shape": {"type": "straight", "start": [0, 0, 0], "end": [1, 0, 0], "nodes": 11}}],
  "boundary": {"fixed_nodes": [{"part": "rod", "nodes": [0]}]},
  "integrator": {"type": "implicit_euler", "dt": 0.01, "duration": 1},
  "controllers": [
)";
const std::string kGood =
    R"(    {"name": "c", "strain": "rod_curvature2", "part": "rod", "amplitude": 1, "kp": 0.5})";

std::string scene(const std::string& entries, const std::string& extra = "") {
  return kHead + entries + "\n  ]" + extra + "\n}";
}

int line_of(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  int line = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i)
    line += text[i] == '\n';
  return line;
}

// the error of reading (and, with build, building) the scene
InputError error_of(const std::string& text, bool build) {
  return catch_input_error([&] {
    const SceneSpec s = read_scene_text(text, kFile, "");
    if (build) build_model(s);
  });
}

void expect_error(const std::string& entries,
                  const std::string& line_needle,
                  const std::string& field,
                  const std::string& message_part,
                  bool build = false,
                  const std::string& extra = "") {
  const std::string text = scene(entries, extra);
  const InputError e = error_of(text, build);
  EXPECT_EQ(e.file(), kFile) << e.what();
  EXPECT_EQ(e.line(), line_of(text, line_needle)) << e.what();
  EXPECT_EQ(e.field(), field) << e.what();
  EXPECT_NE(e.message().find(message_part), std::string::npos) << e.what();
}

TEST(ControllerInput, ValidControllerReadsAndBuilds) {
  const SceneSpec s = read_scene_text(scene(kGood), kFile, "");
  ASSERT_EQ(s.controllers.size(), 1u);
  EXPECT_EQ(s.controllers[0].kp, std::vector<Real>{0.5});
  const auto m = build_model(s);
  StrainController c(m, s.controllers);
  EXPECT_EQ(c.springs(0), 9);
  EXPECT_TRUE(c.reads(StrainKind::kBendTwist));
  EXPECT_FALSE(c.reads(StrainKind::kStretch));
}

TEST(ControllerInput, NegativeGainsAreRefused) {
  expect_error(R"(    {"strain": "rod_curvature2", "part": "rod", "amplitude": 1, "kp": -0.5})",
               "\"strain\"", "controllers[0].kp", "must be >= 0 and finite, got -0.5");
  expect_error(
      R"(    {"strain": "rod_curvature2", "part": "rod", "amplitude": 1, "ki": [1, -2, 1]})",
      "\"strain\"", "controllers[0].ki", "value 1 must be >= 0");
}

TEST(ControllerInput, UnknownPartAndStrainNameTheirField) {
  const std::string bad_part =
      R"(    {"strain": "rod_curvature2",
     "part": "tail", "amplitude": 1})";
  expect_error(bad_part, "\"part\": \"tail\"", "controllers[0].part",
               "unknown part 'tail' (parts: rod)");
  expect_error(R"(    {"strain": "rod_bend", "part": "rod", "amplitude": 1})", "\"strain\"",
               "controllers[0].strain", "unknown strain 'rod_bend'");
  expect_error(R"(    {"strain": "midedge_curvature", "part": "rod", "amplitude": 1})",
               "\"strain\"", "controllers[0].strain", "unknown strain 'midedge_curvature'");
  // a hinge angle on a rod: no hinges
  expect_error(R"(    {"strain": "hinge_angle", "part": "rod", "amplitude": 1})", "\"strain\"",
               "controllers[0].strain", "needs a shell part");
  expect_error(R"(    {"strain": "rod_twist", "part": "rod", "amplitude": 1, "gain": 1})",
               "\"gain\"", "controllers[0].gain", "unknown field");
}

TEST(ControllerInput, SizesAreCheckedAgainstTheSprings) {
  // 9 bend stencils: a profile of 3 values, a kp of 2
  expect_error(
      R"(    {"strain": "rod_curvature1", "part": "rod", "amplitude": 1, "profile": [1, 2, 3]})",
      "\"strain\"", "controllers[0].profile",
      "has 3 values, but the controller of rod_curvature1 drives 9 bend stencils of part 'rod'",
      true);
  expect_error(R"(    {"strain": "rod_stretch", "part": "rod", "amplitude": 0, "kp": [1, 2]})",
               "\"strain\"", "controllers[0].kp", "has 2 values for 10 rod edges", true);
  // a selection that takes no spring
  expect_error(
      R"(    {"strain": "rod_twist", "part": "rod", "amplitude": 1,
     "select": {"point": [5, 0, 0], "normal": [1, 0, 0]}})",
      "\"strain\"", "controllers[0].select", "takes none of the 9", true);
}

TEST(ControllerInput, ASpringTakesOneControllerOrActuation) {
  expect_error(kGood + ",\n" + R"(    {"strain": "rod_curvature2", "part": "rod", "amplitude": 2})",
               "\"amplitude\": 2", "controllers[1].part",
               "bend stencil 0's natural rod_curvature2 is driven by controllers[0] too", true);
  expect_error(kGood, kGood, "controllers[0].part", "is driven by actuation[0] too", true,
               R"(,
  "actuation": [{"target": "rod_curvature2", "part": "rod", "amplitude": 1}])");
  // the other curvature component is another spring
  const std::string text =
      scene(kGood + ",\n" + R"(    {"strain": "rod_curvature1", "part": "rod", "amplitude": 2})");
  EXPECT_NO_THROW(build_model(read_scene_text(text, kFile, "")));
  // two controllers of one name: the second entry's line
  const std::string twice = scene(kGood + ",\n" + kGood);
  const InputError e = error_of(twice, true);
  EXPECT_EQ(e.line(), line_of(twice, kGood) + 1) << e.what();
  EXPECT_EQ(e.field(), "controllers[1].name") << e.what();
  EXPECT_NE(e.message().find("names controller 0 too"), std::string::npos) << e.what();
}

TEST(ControllerInput, LimitsTimesAndModesAreChecked) {
  expect_error(
      R"(    {"strain": "rod_curvature2", "part": "rod", "amplitude": 1, "limits": [2, -2]})",
      "\"strain\"", "controllers[0].limits", "min < max");
  expect_error(
      R"(    {"strain": "rod_stretch", "part": "rod", "amplitude": 0, "limits": [-3, -1.5]})",
      "\"strain\"", "controllers[0].limits", "no positive natural length");
  expect_error(
      R"(    {"strain": "rod_curvature2", "part": "rod", "amplitude": 1, "filter_time": -1})",
      "\"strain\"", "controllers[0].filter_time", "must be >= 0");
  expect_error(
      R"(    {"strain": "rod_curvature2", "part": "rod", "amplitude": 1, "rate_limit": -1})",
      "\"strain\"", "controllers[0].rate_limit", "must be >= 0");
  expect_error(
      R"(    {"strain": "rod_curvature2", "part": "rod", "amplitude": 1, "spatial_smoothing": -2})",
      "\"strain\"", "controllers[0].spatial_smoothing", "must be 0 to 1000 passes");
  expect_error(
      R"(    {"strain": "rod_curvature2", "part": "rod", "amplitude": 1,
     "anti_windup": "reset"})",
      "\"anti_windup\"", "controllers[0].anti_windup", "unknown anti-windup 'reset'");
  expect_error(
      R"(    {"strain": "rod_curvature2", "part": "rod", "amplitude": 1,
     "time": {"type": "ramp", "duration": 0}})",
      "\"strain\"", "controllers[0].time.duration", "must be positive");
  expect_error(R"(    {"strain": "rod_curvature2", "part": "rod"})", "\"strain\"",
               "controllers[0].amplitude", "missing required field");
}

TEST(ControllerInput, ControllersFromTextNameTheirSource) {
  const SceneSpec s = read_scene_text(scene(kGood), kFile, "");
  const std::vector<ControllerSpec> c = read_controllers_text(
      R"([{"strain": "rod_stretch", "part": "rod", "amplitude": -0.1, "ki": 3}])", s, "<py>");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].ki, std::vector<Real>{3});
  const InputError e = catch_input_error([&] {
    read_controllers_text(
        "[\n{\"strain\": \"rod_stretch\", \"part\": \"rod\", \"amplitude\": 0, "
        "\"kp\": -1}]",
        s, "<py>");
  });
  EXPECT_EQ(e.file(), "<py>");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "controllers[0].kp");
  EXPECT_EQ(catch_input_error([&] { read_controllers_text("{}", s, "<py>"); }).field(),
            "controllers");
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
