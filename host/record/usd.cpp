// The recorder of `slender run --usd FILE`: each record of the run (at the VTK frames'
// cadence) into a USD series (usd_writer.h), its fields computed as the VTK frames' are
// (frame_fields.h); and the up axis and identifiers the series uses.

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "record/frame_fields.h"
#include "record/usd_writer.h"
#include "slender/core/error.h"
#include "slender/record.h"

namespace slender {

namespace fs = std::filesystem;

char usd_up_axis(const Vec3& g) {
  return std::fabs(g[1]) > std::fabs(g[2]) && std::fabs(g[1]) >= std::fabs(g[0]) ? 'Y' : 'Z';
}

std::string usd_identifier(const std::string& name, const std::string& fallback) {
  if (name.empty()) return fallback;
  std::string s;
  if (name[0] >= '0' && name[0] <= '9') s += '_';
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    s += ok ? c : '_';
  }
  return s;
}

namespace {

class UsdRecorder : public Recorder {
 public:
  UsdRecorder(std::string path, Real frame_interval)
      : path_(std::move(path)), frame_interval_(frame_interval) {}

  // the file and its spool's name without ".part" (the run checks both names and folders)
  std::vector<std::string> outputs(const Model&, const std::string&) const override {
    return {path_, path_ + ".samples"};
  }
  void abort() noexcept override {
    if (series_) series_->abort();
  }
  void begin(const Model& m, const std::string&) override {
    start(m);
    series_->begin();
  }
  void resume(const Model& m, const std::string&, const std::vector<OutputMark>& marks) override {
    start(m);
    for (const OutputMark& k : marks) {
      if (k.name == mark_name()) {
        series_->resume(k.count);
        return;
      }
    }
    throw Error("cannot continue '" + path_ + "': the checkpoint's run did not record it");
  }
  std::vector<OutputMark> marks() const override {
    if (!series_ || !series_->is_open()) return {};
    return {OutputMark{mark_name(), series_->frames()}};
  }

  void record(const RecordFrame& fr) override {
    if (!series_ || !series_->is_open()) return;
    SLENDER_CHECK(fr.model != nullptr && fr.state != nullptr, "record frame without a model");
    const Model& m = *fr.model;
    const State& s = *fr.state;
    SLENDER_CHECK(int(s.q.size()) >= m.ndof && m.ndof >= 3 * m.nnode + m.nedge, "state has ",
                  s.q.size(), " DOFs, model ", m.ndof);
    std::vector<Real> curvature, twist;
    node_strains(m, fr, curvature, twist);
    const std::vector<Real> theta = node_twist_angle(m, s);
    UsdNodeFrame f;
    f.time = fr.time;
    f.x = s.q.data();
    f.v = s.u.size() >= 3 * size_t(m.nnode) ? s.u.data() : nullptr;
    f.curvature = curvature.data();
    f.twist = twist.data();
    f.twist_angle = theta.data();
    f.face_density =
        int(fr.shell_energy_density.size()) == m.ntri ? fr.shell_energy_density.data() : nullptr;
    series_->add(f);
  }

  std::vector<std::string> end() override {
    if (!series_ || !series_->is_open()) return {};
    series_->finish();
    return {path_};
  }

 private:
  std::string mark_name() const { return "usd:" + fs::path(path_).filename().string(); }

  void start(const Model& m) {
    abort();
    UsdTopology top;
    top.nnode = m.nnode;
    PolylineCells cells = polyline_cells(m);
    top.line_conn = std::move(cells.conn);
    top.line_offsets = std::move(cells.offsets);
    top.line_part = std::move(cells.cell_part);
    top.face_conn = m.tri_node;
    for (int t = 0; t < m.ntri; ++t)
      top.face_offsets.push_back(3 * (t + 1));
    top.face_part = m.tri_part;
    top.face_part.resize(size_t(m.ntri), -1);
    top.node_radius = node_radius(m);
    top.part_names = m.part_name;
    top.root_name = m.scene.name;
    top.up_axis = usd_up_axis(m.gravity);
    top.frame_interval = frame_interval_;
    series_ = std::make_unique<UsdSeries>(std::move(top), path_);
  }

  std::string path_;
  Real frame_interval_;
  std::unique_ptr<UsdSeries> series_;
};

}  // namespace

std::unique_ptr<Recorder> make_usd_recorder(const std::string& path, Real frame_interval) {
  return std::make_unique<UsdRecorder>(path, frame_interval);
}

}  // namespace slender
