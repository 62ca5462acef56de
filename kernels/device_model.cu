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
  // counts, scalars and the ground come from the host view; every pointer is replaced
  ModelView v = host_view(m);
  v.edge_node = s.up(m.edge_node);
  v.edge_l_bar = s.up(m.edge_l_bar);
  v.edge_EA = s.up(m.edge_EA);
  v.bend_node = s.up(m.bend_node);
  v.bend_edge = s.up(m.bend_edge);
  v.bend_sign = s.up(m.bend_sign);
  v.bend_EI = s.up(m.bend_EI);
  v.bend_GJ = s.up(m.bend_GJ);
  v.bend_dl = s.up(m.bend_dl);
  v.bend_tau_bar = s.up(m.bend_tau_bar);
  v.bend_frame_offset = s.up(m.bend_frame_offset);
  v.sedge_node = s.up(m.sedge_node);
  v.sedge_l_bar = s.up(m.sedge_l_bar);
  v.sedge_EA = s.up(m.sedge_EA);
  v.hinge_node = s.up(m.hinge_node);
  v.hinge_kb = s.up(m.hinge_kb);
  v.hinge_phi_bar = s.up(m.hinge_phi_bar);
  v.tri_node = s.up(m.tri_node);
  v.tri_area_bar = s.up(m.tri_area_bar);
  v.tri_edge = s.up(m.tri_edge);
  v.sedge_tri = s.up(m.sedge_tri);
  v.sedge_xi = s.up(m.sedge_xi);
  v.mid_tri = s.up(m.mid_tri);
  v.mid_sign = s.up(m.mid_sign);
  v.mid_kb = s.up(m.mid_kb);
  v.mid_nu = s.up(m.mid_nu);
  v.mid_lambda_bar = s.up(m.mid_lambda_bar);
  v.node_mass = s.up(m.node_mass);
  v.node_contact_radius = s.up(m.node_contact_radius);
  // contact pairs change every step: a simulator sets them (none in a model's view)
  v.npair = 0;
  v.pair_node = nullptr;
  v.pair_d = nullptr;
  v.npt = 0;
  v.pt_node = nullptr;
  v.pt_d = nullptr;
  v.pair_mu = nullptr;
  v.pt_mu = nullptr;
  s.view = v;
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
