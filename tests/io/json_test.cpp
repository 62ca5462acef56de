#include "io/json.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "io_test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

using test::catch_input_error;

InputError parse_error(const std::string& text) {
  return catch_input_error([&] { parse_json(text, "t.json"); });
}

TEST(Json, ParsesEveryTypeWithLinesAndColumns) {
  const std::string text =
      "{\n"
      "  \"n\": null, \"t\": true, \"f\": false,\n"
      "  \"x\": -12.5e-1,\n"
      "  \"s\": \"hi\",\n"
      "  \"a\": [1, [2], {}],\n"
      "  \"o\": {\"k\": 0}\n"
      "}\n";
  const JsonValue v = parse_json(text, "t.json");
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.line, 1);
  EXPECT_EQ(v.column, 1);
  ASSERT_EQ(v.object.size(), 7u);
  EXPECT_TRUE(v.find("n")->is_null());
  EXPECT_TRUE(v.find("t")->boolean);
  EXPECT_FALSE(v.find("f")->boolean);
  EXPECT_TRUE(v.find("f")->is_bool());
  EXPECT_DOUBLE_EQ(v.find("x")->number, -1.25);
  EXPECT_EQ(v.find("x")->line, 3);
  EXPECT_EQ(v.find("x")->column, 8);
  EXPECT_EQ(v.find("s")->string, "hi");
  const JsonValue& a = *v.find("a");
  ASSERT_EQ(a.array.size(), 3u);
  EXPECT_EQ(a.line, 5);
  EXPECT_EQ(a.array[1].array[0].number, 2);
  EXPECT_TRUE(a.array[2].is_object());
  EXPECT_EQ(v.find("o")->find("k")->line, 6);
  EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(Json, KeepsKeyOrderAndKeyLines) {
  const JsonValue v = parse_json("{\"b\": 1,\n\"a\": 2,\n\n\"c\": 3}", "t.json");
  ASSERT_EQ(v.object.size(), 3u);
  EXPECT_EQ(v.object[0].key, "b");
  EXPECT_EQ(v.object[1].key, "a");
  EXPECT_EQ(v.object[2].key, "c");
  EXPECT_EQ(v.object[0].line, 1);
  EXPECT_EQ(v.object[1].line, 2);
  EXPECT_EQ(v.object[2].line, 4);
}

TEST(Json, DecodesEscapesAndUnicode) {
  const JsonValue v =
      parse_json(R"(["a\"b\\c\/d\b\f\n\r\t", "\u00e9", "\u20AC", "\ud83d\ude00", "\u0000"])", "");
  EXPECT_EQ(v.array[0].string, "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(v.array[1].string, "\xC3\xA9");
  EXPECT_EQ(v.array[2].string, "\xE2\x82\xAC");
  EXPECT_EQ(v.array[3].string, "\xF0\x9F\x98\x80");
  EXPECT_EQ(v.array[4].string, std::string(1, '\0'));
  // raw UTF-8 passes through
  EXPECT_EQ(parse_json("\"\xC3\xA9\"", "").string, "\xC3\xA9");
}

TEST(Json, AcceptsValidNumbers) {
  const JsonValue v = parse_json("[0, -0, 1.5e3, 1E-2, -12.25, 1e+2, 123456789012, 1e-400]", "");
  EXPECT_EQ(v.array[0].number, 0);
  EXPECT_EQ(v.array[2].number, 1500);
  EXPECT_DOUBLE_EQ(v.array[3].number, 0.01);
  EXPECT_EQ(v.array[4].number, -12.25);
  EXPECT_EQ(v.array[5].number, 100);
  EXPECT_EQ(v.array[6].number, 123456789012.0);
  EXPECT_EQ(v.array[7].number, 0);  // underflow rounds to zero
}

TEST(Json, RejectsBadNumbers) {
  for (const char* bad : {"01", "1.", ".5", "+1", "1e", "1e+", "-", "0x10", "1.e3", "- 1"}) {
    const InputError e = parse_error(std::string("[") + bad + "]");
    EXPECT_EQ(e.line(), 1) << bad;
    EXPECT_NE(e.message().find("malformed JSON"), std::string::npos) << bad;
  }
}

