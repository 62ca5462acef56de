// Boundary conditions of the model: the DOFs fixed at t = 0 (the scene's boundary block and its
// clamps), the scene's boundary events resolved to DOFs, and the rules by which the fixed set
// changes during a run (events, fix and release calls) and the assembly plan follows it.

#include <algorithm>
#include <set>
#include <string>

#include "model/model_internal.h"
#include "slender/core/error.h"

namespace slender {

namespace {

InputError at_error(const SourceLoc& loc,
                    const std::string& file,
                    const std::string& field,
                    const std::string& msg) {
  return InputError(loc.file.empty() ? file : loc.file, loc.line,
                    loc.field.empty() ? field : loc.field, msg);
}

// marks in `mark` (ndof) the DOFs a selection names: node positions, rod edges (both nodes and
// the twist), shell clamps (the nodes and the xi of every shell edge between two of them), rod
// twists and node components; `where` names the selection for errors (a scene made in code)
void mark_selection(const Model& m,
                    const DofSelection& sel,
                    const std::string& where,
                    std::vector<unsigned char>& mark) {
  auto mark_node = [&](int n) {
    for (int c = 0; c < 3; ++c)
      mark[size_t(3 * n + c)] = 1;
  };
  for (const NodeRef& r : sel.nodes)
    mark_node(m.resolve_node(r));
  for (const EdgeRef& r : sel.edges) {
    const int e = m.resolve_edge(r);
    mark_node(m.edge_node[2 * e]);
    mark_node(m.edge_node[2 * e + 1]);
    mark[size_t(m.edge_dof(e))] = 1;
  }
  for (const std::vector<NodeRef>& group : sel.shell_edges) {
    std::set<int> nodes;
    for (const NodeRef& r : group) {
      const int n = m.resolve_node(r);
      mark_node(n);
      nodes.insert(n);
    }
    int joined = 0;
    for (int e = 0; e < m.nsedge; ++e) {
      if (!nodes.count(m.sedge_node[2 * e]) || !nodes.count(m.sedge_node[2 * e + 1])) continue;
      ++joined;
      if (m.sedge_xi[e] >= 0) mark[size_t(m.xi_dof(e))] = 1;
    }
    if (joined == 0) {
      throw at_error(group.front().loc, m.scene.file, where + "fixed_edges",
                     "no shell edge joins two of these " + std::to_string(nodes.size()) +
                         " nodes: a clamp lists the nodes along the clamped edge");
    }
  }
  for (const EdgeRef& r : sel.twist)
    mark[size_t(m.edge_dof(m.resolve_edge(r)))] = 1;
  for (const FixedDofSpec& f : sel.dofs) {
    const int n = m.resolve_node(f.node);
    for (int c = 0; c < 3; ++c)
      if (f.fix[c]) mark[size_t(3 * n + c)] = 1;
  }
}

// "node 4 (z)", "the twist of edge 3", "the xi of shell edge 7": a DOF for messages (global
// indices)
std::string dof_name(const Model& m, int dof) {
  if (dof < 3 * m.nnode)
    return "node " + std::to_string(dof / 3) + " (" + std::string(1, "xyz"[dof % 3]) + ")";
  if (dof < 3 * m.nnode + m.nedge) return "the twist of edge " + std::to_string(dof - 3 * m.nnode);
  return "mid-edge DOF " + std::to_string(dof - 3 * m.nnode - m.nedge);
}

// why a DOF cannot be released (Model::dof_locked)
std::string lock_reason(const Model& m, int d) {
  const bool plane = d < 3 * m.nnode ? d % 3 == 1 : d < 3 * m.nnode + m.nedge;
  if (m.scene.integrator.two_d && plane) return "two_d holds it (motion in the x-z plane)";
  return "a clamp at a node holds it: a clamp at a node does not let go (clamp the rod's end "
         "edge with fixed_edges to release it)";
}

}  // namespace

void build_fixed_dofs(Model& m, const std::vector<int>& clamp_dofs) {
  const SceneSpec& scene = m.scene;
  m.dof_fixed.assign(size_t(m.ndof), 0);
  mark_selection(m, scene.fixed_selection(), "boundary.", m.dof_fixed);
  // a clamped shell edge (its xi fixed at t = 0) keeps its initial mid-edge frame
  // (MidEdgeFrames): refreshed from the turning triangle next to it, a fixed xi let the clamp
  // give way step by step
  for (int e = 0; e < m.nsedge; ++e)
    if (m.sedge_xi[e] >= 0 && m.dof_fixed[size_t(m.xi_dof(e))]) m.sedge_frame_fixed[e] = 1;
  // a clamp at a node holds its node, its ghost node and the ghost edge's twist for good
  m.dof_locked.assign(size_t(m.ndof), 0);
  for (int d : clamp_dofs)
    m.dof_fixed[size_t(d)] = m.dof_locked[size_t(d)] = 1;
  if (scene.integrator.two_d) {
    // motion in the x-z plane: y and every twist held
    for (int n = 0; n < m.nnode; ++n)
      m.dof_fixed[size_t(3 * n + 1)] = m.dof_locked[size_t(3 * n + 1)] = 1;
    for (int e = 0; e < m.nedge; ++e)
      m.dof_fixed[size_t(m.edge_dof(e))] = m.dof_locked[size_t(m.edge_dof(e))] = 1;
  }
  m.dof_fixed_slot.assign(size_t(m.ndof), -1);
  m.fixed_dof.clear();
  for (int i = 0; i < m.ndof; ++i)
    if (m.dof_fixed[size_t(i)]) {
      m.dof_fixed_slot[size_t(i)] = int(m.fixed_dof.size());
      m.fixed_dof.push_back(i);
    }
}

void resolve_boundary_events(Model& m) {
  const SceneSpec& scene = m.scene;
  const size_t n = scene.events.size();
  // by time, in the scene's order at one time
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scene.events[a].time < scene.events[b].time; });
  m.event_time.clear();
  m.event_release.clear();
  m.event_dof.clear();
  m.event_dof_adr.assign(1, 0);
  std::vector<unsigned char> mark(size_t(m.ndof));
  for (size_t i : order) {
    const BoundaryEvent& ev = scene.events[i];
    const std::string at = "boundary.events[" + std::to_string(i) + "]";
    std::fill(mark.begin(), mark.end(), 0);
    mark_selection(m, ev.select, at + (ev.release ? ".release." : ".fix."), mark);
    for (int d = 0; d < m.ndof; ++d) {
      if (!mark[size_t(d)]) continue;
      // a released clamp or plane would leave the ghost or the plane's DOFs behind; a moved
      // DOF fixed again would jump back onto its motion's path
      if (ev.release && m.dof_locked[size_t(d)])
        throw at_error(ev.loc, scene.file, at,
                       "releases " + dof_name(m, d) + ", but " + lock_reason(m, d));
      if (!ev.release && m.dof_motion_slot[size_t(d)] >= 0)
        throw at_error(ev.loc, scene.file, at,
                       "fixes " + dof_name(m, d) +
                           ", which a motion moves: fixed again after a release it would jump "
                           "back onto the motion's path (a fix holds a DOF where it is)");
      m.event_dof.push_back(d);
    }
    m.event_time.push_back(ev.time);
    m.event_release.push_back(ev.release ? 1 : 0);
    m.event_dof_adr.push_back(int(m.event_dof.size()));
  }
}

