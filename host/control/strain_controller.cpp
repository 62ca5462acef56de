// StrainController: the PI law of include/slender/control.h on the springs each controller
// resolves as an actuation of the same fields would (model/build_model.cpp's actuation_springs).

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "model/model_internal.h"
#include "slender/builder.h"
#include "slender/control.h"
#include "slender/core/error.h"

namespace slender {

namespace {

constexpr Real kMinNaturalStretch = Real(0.01);  // the smallest natural stretch a command sets

// what the scene calls a spring, for messages
const char* spring_word(int component) {
  return component == 3 ? "hinge" : component == kActuatedStretch ? "rod edge" : "bend stencil";
}

}  // namespace

struct StrainController::Ctl {
  ControllerSpec spec;
  std::string name;
  int component = 0;  // ActuatedSpring::component of every spring
  std::vector<ActuatedSpring> springs;
  std::vector<int> index;    // the springs' model indices (springs)
  std::vector<Real> unit;    // the engine's value per unit of the controlled strain (springs)
  std::vector<Real> rest;    // the rest value [unit] (springs)
  std::vector<Real> lo, hi;  // the command's limits with the engine's own [unit] (springs)
  // per environment (nenv x springs)
  std::vector<Real> kp, ki;
  std::vector<Real> ref_value;        // the caller's references (nenv x springs, or empty)
  std::vector<unsigned char> ref_on;  // per environment: its references are the caller's
  std::vector<Real> yf, z, u, e, r;   // committed: filter, integral, command, error, reference
  std::vector<unsigned char> lim, init;
  std::vector<Real> yf_p, z_p, u_p, e_p, r_p;  // pending (the last compute)
  std::vector<unsigned char> lim_p;
  // neighbouring springs for the spatial smoothing (CSR over the springs), and its scratch
  std::vector<int> nbr_adr, nbr;
  std::vector<Real> y, y_tmp;
  int n() const { return int(index.size()); }
};

namespace {

// the controller's springs that touch each other: bend stencils sharing an edge, rod edges
// sharing a node, hinges sharing a triangle (CSR: nbr_adr (n + 1), nbr)
void find_neighbours(const Model& m,
                     int component,
                     const std::vector<int>& index,
                     std::vector<int>& nbr_adr,
                     std::vector<int>& nbr) {
  // the keys each spring has (an edge, a node, a sorted triangle), springs grouped by key
  std::map<std::array<int, 3>, std::vector<int>> by_key;
  for (size_t k = 0; k < index.size(); ++k) {
    const int i = index[k];
    if (component <= 2) {
      for (int a = 0; a < 2; ++a)
        by_key[{m.bend_edge[2 * size_t(i) + size_t(a)], -1, -1}].push_back(int(k));
    } else if (component == 3) {
      const int* h = &m.hinge_node[4 * size_t(i)];
      for (int a = 2; a < 4; ++a) {
        std::array<int, 3> t = {h[0], h[1], h[a]};
        std::sort(t.begin(), t.end());
        by_key[t].push_back(int(k));
      }
    } else {
      for (int a = 0; a < 2; ++a)
        by_key[{m.edge_node[2 * size_t(i) + size_t(a)], -1, -1}].push_back(int(k));
    }
  }
  std::vector<std::vector<int>> adj(index.size());
  for (const auto& kv : by_key)
    for (int a : kv.second)
      for (int b : kv.second)
        if (a != b) adj[size_t(a)].push_back(b);
  nbr_adr.assign(1, 0);
  nbr.clear();
  for (std::vector<int>& v : adj) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    nbr.insert(nbr.end(), v.begin(), v.end());
    nbr_adr.push_back(int(nbr.size()));
  }
}

}  // namespace

