// DeviceModel: one device buffer per Model array that a ModelView points to.

#include <vector>

#include "device_buffer.cuh"
#include "device_model.h"
#include "slender/engine/model_view.h"

namespace slender {

namespace {

struct Holder {
  virtual ~Holder() = default;
  virtual size_t bytes() const = 0;
};
template <class T>
struct TypedHolder : Holder {
  DeviceBuffer<T> buf;
  size_t bytes() const override { return buf.size() * sizeof(T); }
};

}  // namespace

struct DeviceModel::Impl {
  std::vector<std::unique_ptr<Holder>> owned;
  ModelView view{};
  // a device copy of v, or null for an empty array
  template <class T>
  const T* up(const std::vector<T>& v) {
    if (v.empty()) return nullptr;
    auto h = std::make_unique<TypedHolder<T>>();
    h->buf.upload(v);
    const T* p = h->buf.data();
    owned.push_back(std::move(h));
    return p;
  }
};

DeviceModel::DeviceModel(const Model& m) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  // counts, scalars and the ground from the host view; every pointer a device copy's
  s.view = copied_view(m, [&s](const auto& a) { return s.up(a); });
}

DeviceModel::~DeviceModel() = default;

const ModelView& DeviceModel::view() const { return impl_->view; }

size_t DeviceModel::bytes() const {
  size_t b = 0;
  for (const auto& h : impl_->owned)
    b += h->bytes();
  return b;
}

}  // namespace slender
