"""A net built in Python: a square grid of rods (numpy arrays of nodes and edges, one network
part) held at its four corners, sagging under gravity with a weight hung at its centre, plus a
small square membrane (a shell from numpy arrays) resting at one corner. No scene file: the
scene is made with slender.SceneBuilder and built with SceneBuilder.build().

Prints the centre's height every 50 steps and the sag at the end, and with --json FILE writes
the scene as JSON (`slender run FILE` runs the same scene).

    PYTHONPATH=build/python python3 apps/examples/net_in_code.py [--cells 8] [--steps 300]
"""

import argparse

import numpy as np

import slender


def grid(cells, size, z=0.0):
    """Nodes of a (cells + 1)^2 grid of side `size` in the plane z, row by row."""
    s = np.linspace(0.0, size, cells + 1)
    x, y = np.meshgrid(s, s)
    return np.column_stack([x.ravel(), y.ravel(), np.full(x.size, z)])


def grid_edges(cells):
    """The grid's rod edges: along x, then along y (0-based node indices)."""
    n = cells + 1
    idx = np.arange(n * n).reshape(n, n)
    along_x = np.column_stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()])
    along_y = np.column_stack([idx[:-1, :].ravel(), idx[1:, :].ravel()])
    return np.vstack([along_x, along_y])


def grid_triangles(cells):
    """Two counterclockwise triangles per cell (normal +z)."""
    n = cells + 1
    idx = np.arange(n * n).reshape(n, n)
    a, b = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel()
    c, d = idx[1:, :-1].ravel(), idx[1:, 1:].ravel()
    return np.vstack([np.column_stack([a, b, d]), np.column_stack([a, d, c])])


def make_scene(cells=8, size=0.2, load=0.5, dt=2e-3):
    b = slender.SceneBuilder("net_in_code")
    nylon = b.material("nylon", density=1150, youngs_modulus=2e9, poisson_ratio=0.4)
    rubber = b.material("rubber", density=1100, youngs_modulus=1e6, poisson_ratio=0.45)
    net = b.network("net", nodes=grid(cells, size), edges=grid_edges(cells), material=nylon,
                    section=b.circle(5e-4))
    n = cells + 1
    corners = [0, cells, n * cells, n * n - 1]
    b.fix_nodes(net, corners)
    centre = (n * n) // 2
    b.point_load(net, centre, [0, 0, -load], time={"type": "ramp", "duration": 0.2})
    # a 2 cm membrane beside the net, held along one side
    patch = b.mesh_shell("patch", nodes=grid(2, 0.02, z=0.0) + [0.25, 0, 0],
                         triangles=grid_triangles(2), material=rubber, thickness=1e-3)
    b.fix_shell_edges(patch, [0, 1, 2])
    b.gravity([0, 0, -9.81])
    b.mass_damping(5.0)
    b.integrator(dt=dt, duration=1.0)
    b.output(nodes=[{"part": net, "node": int(centre)}])
    return b, int(centre)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=8, help="grid cells per side")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--json", help="also write the scene as a JSON file")
    args = ap.parse_args()

    b, centre = make_scene(args.cells)
    if args.json:
        with open(args.json, "w") as f:
            f.write(b.to_json(indent=1))
    model = b.build()
    sim = slender.Simulator(model)
    print(f"{model.name}: {model.nnode} nodes, {model.nedge} rod edges, {model.ntri} triangles, "
          f"{model.nfree} free DOFs")
    for k in range(args.steps):
        report = sim.step()
        if report["status"] != "converged":
            raise SystemExit(f"step {k}: {report['status']}")
        if (k + 1) % 50 == 0:
            print(f"t = {sim.time:.3f} s: centre z = {sim.positions[centre, 2] * 1e3:.3f} mm")
    print(f"sag at the centre: {-sim.positions[centre, 2] * 1e3:.3f} mm")


if __name__ == "__main__":
    main()
