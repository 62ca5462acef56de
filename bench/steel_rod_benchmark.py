#!/usr/bin/env python3
"""Bartholdt et al.'s clamped steel-rod benchmark (seed 004, Sec. V-A): the scene
apps/scenes/steel_rod_benchmark.json against references, and its time per 10 ms step.

The seed's text gives no value of its Fig. 8 (nor the wrench's series), so the scene's tip is
compared with what can be computed independently:
- statics: at the hold (the wrench at its peak) the tip of the follower elastica, the
  inextensible, unshearable planar rod under the tip's follower force and moment, shot from the
  clamp with RK4 (4000 steps) on the clamp moment and the tip angle;
- dynamics: a converged reference of the same scene, refined in time (dt 10, 5, 2.5, 1.25 ms)
  and in space (125, 250, 500, 1000 nodes): the error of each run's tip trajectory, sampled every
  10 ms over the 2 s, against the finest run;
- the time per 10 ms step of the scene as it is (500 nodes, dt = 10 ms), single-threaded, over
  several runs: per run (total CPU and wall over 200 steps) and per step (min / median / max).
The study also writes steel_rod_benchmark_tip.csv in the working folder: the reference's tip and
the scene's every 10 ms (t, ref_x, ref_z, scene_x, scene_z).

    PYTHONPATH=build/python OMP_NUM_THREADS=1 python3 bench/steel_rod_benchmark.py \
        [--timing-runs 5] [--skip-study] [--markdown out.md]
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

import slender

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SCENE = os.path.join(ROOT, "apps", "scenes", "steel_rod_benchmark.json")


def load_scene():
    with open(SCENE) as f:
        return json.load(f)


def elastica_tip(L, EI, F2, M1, n=4000):
    """Static tip (x, z) and angle of the planar follower elastica: the rod along x, clamped at
    s = 0, a follower force F2 along the tip's normal m2 (+z at the start) and a moment M1 about
    m1 (+y): EI theta' = m, m' = -(cos(theta) F_z - sin(theta) F_x) with the tip force
    F = F2 (-sin(phi), cos(phi)) at the tip angle phi, m(L) = -M1, theta(L) = phi."""

    def shoot(m0, phi):
        fx, fz = -F2 * np.sin(phi), F2 * np.cos(phi)
        h = L / n

        def f(y):
            return np.array([y[1] / EI, -(np.cos(y[0]) * fz - np.sin(y[0]) * fx),
                             np.cos(y[0]), np.sin(y[0])])

        y = np.zeros(4)
        y[1] = m0
        for _ in range(n):
            k1 = f(y)
            k2 = f(y + h / 2 * k1)
            k3 = f(y + h / 2 * k2)
            k4 = f(y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y

    def residual(u):
        y = shoot(u[0], u[1])
        return np.array([y[1] + M1, y[0] - u[1]])

    u = np.array([-M1 + F2 * L, 0.5])
    for _ in range(50):
        r = residual(u)
        if np.max(np.abs(r)) < 1e-13:
            break
        J = np.zeros((2, 2))
        for j in range(2):
            du = np.zeros(2)
            du[j] = 1e-7
            J[:, j] = (residual(u + du) - residual(u - du)) / 2e-7
        u = u - np.linalg.solve(J, r)
    y = shoot(u[0], u[1])
    return y[2], y[3], u[1]


def variant(nodes=None, dt=None, kind=None):
    sc = load_scene()
    if nodes is not None:
        sc["rods"][0]["shape"]["nodes"] = nodes
    if dt is not None:
        sc["integrator"]["dt"] = dt
    if kind is not None:
        sc["integrator"]["type"] = kind
    return sc


def run(sc, sample=0.01):
    """The tip's (t, x, y, z) every `sample` seconds, Newton iterations per step, per-step wall
    times [s] and the run's CPU and wall time [s]."""
    model = slender.build_model(sc)
    sim = slender.Simulator(model)
    dt, dur = sc["integrator"]["dt"], sc["integrator"]["duration"]
    steps, every = int(round(dur / dt)), int(round(sample / dt))
    tip = model.nnode - 2  # the clamp's ghost node comes last
    out = [(0.0, *np.asarray(sim.positions)[tip])]
    iters, step_wall = 0, []
    c0, w0 = time.process_time(), time.perf_counter()
    for k in range(steps):
        s0 = time.perf_counter()
        r = sim.step()
        step_wall.append(time.perf_counter() - s0)
        if not r["ok"]:
            raise RuntimeError(f"step {k} failed: {r}")
        iters += r["iterations"]
        if (k + 1) % every == 0:
            out.append((sim.time, *np.asarray(sim.positions)[tip]))
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return np.array(out), iters / steps, step_wall, cpu, wall


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--timing-runs", type=int, default=5)
    p.add_argument("--skip-study", action="store_true")
    p.add_argument("--markdown", default=None, help="also write the tables to this file")
    a = p.parse_args(argv)
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    sc = load_scene()
    mat, rod = sc["materials"][0], sc["rods"][0]
    L = np.linalg.norm(np.subtract(rod["shape"]["end"], rod["shape"]["start"]))
    EI = mat["youngs_modulus"] * np.pi * rod["radius"] ** 4 / 4
    w = sc["forces"]["wrenches"]
    xe, ze, phi = elastica_tip(L, EI, w["force"][1], w["moment"][0])
    say(f"follower elastica at the hold: tip ({xe:.6f}, {ze:.6f}) m, angle {phi:.6f} rad")

    if not a.skip_study:
        runs = {}
        say("\n| run | Newton / step | CPU [s] | tip at t = 0.25 / 0.75 / 1.25 s (x, z) [m] |")
        say("| --- | --- | --- | --- |")
        cases = [("midpoint", 500, 0.01), ("midpoint", 500, 0.005), ("midpoint", 500, 0.0025),
                 ("midpoint", 500, 0.00125), ("midpoint", 125, 0.00125),
                 ("midpoint", 250, 0.00125), ("midpoint", 1000, 0.00125),
                 ("euler", 500, 0.01), ("euler", 500, 0.00125)]
        for kind, n, dt in cases:
            integ = "implicit_midpoint" if kind == "midpoint" else "implicit_euler"
            tr, its, _, cpu, _ = run(variant(n, dt, integ))
            runs[(kind, n, dt)] = tr
            pts = " / ".join(f"({tr[i, 1]:.5f}, {tr[i, 3]:.5f})" for i in (25, 75, 125))
            say(f"| {kind} {n} nodes, dt {dt * 1e3:g} ms | {its:.2f} | {cpu:.1f} | {pts} |")
        ref = runs[("midpoint", 1000, 0.00125)]
        say("\nAgainst the reference (midpoint, 1000 nodes, dt 1.25 ms), the tip every 10 ms:")
        say("\n| run | max \\|tip - ref\\| over 0-2 s [mm] | at t = 0.25 / 0.75 / 1.25 s [mm] | "
            "hold mean (0.5-1 s) - elastica [mm] |")
        say("| --- | --- | --- | --- |")
        for key, tr in runs.items():
            d = np.linalg.norm(tr[:, 1:] - ref[:, 1:], axis=1) * 1e3
            hold = tr[50:101]
            mean = np.array([hold[:, 1].mean(), hold[:, 3].mean()])
            dh = np.linalg.norm(mean - [xe, ze]) * 1e3
            kind, n, dt = key
            say(f"| {kind} {n} nodes, dt {dt * 1e3:g} ms | {d.max():.3f} | "
                f"{d[25]:.3f} / {d[75]:.3f} / {d[125]:.3f} | {dh:.3f} |")
        np.savetxt(os.path.join(os.getcwd(), "steel_rod_benchmark_tip.csv"),
                   np.column_stack([ref[:, 0], ref[:, 1], ref[:, 3],
                                    runs[("midpoint", 500, 0.01)][:, 1],
                                    runs[("midpoint", 500, 0.01)][:, 3]]),
                   delimiter=",", header="t,ref_x,ref_z,scene_x,scene_z", comments="")

    if a.timing_runs > 0:
        say(f"\nThe scene as it is (500 nodes, dt 10 ms, 200 steps), {a.timing_runs} runs, "
            f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}:")
        say("\n| run | Newton / step | CPU [s] | wall [s] | per step, wall: min / median / max "
            "[ms] |")
        say("| --- | --- | --- | --- | --- |")
        per_run_cpu, per_run_wall, all_steps = [], [], []
        for i in range(a.timing_runs):
            _, its, sw, cpu, wall = run(load_scene())
            per_run_cpu.append(cpu / len(sw))
            per_run_wall.append(wall / len(sw))
            all_steps += sw
            say(f"| {i + 1} | {its:.2f} | {cpu:.2f} | {wall:.2f} | {min(sw) * 1e3:.2f} / "
                f"{statistics.median(sw) * 1e3:.2f} / {max(sw) * 1e3:.2f} |")
        say(f"\nper 10 ms step, over the runs: CPU min / median / max "
            f"{min(per_run_cpu) * 1e3:.2f} / {statistics.median(per_run_cpu) * 1e3:.2f} / "
            f"{max(per_run_cpu) * 1e3:.2f} ms; wall {min(per_run_wall) * 1e3:.2f} / "
            f"{statistics.median(per_run_wall) * 1e3:.2f} / {max(per_run_wall) * 1e3:.2f} ms; "
            f"single steps (wall) {min(all_steps) * 1e3:.2f} / "
            f"{statistics.median(all_steps) * 1e3:.2f} / {max(all_steps) * 1e3:.2f} ms "
            f"(the paper: 7.1 ms on an i5-8600K)")
        say(f"load average: {os.getloadavg()}")

    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
