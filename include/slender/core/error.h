#pragma once

// The three error routes of Slender (STYLE.md §9):
// - InputError: bad user data (scene, geometry, options), with file, line and field;
// - Error: a broken API contract (SLENDER_CHECK), with the source file and line;
// - numerical outcomes are not exceptions: see StepStatus in simulator.h.

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace slender {

/// A broken contract or an unusable request, raised by SLENDER_CHECK.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad user input. what() reads "file:line: field: message".
class InputError : public std::runtime_error {
 public:
  /// control bytes (a NUL of a binary file, say) in any part are written as \xNN, so that no
  /// message is cut short or garbled where it is printed
  InputError(std::string file, int line, std::string field, std::string message)
      : std::runtime_error(format(escaped(file), line, escaped(field), escaped(message))),
        file_(escaped(file)),
        line_(line),
        field_(escaped(field)),
        message_(escaped(message)) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }  ///< 1-based; 0 when unknown
  const std::string& field() const { return field_; }
  const std::string& message() const { return message_; }

 private:
  static std::string escaped(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (const char ch : s) {
      const unsigned char c = static_cast<unsigned char>(ch);
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
        const char* hex = "0123456789abcdef";
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        out += ch;
      }
    }
    return out;
  }
  static std::string format(const std::string& file,
                            int line,
                            const std::string& field,
                            const std::string& message) {
    std::ostringstream os;
    os << (file.empty() ? "<input>" : file);
    if (line > 0) os << ':' << line;
    os << ": ";
    if (!field.empty()) os << field << ": ";
    os << message;
    return os.str();
  }
  std::string file_;
  int line_;
  std::string field_;
  std::string message_;
};

/// A request refused before anything was allocated because its estimated memory does not fit
/// in the memory available (host/runtime/memory_budget.h): what() names the argument, the
/// estimate and the memory available. From Python a MemoryError.
class MemoryLimitError : public Error {
 public:
  MemoryLimitError(std::string field, const std::string& message, double needed, double available)
      : Error(message), field_(std::move(field)), needed_(needed), available_(available) {}
  /// the argument that asked for the memory ("num_envs")
  const std::string& field() const { return field_; }
  double needed_bytes() const { return needed_; }        ///< the estimate
  double available_bytes() const { return available_; }  ///< the memory available

 private:
  std::string field_;
  double needed_, available_;
};

namespace detail {
inline void stream_all(std::ostringstream&) {}
template <class T, class... Rest>
void stream_all(std::ostringstream& os, const T& v, const Rest&... rest) {
  os << v;
  stream_all(os, rest...);
}
template <class... Args>
[[noreturn]] void check_failed(const char* file, int line, const char* cond, const Args&... args) {
  std::ostringstream os;
  os << file << ':' << line << ": check failed (" << cond << "): ";
  stream_all(os, args...);
  throw Error(os.str());
}
}  // namespace detail

}  // namespace slender

namespace slender {
/// A failed SLENDER_CHECK's message for the user: "FILE:LINE: check failed (CONDITION): message"
/// becomes "message" (the condition's parentheses balanced; what is for C++ debugging); any
/// other message as it is. The command line and the Python module print this.
inline std::string without_check_text(const std::string& what) {
  const std::string mark = ": check failed (";
  const size_t at = what.find(mark);
  if (at == std::string::npos) return what;
  int depth = 1;
  size_t i = at + mark.size();
  for (; i < what.size() && depth > 0; ++i)
    depth += what[i] == '(' ? 1 : what[i] == ')' ? -1 : 0;
  if (depth != 0 || what.compare(i, 2, ": ") != 0) return what;
  return what.substr(i + 2);
}
}  // namespace slender

/// Always-on O(1) contract check at API entry points; throws slender::Error.
#define SLENDER_CHECK(cond, ...)                                                          \
  do {                                                                                    \
    if (!(cond)) ::slender::detail::check_failed(__FILE__, __LINE__, #cond, __VA_ARGS__); \
  } while (0)

#ifndef NDEBUG
#define SLENDER_DCHECK(cond, ...) SLENDER_CHECK(cond, __VA_ARGS__)
#else
#define SLENDER_DCHECK(cond, ...) \
  do {                            \
  } while (0)
#endif
