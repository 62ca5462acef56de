// CSV recorders: nodes.csv (positions and velocities of chosen nodes), energies.csv and
// controllers.csv (the feedback controllers' commands and errors). Each file
// is written as NAME.csv.part while the run goes on, flushed after every row, and renamed to its
// final name by end(), so a run that stops early never leaves a truncated file under that name.
// A resumed run continues the file from the byte its checkpoint noted (resume()).

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "record/part_file.h"
#include "slender/core/error.h"
#include "slender/record.h"

namespace slender {
namespace {

namespace fs = std::filesystem;

// one CSV file with a temporary name until it is complete
class CsvFile {
 public:
  CsvFile() = default;
  CsvFile(const CsvFile&) = delete;
  CsvFile& operator=(const CsvFile&) = delete;
  // an unfinished file keeps its .part name
  ~CsvFile() {
    if (f_) std::fclose(f_);
  }

  // a new file that begins with `head`
  void open(const std::string& out_dir, const std::string& name, const std::string& head) {
    close_quietly();
    name_paths(out_dir, name);
    f_ = open_part(part_);
    std::fputs(head.c_str(), f_);
    push();
  }

  // the file an earlier run left, continued from its first `bytes` (part_file.h)
  void reopen(const std::string& out_dir,
              const std::string& name,
              const std::string& head,
              std::uint64_t bytes) {
    close_quietly();
    name_paths(out_dir, name);
    f_ = continue_part(part_, final_, bytes, head);
    bytes_ = bytes;
  }

  bool is_open() const { return f_ != nullptr; }
  std::FILE* get() { return f_; }
  std::uint64_t bytes() const { return bytes_; }

  // ends the current row and pushes it to disk
  void end_row() {
    std::fputc('\n', f_);
    push();
  }

  // closes the file and gives it its final name; returns that name (on an error the temporary
  // file is removed)
  std::string finish() {
    if (!f_) return {};
    std::FILE* f = f_;
    f_ = nullptr;
    close_and_rename(f, part_, final_);
    return final_;
  }

  // closes and removes the unfinished file
  void discard() noexcept {
    if (!f_) return;
    discard_part(f_, part_);
    f_ = nullptr;
  }

 private:
  void name_paths(const std::string& out_dir, const std::string& name) {
    final_ = (fs::path(out_dir) / name).string();
    part_ = final_ + ".part";
  }

  // what was written goes to disk, and its length is noted
  void push() { bytes_ = flush_part(f_, part_); }

  void close_quietly() {
    if (f_) std::fclose(f_);
    f_ = nullptr;
  }

  std::FILE* f_ = nullptr;
  std::string part_, final_;
  std::uint64_t bytes_ = 0;  // written so far
};

// full double precision, so that a CSV row reproduces the state bit for bit
void put_real(std::FILE* f, Real v) { std::fprintf(f, ",%.17g", v); }

// a recorder that writes one CSV file, renamed into place by end()
class CsvRecorder : public Recorder {
 public:
  explicit CsvRecorder(std::string name) : name_(std::move(name)) {}
  std::vector<std::string> outputs(const Model&, const std::string& out_dir) const override {
    return {(fs::path(out_dir) / name_).string()};
  }
  void begin(const Model& m, const std::string& out_dir) override {
    file_.open(out_dir, name_, header(m) + "\n");
  }
  void resume(const Model& m,
              const std::string& out_dir,
              const std::vector<OutputMark>& marks) override {
    for (const OutputMark& k : marks) {
      if (k.name == name_) {
        file_.reopen(out_dir, name_, header(m) + "\n", k.count);
        return;
      }
    }
    throw Error("cannot continue '" + (fs::path(out_dir) / name_).string() +
                "': the checkpoint's run did not record it");
  }
  std::vector<OutputMark> marks() const override {
    if (!file_.is_open()) return {};
    return {OutputMark{name_, file_.bytes()}};
  }
  std::vector<std::string> end() override {
    std::string path = file_.finish();
    if (path.empty()) return {};
    return {path};
  }
  void abort() noexcept override { file_.discard(); }

 protected:
  // the header row (without its line end); checks the model
  virtual std::string header(const Model& m) const = 0;

  CsvFile file_;

