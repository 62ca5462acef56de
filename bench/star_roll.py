#!/usr/bin/env python3
"""Huang et al.'s star-shaped rolling robot (seed 003, Figs. 4-5): apps/scenes/star_roll*.json
(flat ground, planes inclined by -3, +3 and +6 degrees, the wavy ground from its crest and from
its trough) over their four actuation cycles: the centre of mass along the ground at the start
and end of every cycle, the displacement per cycle, which limbs touch the ground, and the CPU
time per step. Optionally the flat ground with one value changed (dt, the Rayleigh beta, t0 of
the SMA law, friction), the +3 and +6 degree planes at other limb moduli (the Rayleigh beta
scaled to keep the damping ratio), and planes steeper than the paper's.

    PYTHONPATH=build/python OMP_NUM_THREADS=1 python3 bench/star_roll.py [--only NAME ...]
        [--variants] [--moduli] [--inclines] [--markdown out.md]
"""

import argparse
import copy
import json
import math
import os
import sys
import time

import numpy as np

import slender

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SCENES = ["star_roll", "star_roll_decline3", "star_roll_incline3", "star_roll_incline6",
          "star_roll_wavy_crest", "star_roll_wavy_trough"]
RADIUS = 4e-4
LIMB_LENGTH = 0.030


def slope_tangent(sc):
    """the unit vector along the ground in the x-z plane, towards +x"""
    g = sc["forces"]["ground"]
    if g.get("type", "plane") == "plane" and "normal" in g:
        n = np.array(g["normal"], float)
        return np.array([n[2], 0, -n[0]]) / math.hypot(n[0], n[2])
    return np.array([1.0, 0, 0])


def limb_of_nodes(sc, model):
    """the limb (0-6) of each model node, from the rods' initial points"""
    x0 = np.asarray(model.initial_positions)
    limb = np.full(len(x0), -1)
    for r in sc["rods"]:
        k = int(r["name"][4])
        for p in r["shape"]["points"]:
            d = np.linalg.norm(x0 - np.array(p), axis=1)
            i = int(np.argmin(d))
            if d[i] < 1e-9 and limb[i] < 0:
                limb[i] = k
    return limb


def hub_and_tip(sc, model):
    """the nodes at limb 0's straight part's two ends: the hub and the joint with its arc"""
    x0 = np.asarray(model.initial_positions)
    r = next(r for r in sc["rods"] if r["name"] == "limb0_straight")
    pts = r["shape"]["points"]
    return [int(np.argmin(np.linalg.norm(x0 - np.array(p), axis=1))) for p in (pts[0], pts[-1])]


def advance(sim, h, depth=0):
    """one step of h, retried as two steps of h / 2 (down to h / 16) where Newton fails, as the
    scenes' adaptive integrator does; returns the Newton iterations and the halvings"""
    r = sim.step(h)
    if r["ok"]:
        return r["iterations"], 0
    if depth == 4:
        raise RuntimeError(f"step failed at t = {sim.time} with dt = {h}: {r}")
    i1, d1 = advance(sim, h / 2, depth + 1)
    i2, d2 = advance(sim, h / 2, depth + 1)
    return r["iterations"] + i1 + i2, 1 + d1 + d2


