"""Real2sim with exact gradients (issue 51, item 3; DisMech's Alg. 1, seed 002 Sec. V-B, re-done):
recover a soft limb's natural curvatures from its measured shapes in several poses.

The limb: a rubber rod of 0.2 m (radius 5 mm, E = 1 MPa), built in at its base, hanging out
horizontally under gravity, curled at rest by an unknown natural curvature profile in the x-z
plane, kappa(s) = c0 + c1 s/L + c2 (s/L)^2: three unknowns (a value per bend spring, 19
unknowns, is ill-posed: the shapes hardly see the profile's short waves, and noise goes into
them). The "measurements": the settled node positions in three poses (no load, a tip force up,
a tip force along the limb), made here with a known profile plus Gaussian noise of sigma = 0.2 mm
on every coordinate (`--sigma`). Each pose is a damped rollout to rest (mass damping 20 /s,
1.5 s in 150 steps).

The fit minimises L(c) = 1/2 sum over poses and nodes |x(c) - x_measured|^2 / (0.1 mm)^2 by
L-BFGS with a backtracking line search. Its gradient comes from slender.Rollout's adjoint (one
rollout and one sweep per pose); DisMech's Alg. 1 takes it by finite differences (two rollouts
per unknown and pose): `--compare` runs both to the same tolerance and prints their iterations,
rollouts and times. The fit is within the noise when the shapes' residual is the noise's size
(the same fit to noise-free poses returns the truth to the optimiser's tolerance).

    PYTHONPATH=build/python python3 apps/examples/real2sim.py [--compare] [--plot out.png]

Measured poses come from a CSV with a header `pose,node,x,y,z` and a line per pose and node
(positions in metres, the limb's frame: base at the origin, along +x): `--poses FILE` fits them;
`--save-poses FILE` writes the made poses in that form, a template for a measurement.
"""

import argparse
import time

import numpy as np

import slender

L_ROD, NODES, STEPS, DT, DAMPING = 0.2, 21, 150, 0.01, 20.0
UNIT = 1e-4  # the loss's length unit [m]
TRUTH = (8.0, 14.0, -10.0)  # the profile's coefficients c0, c1, c2 [1/m]
POSE_FORCES = [(0.0, 0.0, 0.0), (0.0, 0.0, 0.04), (0.05, 0.0, 0.0)]  # tip forces [N]


def limb_model():
    b = slender.SceneBuilder("limb")
    b.material("rubber", 1200, 1e6, 0.45)
    b.straight_rod("limb", [0, 0, 0], [L_ROD, 0, 0], NODES, "rubber",
                   slender.SceneBuilder.circle(5e-3))
    b.fix_edges("limb", [0])
    b.gravity([0, 0, -9.81])
    b.integrator(type="implicit_euler", dt=DT)
    return b.build()


class Limb:
    """Rollouts of the limb's poses: the loss of a curvature profile and its gradient."""

    def __init__(self, forces=POSE_FORCES):
        self.model = limb_model()
        m = self.model
        self.rollout = slender.Rollout(m)
        self.dl = L_ROD / (NODES - 1)  # discrete curvature = curvature x Voronoi length
        self.forces = []
        for f in forces:
            F = np.zeros((STEPS, m.nnode, 3))
            F[:, NODES - 1] = f
            self.forces.append(F)
        self.rollouts = 0

    def kappa_bar(self, kappa):
        k = np.zeros((STEPS, self.model.nbend, 2))
        k[:, :, 1] = np.asarray(kappa) * self.dl
        return k

    def run(self, kappa, F):
        """The trajectory q of the pose under tip force F with the profile kappa [1/m]."""
        q, _ = self.rollout.run(STEPS, kappa_bar=self.kappa_bar(kappa), forces=F,
                                mass_damping=DAMPING)
        self.rollouts += 1
        return q

    def poses(self, kappa):
        """The settled node positions of each pose, (poses, nodes, 3)."""
        return np.array([self.run(kappa, F)[-1, :3 * NODES].reshape(NODES, 3)
                         for F in self.forces])

    def profile(self, c):
        """kappa per bend spring [1/m] of the coefficients c, and d kappa / d c (nbend, 3)."""
        s = np.linspace(0, 1, NODES)[1:-1]
        B = np.stack([np.ones_like(s), s, s * s], axis=1)
        return B @ np.asarray(c, float), B

    def loss(self, c, target, gradient=False):
        kappa, B = self.profile(c)
        L, g = 0.0, np.zeros(self.model.nbend)
        for F, x_t in zip(self.forces, target):
            q = self.run(kappa, F)
            r = (q[-1, :3 * NODES].reshape(NODES, 3) - x_t) / UNIT
            L += 0.5 * float(np.sum(r * r))
            if gradient:
                dq = np.zeros_like(q)
                dq[-1, :3 * NODES] = r.ravel() / UNIT
                gk = self.rollout.gradient(dq)["kappa_bar"][:, :, 1]  # (steps, nbend)
                g += gk.sum(axis=0) * self.dl  # the profile is held over every step
        return (L, B.T @ g) if gradient else L

    def loss_fd(self, c, target, h=1e-4):
        """DisMech's way: central differences of the loss, two rollouts per unknown and pose."""
        L = self.loss(c, target)
        g = np.zeros(len(c))
        for j in range(len(c)):
            e = np.zeros(len(c))
            e[j] = h
            g[j] = (self.loss(c + e, target) - self.loss(c - e, target)) / (2 * h)
        return L, g


def lbfgs(fun, x0, rtol=1e-7, max_iter=60, memory=8):
    """Minimises fun(x) -> (f, g) until |g| < rtol |g(x0)| (or the loss stops falling);
    returns x, iterations. Armijo backtracking."""
    x = np.asarray(x0, float).copy()
    f, g = fun(x)
    g0 = np.linalg.norm(g)
    S, Y = [], []
    for it in range(max_iter):
        if np.linalg.norm(g) < rtol * g0:
            return x, it
        d = -g.copy()
        alphas = []
        for s, y in reversed(list(zip(S, Y))):
            a = s @ d / (y @ s)
            alphas.append(a)
            d -= a * y
        if S:
            d *= (S[-1] @ Y[-1]) / (Y[-1] @ Y[-1])
        else:
            d *= 1.0 / max(1.0, np.linalg.norm(g))
        for (s, y), a in zip(zip(S, Y), reversed(alphas)):
            d += s * (a - (y @ d) / (y @ s))
        step = 1.0
        while True:
            x_new = x + step * d
            f_new, g_new = fun(x_new)
            if f_new <= f + 1e-4 * step * (g @ d) or step < 1e-10:
                break
            step *= 0.5
        if f_new > f - 1e-14 * abs(f) and step < 1e-10:  # no more progress
            return x, it + 1
        s, y = x_new - x, g_new - g
        if y @ s > 1e-30:
            S.append(s)
            Y.append(y)
            S, Y = S[-memory:], Y[-memory:]
        x, f, g = x_new, f_new, g_new
    return x, max_iter


def fit(limb, target, finite_differences=False, rtol=1e-7):
    fun = (lambda k: limb.loss_fd(k, target)) if finite_differences else \
        (lambda k: limb.loss(k, target, gradient=True))
    limb.rollouts = 0
    t0 = time.perf_counter()
    c, iters = lbfgs(fun, np.zeros(3), rtol=rtol)
    return c, iters, limb.rollouts, time.perf_counter() - t0


def write_poses(path, poses):
    """The poses as a CSV a user could measure and edit: pose, node, x, y, z [m] per line."""
    with open(path, "w") as f:
        f.write("pose,node,x,y,z\n")
        for k, pose in enumerate(poses):
            for i, x in enumerate(pose):
                f.write(f"{k},{i},{x[0]:.9e},{x[1]:.9e},{x[2]:.9e}\n")


