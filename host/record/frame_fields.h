#pragma once

// What the picture-making recorders (VTK, USD) draw of a model and a recorded state, computed
// once here for both: rods as polylines (runs of consecutive edges of a part), a radius per
// node, and the node fields the frames carry (curvature, twist, twist angle). Internal to
// host/record.

#include <algorithm>
#include <cmath>
#include <vector>

#include "slender/model.h"
#include "slender/record.h"

namespace slender {

/// Rods as polyline cells: each run of consecutive edges of a part (edge k ends where edge
/// k + 1 starts) is one cell, so a tube drawn along it has no seams. Edges outside every part
/// get part -1; the triangle edges that a rod-shell joint gave frames and twists (no stretching
/// stiffness of their own) are left out, the triangles draw them.
struct PolylineCells {
  std::vector<int> conn;       ///< node ids of the cells, concatenated
  std::vector<int> offsets;    ///< end of each cell in conn   (ncell)
  std::vector<int> cell_part;  ///< part of each cell, -1 for stray edges   (ncell)
};

inline PolylineCells polyline_cells(const Model& m) {
  PolylineCells c;
  std::vector<char> covered(m.nedge, 0);
  auto close_cell = [&] {
    if (c.offsets.size() < c.cell_part.size()) c.offsets.push_back(int(c.conn.size()));
  };
  auto add_edges = [&](int p, const int* edges, int n) {
    int tail = -1;  // last node of the open cell of this part
    for (int k = 0; k < n; ++k) {
      const int e = edges[k];
      if (e < 0 || e >= m.nedge) continue;
      covered[e] = 1;
      const int a = m.edge_node[2 * e], b = m.edge_node[2 * e + 1];
      if (a != tail) {
        close_cell();
        c.conn.push_back(a);
        c.cell_part.push_back(p);
      }
      c.conn.push_back(b);
      tail = b;
    }
    close_cell();
  };
  const int npart = int(m.part_edge_adr.size()) - 1;
  for (int p = 0; p < npart; ++p) {
    const int adr = m.part_edge_adr[p], num = m.part_edge_adr[p + 1] - adr;
    add_edges(p, m.part_edge.data() + adr, num);
  }
  for (int e = 0; e < m.nedge; ++e) {
    if (!covered[e] && m.edge_EA[e] > 0) add_edges(-1, &e, 1);
  }
  return c;
}

/// radius of each node [m]: the largest of its edges, 0 for a node without edges   (nnode)
inline std::vector<Real> node_radius(const Model& m) {
  std::vector<Real> radius(m.nnode, 0);
  for (int e = 0; e < m.nedge; ++e) {
    const Real r = e < int(m.edge_radius.size()) ? m.edge_radius[e] : Real(0);
    for (int a = 0; a < 2; ++a) {
      Real& nr = radius[m.edge_node[2 * e + a]];
      nr = std::max(nr, r);
    }
  }
  return radius;
}

/// Per node strains from the bend-twist stencils centred there (0 elsewhere, or when the frame
/// has no strains): where several meet (a joint), the largest curvature |(kappa1, kappa2)|
/// [1/m] and the twist tau of largest magnitude [rad/m]   (nnode each)
inline void node_strains(const Model& m,
                         const RecordFrame& fr,
                         std::vector<Real>& curvature,
                         std::vector<Real>& twist) {
  curvature.assign(m.nnode, 0);
  twist.assign(m.nnode, 0);
  if (int(fr.bend_strains.size()) < 3 * m.nbend) return;
  for (int k = 0; k < m.nbend; ++k) {
    const int c = m.bend_node[3 * k + 1];
    const Real* st = &fr.bend_strains[3 * k];
    curvature[c] = std::max(curvature[c], std::hypot(st[0], st[1]));
    if (std::fabs(st[2]) > std::fabs(twist[c])) twist[c] = st[2];
  }
}

/// twist angle theta of each node [rad]: the mean of its edges' twist DOFs, 0 for a node
/// without edges   (nnode)
inline std::vector<Real> node_twist_angle(const Model& m, const State& s) {
  const int nn = m.nnode;
  std::vector<Real> theta(nn, 0), count(nn, 0);
  for (int e = 0; e < m.nedge; ++e) {
    for (int a = 0; a < 2; ++a) {
      theta[m.edge_node[2 * e + a]] += s.q[3 * size_t(nn) + e];
      count[m.edge_node[2 * e + a]] += 1;
    }
  }
  for (int i = 0; i < nn; ++i) {
    if (count[i] > 0) theta[i] /= count[i];
  }
  return theta;
}

}  // namespace slender