TEST(Json, RejectsNanInfinityAndOverflow) {
  for (const char* bad : {"NaN", "Infinity", "-Infinity", "nan", "inf"}) {
    const InputError e = parse_error(std::string("{\"x\":\n") + bad + "}");
    EXPECT_EQ(e.line(), 2) << bad;
  }
  EXPECT_NE(parse_error("[NaN]").message().find("NaN and Infinity"), std::string::npos);
  const InputError e = parse_error("[1e400]");
  EXPECT_NE(e.message().find("out of range"), std::string::npos);
}

TEST(Json, MalformedErrorNamesFileAndLine) {
  const InputError e = parse_error("{\n  \"a\": 1\n  \"b\": 2\n}\n");
  EXPECT_EQ(e.file(), "t.json");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.field(), "");
  EXPECT_EQ(e.message(), "malformed JSON: expected ',' or '}' after an object member, got '\"'");
  EXPECT_EQ(std::string(e.what()),
            "t.json:3: malformed JSON: expected ',' or '}' after an object member, got '\"'");

  const InputError arr = parse_error("[1,\n2\n3]");
  EXPECT_EQ(arr.line(), 3);
  EXPECT_NE(arr.message().find("expected ',' or ']'"), std::string::npos);
}

TEST(Json, RejectsDuplicateKeysNamingThePath) {
  const InputError e = parse_error("{\"a\": {\"b\": 1,\n \"b\": 2}}");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "a.b");
  EXPECT_NE(e.message().find("duplicate key (first at line 1)"), std::string::npos);
  EXPECT_EQ(parse_error("[{}, {\"k\": 1, \"k\": 1}]").field(), "[1].k");
}

// issue 18, fault 4: the duplicate check of a large object is a hash lookup (it compared every
// key with every earlier one: 200k keys took 108 s); a duplicate far into one is still named
TEST(Json, LargeObjectsAreCheckedForDuplicatesInLinearTime) {
  const int n = 200000;
  std::string text = "{";
  for (int i = 0; i < n; ++i)
    text += (i ? ",\n\"k" : "\"k") + std::to_string(i) + "\": " + std::to_string(i);
  const JsonValue v = parse_json(text + "}", "t.json");
  ASSERT_EQ(v.object.size(), size_t(n));
  EXPECT_EQ(v.object[n - 1].key, "k" + std::to_string(n - 1));
  const InputError e = parse_error(text + ",\n\"k17\": 0}");
  EXPECT_EQ(e.line(), n + 1);
  EXPECT_EQ(e.field(), "k17");
  EXPECT_NE(e.message().find("duplicate key (first at line 18)"), std::string::npos);
  // below the hashed size too, and a key repeated just after the map is built
  EXPECT_EQ(parse_error("{\"a\": 1, \"b\": 2, \"a\": 3}").field(), "a");
  std::string sixteen = "{";
  for (int i = 0; i < 16; ++i)
    sixteen += "\"k" + std::to_string(i) + "\": 0, ";
  EXPECT_EQ(parse_error(sixteen + "\"k15\": 1}").field(), "k15");
  EXPECT_EQ(parse_error(sixteen + "\"x\": 1, \"x\": 2}").field(), "x");
}

// issue 18, fault 5: a document's values are counted as they are read, so that memory stays
// bounded (a 100 MB file took 7.2 GB before it was rejected); at the limit it parses, one more
// is an error naming the line where the limit was passed
TEST(Json, TheNumberOfValuesIsLimited) {
  const std::string six = "[1,\n2,\n[3,\n4]]";  // six values (two arrays), on four lines
  EXPECT_EQ(parse_json(six, "t.json", 6).array.size(), 3u);
  const InputError e = catch_input_error([&] { parse_json(six, "t.json", 5); });
  EXPECT_EQ(e.line(), 4);
  EXPECT_NE(e.message().find("more than 5 values"), std::string::npos);
  // the default limit, with a document just over it
  std::string big = "[";
  big.reserve(size_t(2 * kMaxJsonValues) + 2);
  for (long i = 0; i < kMaxJsonValues; ++i)
    big += "0,";
  big += "0]";
  const InputError b = parse_error(big);
  EXPECT_NE(b.message().find("more than " + std::to_string(kMaxJsonValues) + " values"),
            std::string::npos);
}

