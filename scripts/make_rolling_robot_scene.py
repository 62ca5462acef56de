#!/usr/bin/env python3
"""Writes apps/scenes/rolling_robot_drop.json: Huang et al.'s star-shaped rolling robot
(seed 003, Fig. 1a and "Rolling robot") dropped onto the ground, the set-up of their
Supplementary Fig. 3 (how much it rebounds depends on the Rayleigh beta).

Seven limbs arranged radially in the x-z plane, each a straight part of 8 mm from the centre
followed by a curved part of 22 mm with natural curvature 120 /m (its stress-free shape), every
limb curling the same way; edges of about 2.5 mm (the paper's 84 nodes: here 1 + 7 x 12 = 85,
the centre shared). Density 1912 kg/m^3 as in the paper; the limbs' section and modulus are
those of apps/scenes/sma_limb.json (radius 0.4 mm, E = 100 MPa). A network in place, so that
the seven limbs share the centre node (a bend-twist spring for every pair of edges there).
The robot starts 1 cm above the ground (its lowest point) at rest; implicit midpoint (no damping
of its own), 2D (the x-z plane), ground friction 0.5, beta = 1e-3 s.

usage: scripts/make_rolling_robot_scene.py [--beta BETA] [--drop H] [--out PATH]
"""
import argparse
import json
import math

p = argparse.ArgumentParser()
p.add_argument("--beta", type=float, default=1e-3)
p.add_argument("--drop", type=float, default=0.01, help="height of the lowest point [m]")
p.add_argument("--out", default="apps/scenes/rolling_robot_drop.json")
a = p.parse_args()

limbs, ls, lc, kappa = 7, 0.008, 0.022, 120.0
n_straight, n_curved = 3, 9  # edges: 8 mm / 3 and 22 mm / 9, about 2.5 mm each
nodes = [[0.0, 0.0, 0.0]]
edges = []
for k in range(limbs):
    th = 2 * math.pi * k / limbs + math.pi / 2  # limb 0 points up
    d = (math.cos(th), math.sin(th))             # (x, z) direction of the straight part
    prev = 0
    for i in range(1, n_straight + 1):
        s = ls * i / n_straight
        nodes.append([s * d[0], 0.0, s * d[1]])
        edges.append([prev, len(nodes) - 1])
        prev = len(nodes) - 1
    # the arc: tangent d at its start, turning counterclockwise (in x-z) at 1 / kappa
    r = 1 / kappa
    cx, cz = ls * d[0] - r * d[1], ls * d[1] + r * d[0]  # the arc's centre, left of d
    for i in range(1, n_curved + 1):
        phi = (lc * i / n_curved) / r
        # the point at angle phi along the circle from the arc's start
        ang0 = math.atan2(ls * d[1] - cz, ls * d[0] - cx)
        nodes.append([cx + r * math.cos(ang0 + phi), 0.0, cz + r * math.sin(ang0 + phi)])
        edges.append([prev, len(nodes) - 1])
        prev = len(nodes) - 1

low = min(z for _, _, z in nodes)
for n in nodes:
    n[2] += a.drop - low
    for c in range(3):
        n[c] = round(n[c], 9)

scene = {
    "name": "rolling_robot_drop",
    "description": (
        "Huang et al.'s star-shaped rolling robot (seed 003, Fig. 1a: seven limbs, each a "
        "straight 8 mm part from the centre and a 22 mm arc of natural curvature 120 /m) dropped "
        "from 1 cm onto the ground, the set-up of their Supplementary Fig. 3: how high it "
        "rebounds is set by the Rayleigh beta (here 1e-3 s). Written by "
        "scripts/make_rolling_robot_scene.py; tests/physics/rayleigh_test.cpp measures the "
        "rebound against beta. nodes.csv follows the centre."),
    "materials": [{"name": "sma_composite", "density": 1912, "youngs_modulus": 1e8,
                   "poisson_ratio": 0.33}],
    "networks": [{"name": "robot", "material": "sma_composite", "radius": 4e-4,
                  "damping": {"stiffness_proportional": a.beta},
                  "nodes": nodes, "edges": edges}],
    "forces": {"gravity": [0, 0, -9.81], "ground": {"type": "plane", "friction": 0.5}},
    "integrator": {"type": "implicit_midpoint", "dt": 1e-4, "duration": 0.3, "two_d": True},
    "output": {"dir": "out/rolling_robot_drop", "every": 20,
               "nodes": [{"part": "robot", "node": 0}],
               "camera": {"azimuth": -90, "elevation": 5}},
}
with open(a.out, "w") as f:
    json.dump(scene, f, indent=1)
    f.write("\n")
print(f"wrote {a.out}: {len(nodes)} nodes, {len(edges)} edges")
