// VTK recorder: one XML PolyData file (.vtp, ASCII) per record under frames/, and a .pvd
// collection that lists them with their times, for ParaView. Rods are polylines: each run of
// consecutive edges of a part (edge k ends where edge k + 1 starts) becomes one cell, so a tube
// filter draws a rod without seams. Every file is written under a temporary name and renamed;
// the .pvd gets its line as each frame is written (NAME.pvd.part, flushed) and its closing lines
// from end(), so that a resumed run continues it from the byte its checkpoint noted.
//
// point data: velocity (3), radius, curvature |(kappa1, kappa2)|, twist tau, twist_angle
// cell data:  part
// field data: TimeValue, step, edge_twist_angle (nedge, exact per-edge theta)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "record/frame_fields.h"
#include "record/part_file.h"
#include "slender/core/error.h"
#include "slender/record.h"

namespace slender {
namespace {

namespace fs = std::filesystem;

constexpr int kValuesPerLine = 6;  // numbers per text line inside a DataArray

// file names are built from the scene name: keep them to a portable character set
std::string sanitize_name(const std::string& name) {
  std::string s;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    s += ok ? c : '_';
  }
  return s.empty() ? std::string("scene") : s;
}

void put_value(std::FILE* f, Real v) { std::fprintf(f, "%.12g", v); }
void put_value(std::FILE* f, int v) { std::fprintf(f, "%d", v); }

// the numbers of a DataArray, a few per line
template <class T>
void put_values(std::FILE* f, const std::vector<T>& v, const char* indent) {
  for (size_t i = 0; i < v.size(); ++i) {
    std::fputs(i % kValuesPerLine == 0 ? indent : " ", f);
    put_value(f, v[i]);
    if (i + 1 == v.size() || (i + 1) % kValuesPerLine == 0) std::fputc('\n', f);
  }
}

void write_reals(
    std::FILE* f, const char* name, int ncomp, const std::vector<Real>& v, const char* indent) {
  std::fprintf(f,
               "%s<DataArray type=\"Float64\" Name=\"%s\" NumberOfComponents=\"%d\" "
               "format=\"ascii\">\n",
               indent, name, ncomp);
  put_values(f, v, indent);
  std::fprintf(f, "%s</DataArray>\n", indent);
}

void write_ints(std::FILE* f, const char* name, const std::vector<int>& v, const char* indent) {
  std::fprintf(f, "%s<DataArray type=\"Int32\" Name=\"%s\" format=\"ascii\">\n", indent, name);
  put_values(f, v, indent);
  std::fprintf(f, "%s</DataArray>\n", indent);
}

// field data arrays carry their tuple count, which the readers require
void write_field(std::FILE* f, const char* name, const std::vector<Real>& v) {
  const char* in = "      ";
  std::fprintf(f,
               "%s<DataArray type=\"Float64\" Name=\"%s\" NumberOfTuples=\"%zu\" "
               "format=\"ascii\">\n",
               in, name, v.size());
  put_values(f, v, in);
  std::fprintf(f, "%s</DataArray>\n", in);
}

class VtkRecorder : public Recorder {
 public:
  explicit VtkRecorder(const std::string& name) : name_(sanitize_name(name)) {}
  VtkRecorder(const VtkRecorder&) = delete;
  VtkRecorder& operator=(const VtkRecorder&) = delete;
  // an unfinished series keeps its .part name
  ~VtkRecorder() override {
    if (pvd_) std::fclose(pvd_);
  }

  // the series and its first frame (every frame's name has the same length up to a million)
  std::vector<std::string> outputs(const Model&, const std::string& out_dir) const override {
    return {(fs::path(out_dir) / (name_ + ".pvd")).string(),
            (fs::path(out_dir) / "frames" / frame_name(0)).string()};
  }
  // the frames are written whole and renamed at once; the unfinished series is removed
  void abort() noexcept override {
    if (pvd_) discard_part(pvd_, pvd_part());
    pvd_ = nullptr;
  }

  void begin(const Model& m, const std::string& out_dir) override {
    start(m, out_dir);
    pvd_ = open_part(pvd_part());
    std::fputs(kPvdHead, pvd_);
    push_pvd();
    nframes_ = 0;
    continued_ = false;
  }

