#!/usr/bin/env python3
"""Writes apps/scenes/star_roll*.json: Huang et al.'s star-shaped rolling robot (seed 003, Fig. 1a,
"Rolling robot", Figs. 4-5) rolling by sequential SMA actuation of its limbs, on flat ground, on
planes inclined by -3, +3 and +6 degrees, and on the wavy ground of their Fig. 5 (starting on a
crest or in a trough).

What is the paper's (seed 003, text):
- seven limbs arranged radially, each a straight part of ls = 8 mm from the centre and a curved
  part of lc = 22 mm with natural curvature 120 /m; density 1912 kg/m^3; edges of about 2.5 mm;
- the SMA law (eq. 7) on the natural curvature and, "following a similar piece-wise function",
  the Young's modulus; each limb heated for 0.25 s, an actuation period of 3 s;
- one limb a cycle, the one behind the contact limb: "Limb 5 is in contact with the ground at
  t = 0. Upon actuation of Limb 4, the robot rolls to the right and the contact limb changes from
  5 to 6. In the next cycle, Limb 5 ... is actuated": limb k + 1 in the cycle after limb k;
- friction mu = 0.8 (their Supplementary Methods, quoted in the text);
- inclines theta = -3, +3 (uphill in the rolling direction) and +6 degrees; the wavy ground
  f(x) = A sin(2 pi x / lambda), A = 6.5 mm, lambda = 200 mm, the robot starting on a crest or in
  a trough; four actuation cycles (Fig. 5d).

What is ours (the text gives no value):
- the limbs' section and modulus: a round rod of radius 0.4 mm (apps/scenes/sma_limb.json's) at
  E = 5 MPa. The text gives no modulus; its Methods give the limb's build, an 18 mm wide
  laminate about 1.7 mm thick of thermally conductive tape and Ecoflex around an SMA wire, whose
  bending stiffness per weight the paper does not give either. In the plane only EI / (rho A)
  matters to the roll (with the damping ratio and the contact scaled to the weight): 5 MPa on
  our section is a gravito-bending length (EI / rho g A)^(1/3) of 22 mm, the 18 x 1.7 mm
  laminate at rho = 1912 and about 0.8 MPa. The value puts the robot's limit between the
  paper's +3 and +6 degrees: at 3 MPa it fails +3 degrees, from 7 MPa it climbs +6; 4 and
  5 MPa climb +3 and fail +6 (bench/star_roll.py --moduli;
  bench/results/2026-12-01-star-rolling-soft-limbs-epyc-2c.md). So the +6 degree result is
  fitted; the others (the gait, -3 > flat > +3, the wave) follow. The first scenes' 100 MPa
  (apps/scenes/sma_limb.json's) climbed every plane up to 12 degrees;
- the SMA constants of apps/scenes/sma_limb.json (eq. 7 with n = 0.1 on the curvature, n = 2.5
  on the modulus, tau = 8 /s, t_bar = 1.2 s) with t0 = 0.05 s as in apps/scenes/huang_jumper.json
  (the text: t0 is "a short time period", shorter than the 0.25 s of heating);
- each limb a straight rod and an arc rod (so that the actuation drives the arc only; the
  straight part keeps its zero natural curvature and takes the modulus cycle too), the seven
  straight rods joined at the centre;
- the paper's damping model (Rayleigh, its eq. 1) with alpha = 0 and beta = 9e-2 s (the text
  gives no value): at 100 MPa, 1e-2 to 3e-2 s gave a roll that does not depend on the step (with
  1e-3 or 5e-3 s the heated limb threw the robot and where it landed changed with dt;
  bench/results/2026-11-30-star-rolling-rayleigh-xeon-2c.md); at 5 MPa the same damping ratio
  (beta omega) is sqrt(20) times that beta: 4.5e-2 to 1.3e-1 s, and 9e-2 s (2e-2 s at 100 MPa)
  is the value whose four cycles change least with the step (3.5 % at dt / 2, against 6.6 % at
  4.5e-2 s). Kelvin-Voigt damping (1 ms, the jumper's) rolled it two limbs a heating and on
  down a 3 degree decline
  (bench/results/2026-11-29-star-rolling-xeon-2c.md); slip velocity 1 mm/s; contact
  layer 0.2 mm with a stiffness of ten times the robot's weight over it (the jumper's rule);
- an inelastic ground (restitution 0: the normal dashpot of docs/scene_format.md, critically
  damped), for the paper's "inelastic collision between a soft body and rigid surface";
- the implicit midpoint rule (second order, as their Newmark-beta) at dt = 0.5 ms, 2D (x-z),
  adaptive (a step whose Newton iteration fails is retried at half the step);
- the first heating at t = 0.5 s (the robot settles first), then one every 3 s, four in all;
- the robot's orientation: limb 0 points up, the arcs curl clockwise (in x-z, y into the
  page) and the robot starts at rest on the arcs of limbs 4 and 5, turned until both reach the
  ground (our robot rests on two limbs, where the paper names one contact limb);
- the schedule: the paper's, limb 4 and then the next limb each cycle (4, 5, 6, 0), which is
  the rear of our two contact limbs as long as every heating rolls the robot one limb on (from
  4 and 5 onto 5 and 6, as the paper's contact limb goes from 5 to 6); the scenes are open loop
  (the same times and limbs on every ground).

A tilted ground is a tilted plane ("normal" of the ground, rotated by theta about y; the robot
is rotated with it), not a tilted gravity: +theta rises towards +x, the rolling direction.

usage: scripts/make_star_roll_scene.py  (writes all the variants)
"""
import json
import math
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

LIMBS, LS, LC, KAPPA = 7, 0.008, 0.022, 120.0
N_STRAIGHT, N_CURVED = 3, 9  # edges: 8 mm / 3 and 22 mm / 9, about 2.5 mm each
RADIUS, RHO, E = 4e-4, 1912.0, 5e6
A_WAVE, L_WAVE = 0.0065, 0.2
T_FIRST, PERIOD, CYCLES = 0.5, 3.0, 4
# the limbs heated in the four cycles: the paper's, limb 4 and then the next each cycle
SCHEDULE = [4, 5, 6, 0]
BETA = 9e-2  # Rayleigh stiffness damping [s] (the paper's eq. 1; the value ours, above)
DELTA, G = 2e-4, 9.81
SMA = {"tau": 8, "t_bar": 1.2, "t0": 0.05}


def star():
    """The limbs' straight and arc node lists in the x-z plane (limb 0 up), centre at 0."""
    limbs = []
    for k in range(LIMBS):
        th = 2 * math.pi * k / LIMBS + math.pi / 2
        d = (math.cos(th), math.sin(th))
        straight = [[LS * i / N_STRAIGHT * d[0], LS * i / N_STRAIGHT * d[1]]
                    for i in range(N_STRAIGHT + 1)]
        # the arc: tangent d at its start, turning clockwise in (x, z) (to the right of d) at
        # radius 1 / kappa, so that the lowest limb's arc curls back towards -x and its outer
        # side faces +x, the rolling direction
        r = 1 / KAPPA
        right = (d[1], -d[0])
        cx, cz = LS * d[0] + r * right[0], LS * d[1] + r * right[1]
        a0 = math.atan2(LS * d[1] - cz, LS * d[0] - cx)
        arc = [[cx + r * math.cos(a0 - LC * i / N_CURVED / r),
                cz + r * math.sin(a0 - LC * i / N_CURVED / r)] for i in range(N_CURVED + 1)]
        limbs.append((straight, arc))
    return limbs


def rotate(limbs, theta):
    """the star turned by theta about y (counterclockwise in (x, z))"""
    c, s = math.cos(theta), math.sin(theta)
    return [[[[c * x - s * z, s * x + c * z] for x, z in part] for part in limb] for limb in limbs]


def resting(limbs):
    """The star turned clockwise until the arcs of limbs 4 and 5 reach equally low: it starts on
    both, where it comes to rest on flat ground."""
    def diff(phi):
        r = rotate(limbs, phi)
        return min(z for _, z in r[4][1]) - min(z for _, z in r[5][1])
    lo, hi = -2 * math.pi / LIMBS, 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if (diff(mid) > 0) == (diff(lo) > 0):
            lo = mid
        else:
            hi = mid
    return rotate(limbs, (lo + hi) / 2)


def transform(limbs, theta, ground_height, gap=0.0):
    """Rotates the star by theta about y (counterclockwise in (x, z)) and lifts it so that its
    lowest node's surface is `gap` above the ground z = ground_height(x) (a plane through 0 with
    the same tilt when ground_height is None)."""
    c, s = math.cos(theta), math.sin(theta)
    out = rotate(limbs, theta)
    pts = [p for limb in out for part in limb for p in part]
    if ground_height is None:  # plane through the origin with normal (-sin, cos)
        lift = -min(-s * x + c * z for x, z in pts) + RADIUS + gap
        shift = (-s * lift, c * lift)
    else:
        lift = -min(z - ground_height(x) for x, z in pts) + RADIUS + gap
        shift = (0.0, lift)
    return [[[[round(x + shift[0], 9), round(z + shift[1], 9)] for x, z in part] for part in limb]
            for limb in out]


