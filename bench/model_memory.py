#!/usr/bin/env python3
"""Memory of a model at scale: `slender info` on generated rod networks (parallel chains of
1,000 nodes) and triangulated sheets (OBJ grids), whole process under /usr/bin/time. Prints a
Markdown table: DOFs, the model's own size as `slender info` reports it, bytes per DOF, the
process's peak resident memory while reading the scene and building the model, the peak over
the model, and the wall time.

usage: bench/model_memory.py SLENDER [--vs SLENDER_B] [--sizes chains:200000,sheet:160000]
  (sizes in nodes; the files go to a temporary folder)
"""

import argparse
import json
import os
import re
import subprocess
import tempfile


def write_scene(folder, name, kind, part, poisson):
    """a scene of one part (its first two nodes fixed) beside its geometry file"""
    scene = {
        "materials": [{"name": "m", "density": 1000, "youngs_modulus": 1e6,
                       "poisson_ratio": poisson}],
        kind: [part],
        "boundary": {"fixed_nodes": [{"part": part["name"], "nodes": [0, 1]}]},
        "integrator": {"type": "implicit_euler", "dt": 0.01, "duration": 0.01},
    }
    path = os.path.join(folder, f"{name}.json")
    with open(path, "w") as f:
        json.dump(scene, f)
    return path


def chains(folder, nodes):
    per = 1000
    n = max(1, nodes // per)
    geo = os.path.join(folder, f"chains{nodes}.txt")
    with open(geo, "w") as f:
        f.write("*Nodes\n")
        for c in range(n):
            for i in range(per):
                f.write(f"{i * 0.01} {c * 0.01} 0\n")
        f.write("*Edges\n")
        for c in range(n):
            for i in range(per - 1):
                a = c * per + i + 1
                f.write(f"{a} {a + 1}\n")
    part = {"name": "net", "file": os.path.basename(geo), "material": "m", "radius": 1e-3}
    return write_scene(folder, f"chains{nodes}", "networks", part, 0.5)


def sheet(folder, nodes):
    n = max(2, int(round(nodes ** 0.5)))
    obj = os.path.join(folder, f"sheet{nodes}.obj")
    with open(obj, "w") as f:
        for j in range(n):
            for i in range(n):
                f.write(f"v {i * 0.01} {j * 0.01} 0\n")
        for j in range(n - 1):
            for i in range(n - 1):
                a = j * n + i + 1
                f.write(f"f {a} {a + 1} {a + n + 1}\nf {a} {a + n + 1} {a + n}\n")
    part = {"name": "s", "material": "m", "thickness": 1e-3, "membrane": "springs",
            "mesh": {"type": "file", "path": os.path.basename(obj)}}
    return write_scene(folder, f"sheet{nodes}", "shells", part, 0.3)


def measure(binary, scene):
    r = subprocess.run(["/usr/bin/time", "-f", "TIME %M %e", binary, "info", scene],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{binary} info {scene} failed:\n{r.stdout}{r.stderr}")
    peak_kb, wall = re.search(r"TIME (\d+) ([\d.]+)", r.stderr).groups()
    dofs = int(re.search(r"DOFs\s+(\d+) total", r.stdout).group(1))
    value, unit = re.search(r"model ([\d.]+) (KiB|MiB|GiB)", r.stdout).groups()
    model = float(value) * {"KiB": 2**-10, "MiB": 1.0, "GiB": 2**10}[unit]
    return dofs, model, int(peak_kb) / 1024.0, float(wall)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("slender")
    ap.add_argument("--vs", default=None)
    ap.add_argument("--sizes", default="chains:50000,chains:200000,sheet:40000,sheet:160000")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for item in a.sizes.split(","):
            kind, nodes = item.split(":")
            scene = (chains if kind == "chains" else sheet)(folder, int(nodes))
            for label, binary in [("A", a.slender)] + ([("B", a.vs)] if a.vs else []):
                dofs, model, peak, wall = measure(binary, scene)
                rows.append((f"{kind} {nodes} nodes", label, dofs, model,
                             model * 2**20 / dofs, peak, peak / model, wall))
    print("| scene | build | DOFs | model [MiB] | model bytes / DOF | peak [MiB] | peak / model "
          "| wall [s] |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.1f} | {r[4]:.0f} | {r[5]:.1f} | {r[6]:.2f} "
              f"| {r[7]:.2f} |")


if __name__ == "__main__":
    main()
