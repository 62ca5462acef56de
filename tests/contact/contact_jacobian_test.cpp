// The contact part of the Newton system assembled by sorts and scans (engine/contact_jacobian.h,
// run by the host executor here, by CUDA on the GPU), against the plan of the static families
// and the pairs in one list (build_assembly_plan with the pairs), on a contact scene's disturbed
// state with clamped DOFs among the pairs: static plan + J_c (the iterative paths) entry for
// entry to rounding (1e-12 of the row's largest magnitude), with the same pattern; the residual,
// and the matrix merged on the executor (the direct path: pattern, diagonal, values), bit for
// bit; two builds agree bit for bit.

#include "slender/engine/contact_jacobian.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "backend/host_executor.h"
#include "model/model_internal.h"
#include "slender/builder.h"
#include "slender/engine/assemble.h"
#include "slender/engine/contact_pipeline.h"
#include "slender/simulator.h"

namespace slender::contact {
namespace {
namespace SLENDER_UNITY_ID {

struct Case {
  std::shared_ptr<const Model> m;
  ContactPairLists pairs;
  ModelView mv;
};

Case disturbed(const std::string& scene, Real noise, unsigned seed) {
  Case c;
  c.m = build_model(read_scene_file(std::string(SLENDER_SOURCE_DIR) + "/apps/scenes/" + scene));
  const Model& m = *c.m;
  Simulator sim(c.m);
  std::vector<Real> q = sim.state().q, u(sim.state().u.size(), 0.0);
  const Real h = m.nedge ? m.edge_l_bar[0] : m.sedge_l_bar[0];
  std::mt19937 rng(seed);
  std::uniform_real_distribution<Real> unit(-1, 1);
  const Real dt = m.scene.integrator.dt;
  for (int i = 0; i < 3 * m.nnode; ++i) {
    q[i] += noise * h * unit(rng);
    u[i] = (h / dt) * unit(rng);  // a reach of a few edges: many pairs
  }
  ContactPipeline<HostExecutor> finder(m);
  finder.find(q.data(), u.data(), dt);
  finder.download(c.pairs);
  c.mv = host_view(m);
  c.mv.npair = c.pairs.nee();
  c.mv.pair_node = c.pairs.ee_node.data();
  c.mv.pair_d = c.pairs.ee_d.data();
  c.mv.npt = c.pairs.npt();
  c.mv.pt_node = c.pairs.pt_node.data();
  c.mv.pt_d = c.pairs.pt_d.data();
  return c;
}

class ContactJacobianScenes : public ::testing::TestWithParam<const char*> {};

TEST_P(ContactJacobianScenes, StaticPlusContactEqualsTheMergedPlan) {
  // rows sum up to a few hundred O(1) random sources in a different order: rounding below 1e-12;
  // a missing or extra source is an O(1) error
  constexpr Real kTol = 1e-12;
  const Case c = disturbed(GetParam(), 0.4, 5);
  const Model& m = *c.m;
  ASSERT_GT(c.mv.npair + c.mv.npt, 50) << "the state should give many pairs";
  AssemblyPlan merged;
  build_assembly_plan(m, c.mv, merged);
  const AssemblyPlan& st = m.plan;
  for (int f = 0; f < kFamContact; ++f) {
    ASSERT_EQ(st.h_off[f], merged.h_off[f]);
    ASSERT_EQ(st.g_off[f], merged.g_off[f]);
  }
  ASSERT_EQ(st.free_dof, merged.free_dof);
  // random pools: every source distinct
  std::mt19937 rng(1);
  std::uniform_real_distribution<Real> unit(-1, 1);
  std::vector<Real> h(size_t(merged.hess_pool)), g(size_t(merged.grad_pool));
  for (Real& v : h)
    v = unit(rng);
  for (Real& v : g)
    v = unit(rng);
  const std::vector<Real> dof_r(size_t(m.ndof), 0.0);
  // merged
  std::vector<Real> val_m(size_t(merged.nnz())), f_m(size_t(merged.nfree));
  for (long s = 0; s < merged.nnz(); ++s)
    AssembleJacobian{merged.slot_src_adr.data(), merged.slot_src.data(), h.data(), val_m.data()}(s);
  for (int r = 0; r < merged.nfree; ++r)
    AssembleResidual{merged.row_src_adr.data(),
                     merged.row_src.data(),
                     merged.free_dof.data(),
                     g.data(),
                     dof_r.data(),
                     f_m.data()}(r);
  // static plan, then the contact part
  std::vector<Real> val_s(size_t(st.nnz())), f_s(size_t(st.nfree));
  for (long s = 0; s < st.nnz(); ++s)
    AssembleJacobian{st.slot_src_adr.data(), st.slot_src.data(), h.data(), val_s.data()}(s);
  for (int r = 0; r < st.nfree; ++r)
    AssembleResidual{st.row_src_adr.data(), st.row_src.data(), st.free_dof.data(), g.data(),
                     dof_r.data(),          f_s.data()}(r);
  ContactJacobian<HostExecutor> cj(st, m.ndof);
  cj.build(c.mv);
  cj.assemble(h.data() + merged.h_off[kFamContact]);
  cj.add_residual(g.data() + merged.g_off[kFamContact], f_s.data());
  const std::vector<Real> val_c(cj.val(), cj.val() + cj.nnz());
  long contact_entries_in_static_rows = 0;
  for (int r = 0; r < merged.nfree; ++r) {
    std::map<int, Real> want, got;
    Real scale = 0;
    for (int j = merged.row_ptr[r]; j < merged.row_ptr[r + 1]; ++j) {
      want[merged.col[j]] = val_m[j];
      scale = std::max(scale, std::fabs(val_m[j]));
    }
    for (int j = st.row_ptr[r]; j < st.row_ptr[r + 1]; ++j)
      got[st.col[j]] += val_s[j];
    for (int j = cj.row_ptr()[r]; j < cj.row_ptr()[r + 1]; ++j) {
      ASSERT_TRUE(j == cj.row_ptr()[r] || cj.col()[j] > cj.col()[j - 1]) << "row " << r;
      contact_entries_in_static_rows += got.count(cj.col()[j]);
      got[cj.col()[j]] += val_c[j];
    }
    ASSERT_EQ(want.size(), got.size()) << "row " << r << ": pattern";
    for (const auto& [col, v] : want) {
      ASSERT_TRUE(got.count(col)) << "row " << r << " col " << col;
      EXPECT_NEAR(got[col], v, kTol * std::max(scale, Real(1))) << "row " << r << " col " << col;
    }
    EXPECT_NEAR(f_s[r], f_m[r], kTol * std::max(std::fabs(f_m[r]), Real(1))) << "row " << r;
  }
  EXPECT_GT(cj.nnz(), 0);
  EXPECT_GT(contact_entries_in_static_rows, 0);
  // the residual: the same bits (the contact sources added one by one after the static ones)
  for (int r = 0; r < merged.nfree; ++r)
    ASSERT_EQ(f_s[r], f_m[r]) << "row " << r;
  // the direct path's matrix, merged on the executor: the merged plan's pattern, diagonal
  // entries and values bit for bit (the per-DOF diagonal added as the plan adds it)
  cj.merge(st.row_ptr.data(), st.col.data());
  ASSERT_EQ(cj.merged_nnz(), merged.nnz());
  EXPECT_EQ(std::vector<int>(cj.merged_row_ptr(), cj.merged_row_ptr() + merged.nfree + 1),
            merged.row_ptr);
  EXPECT_EQ(std::vector<int>(cj.merged_col(), cj.merged_col() + merged.nnz()), merged.col);
  EXPECT_EQ(std::vector<int>(cj.merged_diag(), cj.merged_diag() + merged.nfree), merged.diag_slot);
  std::vector<Real> dof_J(size_t(m.ndof)), val_x(size_t(merged.nnz()));
  for (Real& v : dof_J)
    v = unit(rng);
  cj.assemble_merged(st.slot_src_adr.data(), st.slot_src.data(), h.data(),
                     h.data() + merged.h_off[kFamContact], val_x.data());
  for (int r = 0; r < merged.nfree; ++r) {
    AddDiagonal{cj.merged_diag(), st.free_dof.data(), dof_J.data(), val_x.data()}(r);
    AddDiagonal{merged.diag_slot.data(), merged.free_dof.data(), dof_J.data(), val_m.data()}(r);
  }
  EXPECT_EQ(val_x, val_m);
  // a second build of the same pairs: the same bits
  ContactJacobian<HostExecutor> again(st, m.ndof);
  again.build(c.mv);
  again.assemble(h.data() + merged.h_off[kFamContact]);
  EXPECT_EQ(std::vector<Real>(again.val(), again.val() + again.nnz()), val_c);
}

INSTANTIATE_TEST_SUITE_P(Scenes,
                         ContactJacobianScenes,
                         ::testing::Values("plate_contact.json", "gripper.json"),
                         [](const auto& info) {
                           std::string s = info.param;
                           return s.substr(0, s.find('.'));
                         });

}  // namespace SLENDER_UNITY_ID
}  // namespace
}  // namespace slender::contact