StrainController::StrainController(std::shared_ptr<const Model> model,
                                   std::vector<ControllerSpec> specs,
                                   int nenv)
    : model_(std::move(model)), nenv_(nenv) {
  SLENDER_CHECK(model_ != nullptr, "a controller needs a model");
  SLENDER_CHECK(nenv >= 1, "controllers need at least one environment, got ", nenv);
  const Model& m = *model_;
  validate_controllers(m.scene, specs);
  const Real kmax = max_natural_kappa_bar() / std::sqrt(Real(2));
  // which controller (or actuation) drives each (component, index) so far
  std::vector<std::pair<long, std::string>> taken;
  auto key = [](int comp, int index) { return long(comp) * (1L << 32) + index; };
  for (const ActuatedSpring& a : m.actuated) {
    const std::string& field = m.scene.actuation[size_t(a.actuation)].loc.field;
    taken.emplace_back(key(a.component, a.index),
                       field.empty() ? "actuation[" + std::to_string(a.actuation) + "]" : field);
  }
  std::sort(taken.begin(), taken.end());

  ctl_.resize(specs.size());
  for (size_t ci = 0; ci < specs.size(); ++ci) {
    Ctl& c = ctl_[ci];
    c.spec = std::move(specs[ci]);
    const ControllerSpec& sp = c.spec;
    const SourceLoc& loc = sp.loc;
    const std::string at =
        loc.field.empty() ? "controllers[" + std::to_string(ci) + "]" : loc.field;
    const std::string& file = loc.file.empty() ? m.scene.file : loc.file;
    c.name = sp.name.empty() ? "controller" + std::to_string(ci) : sp.name;
    for (size_t cj = 0; cj < ci; ++cj)
      if (ctl_[cj].name == c.name)
        throw InputError(file, loc.line, at + ".name",
                         "'" + c.name + "' names controller " + std::to_string(cj) +
                             " too: give each controller its own name");
    ActuationSpec ref = sp.reference;
    if (ref.loc.field.empty()) ref.loc = SourceLoc{file, loc.line, at};
    actuation_springs(m, ref, int(ci), c.springs, "controller", "strain");
    c.component = c.springs.front().component;
    const int n = int(c.springs.size());
    const std::string springs = std::to_string(n) + " " + spring_word(c.component) + "s";
    if (!sp.profile.empty() && int(sp.profile.size()) != n)
      throw InputError(file, loc.line, at + ".profile",
                       "has " + std::to_string(sp.profile.size()) + " values, but the controller " +
                           "of " + target_name(ref.target) + " drives " + springs + " of part '" +
                           m.part_name[ref.part] + "': give one per spring");
    for (const char* g : {"kp", "ki"}) {
      const size_t k = (g[1] == 'p' ? sp.kp : sp.ki).size();
      if (k != 1 && int(k) != n)
        throw InputError(file, loc.line, at + "." + g,
                         "has " + std::to_string(k) + " values for " + springs +
                             ": give one value, or one per spring");
    }
    // a spring driven twice: the second one would undo the first's command
    for (const ActuatedSpring& a : c.springs) {
      const long kk = key(a.component, a.index);
      auto it = std::lower_bound(taken.begin(), taken.end(), std::make_pair(kk, std::string()));
      if (it != taken.end() && it->first == kk)
        throw InputError(file, loc.line, at + ".part",
                         std::string(spring_word(c.component)) + " " + std::to_string(a.index) +
                             "'s natural " + target_name(ref.target) + " is driven by " +
                             it->second + " too: a spring takes one controller or actuation");
    }
    for (const ActuatedSpring& a : c.springs)
      taken.emplace_back(key(a.component, a.index), at);
    std::sort(taken.begin(), taken.end());

    // units, rest values and the engine's limits of each spring
    for (const ActuatedSpring& a : c.springs) {
      c.index.push_back(a.index);
      c.unit.push_back(a.scale);
      Real rest = 0, lo = sp.command_min, hi = sp.command_max;
      switch (a.component) {
        case 0:
        case 1:
          rest = m.bend_kappa_bar[2 * size_t(a.index) + size_t(a.component)] / a.scale;
          lo = std::max(lo, -kmax / a.scale);
          hi = std::min(hi, kmax / a.scale);
          break;
        case 2:
          rest = m.bend_tau_bar[size_t(a.index)] / a.scale;
          break;
        case 3:
          rest = m.hinge_phi_bar[size_t(a.index)];
          break;
        default:  // stretch: natural stretch 1 + u, kept positive
          lo = std::max(lo, kMinNaturalStretch - 1);
          break;
      }
      c.rest.push_back(rest);
      c.lo.push_back(lo);
      c.hi.push_back(std::max(hi, lo));
    }
    if (sp.spatial_smoothing > 0) find_neighbours(m, c.component, c.index, c.nbr_adr, c.nbr);
    c.y.resize(size_t(n));
    c.y_tmp.resize(size_t(n));
    const size_t ne = size_t(nenv_) * size_t(n);
    c.kp.resize(ne);
    c.ki.resize(ne);
    for (size_t i = 0; i < ne; ++i) {
      const size_t k = i % size_t(n);
      c.kp[i] = sp.kp.size() == 1 ? sp.kp[0] : sp.kp[k];
      c.ki[i] = sp.ki.size() == 1 ? sp.ki[0] : sp.ki[k];
    }
    for (auto* v : {&c.yf, &c.z, &c.u, &c.e, &c.r, &c.yf_p, &c.z_p, &c.u_p, &c.e_p, &c.r_p})
      v->assign(ne, 0);
    c.lim.assign(ne, 0);
    c.lim_p.assign(ne, 0);
    c.init.assign(size_t(nenv_), 0);
  }
  time_.assign(size_t(nenv_), -1);
  time_pending_.assign(size_t(nenv_), -1);
  for (int env = 0; env < nenv_; ++env)
    reset(env);
}