def run(sc):
    """Per step: t, the centre of mass along the ground, its height, and the robot's turn in
    limbs (clockwise, the rolling direction, in units of 2 pi / 7, from limb 0's straight part);
    the contact limbs at the start of every cycle and at the end; the CPU time and Newton
    iterations per step."""
    model = slender.build_model(sc)
    sim = slender.Simulator(model)
    mass = np.asarray(model.node_mass)
    tan = slope_tangent(sc)
    limb = limb_of_nodes(sc, model)
    hub, tip = hub_and_tip(sc, model)
    dt, dur = sc["integrator"]["dt"], sc["integrator"]["duration"]
    delta = sc["forces"]["ground"]["contact_distance"]
    g = sc["forces"]["ground"]

    def gap(x):  # each node's surface above the ground (vertical gap; first order for wavy)
        if g.get("type", "plane") == "wavy":
            f = g["amplitude"] * np.sin(2 * math.pi * x[:, 0] / g["length_x"])
            return x[:, 2] - f - RADIUS
        n = np.array(g.get("normal", [0, 0, 1]), float)
        n /= np.linalg.norm(n)
        return (x - np.array(g.get("point", [0, 0, 0]), float)) @ n - RADIUS

    def touching(x):
        gp = gap(x)
        return sorted({int(limb[i]) for i in np.nonzero(gp < delta)[0]})

    rows, iters, retried, contacts = [], 0, 0, {}
    starts = sorted({a["time"]["start"] for a in sc["actuation"]})
    c0 = time.process_time()
    nsteps = int(round(dur / dt))
    x = np.asarray(sim.positions)
    contacts[0.0] = touching(x)

    def angle(x):
        d = x[tip] - x[hub]
        return math.atan2(d[2], d[0])

    a_prev, turn = angle(x), 0.0
    for k in range(nsteps):
        its, halvings = advance(sim, dt)
        iters += its
        retried += halvings > 0
        x = np.asarray(sim.positions)
        c = (mass[:, None] * x).sum(0) / mass.sum()
        a = angle(x)
        turn -= (a - a_prev + math.pi) % (2 * math.pi) - math.pi  # clockwise positive
        a_prev = a
        rows.append((sim.time, c @ tan, c[2], turn / (2 * math.pi / 7)))
        for s in starts + [dur]:
            if abs(sim.time - s) < dt / 2:
                contacts[s] = touching(x)
    cpu = time.process_time() - c0
    if retried:
        print(f"{retried} steps retried in halves (as the scenes' adaptive integrator)", flush=True)
    return np.array(rows), starts, contacts, iters / nsteps, cpu / nsteps


def at(rec, t):
    return rec[int(np.argmin(np.abs(rec[:, 0] - t)))]


def cycles(rec, starts, dur):
    """(start, end, s at start, s at end, turn) of every cycle; s the centre of mass along the
    ground, turn the robot's in limbs over the cycle"""
    ends = starts[1:] + [dur]
    return [(a, b, at(rec, a)[1], at(rec, b)[1], at(rec, b)[3] - at(rec, a)[3])
            for a, b in zip(starts, ends)]


def per_cycle(cy):
    """the cycles' advances [mm] (and turns [limbs]) as table cells, and the total [mm]"""
    cells = [f"{(e - s) * 1e3:+.1f} ({t:+.2f})" for _, _, s, e, t in cy]
    return cells, (cy[-1][3] - cy[0][2]) * 1e3


def contact_cell(contacts, starts, dur):
    """the contact limbs at each heating and at the end, as a table cell"""
    return "; ".join(",".join(str(k) for k in contacts.get(t, [])) for t in starts + [dur])


