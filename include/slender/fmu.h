#pragma once

// The FMU of a scene (FMI 3.0 co-simulation, docs/fmu.md): its variables, its
// modelDescription.xml and the packing of the .fmu archive. The variables follow from the model
// and an output selection alone, so that `slender fmu` (which writes the description) and the
// FMU's library (host/fmu/fmi3_slave.cpp, which rebuilds them from the packed scene) agree on
// every value reference; the instantiation token is a hash of the description.

#include <cstdint>
#include <string>
#include <vector>

#include "slender/model.h"

namespace slender {

/// What an FMU variable reads or writes.
enum class FmuVarKind {
  kTime,                 ///< the independent variable [s]
  kNaturalCurvature,     ///< input: added to the bend-twist stencils' kappa1, kappa2 [-]
  kNaturalTwist,         ///< input: added to the natural twists [rad]
  kNaturalHingeAngle,    ///< input: added to the hinges' natural angles [rad]
  kNaturalMidCurvature,  ///< input: added to the mid-edge triangles' curvature [1/m]
  kPointLoad,            ///< input: forces on the nodes (nnode x 3) [N]
  kFixedTarget,          ///< input: the fixed DOFs' values (Model::fixed_dof order)
  /// input: the load values of one family scene field's entries (field, entries): a pressure
  /// chamber's pressure [Pa], a tendon's tension [N], a wrench's or a shell pressure's factor;
  /// once set, they replace that field's time functions (Simulator::set_load_value)
  kLoadValue,
  /// input: a factor on one of the scene's actuations (index: scene.actuation[index]): the
  /// group's natural-strain change times it (1: the scene's own; 0: that group off)
  kActuationGain,
  kNodePosition,      ///< output: one coordinate of a node [m]
  kNodeVelocity,      ///< output: one velocity component of a node [m/s]
  kEnergy,            ///< output: one energy (index: kinetic, stretch, bend, twist,
                      ///< gravity, user, load, total) [J]
  kStrainStretch,     ///< output: l / l_bar - 1 of every rod edge (nedge)
  kStrainBendTwist,   ///< output: kappa1, kappa2, tau of every bend-twist stencil (nbend x 3)
  kStrainHingeAngle,  ///< output: every hinge's dihedral angle [rad] (nhinge)
  kReaction,          ///< output: the support force of every fixed DOF (Model::fixed_dof)
};

struct FmuVariable {
  std::string name, description, unit;  ///< unit "" = none given
  std::uint32_t vr = 0;                 ///< value reference
  FmuVarKind kind = FmuVarKind::kTime;
  bool input = false;         ///< causality input (else output, or independent for the time)
  std::vector<int> dims;      ///< array dimensions; empty = a scalar
  int node = -1;              ///< kNodePosition, kNodeVelocity: the global node
  int index = 0;              ///< the coordinate (0..2) or the energy
  long offset = 0;            ///< first value in the inputs' or the outputs' flat buffer
  std::string field;          ///< kLoadValue: the family scene field (forces.<field>)
  std::vector<int> entries;   ///< kLoadValue: the field's entry of each value
  std::vector<double> start;  ///< inputs: start values (size())
  long size() const {
    long n = 1;
    for (int d : dims)
      n *= d;
    return n;
  }
};

struct FmuDescription {
  std::string model_name;         ///< the scene's name
  std::string identifier;         ///< the modelIdentifier (a C identifier)
  std::string outputs;            ///< the output selection it was made from
  std::vector<FmuVariable> vars;  ///< by value reference (vars[i].vr == i)
  long ninput_values = 0, noutput_values = 0;
  std::string token;  ///< instantiationToken
  std::string xml;    ///< modelDescription.xml
};

/// The default output selection: "default" = "nodes,energies,strains".
inline const char* fmu_default_outputs() { return "default"; }

/// The FMU's variables and model description for `m` with the output selection `outputs`
/// (comma-separated: "default", "nodes" (the scene's output nodes, else every part's first and
/// last node: positions and velocities), "PART:INDEX" (one node, a negative index counting from
/// the end), "energies", "strains", "reactions"). Throws InputError (file "<outputs>") naming
/// an unknown item, part or node.
FmuDescription describe_fmu(const Model& m, const std::string& outputs);

struct FmuPackOptions {
  std::string scene;  ///< the scene file
  std::string out;    ///< the .fmu to write
  std::string outputs = fmu_default_outputs();
  /// the FMU library (libslender_fmu.so); "" = SLENDER_FMU_LIBRARY, else beside
  /// libslender_host.so
  std::string library;
};
struct FmuPackResult {
  std::string path;
  long inputs = 0, outputs = 0;    ///< variables of each causality
  std::vector<std::string> files;  ///< the archive's entries
};
/// Packs the scene into an FMU: modelDescription.xml, binaries/x86_64-linux/ID.so (the FMU
/// library) beside libslender_host.so, resources/scene.json and the files the scene names.
/// Throws InputError for a bad scene or selection and Error when the library is not found or
/// the archive cannot be written.
FmuPackResult pack_fmu(const FmuPackOptions& opt);

}  // namespace slender