 private:
  std::string name_;  // the file's name in the output folder
};

class NodeCsvRecorder : public CsvRecorder {
 public:
  NodeCsvRecorder(std::vector<int> nodes, std::vector<std::string> labels)
      : CsvRecorder("nodes.csv"), nodes_(std::move(nodes)), labels_(std::move(labels)) {
    SLENDER_CHECK(labels_.empty() || labels_.size() == nodes_.size(), "nodes.csv: ", labels_.size(),
                  " labels for ", nodes_.size(), " nodes");
    if (labels_.empty())
      for (int n : nodes_)
        labels_.push_back("n" + std::to_string(n));
  }
  std::string header(const Model& m) const override {
    for (int n : nodes_) {
      SLENDER_CHECK(n >= 0 && n < m.nnode, "node ", n, " out of range (", m.nnode, " nodes)");
    }
    std::string h = "time";
    static const char* const kColumns[6] = {"x", "y", "z", "vx", "vy", "vz"};
    for (const std::string& label : labels_) {
      for (const char* c : kColumns)
        h += "," + label + "_" + c;
    }
    return h;
  }

  void record(const RecordFrame& fr) override {
    if (!file_.is_open()) return;
    SLENDER_CHECK(fr.state != nullptr, "record frame without a state");
    const State& s = *fr.state;
    std::FILE* f = file_.get();
    std::fprintf(f, "%.17g", fr.time);
    for (int n : nodes_) {
      SLENDER_CHECK(3 * n + 2 < int(s.q.size()), "state too small for node ", n);
      for (int k = 0; k < 3; ++k)
        put_real(f, s.q[3 * n + k]);
      // a state without velocities (static runs) records zeros
      for (int k = 0; k < 3; ++k) {
        put_real(f, 3 * n + k < int(s.u.size()) ? s.u[3 * n + k] : Real(0));
      }
    }
    file_.end_row();
  }

 private:
  std::vector<int> nodes_;           // global node ids, in column order
  std::vector<std::string> labels_;  // their column names' stems
};

class EnergyCsvRecorder : public CsvRecorder {
 public:
  EnergyCsvRecorder() : CsvRecorder("energies.csv") {}
  std::string header(const Model&) const override {
    return "time,kinetic,stretch,bend,twist,gravity,total,newton_iters";
  }

  void record(const RecordFrame& fr) override {
    if (!file_.is_open()) return;
    std::FILE* f = file_.get();
    const Energies& e = fr.energies;
    std::fprintf(f, "%.17g", fr.time);
    for (Real v : {e.kinetic, e.stretch, e.bend, e.twist, e.gravity, e.total()})
      put_real(f, v);
    std::fprintf(f, ",%d", fr.newton_iters);
    file_.end_row();
  }
};

// controllers.csv: the time, then the columns the run names (StrainController::csv_columns)
class ControllerCsvRecorder : public CsvRecorder {
 public:
  explicit ControllerCsvRecorder(std::vector<std::string> columns)
      : CsvRecorder("controllers.csv"), columns_(std::move(columns)) {}
  std::string header(const Model&) const override {
    std::string h = "time";
    for (const std::string& c : columns_)
      h += "," + c;
    return h;
  }

  void record(const RecordFrame& fr) override {
    if (!file_.is_open()) return;
    SLENDER_CHECK(fr.controller_values.size() == columns_.size(),
                  "controllers.csv: ", fr.controller_values.size(), " values for ", columns_.size(),
                  " columns");
    std::FILE* f = file_.get();
    std::fprintf(f, "%.17g", fr.time);
    for (Real v : fr.controller_values)
      put_real(f, v);
    file_.end_row();
  }

 private:
  std::vector<std::string> columns_;
};

}  // namespace

std::unique_ptr<Recorder> make_node_csv_recorder(std::vector<int> nodes,
                                                 std::vector<std::string> labels) {
  return std::make_unique<NodeCsvRecorder>(std::move(nodes), std::move(labels));
}

std::unique_ptr<Recorder> make_energy_csv_recorder() {
  return std::make_unique<EnergyCsvRecorder>();
}

std::unique_ptr<Recorder> make_controller_csv_recorder(std::vector<std::string> columns) {
  return std::make_unique<ControllerCsvRecorder>(std::move(columns));
}

}  // namespace slender
