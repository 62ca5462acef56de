#pragma once

// The Model's flat arrays in device memory, uploaded once (the model is immutable), and a
// ModelView of them: the same view type the CPU backend's loops read, with device pointers, so
// that the binding functors of include/slender/stencils/bindings.h run unchanged in kernels.
// This compiles only in CUDA builds; no CUDA types appear here.

#include <cstddef>
#include <memory>

#include "slender/model.h"
#include "slender/stencils/bindings.h"

namespace slender {

class DeviceModel {
 public:
  /// uploads every array a ModelView points to; throws slender::Error on a CUDA failure
  explicit DeviceModel(const Model& m);
  ~DeviceModel();
  DeviceModel(const DeviceModel&) = delete;
  DeviceModel& operator=(const DeviceModel&) = delete;

  /// counts as the model's, pointers into device memory; no contact pairs (npair = npt = 0)
  const ModelView& view() const;
  /// device bytes held
  size_t bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace slender
