"""A force written in Python: a spring pulls the tip of a cantilever towards a target that moves
up and down, through Simulator.set_force (the force and its Jacobian, called at every Newton
evaluation). Prints the tip, the target and their distance every 20 steps.

    PYTHONPATH=build/python python3 apps/examples/spring_target.py [--stiffness 2000] [--steps 200]
"""

import argparse
import os

import numpy as np

import slender

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stiffness", type=float, default=2000.0, help="spring stiffness k [N/m]")
    ap.add_argument("--amplitude", type=float, default=0.01, help="the target's travel [m]")
    ap.add_argument("--period", type=float, default=1.0, help="one cycle of the target [s]")
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()

    # a 10 cm cantilever (101 nodes, E = 1 MPa, tip stiffness 3 E I / L^3 = 377 N/m) moving in
    # the x-z plane, implicit Euler; the spring pulls its tip towards the target
    model = slender.load_model(os.path.join(ROOT, "bench", "scenes", "s6_cantilever101_e1e6.json"))
    tip = model.nnode - 1
    dofs = np.arange(3 * tip, 3 * tip + 3)
    centre = model.initial_positions[tip]
    k = args.stiffness

    def target(t):
        return centre + np.array([0.0, 0.0, args.amplitude * np.sin(2 * np.pi * t / args.period)])

    def spring(t, q, u):
        # F = -k (x_tip - target(t)) on the tip's three coordinates; dF/dq = -k I, dF/du = 0
        f = np.zeros_like(q)
        f[dofs] = -k * (q[dofs] - target(t))
        return f, dofs, dofs, np.full(3, -k), np.zeros(3)

    sim = slender.Simulator(model)
    sim.set_force(spring, symmetric=True)
    print(f"{'t [s]':>7} {'tip z':>9} {'target z':>9} {'gap [mm]':>9} {'Newton':>6}")
    for step in range(1, args.steps + 1):
        report = sim.step()
        if report["status"] != "converged":
            raise SystemExit(f"step {step}: {report['status']}")
        if step % 20 == 0:
            x, g = sim.positions[tip], target(sim.time)
            gap = 1e3 * np.linalg.norm(x - g)
            print(f"{sim.time:7.3f} {x[2]:9.5f} {g[2]:9.5f} {gap:9.3f} {report['iterations']:6d}")


if __name__ == "__main__":
    main()
