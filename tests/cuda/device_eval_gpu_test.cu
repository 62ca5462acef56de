// The CUDA backend's evaluation layer against the CPU backend: a DeviceModel (the model's arrays
// uploaded once) and the binding functors launched by parallel_for_cuda must give, for every
// stencil family of real models at perturbed states, the local energies, gradients, Hessians and
// flags the host loop gives (1e-12 relative: the same code, only FMA contraction may differ);
// the deterministic gather assembly of the residual and the CSR Jacobian values must agree as
// well, and two device runs must be bit-identical. Skipped without a device.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cuda/gpu_models.h"
#include "cuda/gpu_test_util.h"
#include "device_buffer.cuh"
#include "device_model.h"
#include "launch.cuh"
#include "model/model_internal.h"
#include "slender/builder.h"
#include "slender/core/parallel_for.h"
#include "slender/engine/assemble.h"
#include "slender/state.h"

namespace slender {
namespace {

constexpr Real kRelTol = 1e-12;

/// max |a - b| / max |b| (0 when both are zero)
Real rel_diff(const std::vector<Real>& a, const std::vector<Real>& b) {
  Real d = 0, s = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, std::fabs(a[i] - b[i]));
    s = std::max(s, std::fabs(b[i]));
  }
  return s > 0 ? d / s : d;
}

/// The host inputs of one evaluation and their device copies.
struct Inputs {
  std::vector<Real> q, d1, ref, kappa, tau, phi, mid, q_hat, u_hat, tau0, stretch;
  DeviceBuffer<Real> dq, dd1, dref, dkappa, dtau, dphi, dmid, dq_hat, du_hat, dtau0, dstretch;
  EvalView host{}, dev{};
};

/// a perturbed state: positions moved by up to 1 mm, twists by 0.05 rad, velocity offsets random
void make_inputs(const Model& m, std::mt19937_64& rng, Inputs& in) {
  std::uniform_real_distribution<Real> u(-1, 1);
  in.q = initial_state(m).q;
  for (int i = 0; i < m.ndof; ++i)
    in.q[i] += i < 3 * m.nnode ? 1e-3 * u(rng) : 0.05 * u(rng);
  in.d1 = m.edge_d1_0;
  in.ref = m.bend_ref_twist_0;
  in.kappa = m.bend_kappa_bar;
  in.tau = m.bend_tau_bar;
  in.phi = m.hinge_phi_bar;
  in.mid.resize(3 * size_t(m.nmid));  // an actuated mid-edge curvature [1/m]
  for (Real& v : in.mid)
    v = 5 * u(rng);
  in.q_hat = initial_state(m).q;
  in.u_hat.resize(m.ndof);
  for (Real& v : in.u_hat)
    v = 0.1 * u(rng);
  in.tau0 = m.sedge_tau0_0;
  in.dq.upload(in.q);
  in.dd1.upload(in.d1);
  in.dref.upload(in.ref);
  in.dkappa.upload(in.kappa);
  in.dtau.upload(in.tau);
  in.dphi.upload(in.phi);
  in.dmid.upload(in.mid);
  in.stretch.resize(size_t(m.nedge));  // an actuated natural stretch of the rod edges
  for (Real& v : in.stretch)
    v = 1 + 0.1 * u(rng);
  in.dstretch.upload(in.stretch);
  in.dq_hat.upload(in.q_hat);
  in.du_hat.upload(in.u_hat);
  in.dtau0.upload(in.tau0);
  const Real c_u = 100;
  in.host = EvalView{1,
                     in.q.data(),
                     in.d1.data(),
                     in.ref.data(),
                     in.kappa.data(),
                     in.tau.data(),
                     in.phi.data(),
                     in.mid.data(),
                     0,
                     in.q_hat.data(),
                     in.u_hat.data(),
                     c_u,
                     in.tau0.data(),
                     nullptr,
                     nullptr,
                     0,
                     0,
                     0,
                     0,
                     0,
                     in.stretch.data(),
                     0};
  in.dev = EvalView{1,
                    in.dq.data(),
                    in.dd1.data(),
                    in.dref.data(),
                    in.dkappa.data(),
                    in.dtau.data(),
                    in.dphi.data(),
                    in.dmid.data(),
                    0,
                    in.dq_hat.data(),
                    in.du_hat.data(),
                    c_u,
                    in.dtau0.data(),
                    nullptr,
                    nullptr,
                    0,
                    0,
                    0,
                    0,
                    0,
                    in.dstretch.data(),
                    0};
}