TEST(Json, RejectsTrailingGarbageCommasAndComments) {
  EXPECT_NE(parse_error("{} x").message().find("after the JSON value"), std::string::npos);
  EXPECT_NE(parse_error("{}{}").message().find("after the JSON value"), std::string::npos);
  EXPECT_NE(parse_error("[1, 2,]").message().find("trailing commas"), std::string::npos);
  EXPECT_NE(parse_error("{\"a\": 1,}").message().find("trailing commas"), std::string::npos);
  const InputError c = parse_error("{\n// note\n\"a\": 1}");
  EXPECT_EQ(c.line(), 2);
  EXPECT_NE(c.message().find("comments are not allowed"), std::string::npos);
  EXPECT_NE(parse_error("[1 /* x */]").message().find("comments"), std::string::npos);
  EXPECT_NE(parse_error("{a: 1}").message().find("expected a string key"), std::string::npos);
  EXPECT_NE(parse_error("['a']").message().find("expected a value"), std::string::npos);
  EXPECT_NE(parse_error("[True]").message().find("lowercase"), std::string::npos);
}

TEST(Json, RejectsEmptyDocuments) {
  for (const char* text : {"", " ", "\n\n  \t\n"}) {
    const InputError e = parse_error(text);
    EXPECT_NE(e.message().find("empty document"), std::string::npos);
  }
  // a byte order mark alone is empty too, and before a value it is skipped
  EXPECT_NE(parse_error("\xEF\xBB\xBF").message().find("empty"), std::string::npos);
  EXPECT_TRUE(parse_json("\xEF\xBB\xBF{}", "").is_object());
}

TEST(Json, RejectsBadStrings) {
  const InputError open = parse_error("{\"a\":\n \"abc");
  EXPECT_EQ(open.line(), 2);
  EXPECT_NE(open.message().find("unterminated string"), std::string::npos);
  EXPECT_NE(parse_error("[\"a\nb\"]").message().find("unterminated"), std::string::npos);
  EXPECT_NE(parse_error("[\"a\tb\"]").message().find("control character"), std::string::npos);
  EXPECT_NE(parse_error(R"(["\x"])").message().find("bad escape"), std::string::npos);
  EXPECT_NE(parse_error(R"(["\u12"])").message().find("hex digits"), std::string::npos);
  EXPECT_NE(parse_error(R"(["\ude00"])").message().find("surrogate"), std::string::npos);
  EXPECT_NE(parse_error(R"(["\ud83d"])").message().find("surrogate"), std::string::npos);
  EXPECT_NE(parse_error(R"(["\ud83dx"])").message().find("surrogate"), std::string::npos);
  EXPECT_NE(parse_error(R"(["\ud83d\u0041"])").message().find("surrogate"), std::string::npos);
}

TEST(Json, NestingIsLimited) {
  auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_NO_THROW(parse_json(nested(kMaxJsonDepth + 1), ""));
  EXPECT_NE(parse_error(nested(kMaxJsonDepth + 2)).message().find("nesting deeper"),
            std::string::npos);
  // far too deep, and unclosed: an error, not a stack overflow
  EXPECT_NE(parse_error(std::string(1000000, '[')).message().find("nesting deeper"),
            std::string::npos);
  std::string objects;
  for (int i = 0; i < 100000; ++i) {
    objects += "{\"a\":";
  }
  EXPECT_NE(parse_error(objects).message().find("nesting deeper"), std::string::npos);
}

const char* const kSample = R"({
  "name": "x", "list": [1, -2.5e3, true, false, null, "s\u00e9"],
  "nested": {"a": [[0, 1], {"b": "c"}], "e": {}}
})";

TEST(Json, EveryTruncationIsAnErrorNeverACrash) {
  const std::string text = kSample;
  ASSERT_NO_THROW(parse_json(text, ""));
  for (size_t n = 0; n < text.size(); ++n) {
    const InputError e = parse_error(text.substr(0, n));
    EXPECT_GE(e.line(), 1) << n;
  }
}