StrainController::~StrainController() = default;

int StrainController::size() const { return int(ctl_.size()); }

const ControllerSpec& StrainController::spec(int c) const { return ctl_.at(size_t(c)).spec; }
const std::string& StrainController::name(int c) const { return ctl_.at(size_t(c)).name; }
int StrainController::find(const std::string& name) const {
  for (size_t c = 0; c < ctl_.size(); ++c)
    if (ctl_[c].name == name) return int(c);
  return -1;
}
int StrainController::springs(int c) const { return ctl_.at(size_t(c)).n(); }
const std::vector<int>& StrainController::spring_index(int c) const {
  return ctl_.at(size_t(c)).index;
}
bool StrainController::reads(StrainKind kind) const {
  for (const Ctl& c : ctl_) {
    const StrainKind k = c.component == 3                  ? StrainKind::kHingeAngle
                         : c.component == kActuatedStretch ? StrainKind::kStretch
                                                           : StrainKind::kBendTwist;
    if (k == kind) return true;
  }
  return false;
}
bool StrainController::drives(int component) const {
  for (const Ctl& c : ctl_)
    if (c.component == component) return true;
  return false;
}

void StrainController::set_gains(int c,
                                 int env,
                                 const std::vector<Real>& kp,
                                 const std::vector<Real>& ki) {
  SLENDER_CHECK(c >= 0 && c < size(), "controller ", c, " out of range [0, ", size(), ")");
  SLENDER_CHECK(env >= 0 && env < nenv_, "environment ", env, " out of range [0, ", nenv_, ")");
  Ctl& k = ctl_[size_t(c)];
  const int n = k.n();
  for (const auto* g : {&kp, &ki}) {
    const char* what = g == &kp ? "kp" : "ki";
    SLENDER_CHECK(g->size() == 1 || int(g->size()) == n, "controller '", k.name, "': ", what,
                  " needs one value or one per spring (", n, "), got ", g->size());
    for (size_t i = 0; i < g->size(); ++i)
      SLENDER_CHECK((*g)[i] >= 0 && std::isfinite((*g)[i]), "controller '", k.name, "': ", what,
                    " must be >= 0 and finite, got ", (*g)[i]);
  }
  for (int i = 0; i < n; ++i) {
    const size_t j = size_t(env) * size_t(n) + size_t(i);
    k.kp[j] = kp.size() == 1 ? kp[0] : kp[size_t(i)];
    k.ki[j] = ki.size() == 1 ? ki[0] : ki[size_t(i)];
  }
}
const std::vector<Real>& StrainController::kp(int c) const { return ctl_.at(size_t(c)).kp; }
const std::vector<Real>& StrainController::ki(int c) const { return ctl_.at(size_t(c)).ki; }

