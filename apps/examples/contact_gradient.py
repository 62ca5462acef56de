"""Gradients through frictional contact (issue 51, item 2; docs/gradients.md): how hard to shove a
rod so that friction stops it at a mark.

The scene (apps/scenes/slider_rails.json): a nylon rod lies across two fixed steel rails and is
shoved along its length; rod-rod contact with Coulomb friction (mu = 0.3) stops it. Its middle
node's travel after T = 0.25 s is a function s(v0) of the shove's speed v0. Newton's method on
s(v0) = mark takes ds/dv0 from slender.Rollout's adjoint: one rollout and one backward sweep an
iteration (the loss's gradient by the initial velocities, summed over the rod's nodes along the
shove). The start is Coulomb's estimate for a rigid block, v0 = sqrt(2 mu g mark); the rod's
sag over the rails and the friction's regularization move the answer off it by about 0.5 %, and
Newton reaches the mark within a micrometre in two or three iterations. At the answer the script
also takes ds/dv0 by central differences of two more rollouts (they agree to 1e-7); it varies by
up to 10 % about a rigid block's v0 / (mu g) from mark to mark, as the rod's nodes come to rest
at other places over the rails' nodes.

    PYTHONPATH=build/python python3 apps/examples/contact_gradient.py [--mark 0.025]
"""

import argparse
import os
import time

import numpy as np

import slender

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCENE = os.path.join(ROOT, "apps", "scenes", "slider_rails.json")
T = 0.25  # [s]
MU, G = 0.3, 9.8


class Shove:
    """Rollouts of the shoved rod: its middle node's travel along the rails' normal (y) and the
    travel's derivative by the shove's speed."""

    def __init__(self):
        self.model = slender.load_model(SCENE)
        m = self.model
        self.steps = int(round(T / m.dt))
        self.nodes = np.asarray(m.part_nodes("slider"))
        self.middle = int(self.nodes[len(self.nodes) // 2])
        self.rollout = slender.Rollout(m)
        self.rollouts = 0

    def u0(self, v0):
        u = np.zeros(self.model.ndof)
        u[3 * self.nodes + 1] = v0
        return u

    def travel(self, v0, gradient=False):
        q, _ = self.rollout.run(self.steps, u0=self.u0(v0))
        self.rollouts += 1
        k = 3 * self.middle + 1
        s = q[-1, k] - q[0, k]
        if not gradient:
            return s
        dq = np.zeros_like(q)
        dq[-1, k] = 1
        g = self.rollout.gradient(dq, np.zeros_like(q))
        return s, float(np.sum(g["u0"][3 * self.nodes + 1]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mark", type=float, default=0.025, help="where it should stop [m]")
    ap.add_argument("--tol", type=float, default=1e-6, help="how close to the mark [m]")
    args = ap.parse_args(argv)
    sh = Shove()
    v = np.sqrt(2 * MU * G * args.mark)
    print(f"mark {1e3 * args.mark:.2f} mm after {T} s; Coulomb's estimate v0 = {v:.4f} m/s")
    t0 = time.time()
    for it in range(20):
        s, ds = sh.travel(v, gradient=True)
        print(f"  iteration {it}: v0 {v:.6f} m/s, travel {1e3 * s:.4f} mm, ds/dv0 {ds:.5f} s")
        if abs(s - args.mark) < args.tol:
            break
        v -= (s - args.mark) / ds
    else:
        raise SystemExit("Newton did not reach the mark in 20 iterations")
    wall = time.time() - t0
    h = 1e-5
    fd = (sh.travel(v + h) - sh.travel(v - h)) / (2 * h)
    print(f"v0 = {v:.6f} m/s stops it {1e6 * (s - args.mark):+.2f} um from the mark "
          f"({it + 1} rollouts and sweeps, {wall:.2f} s)")
    print(f"ds/dv0 at the answer: adjoint {ds:.8f} s, central differences {fd:.8f} s "
          f"(relative {abs(ds - fd) / abs(fd):.1e}); a rigid block's v0 / (mu g) {v / (MU * G):.5f} s")
    return {"v0": v, "travel": s, "iterations": it + 1, "ds": ds, "fd": fd,
            "coulomb": float(np.sqrt(2 * MU * G * args.mark))}


if __name__ == "__main__":
    main()
