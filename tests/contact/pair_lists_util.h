#pragma once

// Helpers shared by the contact-pipeline suites (host executor and GPU): the example scenes and
// the comparison of two sub-pair lists entry for entry.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "contact/pairs.h"
#include "slender/builder.h"
#include "slender/model.h"

namespace slender::contact::test {

/// a scene of apps/scenes/, built
inline std::shared_ptr<const Model> load_scene(const std::string& name) {
  return build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + name));
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