void StrainController::set_reference(int c, const Real* values) {
  for (int env = 0; env < nenv_; ++env)
    set_reference(c, env, values + size_t(env) * size_t(springs(c)));
}
void StrainController::set_reference(int c, int env, const Real* values) {
  SLENDER_CHECK(c >= 0 && c < size(), "controller ", c, " out of range [0, ", size(), ")");
  SLENDER_CHECK(env >= 0 && env < nenv_, "environment ", env, " out of range [0, ", nenv_, ")");
  Ctl& k = ctl_[size_t(c)];
  const size_t n = size_t(k.n());
  for (size_t i = 0; i < n; ++i)
    SLENDER_CHECK(std::isfinite(values[i]), "controller '", k.name, "': the reference of ",
                  "environment ", env, ", spring ", i, " is not finite (", values[i], ")");
  k.ref_value.resize(size_t(nenv_) * n);
  k.ref_on.resize(size_t(nenv_));
  std::copy_n(values, n, k.ref_value.begin() + long(size_t(env) * n));
  k.ref_on[size_t(env)] = 1;
}
void StrainController::clear_reference(int c) {
  SLENDER_CHECK(c >= 0 && c < size(), "controller ", c, " out of range [0, ", size(), ")");
  ctl_[size_t(c)].ref_value.clear();
  ctl_[size_t(c)].ref_on.clear();
}
void StrainController::clear_reference(int c, int env) {
  SLENDER_CHECK(c >= 0 && c < size(), "controller ", c, " out of range [0, ", size(), ")");
  SLENDER_CHECK(env >= 0 && env < nenv_, "environment ", env, " out of range [0, ", nenv_, ")");
  Ctl& k = ctl_[size_t(c)];
  if (!k.ref_on.empty()) k.ref_on[size_t(env)] = 0;
}

Real StrainController::reference_at(int c, int env, int k, Real t) const {
  const Ctl& ct = ctl_.at(size_t(c));
  if (!ct.ref_on.empty() && ct.ref_on[size_t(env)])
    return ct.ref_value[size_t(env) * size_t(ct.n()) + size_t(k)];
  const ActuationSpec& act = ct.spec.reference;
  const ActuatedSpring& a = ct.springs[size_t(k)];
  int row = 0;
  Real w = 0;
  if (act.series.given()) series_position(act.series, t, row, w);
  const Real profile = ct.spec.profile.empty() ? Real(1) : ct.spec.profile[size_t(k)];
  return ct.rest[size_t(k)] + profile * actuated_value(act, a, t, row, w) / a.scale;
}

size_t StrainController::state_size() const {
  size_t n = 1;
  for (const Ctl& c : ctl_)
    n += 1 + 6 * size_t(c.n());
  return n;
}

void StrainController::save_state(int env, Real* out) const {
  SLENDER_CHECK(env >= 0 && env < nenv_, "environment ", env, " out of range [0, ", nenv_, ")");
  *out++ = time_[size_t(env)];
  for (const Ctl& c : ctl_) {
    const size_t n = size_t(c.n()), o = size_t(env) * n;
    *out++ = c.init[size_t(env)];
    for (size_t k = 0; k < n; ++k) {
      *out++ = c.yf[o + k];
      *out++ = c.z[o + k];
      *out++ = c.u[o + k];
      *out++ = c.e[o + k];
      *out++ = c.r[o + k];
      *out++ = c.lim[o + k];
    }
  }
}

void StrainController::load_state(int env, const Real* values) {
  SLENDER_CHECK(env >= 0 && env < nenv_, "environment ", env, " out of range [0, ", nenv_, ")");
  // checked whole before anything changes
  const Real* v = values;
  SLENDER_CHECK(std::isfinite(*v) && *v >= -1, "controller state: the time ", *v,
                " is not -1 (none yet) or a time");
  ++v;
  for (const Ctl& c : ctl_) {
    SLENDER_CHECK(*v == 0 || *v == 1, "controller '", c.name, "': the started flag is ", *v,
                  ", not 0 or 1");
    ++v;
    for (int k = 0; k < c.n(); ++k, v += 6) {
      for (int j = 0; j < 5; ++j)
        SLENDER_CHECK(std::isfinite(v[j]), "controller '", c.name, "': spring ", k,
                      " has a state value that is not finite (", v[j], ")");
      SLENDER_CHECK(v[5] == 0 || v[5] == 1, "controller '", c.name, "': spring ", k,
                    " has a limited flag of ", v[5], ", not 0 or 1");
    }
  }
  v = values;
  time_[size_t(env)] = time_pending_[size_t(env)] = *v++;
  for (Ctl& c : ctl_) {
    const size_t n = size_t(c.n()), o = size_t(env) * n;
    c.init[size_t(env)] = (unsigned char)(*v++);
    for (size_t k = 0; k < n; ++k) {
      c.yf[o + k] = c.yf_p[o + k] = *v++;
      c.z[o + k] = c.z_p[o + k] = *v++;
      c.u[o + k] = c.u_p[o + k] = *v++;
      c.e[o + k] = c.e_p[o + k] = *v++;
      c.r[o + k] = c.r_p[o + k] = *v++;
      c.lim[o + k] = c.lim_p[o + k] = (unsigned char)(*v++);
    }
  }
}

