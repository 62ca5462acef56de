// Shell meshes: parallelogram (structured grid or triangular lattice), disk, hexagon and
// hemisphere generators, and the topology check of a part's triangles (ids, areas,
// manifoldness, consistent winding).

#include "io/mesh.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "slender/core/error.h"

namespace slender {

namespace {

long g_max_generated_nodes = 10000000;

[[noreturn]] void misuse(const std::string& field, const std::string& message) {
  throw InputError("", 0, field, message);
}

bool finite3(const Vec3& v) { return is_finite(v[0]) && is_finite(v[1]) && is_finite(v[2]); }

void check_point(const Vec3& x, const std::string& field) {
  if (!finite3(x)) misuse(field, "not finite");
}

// a nonzero finite direction, returned normalized
Vec3 check_direction(const Vec3& d, const std::string& field) {
  const Real len = norm(d);
  if (!(len > 0) || !is_finite(len)) misuse(field, "must be a nonzero vector");
  return d / len;
}

void check_length(Real x, const std::string& field) {
  if (!(x > 0) || !is_finite(x)) misuse(field, "must be positive and finite");
}

void check_count(double nodes, const std::string& method) {
  if (nodes > double(max_generated_nodes())) {
    misuse(method + ".edge_length", "too many nodes (about " + std::to_string(nodes) +
                                        ", at most " + std::to_string(max_generated_nodes()) +
                                        "): is the edge length in metres?");
  }
}

// number of segments of about `target` length in `length`, at least one
double segments(Real length, Real target) { return std::max(1.0, std::round(length / target)); }

void add_triangle(GeometryFile& g, int a, int b, int c) { g.triangles.push_back({a, b, c}); }

// ---- parallelogram -----------------------------------------------------------------------

// nu x nv cells, each split along the shorter diagonal; node j (nu + 1) + i
void grid_triangles(GeometryFile& g, int nu, int nv, bool main_diagonal) {
  for (int j = 0; j < nv; ++j) {
    for (int i = 0; i < nu; ++i) {
      const int p00 = j * (nu + 1) + i, p10 = p00 + 1;
      const int p01 = p00 + nu + 1, p11 = p01 + 1;
      if (main_diagonal) {
        add_triangle(g, p00, p10, p11);
        add_triangle(g, p00, p11, p01);
      } else {
        add_triangle(g, p00, p10, p01);
        add_triangle(g, p10, p11, p01);
      }
    }
  }
}

// the strip between a full row e (nu + 1 nodes at i/nu) and a shifted row o (nu + 2 nodes at
// 0, (k - 1/2)/nu, 1): 2 nu + 1 triangles, counterclockwise whichever row is below
void lattice_strip(GeometryFile& g, int e, int o, int nu, bool e_below) {
  if (e_below) {
    add_triangle(g, e, o + 1, o);
    for (int k = 1; k <= nu; ++k) {
      add_triangle(g, e + k - 1, e + k, o + k);
      if (k < nu) add_triangle(g, e + k, o + k + 1, o + k);
    }
    add_triangle(g, e + nu, o + nu + 1, o + nu);
  } else {
    add_triangle(g, o, o + 1, e);
    for (int k = 1; k <= nu; ++k) {
      add_triangle(g, o + k, e + k, e + k - 1);
      if (k < nu) add_triangle(g, o + k, o + k + 1, e + k);
    }
    add_triangle(g, o + nu, o + nu + 1, e + nu);
  }
}

// ---- concentric rings (disk, hexagon, hemisphere) ----------------------------------------

// the triangles between ring a (ma nodes from sa) and ring b (mb >= ma nodes from sb), both
// starting at angle 0 and counterclockwise: walk both rings at once and always advance the one
// whose next node comes first (ties: the inner one), comparing the fractions of a turn
// (i + 1) / ma and (j + 1) / mb exactly in integers
void zip_rings(GeometryFile& g, int sa, int ma, int sb, int mb) {
  int i = 0, j = 0;
  while (i < ma || j < mb) {
    const bool inner = j == mb || (i < ma && long(i + 1) * mb <= long(j + 1) * ma);
    if (inner) {
      add_triangle(g, sa + i, sb + j % mb, sa + (i + 1) % ma);
      ++i;
    } else {
      add_triangle(g, sa + i % ma, sb + j, sb + (j + 1) % mb);
      ++j;
    }
  }
}

// node 0 at `pole`, then ring k = 1.. of count[k] nodes at point(k, j, count[k])
template <class Point>
GeometryFile ring_mesh(const Vec3& pole, const std::vector<int>& count, const Point& point) {
  GeometryFile g;
  g.nodes.push_back(pole);
  std::vector<int> start(count.size(), 0);
  for (size_t k = 1; k < count.size(); ++k) {
    start[k] = int(g.nodes.size());
    for (int j = 0; j < count[k]; ++j) {
      g.nodes.push_back(point(int(k), j, count[k]));
    }
  }
  for (int j = 0; j < count[1]; ++j) {
    add_triangle(g, 0, 1 + j, 1 + (j + 1) % count[1]);
  }
  for (size_t k = 2; k < count.size(); ++k) {
    zip_rings(g, start[k - 1], count[k - 1], start[k], count[k]);
  }
  return g;
}

// 6k nodes on ring k = 1..nr (the hexagonal lattice's ring sizes)
std::vector<int> hexagonal_counts(int nr) {
  std::vector<int> count(size_t(nr) + 1, 1);
  for (int k = 1; k <= nr; ++k) {
    count[size_t(k)] = 6 * k;
  }
  return count;
}

// the in-plane axes e1 = unit_normal_to(n) and e2 = n x e1, so that e1 x e2 = n
struct PlaneAxes {
  Vec3 e1, e2;
};
PlaneAxes plane_axes(const Vec3& n) {
  const Vec3 e1 = unit_normal_to(n);
  return {e1, cross(n, e1)};
}

}  // namespace

long max_generated_nodes() { return g_max_generated_nodes; }
void set_max_generated_nodes(long n) { g_max_generated_nodes = n; }

Vec3 unit_normal_to(const Vec3& a) {
  int k = 0;
  for (int i = 1; i < 3; ++i) {
    if (std::fabs(a[i]) < std::fabs(a[k])) {
      k = i;
    }
  }
  Vec3 e = Vec3::zero();
  e[k] = 1;
  const Vec3 u = e - dot(e, a) * a;
  return u / norm(u);
}

GeometryFile rectangle_mesh(
    const Vec3& origin, const Vec3& u, const Vec3& v, Real edge_length, bool structured) {
  check_point(origin, "rectangle_shell.origin");
  check_direction(u, "rectangle_shell.u");
  check_direction(v, "rectangle_shell.v");
  check_length(edge_length, "rectangle_shell.edge_length");
  if (!(norm(cross(u, v)) > 1e-12 * norm(u) * norm(v))) {
    misuse("rectangle_shell.v", "u and v are parallel: they must span a parallelogram");
  }
  const Real row = structured ? edge_length : edge_length * std::sqrt(Real(3)) / 2;
  const double nu_real = segments(norm(u), edge_length), nv_real = segments(norm(v), row);
  check_count((nu_real + 2) * (nv_real + 1), "rectangle_shell");
  const int nu = int(nu_real), nv = int(nv_real);
  auto at = [&](Real s, Real t) { return origin + s * u + t * v; };

  GeometryFile g;
  if (structured) {
    for (int j = 0; j <= nv; ++j) {
      for (int i = 0; i <= nu; ++i) {
        g.nodes.push_back(at(Real(i) / nu, Real(j) / nv));
      }
    }
    // the main diagonal unless it is clearly the longer one (u and v at an acute angle)
    const Vec3 du = u / Real(nu), dv = v / Real(nv);
    const bool main = 4 * dot(du, dv) <= 1e-9 * (squared_norm(du) + squared_norm(dv));
    grid_triangles(g, nu, nv, main);
    return g;
  }

  // triangular lattice: even rows at i/nu, odd rows shifted by half a cell and closed by a
  // node on each side, so that the mesh covers the parallelogram exactly
  std::vector<int> row_start;
  for (int j = 0; j <= nv; ++j) {
    row_start.push_back(int(g.nodes.size()));
    const Real t = Real(j) / nv;
    if (j % 2 == 0) {
      for (int i = 0; i <= nu; ++i) {
        g.nodes.push_back(at(Real(i) / nu, t));
      }
    } else {
      g.nodes.push_back(at(0, t));
      for (int k = 1; k <= nu; ++k) {
        g.nodes.push_back(at((k - Real(0.5)) / nu, t));
      }
      g.nodes.push_back(at(1, t));
    }
  }
  for (int j = 0; j < nv; ++j) {
    const bool even = j % 2 == 0;
    const int below = row_start[size_t(j)], above = row_start[size_t(j) + 1];
    lattice_strip(g, even ? below : above, even ? above : below, nu, even);
  }
  return g;
}

GeometryFile disk_mesh(const Vec3& center, const Vec3& normal, Real radius, Real edge_length) {
  check_point(center, "disk_shell.center");
  const Vec3 n = check_direction(normal, "disk_shell.normal");
  check_length(radius, "disk_shell.radius");
  check_length(edge_length, "disk_shell.edge_length");
  const double nr_real = segments(radius, edge_length);
  check_count(1 + 3 * nr_real * (nr_real + 1), "disk_shell");
  const int nr = int(nr_real);
  const PlaneAxes ax = plane_axes(n);
  const Vec3 e1 = ax.e1, e2 = ax.e2;
  return ring_mesh(center, hexagonal_counts(nr), [&](int k, int j, int m) {
    const Real r = radius * Real(k) / Real(nr), theta = 2 * kPi * Real(j) / Real(m);
    return center + r * (std::cos(theta) * e1 + std::sin(theta) * e2);
  });
}

GeometryFile hexagon_mesh(const Vec3& center, const Vec3& normal, Real side, Real edge_length) {
  check_point(center, "hexagon_shell.center");
  const Vec3 n = check_direction(normal, "hexagon_shell.normal");
  check_length(side, "hexagon_shell.side");
  check_length(edge_length, "hexagon_shell.edge_length");
  const double nr_real = segments(side, edge_length);
  check_count(1 + 3 * nr_real * (nr_real + 1), "hexagon_shell");
  const int nr = int(nr_real);
  const PlaneAxes ax = plane_axes(n);
  const Vec3 e1 = ax.e1, e2 = ax.e2;
  Vec3 corner[7];
  for (int s = 0; s < 6; ++s) {
    const Real a = kPi / 3 * Real(s);
    corner[s] = std::cos(a) * e1 + std::sin(a) * e2;
  }
  corner[6] = corner[0];
  // node a of sector s on ring k: the lattice point (k - a) corner_s + a corner_s+1
  return ring_mesh(center, hexagonal_counts(nr), [&](int k, int j, int) {
    const int s = j / k, a = j % k;
    return center + (side / Real(nr)) * (Real(k - a) * corner[s] + Real(a) * corner[s + 1]);
  });
}

GeometryFile hemisphere_mesh(const Vec3& center, const Vec3& axis, Real radius, Real edge_length) {
  check_point(center, "hemisphere_shell.center");
  const Vec3 a = check_direction(axis, "hemisphere_shell.axis");
  check_length(radius, "hemisphere_shell.radius");
  check_length(edge_length, "hemisphere_shell.edge_length");
  const double nr_real = segments(kPi * radius / 2, edge_length);
  check_count(1 + nr_real * (segments(2 * kPi * radius, edge_length) + 3), "hemisphere_shell");
  const int nr = int(nr_real);
  const PlaneAxes ax = plane_axes(a);
  const Vec3 e1 = ax.e1, e2 = ax.e2;

  // polar angle of ring k; the rim (k = nr) exactly on the equator
  auto sin_cos = [&](int k) -> std::pair<Real, Real> {
    if (k == nr) return {1, 0};
    const Real phi = kPi / 2 * Real(k) / Real(nr);
    return {std::sin(phi), std::cos(phi)};
  };
  std::vector<int> count(size_t(nr) + 1, 1);
  for (int k = 1; k <= nr; ++k) {
    const Real circumference = 2 * kPi * radius * sin_cos(k).first;
    count[size_t(k)] = int(std::max(3.0, std::round(circumference / edge_length)));
  }
  return ring_mesh(center + radius * a, count, [&](int k, int j, int m) {
    const auto [s, c] = sin_cos(k);
    const Real theta = 2 * kPi * Real(j) / Real(m);
    return center + radius * (s * (std::cos(theta) * e1 + std::sin(theta) * e2) + c * a);
  });
}

}  // namespace slender
