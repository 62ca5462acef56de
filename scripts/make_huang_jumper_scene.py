#!/usr/bin/env python3
"""Writes apps/scenes/huang_jumper.json: Huang et al.'s SMA jumper (seed 003, "Jumper" and
Fig. 7), an asymmetric ring of radius R0 = 5 mm on the ground, actuated once by the SMA law,
with a pulling force at its first node (the wire at its leading edge).

What the seed's text gives: an asymmetric circle of radius about 5 mm made of one SMA limb
(a 55 x 18 x 0.5 mm tape for the jumper, with a 34 x 11 mm Omega-shaped wire in it); a force at
the first node, whose magnitude and duration were fitted (their Supplementary Fig. 7, not in
the text); snapshots at t = 0, 0.125 and 0.25 s; 0.25 s of heating; the rolling robot's
density 1912 kg/m^3; Newmark-beta and ground friction. Everything else here is our choice:

- the shape: a straight foot of 10 mm on the ground (the leading edge, node 0, at its front,
  x = 0; no SMA in it) and, from its rear end, the SMA loop: an arc of radius R0 = 5 mm over
  300 degrees, rising backwards, over the top and down towards the front, its free end 2.5 mm
  above the foot (a ring with a flat side, open at the front); edges of about 1 mm; motion in
  the x-z plane, forward is +x;
- section and modulus as apps/scenes/sma_limb.json (radius 0.4 mm, E = 100 MPa, nu = 0.33);
- the SMA law (eq. 7) of sma_limb.json, n = 0.1 for the curvature and 2.5 for the modulus,
  tau = 8 /s, t_bar = 1.2 s, but t0 = 0.05 s: the text says t0 is shorter than the 0.25 s of
  heating, and with t0 = 0.25 s the limb straightens too slowly to leave the ground;
- Kelvin-Voigt damping with a retardation time of 1 ms (eta = 1e5 Pa s; the composite is an
  elastomer). Not Rayleigh's beta: with the elastic Hessian of the step's start, far from the
  rest shape as the actuation puts it, the loop's motion does not converge in dt under it;
- the pull: 0.2 times the jumper's weight at 45 degrees, forwards and up, while heating (held
  to 0.25 s, released by 0.3 s);
- the ground: friction 0.5 (the rolling robot's), a contact layer of 0.2 mm and a stiffness of
  ten times the jumper's weight over it (a landing on a few nodes);
- the implicit midpoint rule (second order, no numerical damping, as the paper's Newmark-beta;
  Slender's Newmark with beta = 1/4, gamma = 1/2 gives the same motion within 0.3 mm of the
  first node at 0.5 s but takes 8 Newton iterations a step against 2.4), dt = 0.125 ms (the
  first node's path within 2 % of R0 of a run at half the step; 0.25 ms is 16 % of R0 off at
  the end), one actuation cycle of 3 s.

usage: scripts/make_huang_jumper_scene.py [--out PATH]
"""
import argparse
import json
import math

p = argparse.ArgumentParser()
p.add_argument("--out", default="apps/scenes/huang_jumper.json")
a = p.parse_args()

R0, sweep, foot, edge = 0.005, math.radians(300), 0.010, 0.001
r, rho, E = 4e-4, 1912, 1e8
t0, tau, t_bar, period = 0.05, 8, 1.2, 3

nf = round(foot / edge)
na = round(R0 * sweep / edge)
# (x, z) of the centreline, lifted by the rod radius so that it rests on the ground
foot_pts = [(-foot * i / nf, 0.0) for i in range(nf + 1)]
loop_pts = [(-foot - R0 * math.sin(sweep * i / na), R0 - R0 * math.cos(sweep * i / na))
            for i in range(na + 1)]


def points(pts):
    return [[round(x, 9), 0, round(z + r, 9)] for x, z in pts]


length = foot + R0 * sweep
weight = rho * math.pi * r * r * length * 9.81
delta = 2e-4
pull = 0.2 * weight
c = math.cos(math.radians(45))


def sma(n):
    return {"type": "sma", "n": n, "t0": t0, "tau": tau, "t_bar": t_bar, "period": period}


scene = {
    "name": "huang_jumper",
    "description": (
        "Huang et al.'s SMA jumper (seed 003, Fig. 7): an asymmetric ring on the ground, a 10 mm "
        "foot (node 0, its front end, is the leading edge) and an SMA loop of radius R0 = 5 mm "
        "over 300 degrees, heated once: the loop's natural curvature falls to 0.1 of its value "
        "and its modulus rises 2.5 times within t0 = 0.05 s (eq. 7, then the logistic recovery "
        "about t_bar = 1.2 s), while a pull of 0.2 times its weight, forwards and up at 45 "
        "degrees, acts at the first node during the 0.25 s of heating (the wire). It straightens, "
        "leaves the ground, lands forward and curls back. Written by "
        "scripts/make_huang_jumper_scene.py, which says which values are the paper's and which "
        "are ours; tests/physics/huang_jumper_test.cpp checks the flight and the forward motion. "
        "nodes.csv follows the first node."),
    "materials": [{"name": "sma_composite", "density": rho, "youngs_modulus": E,
                   "poisson_ratio": 0.33}],
    "rods": [
        {"name": "foot", "material": "sma_composite", "radius": r,
         "shape": {"type": "nodes", "points": points(foot_pts)}, "frame_normal": [0, 0, 1]},
        {"name": "loop", "material": "sma_composite", "radius": r,
         "shape": {"type": "nodes", "points": points(loop_pts)}, "frame_normal": [0, 0, 1],
         "youngs_modulus": {"time": sma(2.5)}},
    ],
    "joints": [[{"part": "foot", "node": -1}, {"part": "loop", "node": 0}]],
    "actuation": [{"target": "rod_curvature1", "part": "loop", "amplitude": 1 / R0,
                   "time": sma(0.1)}],
    "forces": {
        "gravity": [0, 0, -9.81],
        "point_loads": [{"part": "foot", "node": 0,
                         "force": [round(pull * c, 12), 0, round(pull * c, 12)],
                         "time": {"type": "table", "rows": [[0, 1], [0.25, 1], [0.3, 0]]}}],
        "damping": {"kelvin_voigt": 1e5},
        "ground": {"type": "plane", "friction": 0.5, "contact_distance": delta,
                   "stiffness": round(10 * weight / delta, 6)},
    },
    "integrator": {"type": "implicit_midpoint", "dt": 1.25e-4,
                   "duration": period, "two_d": True},
    "output": {"dir": "out/huang_jumper", "every": 40,
               "nodes": [{"part": "foot", "node": 0}],
               "camera": {"azimuth": -90, "elevation": 0}},
}
with open(a.out, "w") as f:
    json.dump(scene, f, indent=1)
    f.write("\n")
print(f"wrote {a.out}: {len(foot_pts) + len(loop_pts) - 1} nodes, weight {weight:.4e} N, "
      f"pull {pull:.4e} N")