void StrainController::reset(int env) {
  SLENDER_CHECK(env >= 0 && env < nenv_, "environment ", env, " out of range [0, ", nenv_, ")");
  for (Ctl& c : ctl_) {
    const size_t n = size_t(c.n()), o = size_t(env) * n;
    for (size_t k = 0; k < n; ++k) {
      c.yf[o + k] = c.z[o + k] = c.e[o + k] = 0;
      c.r[o + k] = c.u[o + k] = c.rest[k];
      c.lim[o + k] = 0;
    }
    c.init[size_t(env)] = 0;
  }
  time_[size_t(env)] = -1;
}

Real StrainController::measure(const Ctl& c, int k, const StrainReadings& y) const {
  const int i = c.index[size_t(k)];
  switch (c.component) {
    case 0:
    case 1:
    case 2:
      SLENDER_CHECK(y.bend_twist != nullptr, "controller '", c.name, "' needs the bend strains");
      return y.bend_twist[3 * size_t(i) + size_t(c.component)] / c.unit[size_t(k)];
    case 3:
      SLENDER_CHECK(y.hinge != nullptr, "controller '", c.name, "' needs the hinge angles");
      return y.hinge[size_t(i)];
    default:
      SLENDER_CHECK(y.stretch != nullptr, "controller '", c.name, "' needs the stretch strains");
      return y.stretch[size_t(i)];
  }
}

void StrainController::compute(int env, Real t, Real dt, const StrainReadings& y) {
  SLENDER_CHECK(env >= 0 && env < nenv_, "environment ", env, " out of range [0, ", nenv_, ")");
  SLENDER_CHECK(dt > 0 && std::isfinite(dt), "a controller's step must be positive, got ", dt);
  for (size_t ci = 0; ci < ctl_.size(); ++ci) {
    Ctl& c = ctl_[ci];
    const ControllerSpec& sp = c.spec;
    const int n = c.n();
    const size_t o = size_t(env) * size_t(n);
    const bool first = !c.init[size_t(env)];
    const Real alpha = dt / (sp.filter_time + dt);  // 1 without a filter
    // the measurement, smoothed along the springs
    for (int k = 0; k < n; ++k)
      c.y[size_t(k)] = measure(c, k, y);
    for (int pass = 0; pass < sp.spatial_smoothing; ++pass) {
      for (int k = 0; k < n; ++k) {
        const int b = c.nbr_adr[size_t(k)], nb = c.nbr_adr[size_t(k) + 1] - b;
        Real mean = 0;
        for (int a = 0; a < nb; ++a)
          mean += c.y[size_t(c.nbr[size_t(b + a)])];
        c.y_tmp[size_t(k)] =
            nb > 0 ? Real(0.5) * c.y[size_t(k)] + Real(0.5) * mean / nb : c.y[size_t(k)];
      }
      c.y.swap(c.y_tmp);
    }
    for (int k = 0; k < n; ++k) {
      const size_t j = o + size_t(k);
      const Real meas = c.y[size_t(k)];
      const Real yf = first ? meas : c.yf[j] + alpha * (meas - c.yf[j]);
      const Real r = reference_at(int(ci), env, k, t);
      const Real e = r - yf;
      // the feedforward within the limits: the integral then never holds a reference's excess
      // beyond them (which back-calculation would otherwise track)
      const Real b = std::min(
          std::max(sp.feedforward ? reference_at(int(ci), env, k, t + dt) : c.rest[size_t(k)],
                   c.lo[size_t(k)]),
          c.hi[size_t(k)]);
      const Real z1 = c.z[j] + c.ki[j] * e * dt;
      const Real v = b + c.kp[j] * e + z1;
      Real u = std::min(std::max(v, c.lo[size_t(k)]), c.hi[size_t(k)]);
      if (sp.rate_limit > 0) {
        const Real du = sp.rate_limit * dt;
        u = std::min(std::max(u, c.u[j] - du), c.u[j] + du);
      }
      const bool limited = u != v;
      Real z = z1;
      if (limited && sp.anti_windup == AntiWindup::kClamp) {
        if (c.ki[j] * e * (v - u) > 0) z = c.z[j];  // it would integrate into the limit
      } else if (limited && sp.anti_windup == AntiWindup::kBackCalculation) {
        // T_t: the spec's, or the integral time kp / ki (so that a held limit leaves the
        // integral where it was), or the step
        const Real tracking = sp.tracking_time > 0         ? sp.tracking_time
                              : c.kp[j] > 0 && c.ki[j] > 0 ? std::max(c.kp[j] / c.ki[j], dt)
                                                           : dt;
        z = z1 + (dt / tracking) * (u - v);
      }
      c.yf_p[j] = yf;
      c.z_p[j] = z;
      c.u_p[j] = u;
      c.e_p[j] = e;
      c.r_p[j] = r;
      c.lim_p[j] = limited ? 1 : 0;
    }
  }
  time_pending_[size_t(env)] = t;
}

