#pragma once

// A small JSON reader for scene files. Every value remembers the 1-based line and column where
// it starts, so that the scene reader can report "file:line: field: message". Strict RFC 8259:
// no comments, no trailing commas, no NaN or Infinity, no duplicate keys, nothing after the
// top-level value. Numbers are doubles.

#include <initializer_list>
#include <string>
#include <vector>

#include "slender/core/small.h"

namespace slender {

enum class JsonType { kNull, kBool, kNumber, kString, kArray, kObject };

struct JsonMember;

/// One parsed JSON value with its position in the text.
struct JsonValue {
  JsonType type = JsonType::kNull;
  int line = 0;    ///< 1-based line of the first character
  int column = 0;  ///< 1-based column (in bytes) of the first character
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::vector<JsonMember> object;  ///< members in the order of the text

  bool is_null() const { return type == JsonType::kNull; }
  bool is_bool() const { return type == JsonType::kBool; }
  bool is_number() const { return type == JsonType::kNumber; }
  bool is_string() const { return type == JsonType::kString; }
  bool is_array() const { return type == JsonType::kArray; }
  bool is_object() const { return type == JsonType::kObject; }
  /// the member value of an object, or nullptr (also when this is not an object)
  const JsonValue* find(const std::string& key) const;
};

struct JsonMember {
  std::string key;
  int line = 0;  ///< line of the key
  int column = 0;
  JsonValue value;
};

/// nesting deeper than this is rejected (a scene needs about 6 levels)
constexpr int kMaxJsonDepth = 128;
/// a document of more values than this is rejected as it is read, before its memory grows
/// (about 100 bytes a value): large geometry belongs in OBJ, PLY or text files, which a scene
/// names (docs/scene_format.md)
constexpr long kMaxJsonValues = 2L << 20;
/// a scene file longer than this is rejected before it is read [bytes]
constexpr long kMaxSceneFileBytes = 64L << 20;

/// Parses a whole document. Throws InputError(file, line, path, "malformed JSON: ...").
/// max_values: the most values it may hold (kMaxJsonValues; tests give less).
JsonValue parse_json(const std::string& text,
                     const std::string& file,
                     long max_values = kMaxJsonValues);

/// "object", "array", "number", ... for messages
const char* json_type_name(JsonType t);

// typed access to single values; type errors name `path` and the value's line
[[noreturn]] void json_fail(const std::string& file,
                            const JsonValue& v,
                            const std::string& path,
                            const std::string& message);
double json_number(const JsonValue& v, const std::string& file, const std::string& path);
int json_int(const JsonValue& v, const std::string& file, const std::string& path);
bool json_bool(const JsonValue& v, const std::string& file, const std::string& path);
const std::string& json_string(const JsonValue& v,
                               const std::string& file,
                               const std::string& path);
Vec3 json_vec3(const JsonValue& v, const std::string& file, const std::string& path);
/// an array of exactly n numbers
std::vector<double> json_numbers(const JsonValue& v,
                                 const std::string& file,
                                 const std::string& path,
                                 int n);
const JsonValue& json_array(const JsonValue& v, const std::string& file, const std::string& path);

/// A JSON object seen from the scene reader: typed, located access to its fields.
class JsonObject {
 public:
  /// throws when v is not an object
  JsonObject(const JsonValue& v, std::string file, std::string path);

  const JsonValue& value() const { return *v_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  int line() const { return v_->line; }
  /// path of a member: "rods[1].shape" + "nodes" -> "rods[1].shape.nodes"
  std::string path_of(const std::string& key) const;

  /// throws "unknown field" for the first key not in `allowed` (catches typos)
  void allow_only(std::initializer_list<const char*> allowed) const;
  void allow_only(const std::vector<const char*>& allowed) const;

  bool has(const std::string& key) const { return v_->find(key) != nullptr; }
  const JsonValue* find(const std::string& key) const { return v_->find(key); }
  /// the member, or "missing required field" at this object's line
  const JsonValue& require(const std::string& key) const;

  double number(const std::string& key) const;
  double number_or(const std::string& key, double fallback) const;
  int integer(const std::string& key) const;
  int integer_or(const std::string& key, int fallback) const;
  bool boolean(const std::string& key) const;
  bool boolean_or(const std::string& key, bool fallback) const;
  std::string string(const std::string& key) const;
  std::string string_or(const std::string& key, const std::string& fallback) const;
  Vec3 vec3(const std::string& key) const;
  Vec3 vec3_or(const std::string& key, const Vec3& fallback) const;
  const JsonValue& array(const std::string& key) const;
  JsonObject object(const std::string& key) const;

  /// an InputError at the line of `key` (or of the object when absent), field path_of(key)
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

 private:
  const JsonValue* v_;
  std::string file_;
  std::string path_;
};

}  // namespace slender