/// The local-result pools of every family (the plan's layout), host and device.
struct Pools {
  std::vector<Real> E, g, H;
  std::vector<unsigned> flags;
  DeviceBuffer<Real> dE, dg, dH;
  DeviceBuffer<unsigned> dflags;
  explicit Pools(const AssemblyPlan& p)
      : E(p.energy_pool),
        g(p.grad_pool),
        H(p.hess_pool),
        flags(p.energy_pool),
        dE(p.energy_pool),
        dg(p.grad_pool),
        dH(p.hess_pool),
        dflags(p.energy_pool) {}
};

template <class B>
long eval_family(Family f,
                 const AssemblyPlan& p,
                 const ModelView& hv,
                 const ModelView& dv,
                 const Inputs& in,
                 Pools& pools) {
  constexpr int D = B::kDofs;
  const long n = B::count(hv);
  const LocalBuffers<D> hb{pools.E.data() + p.e_off[f],
                           pools.g.data() + p.g_off[f],
                           pools.H.data() + p.h_off[f],
                           pools.flags.data() + p.e_off[f],
                           n,
                           0,
                           0,
                           0};
  const LocalBuffers<D> db{pools.dE.data() + p.e_off[f],
                           pools.dg.data() + p.g_off[f],
                           pools.dH.data() + p.h_off[f],
                           pools.dflags.data() + p.e_off[f],
                           n,
                           0,
                           0,
                           0};
  parallel_for_host(n, EvalStencils<B>{hv, in.host, n, kGradHess, hb});
  parallel_for_cuda(n, EvalStencils<B>{dv, in.dev, n, kGradHess, db});
  return n;
}

/// every family, then the gather assembly: residual f (nfree) and CSR values (nnz)
struct Assembled {
  std::vector<Real> E, g, H, f, val;
  std::vector<unsigned> flags;
  long stencils = 0;
};

