#pragma once

// A USD series: one .usda text file (USD ASCII, written here without a USD library) that holds
// a run's records as time samples. Its prims are one per part under a root Xform named after
// the scene: rods as BasisCurves (linear, widths = 2 x radius per vertex), shells as Mesh (with
// per-vertex normals); points, velocities, extents and primvars are time-sampled. A .usda cannot
// be written as the records come (every attribute's samples are one block in the text), so the
// records are spooled, as the floats they will print, to a binary temporary file
// (PATH.samples.part) and the text is written from it at the end (PATH.part, renamed to PATH);
// the spool is then removed. Internal to host/record; the recorder (usd.cpp) and the export of
// a run's VTK frames (usd_export.cpp) share it.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "slender/core/types.h"

namespace slender {

/// What the series draws: the model's (or the VTK frames') nodes, rods as polylines and shells
/// as polygons, each cell with its part.
struct UsdTopology {
  int nnode = 0;
  std::vector<int> line_conn;     ///< node ids of the polylines, concatenated
  std::vector<int> line_offsets;  ///< end of each polyline in line_conn   (nline)
  std::vector<int> line_part;     ///< part of each polyline, -1: none     (nline)
  std::vector<int> face_conn;     ///< node ids of the polygons, counter-clockwise about the
                                  ///< normal, concatenated
  std::vector<int> face_offsets;  ///< end of each polygon in face_conn    (nface)
  std::vector<int> face_part;     ///< part of each polygon, -1: none     (nface)
  std::vector<Real> node_radius;  ///< [m] (nnode)
  /// the parts' names by part index (parts beyond it are named part_INDEX)
  std::vector<std::string> part_names;
  std::string root_name;  ///< the scene's name: the root prim's
  char up_axis = 'Z';     ///< 'Y' or 'Z'
  /// seconds between records (the output cadence times dt): one time code; <= 0: the median
  /// spacing of the records' times
  Real frame_interval = 0;
};

/// One record: per node values (nnode or 3 nnode) and per polygon values (nface), each array
/// read where the series needs it. A null field reads as zeros.
struct UsdNodeFrame {
  Real time = 0;                       ///< [s]
  const Real* x = nullptr;             ///< positions [m] (nnode x 3)
  const Real* v = nullptr;             ///< velocities [m/s] (nnode x 3)
  const Real* curvature = nullptr;     ///< |(kappa1, kappa2)| [1/m] (nnode)
  const Real* twist = nullptr;         ///< tau [rad/m] (nnode)
  const Real* twist_angle = nullptr;   ///< theta [rad] (nnode)
  const Real* face_density = nullptr;  ///< shell bending energy per area [J/m^2] (nface)
};

/// the USD up axis of a gravity vector: Y where gravity acts mostly along y, else Z (USD has
/// no X up; no gravity: Z)
char usd_up_axis(const Vec3& gravity);

/// a USD identifier ([A-Za-z_][A-Za-z0-9_]*) for a name: every other byte becomes '_', a
/// leading digit gets a '_' in front, an empty name becomes `fallback`
std::string usd_identifier(const std::string& name, const std::string& fallback);

/// One prim of the series: a part's rods (BasisCurves) or its shell (Mesh).
struct UsdPrim {
  std::string name;           ///< its identifier, unique among the root's children
  std::string part_name;      ///< the part's own name (the prim's doc)
  bool mesh = false;          ///< Mesh, else BasisCurves
  std::vector<int> node;      ///< the node of each point   (npoint)
  std::vector<int> counts;    ///< curveVertexCounts or faceVertexCounts
  std::vector<int> indices;   ///< faceVertexIndices (points of each face), Mesh only
  std::vector<int> face;      ///< the topology's polygon of each face, Mesh only
  std::vector<float> widths;  ///< 2 x radius per point [m], BasisCurves only
  size_t offset = 0;          ///< where its values lie in a record, in floats
};

// the records' exact times [s], in the layer's customLayerData: the time codes are rounded,
// and a resumed run's series goes on from the records a finished file holds
inline constexpr const char* kUsdTimesKey = "slender_record_times";

// the time-sampled attributes of a prim, in the order of a record's values
enum class Per { kPoint, kFace, kExtent };
struct Sampled {
  const char* type;
  const char* name;
  int ncomp;
  Per per;
  const char* interpolation;  // of a primvar, else null
};
inline constexpr Sampled kCurveAttrs[] = {
    {"point3f[]", "points", 3, Per::kPoint, nullptr},
    {"vector3f[]", "velocities", 3, Per::kPoint, nullptr},
    {"float3[]", "extent", 3, Per::kExtent, nullptr},
    {"float[]", "primvars:speed", 1, Per::kPoint, "vertex"},
    {"float[]", "primvars:curvature", 1, Per::kPoint, "vertex"},
    {"float[]", "primvars:twist", 1, Per::kPoint, "vertex"},
    {"float[]", "primvars:twist_angle", 1, Per::kPoint, "vertex"},
};
inline constexpr Sampled kMeshAttrs[] = {
    {"point3f[]", "points", 3, Per::kPoint, nullptr},
    {"vector3f[]", "velocities", 3, Per::kPoint, nullptr},
    {"float3[]", "extent", 3, Per::kExtent, nullptr},
    {"normal3f[]", "normals", 3, Per::kPoint, "vertex"},
    {"float[]", "primvars:speed", 1, Per::kPoint, "vertex"},
    {"float[]", "primvars:bending_energy_density", 1, Per::kFace, "uniform"},
};

template <size_t N>
constexpr size_t count_of(const Sampled (&)[N]) {
  return N;
}

inline const Sampled* attrs_of(const UsdPrim& p) { return p.mesh ? kMeshAttrs : kCurveAttrs; }
inline size_t nattrs_of(const UsdPrim& p) {
  return p.mesh ? count_of(kMeshAttrs) : count_of(kCurveAttrs);
}
inline size_t tuples(const UsdPrim& p, const Sampled& a) {
  return a.per == Per::kPoint ? p.node.size() : a.per == Per::kFace ? p.face.size() : 2;
}
inline size_t floats_of(const UsdPrim& p) {
  size_t n = 0;
  for (size_t k = 0; k < nattrs_of(p); ++k)
    n += tuples(p, attrs_of(p)[k]) * size_t(attrs_of(p)[k].ncomp);
  return n;
}

/// a USD string literal of s: quotes, backslashes and control bytes escaped
std::string usd_string(const std::string& s);

class UsdSeries {
 public:
  /// a series written to `path` (the spool beside it); throws Error for a topology whose ids
  /// are out of range
  UsdSeries(UsdTopology top, std::string path);
  UsdSeries(const UsdSeries&) = delete;
  UsdSeries& operator=(const UsdSeries&) = delete;
  ~UsdSeries();  // an unfinished spool stays (a killed run's: --resume continues it)

