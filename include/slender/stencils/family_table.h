#pragma once

// Family tables: the model data a stencil family keeps for itself, so that adding a family does
// not touch the model's lists. A family with a table declares, in its own header:
//   - its rows: each `ni` ints (node ids, a signal index, ...) and `nr` reals (parameters);
//   - its scene field: `forces.<kSceneField>`, an object or a list of objects whose fields
//     (kFields) are numbers, part names, time functions, 3-vectors or words;
//   - `build(model, input, table)`: one scene entry's rows, from the built model;
//   - kTraits (family_traits.h): elastic or not, in the support reactions or not, whether its
//     local Jacobians are symmetric (an energy's Hessian) or not (a force without a potential:
//     the model is then solved by LU or BiCGSTAB), its energy's field in Simulator::energies.
// The model keeps one FamilyTable per family (Model::tables); the views carry a FamilyTableView
// of each (host or device memory), and the engines evaluate the family as any other
// (families.h). The time functions a family's input names become the model's signals: their
// values at the evaluation time reach the stencils through EvalView::signal.

#include <string>
#include <vector>

#include "slender/core/types.h"
#include "slender/stencils/family_traits.h"

namespace slender {

/// the most stencil families (the size of the views' table arrays)
constexpr int kMaxFamilies = 24;
/// the most time functions (signals) the family inputs of one model may name: one per entry of
/// the loads that take one (pressure chambers, tendons, wrenches, shell pressures; a
/// three-segment arm of three chambers each takes 9)
constexpr int kMaxSignals = 32;

/// One family's rows, read-only (host or device memory).
struct FamilyTableView {
  long rows;      ///< number of rows
  int ni, nr;     ///< ints and reals per row
  const int* i;   ///< (rows x ni)
  const Real* r;  ///< (rows x nr)
};

/// One family's rows on the host (Model::tables).
struct FamilyTable {
  std::string name;       ///< the family's scene field ("" when the family keeps no table)
  int ni = 0, nr = 0;     ///< ints and reals per row
  long rows = 0;          ///< number of rows
  bool symmetric = true;  ///< local Jacobians symmetric (B::kTraits.symmetric)
  std::vector<int> i;     ///< (rows x ni)
  std::vector<Real> r;    ///< (rows x nr)
  /// appends one row
  void add(const int* ints, const Real* reals) {
    i.insert(i.end(), ints, ints + ni);
    r.insert(r.end(), reals, reals + nr);
    ++rows;
  }
  bool fits() const { return i.size() == size_t(rows) * ni && r.size() == size_t(rows) * nr; }
  FamilyTableView view() const {
    return FamilyTableView{rows, ni, nr, i.empty() ? nullptr : i.data(),
                           r.empty() ? nullptr : r.data()};
  }
};

/// What a family's scene field may hold.
enum class FieldKind {
  kNumber,   ///< a finite number
  kPart,     ///< the name of a part
  kTime,     ///< a time function (as point loads' "time"); default: constant 1
  kVec3,     ///< three finite numbers, such as a force [x, y, z]
  kWord,     ///< a string the family's build checks, such as a choice ("world", "follower")
  kNumbers,  ///< a list of finite numbers, such as node indices [0, 2, 4]; or one number (a
             ///< list of one)
};

/// One field of a family's scene entries.
struct FamilyField {
  const char* name;
  FieldKind kind;
  bool required;
  const char* doc;
};

/// The scene side of a family with a table, as the scene reader and the model builder see it.
struct FamilySceneInfo {
  int family;                ///< its Family
  const char* field;         ///< forces.<field>
  const FamilyField* begin;  ///< its fields
  const FamilyField* end;
  int ni, nr;  ///< its rows' shape
};

}  // namespace slender
