#pragma once

// The host executor's ContactFinder (engine/executor.h): ContactPairFinder (contact/pairs.h)
// behind the interface of ContactPipeline, whose lists it gives (tests/contact/pipeline_test.cpp
// checks that the two agree). On a CPU the finder's broad phase is leaner than the pipeline's
// sorts and scans.

#include <utility>

#include "contact/pairs.h"

namespace slender::contact {

class HostPairFinder {
 public:
  explicit HostPairFinder(const Model& m) : model_(&m) {}

  /// the sub-pairs of the step of size dt from q and u (the model's DOF vectors); true when
  /// their node lists differ from the previous call's (the first call: always)
  bool find(const Real* q, const Real* u, Real dt) {
    finder_.find(*model_, q, u, dt, next_);
    const bool changed = first_ || next_.ee_node != cur_.ee_node || next_.pt_node != cur_.pt_node;
    std::swap(cur_, next_);
    first_ = false;
    return changed;
  }
  void download(ContactPairLists& out) const { out = cur_; }

  // the current lists (valid until the next find)
  int nee() const { return cur_.nee(); }
  int npt() const { return cur_.npt(); }
  const int* ee_node() const { return cur_.ee_node.data(); }
  const Real* ee_d() const { return cur_.ee_d.data(); }
  const Real* ee_mu() const { return cur_.ee_mu.data(); }
  const int* pt_node() const { return cur_.pt_node.data(); }
  const Real* pt_d() const { return cur_.pt_d.data(); }
  const Real* pt_mu() const { return cur_.pt_mu.data(); }

 private:
  const Model* model_;
  ContactPairFinder finder_;
  ContactPairLists cur_, next_;
  bool first_ = true;
};

}  // namespace slender::contact
