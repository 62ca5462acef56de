// The batched linear solves of the vectorized engine (include/slender/engine/batch_solve.h): shells
// and rod-shell structures in a vectorized batch equal single simulators; the dense solver equals
// the banded one on rods (Cholesky on a symmetric cantilever, pivoting LU on the RFT snake);
// PCG takes the dense solver's Newton iterations; repeated runs give the same bits on any
// number of threads; a friction coefficient per environment equals the per-environment engine;
// what the engine cannot take is a clear error. Relative differences are max |a - b| over
// max |b| of the free positions, printed for the record.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "backend/host_executor.h"
#include "guarded_executor.h"
#include "physics_util.h"
#include "slender/backend.h"
#include "slender/batch.h"
#include "slender/builder.h"
#include "slender/compare.h"
#include "slender/core/error.h"
#include "slender/core/parallel_for.h"
#include "slender/engine/batched_simulator_engine.h"
#include "test_util.h"

namespace slender {
namespace {
namespace SLENDER_UNITY_ID {

constexpr Real kG = 9.8;

// a plate with a post jointed to a corner, aerodynamic drag (a non-symmetric Jacobian)
std::shared_ptr<const Model> rod_shell_model() {
  return test::plate_with_post(ShellBending::kMidEdge);
}

// a cantilever rod (symmetric Jacobian)
std::shared_ptr<const Model> cantilever_model() {
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.5);
  const int rod =
      b.straight_rod("r", vec3(0, 0, 0), vec3(0.3, 0, 0), 21, mat, SceneBuilder::circle(0.005));
  b.fix_edge(rod, 0);
  b.gravity(vec3(0, 0, -kG));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 1e-3;
  return build_model(b.build());
}

// one step of both batches: every environment converges in both (fatal otherwise: the caller
// wraps the call in ASSERT_NO_FATAL_FAILURE), in the same Newton iterations; adds b's Newton
// iterations to *iters when given
void step_alike(BatchedSimulator& a, BatchedSimulator& b, int step, long* iters = nullptr) {
  const std::vector<StepStatus> sa = a.step(), sb = b.step();
  for (int e = 0; e < a.nenv(); ++e) {
    ASSERT_EQ(sa[e], StepStatus::kConverged) << "env " << e << " step " << step;
    ASSERT_EQ(sb[e], StepStatus::kConverged) << "env " << e << " step " << step;
    EXPECT_EQ(a.reports()[e].iterations, b.reports()[e].iterations)
        << "env " << e << " step " << step;
    if (iters) *iters += b.reports()[e].iterations;
  }
}

// the largest relative difference of b's positions from a's over the environments, each of
// which must stay below tol
Real worst_difference(const BatchedSimulator& a, const BatchedSimulator& b, Real tol) {
  Real worst = 0;
  for (int e = 0; e < a.nenv(); ++e) {
    const Real d = max_relative_difference(a.state(e).q, b.state(e).q);
    EXPECT_LT(d, tol) << "env " << e;
    worst = std::max(worst, d);
  }
  return worst;
}

BatchedSimulator vectorized(const std::shared_ptr<const Model>& m,
                            int B,
                            LinearSolverKind solver = LinearSolverKind::kAuto) {
  return BatchedSimulator(m, B, m->scene.integrator, solver, BatchEngine::kVectorized);
}

// youngs_scale per environment
const Real kYoungs[] = {1, 0.5, 2, 3};

// shell plates (hinge and mid-edge bending) with per-environment Young's modulus and, for the
// hinges, natural angles: the automatic choice is the dense Cholesky, and every environment
// equals a single simulator (CHOLMOD) within 1e-9 relative over 25 steps, mid-edge frames
// included (two exact solves of one Newton iteration differ at round-off; measured 8e-16 with
// hinges, 1e-14 with mid-edge bending)
TEST(VectorSolvers, ShellPlatesDenseMatchSingleRuns) {
  for (const ShellBending bending : {ShellBending::kHinge, ShellBending::kMidEdge}) {
    const auto m = test::clamped_plate(bending);
    const int B = 4, steps = 25;
    BatchedSimulator batch(m, B, m->scene.integrator, LinearSolverKind::kAuto,
                           BatchEngine::kVectorized);
    EXPECT_EQ(batch.solver_name(), "dense-cholesky");
    std::vector<Real> phi(size_t(B) * m->nhinge, 0);
    for (int k = 0; k < m->nhinge; ++k)
      phi[size_t(3) * m->nhinge + k] = 0.05;
    if (m->nhinge > 0) batch.set_natural_hinge_angle(phi.data());
    for (int e = 0; e < B; ++e) {
      EnvParams p;
      p.youngs_scale = kYoungs[e];
      batch.set_params(e, p);
    }
    for (int k = 0; k < steps; ++k)
      for (StepStatus s : batch.step())
        ASSERT_EQ(s, StepStatus::kConverged) << "step " << k;
    Real worst = 0, worst_tau0 = 0;
    for (int e = 0; e < B; ++e) {
      Simulator single(m);
      EnvParams p;
      p.youngs_scale = kYoungs[e];
      single.set_params(p);
      if (m->nhinge > 0)
        single.set_actuation([&, e](Real, NaturalShape& sh) {
          for (int k = 0; k < m->nhinge; ++k)
            sh.hinge_phi_bar[k] = phi[size_t(e) * m->nhinge + k];
        });
      for (int k = 0; k < steps; ++k)
        ASSERT_TRUE(single.step().ok());
      const State& st = batch.state(e);
      const Real d = max_relative_difference(single.state().q, st.q);
      EXPECT_LT(d, 1e-9) << "env " << e;
      worst = std::max(worst, d);
      if (m->nsedge > 0 && m->nxi > 0) {
        const Real dt0 = max_relative_difference(single.state().sedge_tau0, st.sedge_tau0);
        EXPECT_LT(dt0, 1e-9) << "env " << e;
        worst_tau0 = std::max(worst_tau0, dt0);
        EXPECT_NE(st.sedge_tau0, m->sedge_tau0_0);  // the frames followed the plate
      }
      EXPECT_EQ(st.time, single.state().time);
    }
    std::printf("%s plate, %d free DOF: dense batch vs single runs %.3e (tau0 %.3e)\n",
                bending == ShellBending::kHinge ? "hinge" : "mid-edge", m->plan.nfree, worst,
                worst_tau0);
    // the plates sagged, each in its own way
    Real z = 0;
    for (int n = 0; n < m->nnode; ++n)
      z = std::min(z, batch.state(2).q[3 * n + 2]);
    EXPECT_LT(z, -1e-2);
    EXPECT_GT(max_relative_difference(batch.state(2).q, batch.state(1).q), 1e-3);
  }
}

// a rod-shell joint with drag (non-symmetric: dense pivoting LU) and per-environment density,
// gravity and damping equals single simulators (sparse LU) within 1e-9 relative (measured 1e-15)
TEST(VectorSolvers, RodShellWithDragMatchesSingleRuns) {
  const auto m = rod_shell_model();
  const int B = 3, steps = 20;
  BatchedSimulator batch = vectorized(m, B);
  EXPECT_EQ(batch.solver_name(), "dense-lu");
  std::vector<EnvParams> ps(B);
  ps[1].density_scale = 1.8;
  ps[2].override_gravity = true;
  ps[2].gravity = vec3(0, 0.5, -3);
  ps[2].mass_damping = 2;
  for (int e = 0; e < B; ++e)
    batch.set_params(e, ps[e]);
  for (int k = 0; k < steps; ++k)
    for (StepStatus s : batch.step())
      ASSERT_EQ(s, StepStatus::kConverged) << "step " << k;
  Real worst = 0;
  for (int e = 0; e < B; ++e) {
    Simulator single(m);
    single.set_params(ps[e]);
    for (int k = 0; k < steps; ++k)
      ASSERT_TRUE(single.step().ok());
    const Real d = max_relative_difference(single.state().q, batch.state(e).q);
    EXPECT_LT(d, 1e-9) << "env " << e;
    worst = std::max(worst, d);
  }
  std::printf("rod-shell with drag, %d free DOF: dense LU batch vs single runs %.3e\n",
              m->plan.nfree, worst);
  EXPECT_GT(max_relative_difference(batch.state(2).q, batch.state(1).q), 1e-6);
}

// the dense Cholesky on a symmetric rod equals the banded LU within 1e-10 relative, with the
// same Newton iterations (measured 4e-16)
TEST(VectorSolvers, DenseEqualsBandedOnARod) {
  const auto m = cantilever_model();
  const int B = 4, steps = 40;
  BatchedSimulator band = vectorized(m, B, LinearSolverKind::kBanded);
  BatchedSimulator dense = vectorized(m, B, LinearSolverKind::kDense);
  EXPECT_EQ(band.solver_name(), "banded-lu");
  EXPECT_EQ(dense.solver_name(), "dense-cholesky");
  std::vector<Real> kappa(2 * size_t(B) * m->nbend, 0);
  for (int e = 0; e < B; ++e)
    for (int k = 0; k < m->nbend; ++k)
      kappa[(size_t(e) * m->nbend + k) * 2] = 0.01 * e * std::sin(0.4 * k);
  band.set_natural_curvature(kappa.data());
  dense.set_natural_curvature(kappa.data());
  for (int k = 0; k < steps; ++k)
    ASSERT_NO_FATAL_FAILURE(step_alike(band, dense, k));
  const Real worst = worst_difference(band, dense, 1e-10);
  std::printf("cantilever, %d free DOF: dense Cholesky vs banded LU %.3e\n", m->plan.nfree, worst);
}

// the RFT snake (non-symmetric) forced dense takes pivoting LU and follows the banded path
// within 1e-9 relative over 30 steps of travelling waves (measured 1e-16), with the same
// Newton iterations
TEST(VectorSolvers, SnakeDenseLuMatchesBanded) {
  const auto m =
      build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json"));
  const int B = 3, steps = 30;
  BatchedSimulator band = vectorized(m, B);
  BatchedSimulator dense = vectorized(m, B, LinearSolverKind::kDense);
  EXPECT_EQ(band.solver_name(), "banded-lu");
  EXPECT_EQ(dense.solver_name(), "dense-lu");
  const int nb = m->nbend;
  std::vector<Real> kappa(2 * size_t(B) * nb, 0);
  for (int k = 0; k < steps; ++k) {
    const Real t = (k + 1) * m->scene.integrator.dt;
    for (int e = 0; e < B; ++e)
      for (int j = 0; j < nb; ++j)
        kappa[(size_t(e) * nb + j) * 2 + 1] = (0.02 + 0.006 * e) * std::sin(0.2 * j - 6 * t);
    band.set_natural_curvature(kappa.data());
    dense.set_natural_curvature(kappa.data());
    ASSERT_NO_FATAL_FAILURE(step_alike(band, dense, k));
  }
  const Real worst = worst_difference(band, dense, 1e-9);
  std::printf("snake, %d free DOF: dense LU vs banded LU %.3e\n", m->plan.nfree, worst);
  // the vectorized engine's phase times: both batched phases timed, Newton iterations counted
  const PhaseTimes pt = band.phase_times();
  EXPECT_GT(pt.eval, 0);
  EXPECT_GT(pt.solve, 0);
  EXPECT_EQ(pt.steps, long(B) * steps);
  EXPECT_GE(pt.newton_iters, long(B) * steps);
}

// The GPU executor's choices (kernels/cuda_executor.cuh) run by the host executor, all of them
// in one executor type (one engine instantiation for this file to compile):
// - interleaved storage of the band and dense matrices (entry k of environment e at
//   k nenv + e) and batched CG's running count read every 8 iterations: the same bits as the
//   environment-major storage and the every-iteration read, the same statuses and iterations
//   (banded LU on the snake with per-environment waves, dense Cholesky on the plate, dense LU on
//   the rod-shell model with drag, PCG on the mid-edge plate);
// - the factorizations on a group of lanes per environment (five lanes, where the GPU has a
//   warp's 32, run one after the other, in reverse, with the same begin / column phases / finish
//   steps as a warp): the same bits as one thread per environment, for the banded LU (snake),
//   the dense Cholesky (mid-edge plate) and the dense LU (rod-shell with drag);
// - a staging area per environment (the GPU's shared memory), in which the banded solve gathers
//   the Jacobian and factorizes (env_major::BandGatherSolve), unless SLENDER_BATCH_STAGED=0 when
//   the engine is made (StagedScope below).
// (guarded_executor.h: with the CUDA executor's memory contract too, kHostMemory false and X's
// memory unreadable on the host outside its calls)
using GpuChoicesHostExec = GuardedGpuChoices;

// SLENDER_BATCH_STAGED=1 (or 0) for the engines constructed in a scope
struct StagedScope {
  explicit StagedScope(const char* v = "1") { setenv("SLENDER_BATCH_STAGED", v, 1); }
  ~StagedScope() { unsetenv("SLENDER_BATCH_STAGED"); }
};

// the staged banded solve (gather and factorization in one pass on a staging area, the GPU's
// shared memory) gives the bits of the gather into a band and the factorization on lanes; a
// batch whose environments converge in different iteration counts (masked environments skip)
TEST(VectorSolvers, StagedBandSolveGivesTheSameBits) {
  const auto model =
      build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json"));
  const Model& m = *model;
  const int B = 6, nb = m.nbend;
  const State initial = Simulator(model).state();
  std::unique_ptr<BatchedSimulatorEngineOn<GpuChoicesHostExec>> unstaged, staged;
  {
    StagedScope off("0");
    unstaged = std::make_unique<BatchedSimulatorEngineOn<GpuChoicesHostExec>>(
        model, B, m.scene.integrator, initial, LinearSolverKind::kAuto);
  }
  {
    StagedScope on;
    staged = std::make_unique<BatchedSimulatorEngineOn<GpuChoicesHostExec>>(
        model, B, m.scene.integrator, initial, LinearSolverKind::kAuto);
  }
  BatchedSimulatorEngineOn<GpuChoicesHostExec>& lanes = *unstaged;
  EXPECT_EQ(lanes.solver_name(), "banded-lu-lanes");
  EXPECT_EQ(staged->solver_name(), "banded-lu-lanes-staged");
  // (without the switch a batch of this size is staged: the engine's default)
  EXPECT_EQ(BatchedSimulatorEngineOn<GpuChoicesHostExec>(model, B, m.scene.integrator, initial,
                                                         LinearSolverKind::kAuto)
                .solver_name(),
            "banded-lu-lanes-staged");
  std::vector<Real> kappa(2 * size_t(B) * nb, 0);
  std::vector<unsigned char> mask(B, 1);
  long iters = 0;
  std::vector<int> counts;
  for (int k = 0; k < 15; ++k) {
    for (int e = 0; e < B; ++e)
      for (int j = 0; j < nb; ++j)
        kappa[(size_t(e) * nb + j) * 2 + 1] =  // S8's waves: 10 to 15 1/m times an edge
            (0.10 + 0.01 * e) * std::sin(2 * M_PI * (0.019 * j + 1.9 * 0.01 * k));
    lanes.set_natural_curvature(kappa.data());
    staged->set_natural_curvature(kappa.data());
    mask[k % B] = 0;  // one environment rests each step
    const VectorStepResult a = lanes.step(m.scene.integrator.dt, mask);
    const VectorStepResult b = staged->step(m.scene.integrator.dt, mask);
    mask[k % B] = 1;
    for (int e = 0; e < B; ++e) {
      EXPECT_EQ(a.reports[e].status, b.reports[e].status) << "env " << e << " step " << k;
      EXPECT_EQ(a.reports[e].iterations, b.reports[e].iterations);
      iters += a.reports[e].iterations;
      if (e != k % B) counts.push_back(a.reports[e].iterations);
    }
  }
  EXPECT_GT(iters, 15 * (B - 1));
  // the environments differ in their iteration counts: the masks inside Newton are exercised
  EXPECT_GT(*std::max_element(counts.begin(), counts.end()),
            *std::min_element(counts.begin(), counts.end()));
  std::vector<Real> qa, ua, qb, ub;
  lanes.download_qu(qa, ua);
  staged->download_qu(qb, ub);
  EXPECT_EQ(qa, qb);
  EXPECT_EQ(ua, ub);
}

// actions from the executor's memory (a device array on the GPU; here the host executor's) are
// checked and copied on the executor: the same bits as from the host; a NaN is an error that
// names its environment and leaves the actions as they were
TEST(VectorSolvers, ActionsFromTheExecutorsMemoryEqualActionsFromTheHost) {
  const auto model =
      build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json"));
  const Model& m = *model;
  const int B = 4, nb = m.nbend;
  const State initial = Simulator(model).state();
  // the library's host engine (make_host_batched_engine: one instantiation, in the library)
  const auto host_p =
      make_host_batched_engine(model, B, m.scene.integrator, initial, LinearSolverKind::kAuto);
  const auto exec_p =
      make_host_batched_engine(model, B, m.scene.integrator, initial, LinearSolverKind::kAuto);
  BatchedSimulatorEngine &host = *host_p, &exec = *exec_p;
  std::vector<Real> kappa(2 * size_t(B) * nb, 0), tau(size_t(B) * nb, 0);
  const std::vector<unsigned char> all(B, 1);
  for (int k = 0; k < 8; ++k) {
    for (int e = 0; e < B; ++e)
      for (int j = 0; j < nb; ++j) {
        kappa[(size_t(e) * nb + j) * 2 + 1] = (0.1 + 0.01 * e) * std::sin(0.12 * j - 0.1 * k);
        tau[size_t(e) * nb + j] = 0.01 * e;
      }
    host.set_natural_curvature(kappa.data(), false);
    host.set_natural_twist(tau.data(), false);
    exec.set_natural_curvature(kappa.data(), true);
    exec.set_natural_twist(tau.data(), true);
    if (k == 5) {  // a NaN in environment 2: refused, the actions of step 5 stay
      std::vector<Real> bad = kappa;
      bad[(2 * size_t(nb) + 4) * 2] = std::nan("");
      test::expect_error([&] { exec.set_natural_curvature(bad.data(), true); },
                         "natural curvature: 1 values of environment 2 are not finite");
    }
    const VectorStepResult a = host.step(m.scene.integrator.dt, all);
    const VectorStepResult b = exec.step(m.scene.integrator.dt, all);
    for (int e = 0; e < B; ++e) {
      ASSERT_EQ(a.reports[e].status, StepStatus::kConverged);
      EXPECT_EQ(b.reports[e].status, StepStatus::kConverged);
    }
  }
  std::vector<Real> qa, ua, qb, ub;
  host.download_qu(qa, ua);
  exec.download_qu(qb, ub);
  EXPECT_EQ(qa, qb);
  EXPECT_EQ(ua, ub);
}

TEST(VectorSolvers, FactorizationsOnLanesGiveTheSameBits) {
  struct Case {
    const char* name;
    std::shared_ptr<const Model> m;
    const char* solver;
  };
  const Case cases[] = {
      {"snake",
       build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json")),
       "banded-lu"},
      {"plate", test::clamped_plate(ShellBending::kMidEdge), "dense-cholesky"},
      {"rod-shell", rod_shell_model(), "dense-lu"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Model& m = *c.m;
    const int B = 5, nb = m.nbend;
    const State initial = Simulator(c.m).state();
    const auto plain_p =
        make_host_batched_engine(c.m, B, m.scene.integrator, initial, LinearSolverKind::kAuto);
    BatchedSimulatorEngine& plain = *plain_p;
    StagedScope unstaged("0");  // (the staged banded solve: the test above)
    BatchedSimulatorEngineOn<GpuChoicesHostExec> lanes(c.m, B, m.scene.integrator, initial,
                                                       LinearSolverKind::kAuto);
    EXPECT_EQ(plain.solver_name(), c.solver);
    EXPECT_EQ(lanes.solver_name(), std::string(c.solver) + "-lanes");
    for (int e = 0; e < B; ++e) {  // environments of their own stiffness
      EnvParams p;
      p.youngs_scale = 1 + 0.1 * e;
      plain.set_params(e, p);
      lanes.set_params(e, p);
    }
    std::vector<Real> kappa(2 * size_t(B) * nb, 0);
    const std::vector<unsigned char> all(B, 1);
    long iters = 0;
    for (int k = 0; k < 12; ++k) {
      for (int e = 0; e < B; ++e)
        for (int j = 0; j < nb; ++j)
          kappa[(size_t(e) * nb + j) * 2 + 1] = (0.02 + 0.01 * e) * std::sin(0.2 * j - k);
      if (std::string(c.name) == "snake") {  // (the others keep their natural shapes)
        plain.set_natural_curvature(kappa.data(), false);
        lanes.set_natural_curvature(kappa.data());
      }
      const VectorStepResult a = plain.step(m.scene.integrator.dt, all);
      const VectorStepResult b = lanes.step(m.scene.integrator.dt, all);
      for (int e = 0; e < B; ++e) {
        ASSERT_EQ(a.reports[e].status, StepStatus::kConverged)
            << to_string(a.reports[e].status) << " env " << e << " step " << k;
        EXPECT_EQ(b.reports[e].status, StepStatus::kConverged);
        EXPECT_EQ(a.reports[e].iterations, b.reports[e].iterations);
        iters += a.reports[e].iterations;
      }
    }
    EXPECT_GT(iters, 12 * B);
    std::vector<Real> qa, ua, qb, ub;
    plain.download_qu(qa, ua);
    lanes.download_qu(qb, ub);
    EXPECT_EQ(qa, qb);
    EXPECT_EQ(ua, ub);
  }
}

// host transfers of the vectorized engine (on the GPU each one waits for the device), as the
// host executor's tally counts them (slender/backend.h: every upload and every read on the
// host, each call once), with the GPU's choices (GpuChoicesHostExec: the banded solve staged on
// lanes), over a snake batch's steady stepping (every environment converging in the same
// iterations). Uploads of the masks and step lengths happen only when they change, and the
// banded solve's status comes back with the slopes. Measured: 1.43 host reads and no upload per
// Newton iteration (3.87 reads and 4.87 uploads before the masks and the status stayed on the
// executor).
TEST(VectorSolvers, FewHostTransfersPerNewtonIteration) {
  const auto m =
      build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json"));
  const int B = 4;
  BatchedSimulatorEngineOn<GpuChoicesHostExec> eng(m, B, m->scene.integrator, Simulator(m).state(),
                                                   LinearSolverKind::kAuto);
  EXPECT_EQ(eng.solver_name(), "banded-lu-lanes-staged");
  const std::vector<unsigned char> all(B, 1);
  const int nb = m->nbend;
  std::vector<Real> kappa(2 * size_t(B) * nb, 0);
  for (int e = 0; e < B; ++e)
    for (int j = 0; j < nb; ++j)
      kappa[(size_t(e) * nb + j) * 2 + 1] = 0.03 * std::sin(0.2 * j);
  eng.set_natural_curvature(kappa.data());  // one upload: the same actions for the whole run
  for (int k = 0; k < 3; ++k)               // past the start
    eng.step(m->scene.integrator.dt, all);
  reset_executor_counts();
  long iters = 0;
  for (int k = 0; k < 20; ++k) {
    const VectorStepResult r = eng.step(m->scene.integrator.dt, all);
    for (int e = 0; e < B; ++e) {
      ASSERT_EQ(r.reports[e].status, StepStatus::kConverged);
      iters += r.reports[e].iterations;
    }
  }
  const ExecutorCounts c = executor_counts();
  const double it = double(iters) / B;  // Newton iterations of the batch
  std::printf("per Newton iteration: %.2f host reads, %.2f uploads (%.0f iterations)\n",
              c.host_reads / it, c.uploads / it, it);
  EXPECT_LE(c.uploads / it, 0.5);
  EXPECT_LE(c.host_reads / it, 2.0);
}

TEST(VectorSolvers, InterleavedMatricesGiveTheSameBits) {
  struct Case {
    const char* name;
    std::shared_ptr<const Model> m;
    const char* solver;
    LinearSolverKind kind;
  };
  const Case cases[] = {
      {"snake",
       build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json")),
       "banded-lu", LinearSolverKind::kAuto},
      {"plate", test::clamped_plate(ShellBending::kHinge), "dense-cholesky",
       LinearSolverKind::kAuto},
      {"rod-shell", rod_shell_model(), "dense-lu", LinearSolverKind::kAuto},
      {"plate-pcg", test::clamped_plate(ShellBending::kMidEdge), "pcg", LinearSolverKind::kPcg}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Model& m = *c.m;
    const int B = 5, steps = 12;
    const State initial = Simulator(c.m).state();
    const auto plain_p = make_host_batched_engine(c.m, B, m.scene.integrator, initial, c.kind);
    BatchedSimulatorEngine& plain = *plain_p;
    BatchedSimulatorEngineOn<GpuChoicesHostExec> inter(c.m, B, m.scene.integrator, initial, c.kind);
    EXPECT_EQ(plain.solver_name(), c.solver);
    for (int e = 0; e < B; ++e) {  // environments that converge at their own iterations
      EnvParams p;
      p.youngs_scale = 1 + 0.7 * e;
      plain.set_params(e, p);
      inter.set_params(e, p);
    }
    long cg = 0;
    std::vector<Real> kappa(2 * size_t(B) * m.nbend, 0);
    const std::vector<unsigned char> all(B, 1);
    for (int k = 0; k < steps; ++k) {
      for (int e = 0; e < B; ++e)
        for (int j = 0; j < m.nbend; ++j)
          kappa[(size_t(e) * m.nbend + j) * 2 + 1] = (0.02 + 0.01 * e) * std::sin(0.2 * j - k);
      if (m.nbend > 0) {
        plain.set_natural_curvature(kappa.data(), false);
        inter.set_natural_curvature(kappa.data());
      }
      const VectorStepResult a = plain.step(m.scene.integrator.dt, all);
      const VectorStepResult b = inter.step(m.scene.integrator.dt, all);
      for (int e = 0; e < B; ++e) {
        ASSERT_EQ(a.reports[e].status, StepStatus::kConverged) << "env " << e << " step " << k;
        EXPECT_EQ(a.reports[e].status, b.reports[e].status);
        EXPECT_EQ(a.reports[e].iterations, b.reports[e].iterations);
      }
      EXPECT_EQ(a.solve.pcg_iterations, b.solve.pcg_iterations) << "step " << k;
      cg += b.solve.pcg_iterations;
    }
    if (c.kind == LinearSolverKind::kPcg) {
      EXPECT_GT(cg, 0);
    }
    std::vector<Real> qa, ua, qb, ub;
    plain.download_qu(qa, ua);
    inter.download_qu(qb, ub);
    EXPECT_EQ(qa, qb);
    EXPECT_EQ(ua, ub);
  }
}

// PCG forced on the shell batch: the same Newton iterations as the dense Cholesky at every
// step of every environment, states within 1e-8 relative (CG stops at 1e-12 relative
// residual; measured 6e-16 and 2e-14), and CG converged everywhere (no fallback)
TEST(VectorSolvers, PcgTakesTheDenseIterationsOnShells) {
  for (const ShellBending bending : {ShellBending::kHinge, ShellBending::kMidEdge}) {
    const auto m = test::clamped_plate(bending);
    const int B = 4, steps = 20;
    BatchedSimulator dense = vectorized(m, B, LinearSolverKind::kDense);
    BatchedSimulator pcg = vectorized(m, B, LinearSolverKind::kPcg);
    EXPECT_EQ(pcg.solver_name(), "pcg");
    for (int e = 0; e < B; ++e) {
      EnvParams p;
      p.youngs_scale = kYoungs[e];
      dense.set_params(e, p);
      pcg.set_params(e, p);
    }
    long iters = 0;
    for (int k = 0; k < steps; ++k)
      ASSERT_NO_FATAL_FAILURE(step_alike(dense, pcg, k, &iters));
    const Real worst = worst_difference(dense, pcg, 1e-8);
    for (int e = 0; e < B; ++e)
      EXPECT_EQ(pcg.state(e).warn_linear_fallback, 0) << "env " << e;
    const long cg = pcg.phase_times().linear_iters;
    EXPECT_GT(cg, 0);
    std::printf(
        "%s plate, %d free DOF: PCG vs dense %.3e, %.1f CG iterations per Newton "
        "iteration\n",
        bending == ShellBending::kHinge ? "hinge" : "mid-edge", m->plan.nfree, worst,
        double(cg) / double(iters));
  }
}

// the same batch twice, on one thread and on two: the same bits (dense and PCG). Short runs
// (PCG one step of 3 Newton iterations, about 200 CG iterations of 5 parallel loops each): under
// ctest -j2 the two threads share the cores with another suite, and every parallel loop then
// waits for a time slice
TEST(VectorSolvers, RepeatRunsAreBitIdentical) {
  const auto m = test::clamped_plate(ShellBending::kMidEdge);
  const int B = 4;
  for (const LinearSolverKind kind : {LinearSolverKind::kDense, LinearSolverKind::kPcg}) {
    std::vector<std::vector<Real>> runs;
    for (int threads : {1, 2}) {
      set_host_threads(threads);
      BatchedSimulator batch = vectorized(m, B, kind);
      for (int e = 0; e < B; ++e) {
        EnvParams p;
        p.youngs_scale = 0.5 + 0.4 * e;
        batch.set_params(e, p);
      }
      for (int k = 0; k < (kind == LinearSolverKind::kPcg ? 1 : 2); ++k)
        for (StepStatus s : batch.step())
          ASSERT_EQ(s, StepStatus::kConverged);
      std::vector<Real> q;
      for (int e = 0; e < B; ++e) {
        const std::vector<Real> qe = batch.state(e).q;
        q.insert(q.end(), qe.begin(), qe.end());
      }
      runs.push_back(q);
      set_host_threads(0);
    }
    EXPECT_EQ(runs[0], runs[1]) << (kind == LinearSolverKind::kPcg ? "pcg" : "dense");
  }
}

// the V5 rod on a frictionless floor, pushed along it; the environments' own ground friction
SceneSpec sliding_rod_scene() {
  const Real r = 0.025;
  SceneBuilder b;
  const int mat = b.material("m", 509.3, 1e5, 0.5);
  b.straight_rod("rod", vec3(0, 0, r), vec3(1, 0, r), 26, mat, SceneBuilder::circle(r));
  GroundSpec g;
  g.contact_distance = 5e-4;
  g.friction = 0;
  g.slip_velocity = 1e-3;
  g.stiffness = 2000;
  b.ground(g);
  b.gravity(vec3(0, 0, -kG));
  b.integrator().kind = IntegratorKind::kImplicitEuler;
  b.integrator().dt = 1e-2;
  return b.build();
}

// per-environment ground friction (the model's own 0, 0.1, 0.4, 0.8; one keeps the model's):
// the vectorized engine equals the per-environment engine bit for bit with the banded solver
// (the same arithmetic), and within 1e-9 relative with the dense one (Cholesky for the
// frictionless environments, LU for the others); the friction slows the pushed rod
TEST(VectorSolvers, PerEnvironmentGroundFrictionMatchesThePerEnvironmentEngine) {
  const auto m = build_model(sliding_rod_scene());
  const int B = 5, steps = 30;
  const Real mu[B] = {-1, 0, 0.1, 0.4, 0.8};
  std::vector<Real> forces;
  for (int e = 0; e < B; ++e)
    for (int i = 0; i < m->nnode; ++i) {
      forces.push_back(4.0 / m->nnode);
      forces.push_back(0);
      forces.push_back(0);
    }
  BatchedSimulator per(m, B);
  BatchedSimulator band = vectorized(m, B);
  BatchedSimulator dense = vectorized(m, B, LinearSolverKind::kDense);
  EXPECT_EQ(dense.solver_name(), "dense-cholesky");
  for (BatchedSimulator* b : {&per, &band, &dense}) {
    for (int e = 0; e < B; ++e) {
      EnvParams p;
      p.ground_friction = mu[e];
      b->set_params(e, p);
    }
    b->set_external_forces(forces.data());
  }
  EXPECT_EQ(dense.solver_name(), "dense-cholesky+lu");
  EXPECT_EQ(band.params(3).ground_friction, 0.4);
  for (int k = 0; k < steps; ++k) {
    const std::vector<StepStatus> a = per.step(), b = band.step(), c = dense.step();
    for (int e = 0; e < B; ++e) {
      ASSERT_EQ(a[e], StepStatus::kConverged);
      ASSERT_EQ(b[e], StepStatus::kConverged);
      ASSERT_EQ(c[e], StepStatus::kConverged);
      EXPECT_EQ(per.reports()[e].iterations, band.reports()[e].iterations);
    }
  }
  Real worst = 0;
  for (int e = 0; e < B; ++e) {
    EXPECT_EQ(per.state(e).q, band.state(e).q) << "env " << e;
    EXPECT_EQ(per.state(e).u, band.state(e).u) << "env " << e;
    const Real d = max_relative_difference(per.state(e).q, dense.state(e).q);
    EXPECT_LT(d, 1e-9) << "env " << e;
    worst = std::max(worst, d);
  }
  std::printf("sliding rod with per-environment friction: dense vs per-environment %.3e\n", worst);
  // the friction slowed the rod: the slip of the first node decreases with mu
  const Real x0 = m->node_x0[0];
  Real last = INFINITY;
  for (int e = 1; e < B; ++e) {
    const Real slip = band.state(e).q[0] - x0;
    EXPECT_LT(slip, last) << "env " << e;
    last = slip;
  }
  EXPECT_EQ(band.state(0).q, band.state(1).q);  // the model's own friction is 0
}

// the automatic choice: banded for a rod, dense up to 300 free DOFs (Cholesky, or LU for a
// non-symmetric Jacobian), PCG above (or above 1024 free DOFs whatever the symmetry)
TEST(VectorSolvers, AutomaticChoiceFollowsTheStructure) {
  const auto snake =
      build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/snake.json"));
  EXPECT_EQ(vectorized(snake, 2).solver_name(), "banded-lu");
  EXPECT_EQ(vectorized(test::clamped_plate(ShellBending::kMidEdge), 2).solver_name(),
            "dense-cholesky");
  EXPECT_EQ(vectorized(rod_shell_model(), 2).solver_name(), "dense-lu");
  const auto plate424 = test::clamped_plate(ShellBending::kMidEdge, 0.0125);
  EXPECT_EQ(plate424->plan.nfree, 424);
  EXPECT_EQ(vectorized(plate424, 2).solver_name(), "pcg");
  // the per-environment engine names its Simulators' solver: dense is their sparse Cholesky
  BatchedSimulator per(plate424, 2, plate424->scene.integrator, LinearSolverKind::kDense);
  EXPECT_TRUE(per.solver_name() == "cholmod" || per.solver_name() == "eigen-ldlt")
      << per.solver_name();
}

// what the engine cannot take says so
TEST(VectorSolvers, UnsupportedRequestsAreClearErrors) {
  // a plate of more than 1024 free DOFs: over the dense solver's size cap; auto takes PCG
  SceneBuilder b;
  const int mat = b.material("m", 1000, 1e6, 0.3);
  const int s = b.rectangle_shell("plate", vec3(0, 0, 0), vec3(0.2, 0, 0), vec3(0, 0.2, 0), 0.01,
                                  true, mat, 1e-3);
  b.membrane(s, MembraneModel::kSprings);
  b.fix_node(s, 0).fix_node(s, 1);
  const auto big = build_model(b.build());
  ASSERT_GT(big->plan.nfree, 1024);
  test::expect_error([&] { vectorized(big, 2, LinearSolverKind::kDense); }, "up to 1024 free DOFs");
  EXPECT_EQ(vectorized(big, 2).solver_name(), "pcg");
  // the dense matrices of 20,000 plates of 3 x 10^2 free DOFs: 14 GiB, over the memory cap
  const auto plate = test::clamped_plate(ShellBending::kMidEdge);
  test::expect_error([&] { vectorized(plate, 20000, LinearSolverKind::kDense); },
                     "more than the cap");
  // the sparse direct solvers are the per-environment engine's
  test::expect_error([&] { vectorized(plate, 2, LinearSolverKind::kCholmod); }, "per-environment");
  // PCG needs a symmetric Jacobian: not with drag, nor once an environment has friction
  test::expect_error([&] { vectorized(rod_shell_model(), 2, LinearSolverKind::kPcg); },
                     "symmetric");
  const auto rod = build_model(sliding_rod_scene());
  BatchedSimulator cg = vectorized(rod, 2, LinearSolverKind::kPcg);
  EnvParams fr;
  fr.ground_friction = 0.3;
  test::expect_error([&] { cg.set_params(1, fr); }, "non-symmetric");
  // a band too wide for the banded solver
  test::expect_error([&] { vectorized(big, 2, LinearSolverKind::kBanded); }, "narrow band");
}

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender
