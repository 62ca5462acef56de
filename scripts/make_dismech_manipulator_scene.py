#!/usr/bin/env python3
"""Writes apps/scenes/dismech_manipulator.json and its two natural-curvature tables.

DisMech's SMA-actuated two-limb soft manipulator (seed 002, Sec. V-B, Figs. 5-6; after Pacheco
Garcia et al.). The paper's values: limbs 76 x 49 x 9 mm of Smooth-Sil, rho = 1240 kg/m^3,
E = 1.793 MPa, each limb one rod, the two joined by an elastic joint, actuated by each limb's
natural curvature (uniform along the limb), the curvatures found by gradient descent so that the
simulated limbs match the hardware's (their open-loop trajectory: Fig. 6's run).

Not in the text, taken from the authors' example (StructuresComp/dismech-rods,
examples/real2sim_case): 25 nodes a limb, the first edge locked, gravity (0, 0, -9.8) m/s^2,
viscous damping 7 Pa s (F = -eta dl u), motion in the x-z plane, and the trajectory
(apps/scenes/data/dismech_manipulator_phis.csv): each limb's whole natural turn Phi [deg], which
their controller spreads as the discrete natural curvature 2 tan(Phi / (2 n_e)) over the limb's
n_e = 24 edges. The rod radius: the text says 10 cm, the example 0.01 m (a 10 cm rod would be
wider than the 76 mm limb is long): 1 cm here. The limb length: the paper's 76 mm (the example
has 75 mm). Our choice: implicit Euler at dt = 1 ms (theirs 0.1 ms; the damped limbs move
quasi-statically, tests/physics/dismech_manipulator_test.cpp).

Run from the repository root: python3 scripts/make_dismech_manipulator_scene.py
"""

import json
import math
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMB = 0.076  # [m]
NODES = 25
NE = NODES - 1
DL = LIMB / NE
HOLD = 1e-4  # a row's value holds until this long before the next row's time [s]


def kappa(phi_deg):
    """the scene's natural curvature [1/m] for a limb's whole turn Phi [deg]"""
    return 2 * math.tan(math.radians(phi_deg) / (2 * NE)) / DL


def read_phis():
    rows = []
    with open(os.path.join(ROOT, "apps/scenes/data/dismech_manipulator_phis.csv")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or line[0].isalpha():
                continue
            rows.append(tuple(float(v) for v in line.split(",")))
    return rows


def write_table(rows, limb):
    """Limb 1: a load table (t, k). Limb 0: a per-spring series (t, then k for its 23 interior
    springs and 0 for the joint's spring, which the model counts among limb 0's: DisMech's joint
    keeps its natural curvature zero)."""
    ext = "csv" if limb == 0 else "txt"
    lines = [
        "# DisMech's two-limb manipulator (seed 002, Sec. V-B): limb %d's natural curvature k [1/m] in" % limb,
        "# time [s], from apps/scenes/data/dismech_manipulator_phis.csv: k = 2 tan(Phi / (2 n_e)) / dl,",
        "# n_e = 24 edges of dl = 76 mm / 24, each row held until %g s before the next." % HOLD,
    ]
    if limb == 0:
        lines.append("# Columns: t, then limb 0's 23 interior bend springs (k), then the joint's spring (0).")
    lines.append("# Written by scripts/make_dismech_manipulator_scene.py.")

    def row(t, k):
        if limb == 1:
            return "%.6f %.9f" % (t, k)
        return ",".join(["%.6f" % t] + ["%.9f" % k] * (NE - 1) + ["0"])

    for i, r in enumerate(rows):
        k = kappa(r[1 + limb])
        lines.append(row(r[0], k))
        if i + 1 < len(rows):
            lines.append(row(rows[i + 1][0] - HOLD, k))
    name = "data/dismech_manipulator_limb%d.%s" % (limb, ext)
    with open(os.path.join(ROOT, "apps/scenes", name), "w") as f:
        f.write("\n".join(lines) + "\n")
    return name


DESCRIPTION = (
    "DisMech's SMA-actuated two-limb soft manipulator (seed 002, Sec. V-B, Figs. 5-6, after Pacheco "
    "Garcia et al.): two silicone limbs (Smooth-Sil, rho = 1240 kg/m^3, E = 1.793 MPa, nu = 0.5), each "
    "76 mm long and modelled as one rod of radius 1 cm, joined end to end by an elastic joint, the first "
    "edge locked, hanging out horizontally along +x under gravity. The SMA wires are not modelled: as in the "
    "paper, each limb is actuated by its natural curvature, uniform along the limb, and the run plays the "
    "authors' open-loop trajectory (the curvatures their gradient descent found to match the hardware, "
    "Fig. 6's run; tables in apps/scenes/data/, held between rows as their controller holds them; the "
    "joint's bend spring, which the model counts among limb 0's, keeps a zero natural curvature as in DisMech): limb 0 "
    "turns between -24 and -57 degrees, limb 1 between -39 and +34. Not in the paper's text, taken from the "
    "authors' example (dismech-rods examples/real2sim_case): 25 nodes a limb, gravity (0, 0, -9.8) m/s^2, "
    "viscous damping 7 Pa s, motion in the x-z plane, the radius (the text's 10 cm is read as their example's "
    "0.01 m). Chosen here: implicit Euler at 1 ms (theirs 0.1 ms). Written by "
    "scripts/make_dismech_manipulator_scene.py; tests/physics/dismech_manipulator_test.cpp checks the "
    "quasi-static shapes against the elastica and that the run follows them; bench/results/"
    "2026-11-29-pneunet-sma-manipulator-xeon-2c.md has the tip's path. nodes.csv follows the tip."
)


def main():
    rows = read_phis()
    tables = [write_table(rows, limb) for limb in (0, 1)]
    rods, acts = [], []
    for limb in (0, 1):
        name = "limb%d" % limb
        rods.append({
            "name": name, "material": "smooth_sil", "radius": 0.01, "frame_normal": [0, 0, 1],
            "shape": {"type": "straight", "start": [limb * LIMB, 0, 0],
                      "end": [(limb + 1) * LIMB, 0, 0], "nodes": NODES}})
        if limb == 0:
            acts.append({"target": "rod_curvature1", "part": name, "series": tables[limb]})
        else:
            acts.append({"target": "rod_curvature1", "part": name, "amplitude": 1,
                         "time": {"type": "table", "file": tables[limb]}})
    scene = {
        "name": "dismech_manipulator",
        "description": DESCRIPTION,
        "materials": [{"name": "smooth_sil", "density": 1240, "youngs_modulus": 1.793e6,
                       "poisson_ratio": 0.5}],
        "rods": rods,
        "joints": [[{"part": "limb0", "node": -1}, {"part": "limb1", "node": 0}]],
        "boundary": {"fixed_edges": [{"part": "limb0", "edges": [0]}]},
        "forces": {"gravity": [0, 0, -9.8], "viscous_drag": {"viscosity": 7.0}},
        "actuation": acts,
        "integrator": {"type": "implicit_euler", "dt": 1e-3, "duration": 11.6, "two_d": True},
        "output": {"dir": "out/dismech_manipulator", "every": 10,
                   "nodes": [{"part": "limb1", "node": -1}]},
    }
    text = json.dumps(scene, indent=2)
    with open(os.path.join(ROOT, "apps/scenes/dismech_manipulator.json"), "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