  void resume(const Model& m,
              const std::string& out_dir,
              const std::vector<OutputMark>& marks) override {
    start(m, out_dir);
    const OutputMark* pvd = nullptr;
    const OutputMark* frames = nullptr;
    for (const OutputMark& k : marks) {
      if (k.name == name_ + ".pvd") pvd = &k;
      if (k.name == "frames/" + name_) frames = &k;
    }
    if (!pvd || !frames || frames->count > kMaxFrames) {
      throw Error("cannot continue '" + pvd_final() + "': the checkpoint's run did not record it");
    }
    // the frames up to the mark are there (the ones after it, of the run that went on past the
    // checkpoint, are written again or, past the resumed run's last, removed by end())
    for (std::uint64_t i = 0; i < frames->count; ++i) {
      std::error_code ec;
      if (!fs::is_regular_file(frame_path(i), ec)) {
        throw Error("cannot continue '" + pvd_final() + "': its frame '" + frame_path(i) +
                    "' is not there, so the folder does not hold the outputs of the "
                    "checkpoint's run");
      }
    }
    pvd_ = continue_part(pvd_part(), pvd_final(), pvd->count, kPvdHead);
    pvd_bytes_ = pvd->count;
    nframes_ = frames->count;
    continued_ = true;
  }

  std::vector<OutputMark> marks() const override {
    if (!pvd_) return {};
    return {OutputMark{name_ + ".pvd", pvd_bytes_}, OutputMark{"frames/" + name_, nframes_}};
  }

  void record(const RecordFrame& fr) override {
    if (!pvd_) return;
    SLENDER_CHECK(fr.model != nullptr && fr.state != nullptr, "record frame without a model");
    const Model& m = *fr.model;
    const State& s = *fr.state;
    SLENDER_CHECK(int(s.q.size()) >= m.ndof && m.ndof >= 3 * m.nnode + m.nedge, "state has ",
                  s.q.size(), " DOFs, model ", m.ndof);

    const std::string path = frame_path(nframes_);
    const std::string part = path + ".part";
    std::FILE* f = open_part(part);
    try {
      write_piece(f, fr);
    } catch (...) {
      discard_part(f, part);
      throw;
    }
    close_and_rename(f, part, path);
    // the frame's line in the series
    std::fprintf(pvd_,
                 "    <DataSet timestep=\"%.17g\" group=\"\" part=\"0\" file=\"frames/%s\"/>\n",
                 fr.time, frame_name(nframes_).c_str());
    push_pvd();
    ++nframes_;
  }

  std::vector<std::string> end() override {
    if (!pvd_) return {};
    std::FILE* f = pvd_;
    pvd_ = nullptr;
    std::fputs("  </Collection>\n</VTKFile>\n", f);
    close_and_rename(f, pvd_part(), pvd_final());
    // a continued series: the frames its earlier run wrote past the resumed run's last
    for (std::uint64_t i = nframes_; continued_ && i < kMaxFrames; ++i) {
      std::error_code ec;
      if (!fs::remove(frame_path(i), ec)) break;
    }
    continued_ = false;
    return {pvd_final()};
  }

