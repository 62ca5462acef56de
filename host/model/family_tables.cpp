// The families' own tables (stencils/family_table.h): their scene entries checked against the
// fields each family declares, built into Model::tables, the tables the parts fill (the shell
// membrane's), and the model's signals.

#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "model_internal.h"
#include "slender/core/error.h"

namespace slender {

namespace {

// the path of an entry's field in the scene, such as forces.pressure[0].part
std::string field_path(const FamilyInput& in, const char* field) {
  const std::string base = in.loc.field.empty() ? "forces." + in.field : in.loc.field;
  return field && *field ? base + "." + field : base;
}

const char* kind_name(FieldKind k) {
  switch (k) {
    case FieldKind::kNumber:
      return "a number";
    case FieldKind::kPart:
      return "a part's name";
    case FieldKind::kTime:
      return "a time function";
    case FieldKind::kVec3:
      return "three numbers";
    case FieldKind::kWord:
      return "a string";
    case FieldKind::kNumbers:
      return "a number or a list of numbers";
  }
  return "?";
}

// every field the entry gives is one of the family's, of its kind; every required one is given
void check_fields(const Model& m, const FamilyInput& in, const FamilySceneInfo& f) {
  auto declared = [&](const std::string& name, FieldKind kind) {
    for (const FamilyField* d = f.begin; d != f.end; ++d)
      if (name == d->name) {
        // one number is a list of one
        if (d->kind == FieldKind::kNumbers && kind == FieldKind::kNumber) return;
        if (d->kind != kind)
          input_error(m, in, d->name, std::string("must be ") + kind_name(d->kind));
        return;
      }
    std::string known;
    for (const FamilyField* d = f.begin; d != f.end; ++d)
      known += std::string(known.empty() ? "" : ", ") + d->name;
    input_error(m, in, name.c_str(), "unknown field (the family takes " + known + ")");
  };
  for (const auto& kv : in.numbers)
    declared(kv.first, FieldKind::kNumber);
  for (const auto& kv : in.parts)
    declared(kv.first, FieldKind::kPart);
  for (const auto& kv : in.times)
    declared(kv.first, FieldKind::kTime);
  for (const auto& kv : in.vectors)
    declared(kv.first, FieldKind::kVec3);
  for (const auto& kv : in.words)
    declared(kv.first, FieldKind::kWord);
  for (const auto& kv : in.lists)
    declared(kv.first, FieldKind::kNumbers);
  for (const FamilyField* d = f.begin; d != f.end; ++d) {
    bool given = false;
    switch (d->kind) {
      case FieldKind::kNumber:
        given = in.find_number(d->name) != nullptr;
        break;
      case FieldKind::kPart:
        given = in.find_part(d->name) != nullptr;
        break;
      case FieldKind::kTime:
        given = in.find_time(d->name) != nullptr;
        break;
      case FieldKind::kVec3:
        given = in.find_vec3(d->name) != nullptr;
        break;
      case FieldKind::kWord:
        given = in.find_word(d->name) != nullptr;
        break;
      case FieldKind::kNumbers:
        given = in.find_list(d->name) != nullptr || in.find_number(d->name) != nullptr;
        break;
    }
    if (d->required && !given) input_error(m, in, d->name, "missing (required)");
  }
  for (const auto& kv : in.numbers)
    if (!std::isfinite(kv.second)) input_error(m, in, kv.first.c_str(), "must be finite");
  for (const auto& kv : in.vectors)
    for (int i = 0; i < 3; ++i)
      if (!std::isfinite(kv.second[i]))
        input_error(m, in, kv.first.c_str(), "must be three finite numbers");
  for (const auto& kv : in.lists) {
    if (kv.second.empty())
      input_error(m, in, kv.first.c_str(), "must be a number or a list of numbers, not empty");
    for (Real v : kv.second)
      if (!std::isfinite(v)) input_error(m, in, kv.first.c_str(), "must be finite numbers");
  }
}

// the scene side of family f, whose binding B keeps a table
template <class B>
FamilySceneInfo scene_info(Family f) {
  FamilySceneInfo info;
  info.family = int(f);
  info.field = B::kSceneField;
  info.begin = std::begin(B::kFields);
  info.end = std::end(B::kFields);
  info.ni = B::kInts;
  info.nr = B::kReals;
  return info;
}

}  // namespace

std::vector<FamilySceneInfo> family_scene_fields() {
  std::vector<FamilySceneInfo> out;
  for_each_family([&](auto b, Family f, long) {
    using B = decltype(b);
    if constexpr (HasFamilyTable<B>::value) out.push_back(scene_info<B>(f));
  });
  return out;
}

void build_family_tables(Model& m) {
  const std::vector<FamilySceneInfo> infos = family_scene_fields();
  for (const FamilyInput& in : m.scene.forces.families) {
    bool known = false;
    for (const FamilySceneInfo& f : infos)
      known = known || in.field == f.field;
    if (!known) input_error(m, in, "", "no stencil family reads the field '" + in.field + "'");
  }
  for_each_family([&](auto b, Family f, long) {
    using B = decltype(b);
    if constexpr (HasModelTable<B>::value) {  // rows from the parts: no entries to check
      FamilyTable& t = m.tables[f];
      t = FamilyTable{};
      t.name = B::kTableName;
      t.ni = B::kInts;
      t.nr = B::kReals;
      t.symmetric = B::kTraits.symmetric;
      B::build(m, t);
    }
    if constexpr (HasFamilyTable<B>::value) {
      FamilyTable& t = m.tables[f];
      t = FamilyTable{};
      t.name = B::kSceneField;
      t.ni = B::kInts;
      t.nr = B::kReals;
      t.symmetric = B::kTraits.symmetric;
      const FamilySceneInfo info = scene_info<B>(f);
      int entry = 0;
      for (const FamilyInput& in : m.scene.forces.families) {
        if (in.field != B::kSceneField) continue;
        check_fields(m, in, info);
        const size_t before = m.signals.size();
        B::build(m, in, t);
        // the signals this entry added, by field and entry (load_signal)
        for (size_t k = before; k < m.signals.size(); ++k) {
          m.signal_field.push_back(B::kSceneField);
          m.signal_entry.push_back(entry);
        }
        ++entry;
      }
    }
  });
}

void eval_signals(
    const Model& m, Real t, Real factor, Real* out, const Real* value, const unsigned char* set) {
  for (int k = 0; k < kMaxSignals; ++k) {
    if (k >= int(m.signals.size())) {
      out[k] = 0;
    } else if (value && set && set[k]) {
      out[k] = factor * value[k];
    } else {
      // (gain 1 leaves the bits of factor * s(t))
      out[k] = factor * (m.signal_gain[size_t(k)] * eval_time_function(m.signals[size_t(k)], t));
    }
  }
}

int load_signal(const Model& m, const std::string& field, int entry) {
  std::string entries;
  int count = 0;
  for (size_t k = 0; k < m.signals.size(); ++k) {
    if (m.signal_field[k] != field) continue;
    if (m.signal_entry[k] == entry) return int(k);
    ++count;
  }
  for (size_t k = 0; k < m.signals.size(); ++k)
    entries += std::string(entries.empty() ? "" : ", ") + m.signal_field[k] + "[" +
               std::to_string(m.signal_entry[k]) + "]";
  throw Error("no load forces." + field + "[" + std::to_string(entry) + "] to set: " +
              (count ? "forces." + field + " has " + std::to_string(count) + " entries"
                     : "the scene has no entry of forces." + field + " with a load signal") +
              " (the loads an action sets: " + (entries.empty() ? "none" : entries) + ")");
}

[[noreturn]] void input_error(const Model& m,
                              const FamilyInput& in,
                              const char* field,
                              const std::string& message) {
  throw InputError(in.loc.file.empty() ? m.scene.file : in.loc.file, in.loc.line,
                   field_path(in, field), message);
}

int input_part(const Model& m, const FamilyInput& in, const char* field) {
  const std::string* name = in.find_part(field);
  if (!name) input_error(m, in, field, "missing (required)");
  for (size_t p = 0; p < m.scene.parts.size(); ++p)
    if (m.scene.parts[p].name == *name) return int(p);
  input_error(m, in, field, "no part named '" + *name + "'");
}

int input_signal(Model& m, const FamilyInput& in, const char* field, Real gain) {
  const TimeFunction* f = in.find_time(field);
  if (int(m.signals.size()) >= kMaxSignals)
    input_error(m, in, field,
                "more than " + std::to_string(kMaxSignals) +
                    " time functions in the families' fields of one scene");
  m.signals.push_back(f ? *f : TimeFunction{});
  m.signal_gain.push_back(gain);
  return int(m.signals.size()) - 1;
}

Real input_number(const Model& m, const FamilyInput& in, const char* field, Real fallback) {
  (void)m;
  const Real* v = in.find_number(field);
  return v ? *v : fallback;
}

Vec3 input_vec3(const Model& m, const FamilyInput& in, const char* field, const Vec3& fallback) {
  (void)m;
  const Vec3* v = in.find_vec3(field);
  return v ? *v : fallback;
}

std::vector<Real> input_numbers(const Model& m,
                                const FamilyInput& in,
                                const char* field,
                                const std::vector<Real>& fallback) {
  (void)m;
  if (const std::vector<Real>* v = in.find_list(field)) return *v;
  if (const Real* v = in.find_number(field)) return {*v};
  return fallback;
}

std::string input_word(const Model& m,
                       const FamilyInput& in,
                       const char* field,
                       const std::string& fallback) {
  (void)m;
  const std::string* v = in.find_word(field);
  return v ? *v : fallback;
}

}  // namespace slender
