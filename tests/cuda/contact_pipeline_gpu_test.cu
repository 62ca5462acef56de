// The contact pipeline on the GPU (CUDA executor: CUB sorts and scans, the LBVH kernels) against
// the brute-force reference of the lists (contact/reference_pairs.h), which the host executor's
// run of the same pipeline also equals: equal lists on the contact scenes' disturbed states and
// along a run, a steady state reports no change, and a large cloth-like sheet (the S9 shape)
// works beyond one block of threads and outgrows the walk's first room for candidates.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "contact/pair_lists_util.h"
#include "contact/reference_pairs.h"
#include "cuda/gpu_test_util.h"
#include "cuda_executor.cuh"
#include "device_buffer.cuh"
#include "slender/builder.h"
#include "slender/engine/contact_pipeline.h"
#include "slender/simulator.h"

namespace slender::contact {
namespace {

using GpuPipeline = ContactPipeline<CudaExecutor>;

using test::load_scene;

void expect_same(const Model& m,
                 GpuPipeline& pipe,
                 const std::vector<Real>& q,
                 const std::vector<Real>& u,
                 Real dt,
                 const std::string& what) {
  const ContactPairLists want = test::reference_pairs(m, q.data(), u.data(), dt).lists;
  ContactPairLists got;
  DeviceBuffer<Real> dq(q), du(u);
  pipe.find(dq.data(), du.data(), dt);
  pipe.download(got);
  test::expect_same_pairs(got, want, what);
}

TEST(ContactPipelineGpu, EqualsTheReferenceOnDisturbedStates) {
  SLENDER_REQUIRE_GPU();
  for (const char* name :
       {"plate_contact.json", "gripper.json", "shell_fold.json", "cloth_drop.json"}) {
    const auto m = load_scene(name);
    Simulator sim(m);
    const Real dt = m->scene.integrator.dt;
    GpuPipeline pipe(*m);
    std::mt19937 rng(11);
    std::uniform_real_distribution<Real> unit(-1, 1);
    const Real h = m->nedge ? m->edge_l_bar[0] : m->sedge_l_bar[0];
    for (int trial = 0; trial < 3; ++trial) {
      std::vector<Real> q = sim.state().q, u = sim.state().u;
      for (int i = 0; i < 3 * m->nnode; ++i) {
        q[i] += 0.6 * h * unit(rng) * (trial > 0);
        u[i] = (h / dt) * unit(rng) * (trial > 1);
      }
      expect_same(*m, pipe, q, u, dt, std::string(name) + " trial " + std::to_string(trial));
    }
  }
}

TEST(ContactPipelineGpu, EqualsTheReferenceAlongARunAndIsSteady) {
  SLENDER_REQUIRE_GPU();
  const auto m = load_scene("plate_contact.json");
  Simulator sim(m);
  const Real dt = m->scene.integrator.dt;
  GpuPipeline pipe(*m);
  for (int step = 0; step < 120; ++step) {
    if (step % 10 == 0)
      expect_same(*m, pipe, sim.state().q, sim.state().u, dt, "step " + std::to_string(step));
    ASSERT_TRUE(sim.step().ok());
  }
  DeviceBuffer<Real> dq(sim.state().q), du(sim.state().u);
  pipe.find(dq.data(), du.data(), dt);
  EXPECT_FALSE(pipe.find(dq.data(), du.data(), dt));
}

// the cloth scene's nodes scattered at random over a 10 cm square in a 2 mm layer: every
// triangle crosses dozens of others (many blocks of threads, thousands of candidates: more than
// the walk's first room holds, so that it walks again)
TEST(ContactPipelineGpu, ScatteredSheet) {
  SLENDER_REQUIRE_GPU();
  const auto m = load_scene("cloth_drop.json");
  const std::vector<Real> q = test::scattered_nodes(*m, 3), u(q.size(), 0.0);
  GpuPipeline pipe(*m);
  expect_same(*m, pipe, q, u, m->scene.integrator.dt, "scattered sheet");
  EXPECT_GT(pipe.candidates_tt(), 10 * long(m->nedge + m->ntri)) << "beyond the first room";
  expect_same(*m, pipe, q, u, m->scene.integrator.dt, "scattered sheet, again");
}

}  // namespace
}  // namespace slender::contact
