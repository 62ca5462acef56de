#include "record/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

// everything a Progress wrote to a temporary file
std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  int c;
  while ((c = std::fgetc(f)) != EOF)
    s += char(c);
  return s;
}

int count(const std::string& s, char c) {
  int n = 0;
  for (char x : s)
    n += x == c ? 1 : 0;
  return n;
}

TEST(FormatProgress, BarTimePercentRateAndEta) {
  const std::string line = format_progress(0.5, 1.0, 1234, 1.0, true, 12);
  EXPECT_EQ(line, "[######......]  t = 0.50 / 1.00 s  (50%)  1234 steps/s  ETA 1 s");
}

TEST(FormatProgress, PlainLineHasNoBar) {
  const std::string line = format_progress(2.5, 10.0, 500, 4.0, false);
  EXPECT_EQ(line, "t = 2.50 / 10.00 s  (25%)  125 steps/s  ETA 12 s");
}

TEST(FormatProgress, ShortRunsGetMoreDecimals) {
  const std::string line = format_progress(0.0025, 0.01, 10, 2.0, false);
  EXPECT_EQ(line.substr(0, 24), "t = 0.0025 / 0.0100 s  (");
}

TEST(FormatProgress, FullBarAtTheEnd) {
  const std::string line = format_progress(1.0, 1.0, 100, 10.0, true, 4);
  EXPECT_EQ(line, "[####]  t = 1.00 / 1.00 s  (100%)  10 steps/s  ETA 0 s");
}

TEST(FormatProgress, NothingMeasuredYet) {
  const std::string line = format_progress(0, 1.0, 0, 0.0, true, 4);
  EXPECT_EQ(line, "[....]  t = 0.00 / 1.00 s  (0%)  ETA ?");
}

TEST(FormatDuration, SecondsMinutesHours) {
  EXPECT_EQ(format_duration(3.2), "3 s");
  EXPECT_EQ(format_duration(125), "2 min 05 s");
  EXPECT_EQ(format_duration(3780), "1 h 03 min");
}

TEST(Progress, ShortRunsStaySilent) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  Progress p(f, true);
  p.start(1.0);
  p.update_at(0.5, 10, 0.5);
  p.update_at(1.0, 20, 1.9);
  p.finish();
  EXPECT_FALSE(p.printed());
  EXPECT_EQ(contents(f), "");
  std::fclose(f);
}

TEST(Progress, TerminalRewritesOneLineAtMostTenTimesASecond) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  Progress p(f, true);
  p.start(1.0);
  p.update_at(0.5, 100, 2.5);    // printed
  p.update_at(0.55, 110, 2.55);  // too soon
  p.update_at(0.6, 120, 2.7);    // printed
  p.finish();                    // final rewrite and newline
  const std::string out = contents(f);
  EXPECT_EQ(count(out, '\r'), 3);
  EXPECT_EQ(count(out, '\n'), 1);
  EXPECT_EQ(out.back(), '\n');
  EXPECT_NE(out.find("(60%)"), std::string::npos);
  EXPECT_EQ(out.find("(55%)"), std::string::npos);
  std::fclose(f);
}

TEST(Progress, PlainLinesAtMostEveryTenSeconds) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  Progress p(f, false);
  p.start(10.0);
  p.update_at(1.0, 10, 3.0);   // printed
  p.update_at(2.0, 20, 8.0);   // too soon
  p.update_at(5.0, 50, 13.5);  // printed
  p.finish();                  // adds nothing
  const std::string out = contents(f);
  EXPECT_EQ(count(out, '\n'), 2);
  EXPECT_EQ(count(out, '\r'), 0);
  EXPECT_EQ(out.find('['), std::string::npos);
  std::fclose(f);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
