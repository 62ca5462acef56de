#include "io/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <unordered_map>
#include <utility>

#include "slender/core/error.h"

namespace slender {

const JsonValue* JsonValue::find(const std::string& key) const {
  for (const JsonMember& m : object) {
    if (m.key == key) {
      return &m.value;
    }
  }
  return nullptr;
}

const char* json_type_name(JsonType t) {
  switch (t) {
    case JsonType::kNull:
      return "null";
    case JsonType::kBool:
      return "a boolean";
    case JsonType::kNumber:
      return "a number";
    case JsonType::kString:
      return "a string";
    case JsonType::kArray:
      return "an array";
    case JsonType::kObject:
      return "an object";
  }
  return "a value";
}

namespace {

std::string member_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string element_path(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// recursive-descent parser over the whole text; line and column follow `pos_`
class Parser {
 public:
  Parser(const std::string& text, const std::string& file, long max_values)
      : text_(text), file_(file), max_values_(max_values) {}

  JsonValue parse_document() {
    // a UTF-8 byte order mark may precede the text (RFC 8259, section 8.1)
    if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0) {
      pos_ = 3;
    }
    skip_space();
    if (at_end()) {
      fail("empty document");
    }
    JsonValue v = parse_value(0, "");
    skip_space();
    if (!at_end()) {
      fail("unexpected " + describe_here() + " after the JSON value");
    }
    return v;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }
  int column() const { return int(pos_ - line_start_) + 1; }

  [[noreturn]] void fail(const std::string& message) const { fail_at(line_, message); }
  [[noreturn]] void fail_at(int line, const std::string& message) const {
    throw InputError(file_, line, "", "malformed JSON: " + message);
  }

  // what is at the current position, for messages: 'x', end of input or a byte value
  std::string describe_here() const {
    if (at_end()) {
      return "end of input";
    }
    const unsigned char c = static_cast<unsigned char>(peek());
    if (c >= 0x20 && c < 0x7f) {
      return std::string("'") + char(c) + "'";
    }
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02x", unsigned(c));
    return buf;
  }

  void skip_space() {
    while (!at_end()) {
      const char c = peek();
      if (c == '\n') {
        ++pos_;
        ++line_;
        line_start_ = pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() &&
                 (text_[pos_ + 1] == '/' || text_[pos_ + 1] == '*')) {
        fail("comments are not allowed in JSON");
      } else {
        return;
      }
    }
  }

  JsonValue parse_value(int depth, const std::string& path) {
    if (depth > kMaxJsonDepth) {
      fail("nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    if (at_end()) {
      fail("expected a value, got end of input");
    }
    if (++values_ > max_values_) {
      fail("more than " + std::to_string(max_values_) +
           " values in one scene file (large geometry belongs in OBJ, PLY or text files that the "
           "scene names)");
    }
    JsonValue v;
    v.line = line_;
    v.column = column();
    const char c = peek();
    if (c == '{') {
      parse_object(v, depth, path);
    } else if (c == '[') {
      parse_array(v, depth, path);
    } else if (c == '"') {
      v.type = JsonType::kString;
      v.string = parse_string();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.type = JsonType::kNumber;
      v.number = parse_number();
    } else if (c == 't') {
      expect_word("true");
      v.type = JsonType::kBool;
      v.boolean = true;
    } else if (c == 'f') {
      expect_word("false");
      v.type = JsonType::kBool;
    } else if (c == 'n') {
      expect_word("null");
    } else if (c == 'N' || c == 'I') {
      fail("NaN and Infinity are not JSON numbers");
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      fail("expected a value, got " + describe_here() +
           " (strings need double quotes; true, false and null are lowercase)");
    } else {
      fail("expected a value, got " + describe_here());
    }
    return v;
  }

  void expect_word(const char* word) {
    const std::string w(word);
    if (text_.compare(pos_, w.size(), w) != 0) {
      fail("expected a value, got " + describe_here() + " (true, false and null are lowercase)");
    }
    pos_ += w.size();
  }

  // a key seen before in this object is an error; objects of many members look keys up in a
  // hash map of their positions (built at kHashedKeys members), small ones compare them all
  static constexpr size_t kHashedKeys = 16;
  void check_unique(const JsonValue& v,
                    const JsonMember& m,
                    std::unordered_map<std::string, size_t>& keys,
                    const std::string& path) const {
    const JsonMember* other = nullptr;
    if (v.object.size() < kHashedKeys) {
      for (const JsonMember& o : v.object)
        if (o.key == m.key) other = &o;
    } else {
      if (keys.empty()) {
        for (size_t i = 0; i < v.object.size(); ++i)
          keys.emplace(v.object[i].key, i);
      }
      const auto it = keys.find(m.key);
      if (it != keys.end()) other = &v.object[it->second];
    }
    if (other) {
      throw InputError(file_, m.line, member_path(path, m.key),
                       "duplicate key (first at line " + std::to_string(other->line) + ")");
    }
  }

  void parse_object(JsonValue& v, int depth, const std::string& path) {
    v.type = JsonType::kObject;
    std::unordered_map<std::string, size_t> keys;  // the members' positions (from kHashedKeys)
    ++pos_;                                        // '{'
    skip_space();
    if (!at_end() && peek() == '}') {
      ++pos_;
      return;
    }
    while (true) {
      if (at_end() || peek() != '"') {
        const bool trailing = !v.object.empty() && !at_end() && peek() == '}';
        fail("expected a string key, got " + describe_here() +
             (trailing ? " (trailing commas are not allowed)" : ""));
      }
      JsonMember m;
      m.line = line_;
      m.column = column();
      m.key = parse_string();
      check_unique(v, m, keys, path);
      skip_space();
      if (at_end() || peek() != ':') {
        fail("expected ':' after the key \"" + m.key + "\", got " + describe_here());
      }
      ++pos_;
      skip_space();
      m.value = parse_value(depth + 1, member_path(path, m.key));
      v.object.push_back(std::move(m));
      if (!keys.empty()) keys.emplace(v.object.back().key, v.object.size() - 1);
      skip_space();
      if (!at_end() && peek() == ',') {
        ++pos_;
        skip_space();
        continue;
      }
      if (!at_end() && peek() == '}') {
        ++pos_;
        return;
      }
      fail("expected ',' or '}' after an object member, got " + describe_here());
    }
  }

  void parse_array(JsonValue& v, int depth, const std::string& path) {
    v.type = JsonType::kArray;
    ++pos_;  // '['
    skip_space();
    if (!at_end() && peek() == ']') {
      ++pos_;
      return;
    }
    while (true) {
      if (!at_end() && peek() == ']') {
        fail("expected a value, got ']' (trailing commas are not allowed)");
      }
      v.array.push_back(parse_value(depth + 1, element_path(path, v.array.size())));
      skip_space();
      if (!at_end() && peek() == ',') {
        ++pos_;
        skip_space();
        continue;
      }
      if (!at_end() && peek() == ']') {
        ++pos_;
        return;
      }
      fail("expected ',' or ']' after an array element, got " + describe_here());
    }
  }

  double parse_number() {
    const size_t start = pos_;
    auto digits = [&]() {
      size_t n = 0;
      while (!at_end() && peek() >= '0' && peek() <= '9') {
        ++pos_;
        ++n;
      }
      return n;
    };
    if (peek() == '-') {
      ++pos_;
      if (!at_end() && (peek() == 'I' || peek() == 'N')) {
        fail("NaN and Infinity are not JSON numbers");
      }
    }
    if (at_end() || !(peek() >= '0' && peek() <= '9')) {
      fail("expected a digit, got " + describe_here());
    }
    if (peek() == '0') {
      ++pos_;
      if (!at_end() && peek() >= '0' && peek() <= '9') {
        fail("leading zeros are not allowed");
      }
    } else {
      digits();
    }
    if (!at_end() && peek() == '.') {
      ++pos_;
      if (digits() == 0) {
        fail("expected a digit after '.', got " + describe_here());
      }
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      ++pos_;
      if (!at_end() && (peek() == '+' || peek() == '-')) {
        ++pos_;
      }
      if (digits() == 0) {
        fail("expected a digit in the exponent, got " + describe_here());
      }
    }

    // the grammar above is stricter than from_chars, which then only converts
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    double x = 0;
    const auto r = std::from_chars(first, last, x);
    if (r.ec == std::errc::result_out_of_range) {
      // overflow is an error; underflow rounds towards zero as strtod does
      x = std::strtod(std::string(first, last).c_str(), nullptr);
      if (!std::isfinite(x)) {
        fail("number " + std::string(first, last) + " is out of range");
      }
    } else if (r.ec != std::errc() || r.ptr != last) {
      fail("bad number " + std::string(first, last));
    }
    return x;
  }

  unsigned parse_hex4() {
    unsigned u = 0;
    for (int k = 0; k < 4; ++k) {
      if (at_end()) {
        fail("unterminated \\u escape");
      }
      const char c = peek();
      u <<= 4;
      if (c >= '0' && c <= '9') {
        u |= unsigned(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        u |= unsigned(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        u |= unsigned(c - 'A' + 10);
      } else {
        fail("expected 4 hex digits after \\u, got " + describe_here());
      }
      ++pos_;
    }
    return u;
  }

  static void append_utf8(std::string& s, unsigned cp) {
    if (cp < 0x80) {
      s += char(cp);
    } else if (cp < 0x800) {
      s += char(0xC0 | (cp >> 6));
      s += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += char(0xE0 | (cp >> 12));
      s += char(0x80 | ((cp >> 6) & 0x3F));
      s += char(0x80 | (cp & 0x3F));
    } else {
      s += char(0xF0 | (cp >> 18));
      s += char(0x80 | ((cp >> 12) & 0x3F));
      s += char(0x80 | ((cp >> 6) & 0x3F));
      s += char(0x80 | (cp & 0x3F));
    }
  }

  std::string parse_string() {
    const int start_line = line_;
    ++pos_;  // opening quote
    std::string s;
    while (true) {
      if (at_end()) {
        fail_at(start_line, "unterminated string");
      }
      const unsigned char c = static_cast<unsigned char>(peek());
      if (c == '"') {
        ++pos_;
        return s;
      }
      if (c < 0x20) {
        if (c == '\n') {
          fail_at(start_line, "unterminated string (a line break inside a string)");
        }
        fail("control character " + describe_here() + " inside a string (escape it)");
      }
      if (c != '\\') {
        s += char(c);
        ++pos_;
        continue;
      }
      ++pos_;
      if (at_end()) {
        fail_at(start_line, "unterminated string");
      }
      const char e = peek();
      ++pos_;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          s += e;
          break;
        case 'b':
          s += '\b';
          break;
        case 'f':
          s += '\f';
          break;
        case 'n':
          s += '\n';
          break;
        case 'r':
          s += '\r';
          break;
        case 't':
          s += '\t';
          break;
        case 'u':
          append_utf8(s, parse_code_point());
          break;
        default:
          --pos_;
          fail("bad escape sequence in a string: backslash then " + describe_here());
      }
    }
  }

  // \uXXXX, with a surrogate pair for code points above U+FFFF
  unsigned parse_code_point() {
    const unsigned hi = parse_hex4();
    if (hi >= 0xDC00 && hi <= 0xDFFF) {
      fail("lone low surrogate in a \\u escape");
    }
    if (hi < 0xD800 || hi > 0xDBFF) {
      return hi;
    }
    if (text_.compare(pos_, 2, "\\u") != 0) {
      fail("high surrogate without a following \\u escape");
    }
    pos_ += 2;
    const unsigned lo = parse_hex4();
    if (lo < 0xDC00 || lo > 0xDFFF) {
      fail("high surrogate not followed by a low surrogate");
    }
    return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
  }

  const std::string& text_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_ = 1;
  long max_values_;
  long values_ = 0;  // values parsed so far
  size_t line_start_ = 0;
};

}  // namespace

JsonValue parse_json(const std::string& text, const std::string& file, long max_values) {
  return Parser(text, file, max_values).parse_document();
}

// ---- typed access ------------------------------------------------------------------------

void json_fail(const std::string& file,
               const JsonValue& v,
               const std::string& path,
               const std::string& message) {
  throw InputError(file, v.line, path, message);
}

namespace {
[[noreturn]] void type_fail(const std::string& file,
                            const JsonValue& v,
                            const std::string& path,
                            const char* expected) {
  json_fail(file, v, path, std::string("expected ") + expected + ", got " + json_type_name(v.type));
}
}  // namespace

double json_number(const JsonValue& v, const std::string& file, const std::string& path) {
  if (!v.is_number()) {
    type_fail(file, v, path, "a number");
  }
  return v.number;
}

int json_int(const JsonValue& v, const std::string& file, const std::string& path) {
  if (!v.is_number()) {
    type_fail(file, v, path, "an integer");
  }
  const double x = v.number;
  if (x != std::floor(x) || x < std::numeric_limits<int>::min() ||
      x > std::numeric_limits<int>::max()) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    json_fail(file, v, path, "expected an integer, got " + std::string(buf, r.ptr));
  }
  return int(x);
}

bool json_bool(const JsonValue& v, const std::string& file, const std::string& path) {
  if (!v.is_bool()) {
    type_fail(file, v, path, "true or false");
  }
  return v.boolean;
}

const std::string& json_string(const JsonValue& v,
                               const std::string& file,
                               const std::string& path) {
  if (!v.is_string()) {
    type_fail(file, v, path, "a string");
  }
  return v.string;
}

const JsonValue& json_array(const JsonValue& v, const std::string& file, const std::string& path) {
  if (!v.is_array()) {
    type_fail(file, v, path, "an array");
  }
  return v;
}

std::vector<double> json_numbers(const JsonValue& v,
                                 const std::string& file,
                                 const std::string& path,
                                 int n) {
  if (!v.is_array() || int(v.array.size()) != n) {
    std::string got = json_type_name(v.type);
    if (v.is_array()) {
      got = "an array of " + std::to_string(v.array.size());
    }
    json_fail(file, v, path, "expected an array of " + std::to_string(n) + " numbers, got " + got);
  }
  std::vector<double> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    x[size_t(i)] = json_number(v.array[size_t(i)], file, element_path(path, size_t(i)));
  }
  return x;
}

Vec3 json_vec3(const JsonValue& v, const std::string& file, const std::string& path) {
  const std::vector<double> x = json_numbers(v, file, path, 3);
  return Vec3{{x[0], x[1], x[2]}};
}

// ---- JsonObject --------------------------------------------------------------------------

JsonObject::JsonObject(const JsonValue& v, std::string file, std::string path)
    : v_(&v), file_(std::move(file)), path_(std::move(path)) {
  if (!v.is_object()) {
    type_fail(file_, v, path_, "an object");
  }
}

std::string JsonObject::path_of(const std::string& key) const { return member_path(path_, key); }

void JsonObject::allow_only(std::initializer_list<const char*> allowed) const {
  allow_only(std::vector<const char*>(allowed));
}

void JsonObject::allow_only(const std::vector<const char*>& allowed) const {
  for (const JsonMember& m : v_->object) {
    bool ok = false;
    for (const char* a : allowed) {
      ok = ok || m.key == a;
    }
    if (ok) continue;
    std::string list;
    for (const char* a : allowed) {
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    throw InputError(file_, m.line, path_of(m.key),
                     "unknown field (expected one of: " + list + ")");
  }
}

void JsonObject::fail(const std::string& key, const std::string& message) const {
  int line = v_->line;
  for (const JsonMember& m : v_->object) {
    if (m.key == key) {
      line = m.line;
    }
  }
  throw InputError(file_, line, path_of(key), message);
}

const JsonValue& JsonObject::require(const std::string& key) const {
  const JsonValue* m = v_->find(key);
  if (!m) {
    throw InputError(file_, v_->line, path_of(key), "missing required field");
  }
  return *m;
}

double JsonObject::number(const std::string& key) const {
  return json_number(require(key), file_, path_of(key));
}

double JsonObject::number_or(const std::string& key, double fallback) const {
  const JsonValue* m = find(key);
  return m ? json_number(*m, file_, path_of(key)) : fallback;
}

int JsonObject::integer(const std::string& key) const {
  return json_int(require(key), file_, path_of(key));
}

int JsonObject::integer_or(const std::string& key, int fallback) const {
  const JsonValue* m = find(key);
  return m ? json_int(*m, file_, path_of(key)) : fallback;
}

bool JsonObject::boolean(const std::string& key) const {
  return json_bool(require(key), file_, path_of(key));
}

bool JsonObject::boolean_or(const std::string& key, bool fallback) const {
  const JsonValue* m = find(key);
  return m ? json_bool(*m, file_, path_of(key)) : fallback;
}

std::string JsonObject::string(const std::string& key) const {
  return json_string(require(key), file_, path_of(key));
}

std::string JsonObject::string_or(const std::string& key, const std::string& fallback) const {
  const JsonValue* m = find(key);
  return m ? json_string(*m, file_, path_of(key)) : fallback;
}

Vec3 JsonObject::vec3(const std::string& key) const {
  return json_vec3(require(key), file_, path_of(key));
}

Vec3 JsonObject::vec3_or(const std::string& key, const Vec3& fallback) const {
  const JsonValue* m = find(key);
  return m ? json_vec3(*m, file_, path_of(key)) : fallback;
}

const JsonValue& JsonObject::array(const std::string& key) const {
  return json_array(require(key), file_, path_of(key));
}

JsonObject JsonObject::object(const std::string& key) const {
  return JsonObject(require(key), file_, path_of(key));
}

}  // namespace slender
