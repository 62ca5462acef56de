#pragma once

// Line-oriented number files (geometry, node vectors, load tables): shared tokenizing and
// number parsing with errors that name the file and line. Internal to host/io.

#include <istream>
#include <string>
#include <vector>

namespace slender {

/// skips a UTF-8 byte order mark at the start of a text file (as the JSON reader does), so that
/// a file saved by an editor that writes one reads the same
void skip_bom(std::istream& in);

/// splits a data line into fields at commas and white space; a `#` starts a comment
std::vector<std::string> split_fields(const std::string& line);

/// parses one finite number; throws InputError(file, line, field, "'x' is not a number")
double parse_real_field(const std::string& token,
                        const std::string& file,
                        int line,
                        const std::string& field);

/// Reads rows of exactly `columns` numbers ("a b c" or "a, b, c"); blank lines and `#`
/// comments are skipped. Throws InputError(path, line, "", ...) on a bad row, when the file
/// cannot be opened (line 0) or when it has no rows.
std::vector<std::vector<double>> read_number_table(const std::string& path, int columns);

/// Reads an actuation's per-spring time series (a CSV file): rows of a time [s] and one value
/// per spring, the same number on every row, times strictly increasing; an optional header
/// line (its first field not a number) before the first row; blank lines and `#` comments
/// skipped. Throws InputError(path, line, `field` and the column, ...) on a bad row, a
/// non-finite value, a row of another width or a time not after the previous one, and (line 0)
/// when the file cannot be opened or has no rows.
struct ActuationSeries;
ActuationSeries read_series_file(const std::string& path, const std::string& field);

}  // namespace slender