void evaluate(
    const Model& m, const DeviceModel& dm, const Inputs& in, Assembled& host, Assembled& dev) {
  const AssemblyPlan& p = m.plan;
  const ModelView hv = host_view(m), dv = dm.view();
  Pools pools(p);
  long n = 0;
  n += eval_family<RodStretchBinding>(kFamStretch, p, hv, dv, in, pools);
  n += eval_family<RodBendTwistBinding>(kFamBendTwist, p, hv, dv, in, pools);
  n += eval_family<ShellStretchBinding>(kFamShellStretch, p, hv, dv, in, pools);
  n += eval_family<ShellHingeBinding>(kFamHinge, p, hv, dv, in, pools);
  n += eval_family<ShellMidEdgeBinding>(kFamMidEdge, p, hv, dv, in, pools);
  n += eval_family<ShellMembraneBinding<kFamMembrane>>(kFamMembrane, p, hv, dv, in, pools);
  n += eval_family<ShellDragBinding>(kFamDrag, p, hv, dv, in, pools);
  n += eval_family<GroundBinding>(kFamGround, p, hv, dv, in, pools);
  host.stencils = dev.stencils = n;

  // per-DOF terms and the gather assembly, the same functors on both sides
  std::vector<Real> f_time(m.ndof, 0), r(m.ndof), J(m.ndof), phi(m.ndof);
  DeviceBuffer<Real> df_time(f_time), dmass(m.dof_mass), ddl(m.node_dl), dvol(m.node_volume);
  DeviceBuffer<Real> dr(m.ndof), dJ(m.ndof), dphi(m.ndof);
  const Real c_m = 1e4, c_u = in.host.c_u;
  const Vec3 gr = m.gravity;
  parallel_for_host(
      m.ndof, DofTerms{m.nnode, in.q.data(), in.q_hat.data(), in.u_hat.data(), f_time.data(),
                       m.dof_mass.data(), m.node_dl.data(), m.node_volume.data(),
                       m.buoyancy_density, gr[0], gr[1], gr[2], m.viscosity, m.mass_damping, c_m,
                       c_u, r.data(), J.data(), phi.data()});
  parallel_for_cuda(m.ndof, DofTerms{m.nnode, in.dq.data(), in.dq_hat.data(), in.du_hat.data(),
                                     df_time.data(), dmass.data(), ddl.data(), dvol.data(),
                                     m.buoyancy_density, gr[0], gr[1], gr[2], m.viscosity,
                                     m.mass_damping, c_m, c_u, dr.data(), dJ.data(), dphi.data()});
  DeviceBuffer<int> rsa(p.row_src_adr), rs(p.row_src), fd(p.free_dof), ssa(p.slot_src_adr),
      ss(p.slot_src), ds(p.diag_slot);
  host.f.resize(p.nfree);
  host.val.resize(p.nnz());
  DeviceBuffer<Real> df(p.nfree), dval(p.nnz());
  parallel_for_host(p.nfree,
                    AssembleResidual{p.row_src_adr.data(), p.row_src.data(), p.free_dof.data(),
                                     pools.g.data(), r.data(), host.f.data()});
  parallel_for_cuda(p.nfree, AssembleResidual{rsa.data(), rs.data(), fd.data(), pools.dg.data(),
                                              dr.data(), df.data()});
  parallel_for_host(p.nnz(), AssembleJacobian{p.slot_src_adr.data(), p.slot_src.data(),
                                              pools.H.data(), host.val.data()});
  parallel_for_cuda(p.nnz(), AssembleJacobian{ssa.data(), ss.data(), pools.dH.data(), dval.data()});
  parallel_for_host(p.nfree,
                    AddDiagonal{p.diag_slot.data(), p.free_dof.data(), J.data(), host.val.data()});
  parallel_for_cuda(p.nfree, AddDiagonal{ds.data(), fd.data(), dJ.data(), dval.data()});
  SLENDER_CUDA_CHECK(cudaDeviceSynchronize());

  host.E = pools.E;
  host.g = pools.g;
  host.H = pools.H;
  host.flags = pools.flags;
  pools.dE.download(dev.E);
  pools.dg.download(dev.g);
  pools.dH.download(dev.H);
  pools.dflags.download(dev.flags);
  df.download(dev.f);
  dval.download(dev.val);
}

std::shared_ptr<const Model> scene_model(const std::string& file) {
  return build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + file));
}

/// mid-edge shell with drag and a rod joined to it: the families no shipped scene combines
std::shared_ptr<const Model> midedge_model() {
  return build_model(test::midedge_plate_with_rod(true, false));
}

void check_model(const std::shared_ptr<const Model>& m, int seed) {
  const DeviceModel dm(*m);
  EXPECT_GT(dm.bytes(), 0u);
  std::mt19937_64 rng(seed);
  Inputs in;
  make_inputs(*m, rng, in);
  Assembled h, d, d2;
  evaluate(*m, dm, in, h, d);
  evaluate(*m, dm, in, h, d2);
  ASSERT_GT(h.stencils, 0);
  EXPECT_LT(rel_diff(d.E, h.E), kRelTol);
  EXPECT_LT(rel_diff(d.g, h.g), kRelTol);
  EXPECT_LT(rel_diff(d.H, h.H), kRelTol);
  EXPECT_EQ(d.flags, h.flags);
  EXPECT_LT(rel_diff(d.f, h.f), kRelTol);
  EXPECT_LT(rel_diff(d.val, h.val), kRelTol);
  // deterministic: the gather assembly has no atomics
  EXPECT_EQ(d.f, d2.f);
  EXPECT_EQ(d.val, d2.val);
}

