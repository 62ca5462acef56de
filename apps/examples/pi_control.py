"""The feedback-control examples of Py-DiSMech's Fig. 12 (seed 001 §VII; docs/control.md):

- shape regulation: apps/scenes/pi_s_shape.json, a simply supported rod under gravity driven to an
  S-shaped curvature profile, open loop, P and PI: the largest strain error after 4 s and the
  shape's RMSE against the gravity-free target;
- serpentine tracking: apps/scenes/pi_serpentine.json, a rod in a resistive-force medium
  following a travelling curvature wave, open loop, P and PI (and PI at dt = 2 ms with higher
  gains): the relative RMS tracking error over the last second and the head's travel.

Prints a Markdown table of each; with --plot FILE (matplotlib) also draws the errors in time.

    python3 apps/examples/pi_control.py [--plot pi_control.png]
"""

import argparse
import json
import os

import numpy as np

import slender

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
S_SHAPE = os.path.join(ROOT, "apps", "scenes", "pi_s_shape.json")
SERPENTINE = os.path.join(ROOT, "apps", "scenes", "pi_serpentine.json")


def scene(path, dt=None, gravity=True, **controller):
    with open(path) as f:
        sc = json.load(f)
    sc["controllers"][0].update(controller)
    if dt:
        sc["integrator"]["dt"] = dt
    if not gravity:
        sc["forces"]["gravity"] = [0, 0, 0]
    return sc


def bend_dl(model):
    """The Voronoi length of every bend stencil [m]: discrete curvature / curvature."""
    return np.asarray(model.arrays()["bend_dl"]).reshape(-1)


def run(sc, seconds, sample=None):
    """Steps the scene for `seconds`; returns the simulator and (t, r - y) samples."""
    model = slender.build_model(sc)
    sim = slender.Simulator(model)
    dl = bend_dl(model)
    steps = int(round(seconds / model.dt))
    times, errors, refs = [], [], []
    for i in range(steps):
        rep = sim.step()
        if not rep["ok"]:
            raise RuntimeError(f"step {i + 1} failed: {rep['status']}")
        if sample is None or sample(sim.time):
            r = sim.controller.reference_at(0, sim.time)
            y = sim.strains()["bend_twist"][:, 1] / dl
            times.append(sim.time)
            errors.append(r - y)
            refs.append(r)
    return sim, np.array(times), np.array(errors), np.array(refs)


def regulation():
    rows, curves = [], {}
    target, _, _, _ = run(scene(S_SHAPE, gravity=False, kp=0, ki=0), 4.0, lambda t: False)
    for label, kp, ki in (("open loop", 0, 0), ("P, kp = 0.5", 0.5, 0),
                          ("PI, kp = 0.5, ki = 5", 0.5, 5)):
        sim, t, e, _ = run(scene(S_SHAPE, kp=kp, ki=ki), 4.0)
        d = sim.positions - target.positions
        rmse = np.sqrt(np.mean(np.sum(d * d, axis=1)))
        rows.append((label, np.abs(e[-1]).max(), rmse))
        curves[label] = (t, np.abs(e).max(axis=1))
    print("| S-shape | largest strain error after 4 s [1/m] | shape RMSE [m] |")
    print("| --- | --- | --- |")
    for label, err, rmse in rows:
        print(f"| {label} | {err:.2e} | {rmse:.2e} |")
    return curves


def tracking():
    n = 49
    s = np.linspace(0, 0.5, n + 2)[1:-1]
    w = np.sin(np.pi * s / 0.5) ** 2
    cases = (("open loop", None, dict(kp=0, ki=0, spatial_smoothing=0)),
             ("P, kp = 0.8", None, dict(kp=0.8, ki=0, spatial_smoothing=0)),
             ("PI (the scene)", None, {}),
             ("PI, kp = 0.8 + 16 sin^2, dt = 2 ms", 0.002,
              dict(kp=list(0.8 + 16 * w), ki=1, spatial_smoothing=10)))
    rows, curves = [], {}
    for label, dt, ctl in cases:
        sim, t, e, r = run(scene(SERPENTINE, dt=dt, **ctl), 3.0)
        last = t > 2.0 + 1e-9
        rel = np.sqrt(np.mean(e[last] ** 2)) / np.sqrt(np.mean(r[last] ** 2))
        travel = abs(sim.positions[0, 0] - 0.0)
        rows.append((label, rel, travel))
        curves[label] = (t, np.sqrt(np.mean(e ** 2, axis=1)) / np.sqrt(np.mean(r[last] ** 2)))
    print("| serpentine | tracking error (last second) | head travel in 3 s [m] |")
    print("| --- | --- | --- |")
    for label, rel, travel in rows:
        print(f"| {label} | {100 * rel:.1f} % | {travel:.2f} |")
    return curves


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plot", help="draw the errors in time into this image (matplotlib)")
    args = ap.parse_args()
    reg = regulation()
    print()
    trk = tracking()
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
        for label, (t, e) in reg.items():
            ax[0].semilogy(t, np.maximum(e, 1e-12), label=label)
        ax[0].set(xlabel="t [s]", ylabel="largest |r - y| [1/m]", title="S-shape regulation")
        for label, (t, e) in trk.items():
            ax[1].plot(t, e, label=label)
        ax[1].set(xlabel="t [s]", ylabel="rms(r - y) / rms(r)", title="serpentine tracking")
        for a in ax:
            a.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=80)
        print("wrote", args.plot)


if __name__ == "__main__":
    main()
