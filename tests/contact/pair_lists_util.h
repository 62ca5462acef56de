#pragma once

// Helpers shared by the contact-pipeline suites (host executor and GPU): the example scenes and
// the comparison of two sub-pair lists entry for entry.

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "slender/builder.h"
#include "slender/engine/contact_pairs.h"
#include "slender/model.h"

namespace slender::contact::test {

/// a scene of apps/scenes/, built
inline std::shared_ptr<const Model> load_scene(const std::string& name) {
  return build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + name));
}

/// the contact suite's settings on a scene being built: contact between bodies with a 1 mm
/// tolerance, steps of 1 ms
inline void contact_at_1mm(SceneBuilder& b) {
  ContactSpec c;
  c.enabled = true;
  c.tolerance = 1e-3;
  b.contact(c);
  b.integrator().dt = 1e-3;
}

/// a 60 x 20 mm sheet of 2 mm edges, 3 mm thick (contact distance 3 mm, tolerance 1 mm): finer
/// than its contact range, so that each triangle's second ring lies within it at rest
inline std::shared_ptr<const Model> fine_sheet(bool gravity) {
  SceneBuilder b;
  const int mat = b.material("cloth", 300, 1e6, 0.3);
  b.rectangle_shell("sheet", vec3(0, 0, 0.05), vec3(0.06, 0, 0), vec3(0, 0.02, 0), 0.002, false,
                    mat, 0.003);
  b.membrane(int(b.spec().parts.size()) - 1, MembraneModel::kSprings);
  contact_at_1mm(b);
  if (gravity) b.gravity(vec3(0, 0, -9.81));
  return build_model(b.build());
}

/// positions of model m (from its rest shape) with every node scattered at random over a 10 cm
/// square in a 2 mm layer about z = 0: on the cloth scene, every triangle crosses dozens of others
inline std::vector<Real> scattered_nodes(const Model& m, unsigned seed) {
  std::vector<Real> q(m.node_x0.begin(), m.node_x0.end());
  q.resize(size_t(m.ndof), 0.0);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<Real> unit(-1, 1);
  for (int i = 0; i < m.nnode; ++i) {
    q[3 * size_t(i)] = 0.05 * unit(rng);
    q[3 * size_t(i) + 1] = 0.05 * unit(rng);
    q[3 * size_t(i) + 2] = 1e-3 * unit(rng);
  }
  return q;
}

/// got == want entry for entry: node lists, contact distances and friction coefficients
inline void expect_same_pairs(const ContactPairLists& got,
                              const ContactPairLists& want,
                              const std::string& what) {
  EXPECT_EQ(got.ee_node, want.ee_node) << what << ": edge pairs";
  EXPECT_EQ(got.ee_d, want.ee_d) << what;
  EXPECT_EQ(got.ee_mu, want.ee_mu) << what;
  EXPECT_EQ(got.pt_node, want.pt_node) << what << ": vertex-triangle pairs";
  EXPECT_EQ(got.pt_d, want.pt_d) << what;
  EXPECT_EQ(got.pt_mu, want.pt_mu) << what;
}

}  // namespace slender::contact::test