void StrainController::commit(int env) {
  SLENDER_CHECK(env >= 0 && env < nenv_, "environment ", env, " out of range [0, ", nenv_, ")");
  for (Ctl& c : ctl_) {
    const size_t n = size_t(c.n()), o = size_t(env) * n;
    std::copy_n(c.yf_p.begin() + long(o), n, c.yf.begin() + long(o));
    std::copy_n(c.z_p.begin() + long(o), n, c.z.begin() + long(o));
    std::copy_n(c.u_p.begin() + long(o), n, c.u.begin() + long(o));
    std::copy_n(c.e_p.begin() + long(o), n, c.e.begin() + long(o));
    std::copy_n(c.r_p.begin() + long(o), n, c.r.begin() + long(o));
    std::copy_n(c.lim_p.begin() + long(o), n, c.lim.begin() + long(o));
    c.init[size_t(env)] = 1;
  }
  time_[size_t(env)] = time_pending_[size_t(env)];
}

void StrainController::apply(int env, NaturalShape& shape, bool pending) const {
  for (const Ctl& c : ctl_) {
    const size_t n = size_t(c.n()), o = size_t(env) * n;
    const std::vector<Real>& u = pending ? c.u_p : c.u;
    for (size_t k = 0; k < n; ++k) {
      // the command in the spring's unit to the engine's value: a curvature or twist times
      // the unit, a hinge angle as it is, a stretch 1 + u
      const Real v = u[o + k];
      natural_value(shape, c.component, c.index[k]) =
          c.component <= 2 ? v * c.unit[k] : (c.component == 3 ? v : 1 + v);
    }
  }
}

const std::vector<Real>& StrainController::command(int c) const { return ctl_.at(size_t(c)).u; }
const std::vector<Real>& StrainController::error(int c) const { return ctl_.at(size_t(c)).e; }
const std::vector<Real>& StrainController::reference(int c) const { return ctl_.at(size_t(c)).r; }
const std::vector<Real>& StrainController::measured(int c) const { return ctl_.at(size_t(c)).yf; }
const std::vector<Real>& StrainController::integral(int c) const { return ctl_.at(size_t(c)).z; }
const std::vector<unsigned char>& StrainController::limited(int c) const {
  return ctl_.at(size_t(c)).lim;
}

std::vector<std::string> StrainController::csv_columns() const {
  std::vector<std::string> cols;
  for (const Ctl& c : ctl_) {
    cols.push_back(c.name + "_error_rms");
    for (int k = 0; k < c.n(); ++k)
      cols.push_back(c.name + "_command_" + std::to_string(k));
    for (int k = 0; k < c.n(); ++k)
      cols.push_back(c.name + "_error_" + std::to_string(k));
  }
  return cols;
}

void StrainController::csv_row(int env,
                               Real t,
                               const StrainReadings& y,
                               std::vector<Real>& row) const {
  row.clear();
  for (size_t ci = 0; ci < ctl_.size(); ++ci) {
    const Ctl& c = ctl_[ci];
    const size_t n = size_t(c.n()), o = size_t(env) * n;
    const size_t at = row.size();
    row.push_back(0);
    for (size_t k = 0; k < n; ++k)
      row.push_back(c.u[o + k]);
    Real sum = 0;
    for (size_t k = 0; k < n; ++k) {
      const Real e = reference_at(int(ci), env, int(k), t) - measure(c, int(k), y);
      row.push_back(e);
      sum += e * e;
    }
    row[at] = std::sqrt(sum / Real(n));
  }
}

}  // namespace slender