def scene(name, description, limbs, ground, out_every=50):
    weight = LIMBS * (LS + LC) * math.pi * RADIUS**2 * RHO * G
    ground = dict(ground)
    ground.update({"friction": 0.8, "slip_velocity": 1e-3, "contact_distance": DELTA,
                   "restitution": 0,
                   "stiffness": round(10 * weight / DELTA, 6)})
    rods, joints, acts = [], [[]], []
    for k, (straight, arc) in enumerate(limbs):
        start = T_FIRST + PERIOD * SCHEDULE.index(k) if k in SCHEDULE else None
        for kind, pts in (("straight", straight), ("arc", arc)):
            t = (pts[1][0] - pts[0][0], pts[1][1] - pts[0][1])
            rod = {"name": f"limb{k}_{kind}", "material": "sma_composite", "radius": RADIUS,
                   "shape": {"type": "nodes", "points": [[x, 0, z] for x, z in pts]},
                   # m1 in the plane, to the left of the first edge: kappa1 is the in-plane
                   # curvature, negative for the clockwise arcs
                   "frame_normal": [round(-t[1], 9), 0, round(t[0], 9)]}
            if start is not None:
                rod["youngs_modulus"] = {"time": dict(type="sma", n=2.5, start=start, **SMA)}
            rods.append(rod)
        joints[0].append({"part": f"limb{k}_straight", "node": 0})
        joints.append([{"part": f"limb{k}_straight", "node": -1},
                       {"part": f"limb{k}_arc", "node": 0}])
        if start is not None:
            acts.append({"target": "rod_curvature1", "part": f"limb{k}_arc",
                         "amplitude": -KAPPA,
                         "time": dict(type="sma", n=0.1, start=start, **SMA)})
    duration = T_FIRST + PERIOD * CYCLES
    return {
        "name": name,
        "description": description,
        "materials": [{"name": "sma_composite", "density": RHO, "youngs_modulus": E,
                       "poisson_ratio": 0.33}],
        "rods": rods,
        "joints": joints,
        "actuation": acts,
        "forces": {"gravity": [0, 0, -G], "damping": {"stiffness_proportional": BETA}, "ground": ground},
        "integrator": {"type": "implicit_midpoint", "dt": 5e-4, "duration": duration,
                       "adaptive": True, "min_dt": 3e-5, "two_d": True},
        "output": {"dir": f"out/{name}", "every": out_every,
                   "nodes": [{"part": "limb0_straight", "node": 0}],
                   "camera": {"azimuth": -90, "elevation": 0}},
    }


COMMON = (
    "Huang et al.'s star-shaped rolling robot (seed 003, Fig. 1a: seven limbs, each a straight "
    "8 mm part from the centre and a 22 mm arc of natural curvature 120 /m, density 1912) {what}. "
    "Every 3 s from t = 0.5 s one limb (4, 5, 6, 0: the rear of the two limbs it rests on, on flat "
    "ground) is heated for its SMA cycle (eq. 7 on its arc's natural curvature, n = 0.1, and on its modulus, n = 2.5, t0 = "
    "0.05 s): it straightens, pushes on the ground and tips the robot over its front contact "
    "limb; four cycles. Limbs of 5 MPa (ours), Rayleigh damping (beta = 9e-2 s), friction 0.8. Written by scripts/make_star_roll_scene.py, which says which "
    "values are the paper's and which are ours; tests/physics/star_roll_test.cpp checks it and "
    "bench/star_roll.py reports the displacement per cycle. nodes.csv follows the centre.")


def main():
    base = resting(star())
    variants = []
    flat = transform(base, 0.0, None)
    variants.append(("star_roll", "rolling on flat ground (Fig. 4, Fig. 5d)", flat,
                     {"type": "plane"}))
    for deg, tag in ((-3, "star_roll_decline3"), (3, "star_roll_incline3"),
                     (6, "star_roll_incline6")):
        th = math.radians(deg)
        n = [round(-math.sin(th), 12), 0, round(math.cos(th), 12)]
        word = "up" if deg > 0 else "down"
        variants.append((tag, f"rolling {word} a plane inclined by {abs(deg)} degrees (Fig. 5e-g; "
                         f"the ground's normal tilted, rising towards +x for +theta)",
                         transform(base, th, None), {"type": "plane", "point": [0, 0, 0],
                                                     "normal": n}))
    for where, x0 in (("crest", L_WAVE / 4), ("trough", -L_WAVE / 4)):
        def f(x):
            return A_WAVE * math.sin(2 * math.pi * x / L_WAVE)
        pts = [[[[x + x0, z] for x, z in part] for part in limb] for limb in base]
        variants.append((f"star_roll_wavy_{where}",
                         f"rolling on the wavy ground z = A sin(2 pi x / lambda), A = 6.5 mm, "
                         f"lambda = 200 mm, from its {where} at x = {x0 * 1e3:g} mm (Fig. 5b-c, "
                         f"h-i)", transform(pts, 0.0, f),
                         {"type": "wavy", "amplitude": A_WAVE, "length_x": L_WAVE,
                          "length_y": 0, "phase_y": round(math.pi / 2, 12)}))
    for name, what, limbs, ground in variants:
        sc = scene(name, COMMON.format(what=what), limbs, ground)
        path = os.path.join(ROOT, "apps", "scenes", name + ".json")
        with open(path, "w") as fh:
            json.dump(sc, fh, indent=1)
            fh.write("\n")
        print(f"wrote {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    main()