  /// opens a new spool (removing an earlier one)
  void begin();
  /// continues the series of an earlier run, cut back to its first `frames` records: its spool
  /// (a run that was killed) or, where that is missing or shorter, the records the finished
  /// file holds (a run that completed its outputs: its text is read back into a spool, exact,
  /// the floats being written in their shortest exact form). The finished file stays until
  /// finish() replaces it. Throws Error naming the file when neither is there, or holds fewer
  /// records, or those of other prims
  void resume(std::uint64_t frames);
  /// spools one record (flushed to the file); its time must lie after the last one's
  void add(const UsdNodeFrame& fr);
  std::uint64_t frames() const { return nframes_; }
  bool is_open() const { return spool_ != nullptr; }
  /// writes the .usda whole (under PATH.part, renamed) and removes the spool; throws Error when
  /// no record was added or a file cannot be written (then nothing unfinished stays)
  void finish();
  /// closes and removes the spool and any unfinished text; never throws
  void abort() noexcept;

  const std::string& path() const { return path_; }
  std::string spool_path() const { return path_ + ".samples.part"; }
  /// bytes of one record in the spool: its time, then its floats
  size_t record_bytes() const { return sizeof(double) + 4 * record_floats_; }
  const std::vector<UsdPrim>& prims() const { return prims_; }

 private:
  void build_prims();
  /// the spool of a finished file's first `frames` records (read back from its text)
  void respool(std::uint64_t frames);
  void write_text(std::FILE* f);
  void write_prim(std::FILE* f, const UsdPrim& p, const std::vector<double>& codes);

  std::string path_;
  UsdTopology top_;
  std::vector<UsdPrim> prims_;
  std::string head_;          // the spool's header: which series it holds
  size_t record_floats_ = 0;  // floats of one record after its time
  std::FILE* spool_ = nullptr;
  std::uint64_t nframes_ = 0;
  Real last_time_ = 0;
};

}  // namespace slender
