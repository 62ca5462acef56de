#!/usr/bin/env python3
"""Memory of a model at scale: `slender info` (and with --run a one-step `slender run`) on
generated rod networks and triangulated sheets (OBJ grids), whole process under /usr/bin/time.
Prints a Markdown table: DOFs, the model's own size as `slender info` reports it, bytes per DOF,
the process's peak resident memory while reading the scene and building the model (and while
running one step), the peaks over the model, and the wall times.

Kinds: chains (parallel chains of 1,000 nodes), linked (the same chains, each node 50k linked
to the same node of the next chain by an edge: junctions of degree 4), grid (a square grid
network, every interior node of degree 4: six bend-twist springs a node), sheet (an OBJ grid).

usage: bench/model_memory.py SLENDER [--vs SLENDER_B] [--run] [--solvers auto,pcg,matrix-free]
         [--inexact] [--sizes chains:200000,linked:1000000,grid:100000,sheet:160000]
  (sizes in nodes; the files go to a temporary folder; the second binary may need
   LD_LIBRARY_PATH for its own libslender_host.so; with --solvers, a one-step run with each
   linear solver, a row each; --inexact: the runs with inexact Newton)
"""

import argparse
import itertools
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
        "forces": {"gravity": [0, 0, -9.81]},  # (so that the run's step factorizes)
        "integrator": {"type": "implicit_euler", "dt": 0.01, "duration": 0.01},
    }
    path = os.path.join(folder, f"{name}.json")
    with open(path, "w") as f:
        json.dump(scene, f)
    return path


def network(folder, name, per, n, link_every):
    """n chains of per nodes along x, 0.01 apart in y; with link_every, node i of chain c is
    joined to node i of chain c + 1 wherever i % link_every == 0 (link_every 1: a grid)"""
    geo = os.path.join(folder, f"{name}.txt")
    with open(geo, "w") as f:
        f.write("*Nodes\n")
        for c in range(n):
            f.write("".join(f"{i * 0.01} {c * 0.01} 0\n" for i in range(per)))
        f.write("*Edges\n")
        for c in range(n):
            f.write("".join(f"{c * per + i + 1} {c * per + i + 2}\n" for i in range(per - 1)))
        if link_every:
            for c in range(n - 1):
                f.write("".join(f"{c * per + i + 1} {(c + 1) * per + i + 1}\n"
                                for i in range(0, per, link_every)))
    part = {"name": "net", "file": os.path.basename(geo), "material": "m", "radius": 1e-3}
    return write_scene(folder, name, "networks", part, 0.5)


def chains(folder, nodes):
    return network(folder, f"chains{nodes}", 1000, max(1, nodes // 1000), 0)


def linked(folder, nodes):
    return network(folder, f"linked{nodes}", 1000, max(1, nodes // 1000), 50)


def grid(folder, nodes):
    n = max(2, int(round(nodes ** 0.5)))
    return network(folder, f"grid{nodes}", n, n, 1)


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


def timed(args):
    """peak resident MiB and wall seconds of a command under /usr/bin/time, and its stdout"""
    r = subprocess.run(["/usr/bin/time", "-f", "TIME %M %e"] + args, capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{r.stdout}{r.stderr}")
    peak_kb, wall = re.search(r"TIME (\d+) ([\d.]+)", r.stderr).groups()
    return int(peak_kb) / 1024.0, float(wall), r.stdout


def measure(binary, scene, run, solver, inexact):
    peak, wall, out = timed([binary, "info", scene])
    dofs = int(re.search(r"DOFs\s+(\d+) total", out).group(1))
    value, unit = re.search(r"model ([\d.]+) (KiB|MiB|GiB)", out).groups()
    model = float(value) * {"KiB": 2**-10, "MiB": 1.0, "GiB": 2**10}[unit]
    args = [binary, "run", scene, "-q", "--no-output", "--solver", solver]
    run_peak, run_wall = (timed(args + (["--inexact"] if inexact else []))[:2] if run
                          else (float("nan"), float("nan")))
    return dofs, model, peak, wall, run_peak, run_wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("slender")
    ap.add_argument("--vs", default=None)
    ap.add_argument("--sizes", default="chains:50000,chains:200000,sheet:40000,sheet:160000")
    ap.add_argument("--run", action="store_true", help="also a one-step run (no output)")
    ap.add_argument("--solvers", default="auto",
                    help="the runs' linear solvers, comma-separated (a row each)")
    ap.add_argument("--inexact", action="store_true", help="the runs with inexact Newton")
    a = ap.parse_args()
    kinds = {"chains": chains, "linked": linked, "grid": grid, "sheet": sheet}
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for item in a.sizes.split(","):
            kind, nodes = item.split(":")
            scene = kinds[kind](folder, int(nodes))
            builds = [("A", a.slender)] + ([("B", a.vs)] if a.vs else [])
            for (label, binary), solver in itertools.product(builds, a.solvers.split(",")):
                dofs, model, peak, wall, run_peak, run_wall = measure(binary, scene, a.run,
                                                                      solver, a.inexact)
                tag = label if solver == "auto" else f"{label}, {solver}"
                rows.append((f"{kind} {nodes} nodes", tag, dofs, model,
                             model * 2**20 / dofs, peak, peak / model, wall, run_peak,
                             run_peak / model, run_wall))
    head = ("| scene | build | DOFs | model [MiB] | model bytes / DOF | info peak [MiB] "
            "| info peak / model | info wall [s] |")
    if a.run:
        head += " run peak [MiB] | run peak / model | run wall [s] |"
    print(head)
    print("|" + " --- |" * head.count(" |"))
    for r in rows:
        line = (f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.1f} | {r[4]:.0f} | {r[5]:.1f} "
                f"| {r[6]:.2f} | {r[7]:.2f} |")
        if a.run:
            line += f" {r[8]:.1f} | {r[9]:.2f} | {r[10]:.2f} |"
        print(line)


if __name__ == "__main__":
    main()
