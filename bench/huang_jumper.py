#!/usr/bin/env python3
"""Huang et al.'s SMA jumper (seed 003, Fig. 7): apps/scenes/huang_jumper.json over its 3 s
actuation cycle, the first node's normalized path (x / R0, z / R0, R0 = 5 mm, z its height
above the ground: its centre less the rod radius), and how the path moves with the values the
seed's text does not give (scripts/make_huang_jumper_scene.py lists them): the step, the pull,
t0 of the SMA law, the damping, the friction.

    PYTHONPATH=build/python OMP_NUM_THREADS=1 python3 bench/huang_jumper.py [--skip-variants]
        [--markdown out.md]
"""

import argparse
import copy
import json
import os
import sys
import time

import numpy as np

import slender

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SCENE = os.path.join(ROOT, "apps", "scenes", "huang_jumper.json")
R0, RADIUS = 0.005, 4e-4


def run(sc):
    """Per step: t, the first node's x and height, the node mean's x, the lowest clearance."""
    model = slender.build_model(sc)
    sim = slender.Simulator(model)
    dt, dur = sc["integrator"]["dt"], sc["integrator"]["duration"]
    delta = sc["forces"]["ground"]["contact_distance"]
    rows, iters = [], 0
    c0 = time.process_time()
    for k in range(int(round(dur / dt))):
        r = sim.step()
        if not r["ok"]:
            raise RuntimeError(f"step {k} failed: {r}")
        iters += r["iterations"]
        x = np.asarray(sim.positions)
        rows.append((sim.time, x[0, 0], x[0, 2] - RADIUS, x[:, 0].mean(), x[:, 2].min() - RADIUS))
    rec = np.array(rows)
    air = rec[:, 4] > delta
    flights, start = [], None
    for t, a in zip(rec[:, 0], air):
        if a and start is None:
            start = t
        if not a and start is not None:
            flights.append((start, t))
            start = None
    return rec, flights, iters / len(rec), time.process_time() - c0


def at(rec, t):
    return rec[int(np.argmin(np.abs(rec[:, 0] - t)))]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--skip-variants", action="store_true")
    p.add_argument("--markdown", default=None)
    a = p.parse_args(argv)
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    with open(SCENE) as f:
        base = json.load(f)
    rec, flights, its, cpu = run(base)
    say(f"scene: {len(rec)} steps, {its:.2f} Newton iterations a step, {cpu:.1f} s CPU")
    say("flights (every node above the contact layer): " +
        ", ".join(f"{s:.4f}-{e:.4f} s" for s, e in flights))
    say("\n| t [s] | first node x / R0 | height / R0 | node mean x [mm] |")
    say("| --- | --- | --- | --- |")
    times = [0.0, 0.03125, 0.0625, 0.09375, 0.125, 0.1875, 0.25, 0.375, 0.5, 0.75, 1.0, 1.125,
             1.25, 1.375, 1.5, 1.75, 2.0, 2.5, 3.0]
    for t in times:
        r = at(rec, t) if t > 0 else np.array([0, 0.0, 0.0, np.nan, 0])
        say(f"| {t:g} | {r[1] / R0:.3f} | {r[2] / R0:.3f} | {r[3] * 1e3:.2f} |")

    if not a.skip_variants:
        variants = [("dt / 2", lambda s: s["integrator"].__setitem__("dt", 6.25e-5)),
                    ("dt x 2", lambda s: s["integrator"].__setitem__("dt", 2.5e-4))]
        for f in (0.0, 0.5, 1.5):
            def scale(s, f=f):
                s["forces"]["point_loads"][0]["force"] = [
                    c * f for c in s["forces"]["point_loads"][0]["force"]]
            variants.append((f"pull x {f:g}", scale))
        for t0 in (0.1, 0.25):
            def slow(s, t0=t0):
                s["rods"][1]["youngs_modulus"]["time"]["t0"] = t0
                s["actuation"][0]["time"]["t0"] = t0
            variants.append((f"t0 = {t0:g} s", slow))
        for mu in (0.3, 0.8):
            variants.append((f"friction {mu:g}",
                             lambda s, mu=mu: s["forces"]["ground"].__setitem__("friction", mu)))

        def rayleigh(s):
            s["forces"]["damping"] = {"stiffness_proportional": 1e-3}
        variants.append(("Rayleigh beta 1e-3 s for Kelvin-Voigt", rayleigh))
        say("\n| variant | flights [s] | first node x / R0 at 0.25 s, 3 s | max height / R0 | "
            "node mean moved [R0] |")
        say("| --- | --- | --- | --- | --- |")
        rows = [("the scene", rec, flights)]
        for name, change in variants:
            sc = copy.deepcopy(base)
            change(sc)
            try:
                r, fl, _, _ = run(sc)
            except RuntimeError as e:
                say(f"| {name} | failed: {e} | | | |")
                continue
            rows.append((name, r, fl))
        for name, r, fl in rows:
            fls = ", ".join(f"{s:.3f}-{e:.3f}" for s, e in fl[:4]) + (" ..." if len(fl) > 4 else "")
            say(f"| {name} | {fls or 'none'} | {at(r, 0.25)[1] / R0:.2f}, {r[-1, 1] / R0:.2f} | "
                f"{r[:, 2].max() / R0:.2f} | {(r[-1, 3] - rec[0, 3]) / R0:.2f} |")

    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
