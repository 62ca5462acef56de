#!/usr/bin/env python3
"""Cost of each material model per step and per Newton iteration against linear elasticity
(issue 17's benchmark row), each scene variant run N times in turn by the `slender` program
(no outputs):
- damping, apps/scenes/rayleigh_beams.json: as it is (Rayleigh beta on a beam and the plate),
  with beta removed (the reference), with alpha instead of beta, and with Kelvin-Voigt damping
  of the same retardation time instead of beta (under the scene's midpoint rule, and in a
  second table under implicit Euler, which needs no frames at the step's end);
- stretching laws, apps/scenes/silicone_stretch.json: every cord Hookean (the reference),
  every cord Ogden (Bartholdt's alpha), every cord neo-Hookean.
Prints a Markdown table per scene: min / median / max wall ms per step and per Newton
iteration, and the medians' ratio to the reference.

    python3 bench/material_cost.py [--slender build/slender] [--runs 7] [--duration 1]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SCENES = os.path.join(ROOT, "apps", "scenes")


def load(name):
    with open(os.path.join(SCENES, name)) as f:
        return json.load(f)


def damping_variants():
    base = load("rayleigh_beams.json")

    def without_beta(s):
        for group in ("rods", "shells"):
            for p in s.get(group, []):
                p.pop("damping", None)
        return s

    undamped = without_beta(json.loads(json.dumps(base)))
    alpha = without_beta(json.loads(json.dumps(base)))
    alpha.setdefault("forces", {})["damping"] = {"mass_proportional": 5.0}
    return [("linear elastic, undamped", undamped), ("alpha = 5 /s (mass)", alpha),
            ("beta = 5e-3 s (stiffness; beam and plate)", base),
            ("Kelvin-Voigt, eta / E = 5e-3 s (beam and plate)", kelvin_voigt(base))]


def kelvin_voigt(base):
    """the scene with each part's beta replaced by Kelvin-Voigt damping of eta / E = beta"""
    s = json.loads(json.dumps(base))
    E = s["materials"][0]["youngs_modulus"]
    for group in ("rods", "shells"):
        for p in s.get(group, []):
            beta = p.get("damping", {}).pop("stiffness_proportional", None)
            if beta is not None:
                p["damping"]["kelvin_voigt"] = beta * E
    return s


def euler_variants():
    undamped, _, _, kv = (scene for _, scene in damping_variants())
    for s in (undamped, kv):
        s["integrator"]["type"] = "implicit_euler"
    return [("linear elastic, undamped (implicit Euler)", undamped),
            ("Kelvin-Voigt, eta / E = 5e-3 s (implicit Euler)", kv)]


def stretching_variants():
    base = load("silicone_stretch.json")

    def every_cord(law):
        s = json.loads(json.dumps(base))
        for p in s["rods"]:
            p.pop("stretching", None)
            if law:
                p["stretching"] = law
        return s

    return [("Hookean (every cord)", every_cord(None)),
            ("Ogden, alpha = 1.3308 (every cord)",
             every_cord({"law": "ogden", "alpha": 1.3308, "scale": 2.2703})),
            ("neo-Hookean (every cord)", every_cord({"law": "neo_hookean", "scale": 2.2703}))]


def run(slender, path, duration):
    out = subprocess.run([slender, "run", path, "--no-output", "--duration", str(duration)],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"done: (\d+) steps, .* in ([0-9.]+) s wall .*?([0-9.]+) Newton iterations per "
                  r"step that iterated(?:, (\d+) steps needed none)?", out)
    steps, wall, its = int(m.group(1)), float(m.group(2)), float(m.group(3))
    iterated = steps - int(m.group(4) or 0)
    return 1e3 * wall / steps, 1e3 * wall / (its * iterated)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slender", default=os.path.join(ROOT, "build", "slender"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--duration", type=float, default=1.0)
    args = ap.parse_args()
    for title, variants in (("damping, rayleigh_beams.json", damping_variants()),
                            ("Kelvin-Voigt under implicit Euler, rayleigh_beams.json",
                             euler_variants()),
                            ("stretching laws, silicone_stretch.json", stretching_variants())):
        table(title, variants, args)


def table(title, variants, args):
    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        for name, scene in variants:
            path = os.path.join(tmp, f"{len(cases)}.json")
            with open(path, "w") as f:
                json.dump(scene, f)
            cases.append((name, path, [], []))
        for _ in range(args.runs):  # in turn, so that a drift of the machine hits all alike
            for _, path, per_step, per_it in cases:
                a, b = run(args.slender, path, args.duration)
                per_step.append(a)
                per_it.append(b)
    base_step = statistics.median(cases[0][2])
    base_it = statistics.median(cases[0][3])
    print(f"\n{title}\n")
    print("| model | ms/step min / median / max | ms/Newton iteration min / median / max |"
          " ratio per step | ratio per iteration |")
    print("| --- | --- | --- | --- | --- |")
    for name, _, per_step, per_it in cases:
        ms, mi = statistics.median(per_step), statistics.median(per_it)
        print(f"| {name} | {min(per_step):.4f} / {ms:.4f} / {max(per_step):.4f} | "
              f"{min(per_it):.4f} / {mi:.4f} / {max(per_it):.4f} | {ms / base_step:.3f} | "
              f"{mi / base_it:.3f} |")


if __name__ == "__main__":
    main()