def read_poses(path, npose=len(POSE_FORCES), nnode=NODES):
    """Measured poses from a CSV of pose,node,x,y,z lines (a header first; any order), as
    (poses, nodes, 3). Every pose's every node once, finite coordinates; an error names the file,
    the line and the field otherwise."""
    poses = np.full((npose, nnode, 3), np.nan)
    with open(path) as f:
        lines = f.read().splitlines()
    if not lines or [c.strip() for c in lines[0].split(",")] != ["pose", "node", "x", "y", "z"]:
        raise ValueError(f"{path}:1: the header must be 'pose,node,x,y,z'")
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != 5:
            raise ValueError(f"{path}:{n}: {len(cells)} fields, expected 5 (pose,node,x,y,z)")
        for name, cell, hi in (("pose", cells[0], npose), ("node", cells[1], nnode)):
            if not cell.isdigit() or int(cell) >= hi:
                raise ValueError(f"{path}:{n}: {name} '{cell}' is not an index below {hi}")
        k, i = int(cells[0]), int(cells[1])
        if not np.isnan(poses[k, i, 0]):
            raise ValueError(f"{path}:{n}: pose {k} node {i} is given twice")
        for c, name in enumerate("xyz"):
            try:
                v = float(cells[2 + c])
            except ValueError:
                v = np.nan
            if not np.isfinite(v):
                raise ValueError(f"{path}:{n}: {name} '{cells[2 + c]}' is not a finite number")
            poses[k, i, c] = v
    missing = np.argwhere(np.isnan(poses[:, :, 0]))
    if len(missing):
        k, i = missing[0]
        raise ValueError(f"{path}: pose {k} node {i} is missing ({len(missing)} nodes missing)")
    return poses


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sigma", type=float, default=2e-4, help="measurement noise [m]")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--compare", action="store_true", help="also fit with differences (DisMech)")
    p.add_argument("--plot", help="a PNG of the profiles")
    p.add_argument("--poses", help="fit measured poses from this CSV (pose,node,x,y,z)")
    p.add_argument("--save-poses", help="write the made poses (truth + noise) to this CSV")
    args = p.parse_args()
    limb = Limb()
    truth = np.array(TRUTH)
    if args.poses:  # a user's measurement: no truth to compare with but the shapes
        noisy = read_poses(args.poses)
    else:
        clean = limb.poses(limb.profile(truth)[0])
        rng = np.random.default_rng(args.seed)
        noisy = clean + rng.normal(0, args.sigma, clean.shape)
        c_clean, *_ = fit(limb, clean)
        print(f"noise-free poses: coefficients {np.round(c_clean, 6)} (truth {truth})")
    if args.save_poses:
        write_poses(args.save_poses, noisy)
        print(args.save_poses)
    c, iters, rollouts, wall = fit(limb, noisy)
    kappa = limb.profile(c)[0]
    rms = np.sqrt(np.mean((limb.poses(kappa) - noisy) ** 2))
    error = "" if args.poses else \
        f"; profile error {np.abs(kappa - limb.profile(truth)[0]).max():.3f} 1/m (max)"
    noise = "" if args.poses else f" (noise {args.sigma * 1e3:.3f} mm)"
    print(f"adjoint: {iters} iterations, {rollouts} rollouts, {wall:.2f} s; coefficients "
          f"{np.round(c, 3)}{error}; residual {rms * 1e3:.3f} mm RMS{noise}")
    if args.compare:
        c_fd, it_fd, r_fd, w_fd = fit(limb, noisy, finite_differences=True)
        print(f"differences (DisMech Alg. 1): {it_fd} iterations, {r_fd} rollouts, {w_fd:.2f} s; "
              f"the two fits differ by {np.abs(c_fd - c).max():.2e} 1/m")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        s = np.linspace(0, L_ROD, NODES)[1:-1]
        fig, ax = plt.subplots(figsize=(6, 3.5))
        if not args.poses:
            ax.plot(s, limb.profile(truth)[0], "k-", label="truth")
        ax.plot(s, kappa, "o", label=f"fit to {args.poses}" if args.poses else
                f"fit to poses with {args.sigma * 1e3:.1f} mm noise")
        ax.set_xlabel("arc length [m]")
        ax.set_ylabel("natural curvature [1/m]")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print(args.plot)


if __name__ == "__main__":
    main()