 private:
  void write_piece(std::FILE* f, const RecordFrame& fr) const {
    const Model& m = *fr.model;
    const State& s = *fr.state;
    const int nn = m.nnode, ne = m.nedge;

    // positions and velocities of env 0; a state without velocities records zeros
    std::vector<Real> x(s.q.begin(), s.q.begin() + 3 * nn);
    std::vector<Real> v(3 * size_t(nn), 0);
    if (s.u.size() >= 3 * size_t(nn)) std::copy(s.u.begin(), s.u.begin() + 3 * nn, v.begin());

    // per node strains and twist angles; theta exact per edge in field data
    std::vector<Real> curvature, twist;
    node_strains(m, fr, curvature, twist);
    const std::vector<Real> theta(s.q.begin() + 3 * nn, s.q.begin() + 3 * nn + ne);
    const std::vector<Real> node_theta = node_twist_angle(m, s);

    std::fputs("<?xml version=\"1.0\"?>\n", f);
    std::fputs("<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\">\n", f);
    std::fputs("  <PolyData>\n    <FieldData>\n", f);
    write_field(f, "TimeValue", {fr.time});
    write_field(f, "step", {Real(fr.step)});
    write_field(f, "edge_twist_angle", theta);
    if (m.nxi > 0) {
      std::vector<Real> xi(m.nsedge, 0);
      for (int e = 0; e < m.nsedge; ++e)
        if (m.sedge_xi[e] >= 0) xi[e] = s.q[m.xi_dof(e)];
      write_field(f, "shell_edge_xi", xi);
    }
    std::fputs("    </FieldData>\n", f);
    std::fprintf(f,
                 "    <Piece NumberOfPoints=\"%d\" NumberOfVerts=\"0\" NumberOfLines=\"%zu\" "
                 "NumberOfStrips=\"0\" NumberOfPolys=\"%d\">\n",
                 nn, cells_.cell_part.size(), m.ntri);
    const char* in = "        ";
    std::fputs("      <PointData Scalars=\"radius\" Vectors=\"velocity\">\n", f);
    write_reals(f, "velocity", 3, v, in);
    write_reals(f, "radius", 1, node_radius_, in);
    write_reals(f, "curvature", 1, curvature, in);
    write_reals(f, "twist", 1, twist, in);
    write_reals(f, "twist_angle", 1, node_theta, in);
    std::fputs("      </PointData>\n", f);
    // cell data runs over the lines, then the triangles (VTK's order)
    std::vector<int> cell_part = cells_.cell_part;
    cell_part.insert(cell_part.end(), m.tri_part.begin(), m.tri_part.end());
    std::fputs("      <CellData Scalars=\"part\">\n", f);
    write_ints(f, "part", cell_part, in);
    if (m.ntri > 0) {
      // per cell, lines first (0 there), then the triangles' bending energy per area
      std::vector<Real> density(cells_.cell_part.size(), 0);
      if (int(fr.shell_energy_density.size()) == m.ntri) {
        density.insert(density.end(), fr.shell_energy_density.begin(),
                       fr.shell_energy_density.end());
      } else {
        density.resize(cell_part.size(), 0);
      }
      write_reals(f, "bending_energy_density", 1, density, in);
    }
    std::fputs("      </CellData>\n", f);
    std::fputs("      <Points>\n", f);
    write_reals(f, "position", 3, x, in);
    std::fputs("      </Points>\n", f);
    std::fputs("      <Lines>\n", f);
    write_ints(f, "connectivity", cells_.conn, in);
    write_ints(f, "offsets", cells_.offsets, in);
    std::fputs("      </Lines>\n", f);
    // shell triangles
    std::vector<int> tri_offsets(m.ntri);
    for (int t = 0; t < m.ntri; ++t)
      tri_offsets[t] = 3 * (t + 1);
    std::fputs("      <Polys>\n", f);
    write_ints(f, "connectivity", m.tri_node, in);
    write_ints(f, "offsets", tri_offsets, in);
    std::fputs("      </Polys>\n", f);
    std::fputs("    </Piece>\n  </PolyData>\n</VTKFile>\n", f);
  }

  static constexpr const char* kPvdHead =
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
      "  <Collection>\n";
  static constexpr std::uint64_t kMaxFrames = 1000000000;  // frame names have room for more

  // what begin() and resume() share: the folder and the cells
  void start(const Model& m, const std::string& out_dir) {
    abort();
    out_dir_ = out_dir;
    std::error_code ec;
    fs::create_directories(fs::path(out_dir) / "frames", ec);
    if (ec) throw Error("cannot create '" + out_dir + "/frames': " + ec.message());
    cells_ = polyline_cells(m);
    node_radius_ = node_radius(m);
  }

  std::string frame_name(std::uint64_t i) const {
    char index[24];
    std::snprintf(index, sizeof index, "%06llu", static_cast<unsigned long long>(i));
    return name_ + "_" + index + ".vtp";
  }
  std::string frame_path(std::uint64_t i) const {
    return (fs::path(out_dir_) / "frames" / frame_name(i)).string();
  }
  std::string pvd_final() const { return (fs::path(out_dir_) / (name_ + ".pvd")).string(); }
  std::string pvd_part() const { return pvd_final() + ".part"; }

  // the series' lines so far to disk, and their length noted
  void push_pvd() { pvd_bytes_ = flush_part(pvd_, pvd_part()); }

  std::string name_;
  std::string out_dir_;
  std::FILE* pvd_ = nullptr;       // the series, NAME.pvd.part, while the run goes on
  std::uint64_t pvd_bytes_ = 0;    // its length after the last frame's line
  std::uint64_t nframes_ = 0;      // frames written
  bool continued_ = false;         // resumed from a checkpoint's marks
  PolylineCells cells_;            // the rods' polylines
  std::vector<Real> node_radius_;  // (nnode)
};

}  // namespace

std::unique_ptr<Recorder> make_vtk_recorder(const std::string& name) {
  return std::make_unique<VtkRecorder>(name);
}

}  // namespace slender