/// frames moved from the initial configuration to a perturbed q by time-parallel transport,
/// then the reference twists: device against host
void check_frames(const std::shared_ptr<const Model>& mp, int seed) {
  const Model& m = *mp;
  if (m.nedge == 0) return;
  const DeviceModel dm(m);
  std::mt19937_64 rng(seed);
  Inputs in;
  make_inputs(m, rng, in);
  const std::vector<Real> q0 = initial_state(m).q;
  std::vector<Real> t0(3 * size_t(m.nedge));
  for (int e = 0; e < m.nedge; ++e) {
    const int a = m.edge_node[2 * e], b = m.edge_node[2 * e + 1];
    Vec3 t =
        vec3(q0[3 * b] - q0[3 * a], q0[3 * b + 1] - q0[3 * a + 1], q0[3 * b + 2] - q0[3 * a + 2]);
    t = t / norm(t);
    for (int c = 0; c < 3; ++c)
      t0[3 * e + c] = t[c];
  }
  const size_t n3 = 3 * size_t(m.nedge);
  std::vector<Real> d1(n3), t1(n3), ref(m.nbend);
  DeviceBuffer<Real> dd1_0(m.edge_d1_0), dt0(t0), dd1(n3), dt1(n3), dref0(m.bend_ref_twist_0),
      dref(std::max(1, m.nbend));
  const ModelView hv = host_view(m), dv = dm.view();
  parallel_for_host(m.nedge, TransportFrames{hv, in.q.data(), m.edge_d1_0.data(), t0.data(),
                                             d1.data(), t1.data()});
  parallel_for_cuda(
      m.nedge, TransportFrames{dv, in.dq.data(), dd1_0.data(), dt0.data(), dd1.data(), dt1.data()});
  parallel_for_host(
      m.nbend, ReferenceTwists{hv, d1.data(), t1.data(), m.bend_ref_twist_0.data(), ref.data()});
  parallel_for_cuda(m.nbend,
                    ReferenceTwists{dv, dd1.data(), dt1.data(), dref0.data(), dref.data()});
  SLENDER_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<Real> gd1, gt1, gref;
  dd1.download(gd1);
  dt1.download(gt1);
  dref.download(gref);
  gref.resize(m.nbend);
  EXPECT_LT(rel_diff(gd1, d1), kRelTol);
  EXPECT_LT(rel_diff(gt1, t1), kRelTol);
  if (m.nbend > 0) EXPECT_LT(rel_diff(gref, ref), kRelTol);
}

TEST(DeviceEval, FramesAndReferenceTwistsMatchHost) {
  SLENDER_REQUIRE_GPU();
  check_frames(scene_model("spider_incline.json"), 4);
  check_frames(scene_model("parachute.json"), 5);
}

TEST(DeviceEval, RodNetworkWithGroundFrictionMatchesHost) {
  SLENDER_REQUIRE_GPU();
  check_model(scene_model("spider_incline.json"), 1);
}

TEST(DeviceEval, ShellsRodsAndDragMatchHost) {
  SLENDER_REQUIRE_GPU();
  check_model(scene_model("parachute.json"), 2);
}

TEST(DeviceEval, MidEdgeShellWithJointAndDragMatchesHost) {
  SLENDER_REQUIRE_GPU();
  check_model(midedge_model(), 3);
}

TEST(DeviceEval, ConstantStrainMembranesMatchHost) {
  SLENDER_REQUIRE_GPU();
  const auto m = build_model(test::membrane_sheets());
  ASSERT_EQ(m->tables[kFamMembrane].rows, m->ntri);
  check_model(m, 6);
}

TEST(DeviceEval, ModelUploadHoldsEveryArray) {
  SLENDER_REQUIRE_GPU();
  const auto m = midedge_model();
  const DeviceModel dm(*m);
  const ModelView& v = dm.view();
  EXPECT_EQ(v.nnode, m->nnode);
  EXPECT_EQ(v.ndof, m->ndof);
  EXPECT_EQ(v.nmid, m->nmid);
  std::vector<int> tri(m->tri_node.size());
  SLENDER_CUDA_CHECK(
      cudaMemcpy(tri.data(), v.tri_node, tri.size() * sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(tri, m->tri_node);
}

}  // namespace
}  // namespace slender
