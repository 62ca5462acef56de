#!/usr/bin/env python3
"""Writes apps/scenes/bartholdt_manipulator.json: Bartholdt et al.'s soft-material manipulator
(seed 004, Sec. V-B, Fig. 1 and Table III), three of their pneumatic actuators in series.

What the seed gives: three serially connected actuators, each a 50 mm chamber section between
two 5 mm caps (180 mm in all, 80 nodes, radius 12 mm, chambers of radius 3 mm whose centres lie
7 mm from the axis), the visco-hyperelastic materials of one actuator (Tables II and III), the
material density reduced by 40 % "to achieve larger deflections", a 10 ms time step, and 200 s
of computation for 6 s of simulated time (340 ms per 10 ms step). The figure shows the tool, not
a real system, and the text does not give the pressures. Everything else is the single
actuator's scene (apps/scenes/bartholdt_actuator.json, whose parts, joints, damping and
chambers are copied three times) or our choice:

- no marker plate (the figure's manipulator has none);
- the actuation: one chamber of each segment steps to 60 kPa in turn, the base segment's
  chamber at 0 degrees at t = 0.5 s, the middle one's at 120 degrees at 2 s and the tip one's
  at 240 degrees at 3.5 s, so that the arm bends in one plane, then twists out of it into a
  three-dimensional curl; 6 s in all.

    python3 scripts/make_bartholdt_manipulator_scene.py
"""

import copy
import json
import math
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def main():
    with open(os.path.join(ROOT, "apps", "scenes", "bartholdt_actuator.json")) as f:
        one = json.load(f)
    cap_base, actuator, cap_tip = one["rods"]
    chambers = one["forces"]["pressure_chambers"]
    scene = {
        "name": "bartholdt_manipulator",
        "description": (
            "Bartholdt et al.'s soft-material manipulator (seed 004, Sec. V-B, Fig. 1, Table "
            "III): three of their pneumatic actuators in series (bartholdt_actuator.json's "
            "parts, each a 50 mm Ecoflex 0050 chamber section between two 5 mm Dragon Skin 30 "
            "caps, 180 mm and 73 nodes in all (edges of 2.5 mm; the paper: 80 nodes), radius 12 mm, three chambers per segment at 0, "
            "120 and 240 degrees, 7 mm from the axis), the densities reduced by 40 % as in the "
            "paper, hanging from a clamp under gravity. One chamber of each segment steps to "
            "60 kPa in turn (not in the paper, which gives no pressures): the base segment's at "
            "0 degrees at t = 0.5 s, the middle one's at 120 degrees at 2 s, the tip one's at "
            "240 degrees at 3.5 s; the arm bends, then curls out of the plane (its tip about 2 mm "
            "off the axis at 6 s: the actuators are stiff for 60 kPa). Implicit Euler "
            "at Table III's 10 ms step for the paper's 6 s (theirs took 340 ms of computation "
            "per step). Written by scripts/make_bartholdt_manipulator_scene.py."),
        "materials": copy.deepcopy(one["materials"]),
        "rods": [],
        "joints": [],
        "boundary": {"clamps": [{"part": "cap_base_1", "node": 0}]},
        "forces": {"gravity": [0, 0, -9.81], "pressure_chambers": []},
        "integrator": {"type": "implicit_euler", "dt": 0.01, "duration": 6},
        "output": {"dir": "out/bartholdt_manipulator", "every": 5,
                   "nodes": [{"part": "cap_tip_1", "node": -1},
                             {"part": "cap_tip_3", "node": -1}]},
    }
    for m in scene["materials"]:
        m["density"] = round(0.6 * m["density"], 6)
    step_at = {1: 0.5, 2: 2.0, 3: 3.5}
    for s in (1, 2, 3):
        z0 = -0.06 * (s - 1)
        names = []
        for part, name in ((cap_base, "cap_base"), (actuator, "actuator"), (cap_tip, "cap_tip")):
            p = copy.deepcopy(part)
            p["name"] = f"{name}_{s}"
            sh = p["shape"]
            sh["start"] = [0, 0, round(sh["start"][2] + z0, 6)]
            sh["end"] = [0, 0, round(sh["end"][2] + z0, 6)]
            scene["rods"].append(p)
            names.append(p["name"])
        scene["joints"].append([{"part": names[0], "node": -1}, {"part": names[1], "node": 0}])
        scene["joints"].append([{"part": names[1], "node": -1}, {"part": names[2], "node": 0}])
        if s > 1:
            scene["joints"].insert(len(scene["joints"]) - 2,
                                   [{"part": f"cap_tip_{s - 1}", "node": -1},
                                    {"part": names[0], "node": 0}])
        for k, ch in enumerate(chambers):
            c = copy.deepcopy(ch)
            c["part"] = names[1]
            c.pop("time", None)
            c["angle"] = 2 * math.pi * k / 3
            if k == s - 1:  # this segment's driven chamber
                c["pressure"] = 60000
                t = step_at[s]
                c["time"] = {"type": "table", "rows": [[0, 0], [t, 0], [t + 0.01, 1]]}
            else:
                c["pressure"] = 0
            scene["forces"]["pressure_chambers"].append(c)
    out = os.path.join(ROOT, "apps", "scenes", "bartholdt_manipulator.json")
    with open(out, "w") as f:
        json.dump(scene, f, indent=1)
        f.write("\n")
    print(out)


if __name__ == "__main__":
    main()