bool apply_boundary_events(
    const Model& m, Real t, Real dt, int& done, unsigned char* fixed, std::vector<int>* stopped) {
  const int n = int(m.event_time.size());
  // a time reached within a millionth of the step counts (t sums the steps' sizes)
  const Real reach = t + 1e-6 * dt;
  if (done >= n || m.event_time[size_t(done)] > reach) return false;
  std::vector<unsigned char> before;
  if (stopped) before.assign(fixed, fixed + m.ndof);
  for (; done < n && m.event_time[size_t(done)] <= reach; ++done) {
    const unsigned char v = m.event_release[size_t(done)] ? 0 : 1;
    for (int j = m.event_dof_adr[size_t(done)]; j < m.event_dof_adr[size_t(done) + 1]; ++j)
      fixed[m.event_dof[size_t(j)]] = v;
  }
  if (stopped)
    for (int d = 0; d < m.ndof; ++d)
      if (fixed[d] && !before[size_t(d)]) stopped->push_back(d);
  return true;
}

void set_dofs_fixed(const Model& m,
                    const std::vector<int>& dofs,
                    bool fix,
                    unsigned char* fixed,
                    std::vector<int>* stopped) {
  // every DOF is checked before any changes
  for (int d : dofs) {
    SLENDER_CHECK(d >= 0 && d < m.ndof, "DOF ", d, " out of range [0, ", m.ndof, ")");
    SLENDER_CHECK(fix || !m.dof_locked[size_t(d)], "DOF ", d, " (", dof_name(m, d),
                  ") cannot be released: ", lock_reason(m, d));
  }
  for (int d : dofs) {
    if (fix && !fixed[d] && stopped) stopped->push_back(d);
    fixed[d] = fix ? 1 : 0;
  }
}

std::shared_ptr<const AssemblyPlan> assembly_plan_for(const std::shared_ptr<const Model>& mp,
                                                      const unsigned char* fixed) {
  const Model& m = *mp;
  if (!fixed || std::equal(m.dof_fixed.begin(), m.dof_fixed.end(), fixed))
    return std::shared_ptr<const AssemblyPlan>(mp, &m.plan);
  auto p = std::make_shared<AssemblyPlan>();
  build_assembly_plan(m, host_view(m), *p, fixed);
  return p;
}

}  // namespace slender