def steeper_plane(deg):
    """star_roll.json on a plane inclined by deg (rising towards +x), as
    scripts/make_star_roll_scene.py writes the paper's inclines"""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import make_star_roll_scene as make
    th = math.radians(deg)
    ground = {"type": "plane", "point": [0, 0, 0],
              "normal": [round(-math.sin(th), 12), 0, round(math.cos(th), 12)]}
    return make.scene(f"star_roll_incline{deg}", "", make.transform(make.resting(make.star()),
                                                                   th, None), ground)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", nargs="*", default=None)
    p.add_argument("--variants", action="store_true")
    p.add_argument("--moduli", action="store_true")
    p.add_argument("--inclines", action="store_true")
    p.add_argument("--markdown", default=None)
    a = p.parse_args(argv)
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    names = SCENES if a.only is None else a.only
    if names:
        say("Each cycle: the centre of mass's advance along the ground [mm] (the robot's turn "
            "[limbs]).\n")
        say("| scene | cycle 1 | cycle 2 | cycle 3 | cycle 4 | total [mm] | "
            "contact limbs at each heating, end | ms CPU / step | Newton it. / step |")
        say("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in names:
        with open(os.path.join(ROOT, "apps", "scenes", name + ".json")) as f:
            sc = json.load(f)
        rec, starts, contacts, its, tstep = run(sc)
        dur = sc["integrator"]["duration"]
        per, total = per_cycle(cycles(rec, starts, dur))
        cts = contact_cell(contacts, starts, dur)
        say(f"| {name} | {' | '.join(per)} | {total:+.1f} | {cts} | {tstep * 1e3:.2f} | "
            f"{its:.2f} |")
        np.savetxt(os.path.join("/tmp", name + "_com.txt"), rec[::20], fmt="%.6g",
                   header="t [s], centre of mass along the ground [m], height [m], turn [limbs]")

    if a.variants:
        with open(os.path.join(ROOT, "apps", "scenes", "star_roll.json")) as f:
            base = json.load(f)
        def set_dt(f):
            return lambda s: s["integrator"].__setitem__("dt", s["integrator"]["dt"] * f)

        def set_beta(b, f=1.0):
            def change(s):
                s["forces"]["damping"]["stiffness_proportional"] = b
                s["integrator"]["dt"] *= f
            return change
        variants = [("dt / 2", set_dt(0.5)), ("dt / 4", set_dt(0.25)), ("dt x 2", set_dt(2.0))]
        beta = base["forces"]["damping"]["stiffness_proportional"]
        for f in (0.25, 0.5):
            variants += [(f"beta {beta * f:g} s", set_beta(beta * f)),
                         (f"beta {beta * f:g} s, dt / 2", set_beta(beta * f, 0.5))]
        variants.append((f"beta {2 * beta:g} s", set_beta(2 * beta)))
        for t0 in (0.25,):
            def slow(s, t0=t0):
                for r in s["rods"]:
                    if "youngs_modulus" in r:
                        r["youngs_modulus"]["time"]["t0"] = t0
                for act in s["actuation"]:
                    act["time"]["t0"] = t0
            variants.append((f"t0 = {t0:g} s", slow))
        for mu in (0.5,):
            variants.append((f"friction {mu:g}",
                             lambda s, mu=mu: s["forces"]["ground"].__setitem__("friction", mu)))
        say("\n| flat ground, one value changed | cycle 1 | cycle 2 | cycle 3 | "
            "cycle 4 | total [mm] |")
        say("| --- | --- | --- | --- | --- | --- |")
        for vname, change in variants:
            sc = copy.deepcopy(base)
            change(sc)
            try:
                rec, starts, _, _, _ = run(sc)
            except RuntimeError as e:
                say(f"| {vname} | failed: {e} | | | | |")
                continue
            per, total = per_cycle(cycles(rec, starts, sc["integrator"]["duration"]))
            say(f"| {vname} | {' | '.join(per)} | {total:+.1f} |")

    if a.moduli:
        # the limbs' modulus E (and the SMA law's heated multiple of it) against the gravity of
        # the robot: the Rayleigh beta scaled by sqrt(E_scene / E), which keeps beta omega, the
        # damping ratio of every mode, as it is in the scenes
        say("\n| limb modulus (beta) | plane | cycle 1 | cycle 2 | cycle 3 | cycle 4 | "
            "total [mm] | contact limbs at each heating, end |")
        say("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for E in (3e6, 4e6, 7e6, 1e7):
            for name in ("star_roll_incline3", "star_roll_incline6"):
                with open(os.path.join(ROOT, "apps", "scenes", name + ".json")) as f:
                    sc = json.load(f)
                e0 = sc["materials"][0]["youngs_modulus"]
                sc["materials"][0]["youngs_modulus"] = E
                damping = sc["forces"]["damping"]
                damping["stiffness_proportional"] *= math.sqrt(e0 / E)
                rec, starts, contacts, _, _ = run(sc)
                per, total = per_cycle(cycles(rec, starts, sc["integrator"]["duration"]))
                cts = contact_cell(contacts, starts, sc["integrator"]["duration"])
                say(f"| {E / 1e6:g} MPa ({damping['stiffness_proportional']:.3g} s) | "
                    f"{name[-1]} deg | {' | '.join(per)} | {total:+.1f} | {cts} |")

    if a.inclines:
        say("\n| plane steeper than the paper's | cycle 1 | cycle 2 | cycle 3 | cycle 4 | "
            "total [mm] |")
        say("| --- | --- | --- | --- | --- | --- |")
        for deg in (8, 10, 12, 15):
            sc = steeper_plane(deg)
            rec, starts, _, _, _ = run(sc)
            per, total = per_cycle(cycles(rec, starts, sc["integrator"]["duration"]))
            say(f"| +{deg} degrees | {' | '.join(per)} | {total:+.1f} |")

    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
