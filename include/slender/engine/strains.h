#pragma once

// The strains of a state, one element per index on an executor (engine/engine.h's strains()):
// each from its stencil's own geometry (stencils/), so that every front end reports what the
// stencils see.

#include "slender/core/status.h"
#include "slender/stencils/bindings.h"

namespace slender {

/// values per element of a strain kind (core/status.h's StrainKind)
SLENDER_HD inline int strain_width(StrainKind k) {
  return k == StrainKind::kBendTwist ? 3 : k == StrainKind::kShapeOperator ? 9 : 1;
}

/// elements of a strain kind: rod edges, bend-twist stencils, hinges or mid-edge triangles
SLENDER_HD inline long strain_count(const ModelView& m, StrainKind k) {
  switch (k) {
    case StrainKind::kStretch:
      return m.nedge;
    case StrainKind::kBendTwist:
      return m.nbend;
    case StrainKind::kHingeAngle:
      return m.nhinge;
    case StrainKind::kShapeOperator:
      return m.nmid;
  }
  return 0;
}

namespace env_major {

/// the strains of one kind at the view's configuration (its frames those of the configuration):
/// one (environment, element) per index into out (nenv x n x strain_width(kind))
struct Strains {
  ModelView m;
  EvalView s;
  StrainKind kind;
  long n;     // strain_count(m, kind)
  Real* out;  // (nenv x n x width)
  SLENDER_HD void operator()(long i) const {
    const int env = int(i / n);
    const long k = i % n;
    const Real* q = s.q + long(env) * m.ndof;
    switch (kind) {
      case StrainKind::kStretch: {
        Vec<6> x;
        detail::gather_positions<2>(q, m.edge_node + 2 * k, x);
        out[i] = rod_stretch_strain(x, m.edge_l_bar[k]);
        break;
      }
      case StrainKind::kBendTwist: {
        LocalEval<11> r;
        RodBendTwist::Strains st;
        RodBendTwistBinding::eval(m, s, env, k, kEnergy, r, &st);
        out[3 * i] = st.kappa1;
        out[3 * i + 1] = st.kappa2;
        out[3 * i + 2] = st.tau;
        break;
      }
      case StrainKind::kHingeAngle: {
        Vec<12> x;
        detail::gather_positions<4>(q, m.hinge_node + 4 * k, x);
        out[i] = shell_hinge_angle(x);
        break;
      }
      case StrainKind::kShapeOperator: {
        LocalEval<12> r;
        Mat3 L;
        ShellMidEdgeBinding::eval(m, s, env, k, kEnergy, r, &L);
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b)
            out[9 * i + 3 * a + b] = L(a, b);
        break;
      }
    }
  }
};

}  // namespace env_major

}  // namespace slender