TEST(Json, RandomBytesAndMutationsOnlyEverThrowInputError) {
  std::mt19937_64 rng(1234);
  auto check = [](const std::string& text) {
    try {
      parse_json(text, "fuzz");
    } catch (const InputError&) {
    } catch (...) {
      ADD_FAILURE() << "unexpected exception";
    }
  };
  // binary garbage of random lengths
  for (int k = 0; k < 2000; ++k) {
    std::string s(rng() % 64, '\0');
    for (char& c : s) {
      c = char(rng() & 0xff);
    }
    check(s);
  }
  // single-byte mutations of a valid document
  const std::string alphabet = "{}[],:\"\\-+.0123456789eEtfnul \n\x01\xff";
  const std::string text = kSample;
  for (int k = 0; k < 5000; ++k) {
    std::string s = text;
    for (int m = 0; m < 1 + int(rng() % 3); ++m) {
      s[rng() % s.size()] = alphabet[rng() % alphabet.size()];
    }
    check(s);
  }
}

// ---- typed access ------------------------------------------------------------------------

const char* const kTyped = R"({
  "rods": [
    {},
    {"shape": {"nodes": 2.5, "start": [0, 0], "end": [0, "1", 0], "ok": [1, 2, 3],
               "name": 7, "flag": 1}}
  ]
})";

TEST(JsonObject, TypeErrorsNameTheJsonPathAndLine) {
  const JsonValue root = parse_json(kTyped, "t.json");
  const JsonValue& shape_value = *root.find("rods")->array[1].find("shape");
  const JsonObject shape(shape_value, "t.json", "rods[1].shape");

  InputError e = catch_input_error([&] { shape.integer("nodes"); });
  EXPECT_EQ(e.file(), "t.json");
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.field(), "rods[1].shape.nodes");
  EXPECT_EQ(e.message(), "expected an integer, got 2.5");

  e = catch_input_error([&] { shape.vec3("start"); });
  EXPECT_EQ(e.field(), "rods[1].shape.start");
  EXPECT_EQ(e.message(), "expected an array of 3 numbers, got an array of 2");
  e = catch_input_error([&] { shape.vec3("end"); });
  EXPECT_EQ(e.field(), "rods[1].shape.end[1]");
  EXPECT_EQ(e.message(), "expected a number, got a string");
  e = catch_input_error([&] { shape.string("name"); });
  EXPECT_EQ(e.line(), 5);
  EXPECT_EQ(e.message(), "expected a string, got a number");
  e = catch_input_error([&] { shape.boolean("flag"); });
  EXPECT_EQ(e.message(), "expected true or false, got a number");
  e = catch_input_error([&] { shape.object("ok"); });
  EXPECT_EQ(e.message(), "expected an object, got an array");
  e = catch_input_error([&] { shape.number("radius"); });
  EXPECT_EQ(e.line(), 4);  // the object's line
  EXPECT_EQ(e.field(), "rods[1].shape.radius");
  EXPECT_EQ(e.message(), "missing required field");

  const Vec3 ok = shape.vec3("ok");
  EXPECT_EQ(ok[2], 3);
  EXPECT_EQ(shape.number_or("radius", 0.5), 0.5);
  EXPECT_EQ(shape.integer_or("count", 7), 7);
  EXPECT_TRUE(shape.boolean_or("other", true));
  EXPECT_EQ(shape.string_or("label", "d"), "d");
}

TEST(JsonObject, UnknownFieldsAreErrors) {
  const JsonValue root = parse_json("{\"radius\": 1,\n \"raduis\": 2}", "t.json");
  const JsonObject o(root, "t.json", "rods[0]");
  const InputError e = catch_input_error([&] { o.allow_only({"radius", "material"}); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "rods[0].raduis");
  EXPECT_EQ(e.message(), "unknown field (expected one of: radius, material)");
  EXPECT_NO_THROW(o.allow_only({"radius", "raduis"}));
}

TEST(JsonObject, IntegersMustFitAnInt) {
  const JsonValue v = parse_json("[3e9, -7, 1e2]", "");
  EXPECT_THROW(json_int(v.array[0], "", "x"), InputError);
  EXPECT_EQ(json_int(v.array[1], "", "x"), -7);
  EXPECT_EQ(json_int(v.array[2], "", "x"), 100);
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
