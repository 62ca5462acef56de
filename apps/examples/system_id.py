"""System identification with exact gradients (issue 51, item 3): Young's modulus and damping of
a soft cantilever from its measured tip trajectory.

The specimen: a rubber-like rod of 0.2 m (radius 5 mm, density 1200 kg/m^3, nominal E = 20 MPa),
built in at its base, released straight and at rest into gravity: it falls, rings about its sag
(its first mode near 4.5 Hz) and settles. The "measurement": the tip's x and z as a camera at
100 Hz would see them over 1 s, made here with a known modulus and damping (E = 1.35 x nominal,
mass damping alpha = 2.5 /s) plus Gaussian noise of sigma = 0.2 mm on every coordinate
(`--sigma`). The rollout is the engine's implicit Euler at dt = 2 ms, the same for measurement
and fit (a twin experiment: with real data, the integrator's own numerical damping at this dt,
about 3 % of critical for this mode, would read as mass damping; refine dt to separate them).

The fit minimises L(theta) = 1/2 sum over frames |tip(theta) - tip_measured|^2 / (0.1 mm)^2 over
theta = (log E scale, alpha) by L-BFGS (`real2sim.lbfgs`). Its gradient is slender.Rollout's
adjoint (one rollout and one sweep an iteration: dL/d(E scale) and dL/d(alpha) from the same
sweep); `--compare` also takes it by central differences (four more rollouts an iteration).
"Within the noise": the estimate's error against the truth in units of its standard error, from
the Gauss-Newton covariance sigma^2 (J^T J)^-1 of the tip trajectory's Jacobian J (by
differences: this is the error bar, not the fit).

With `--damping kelvin-voigt` the specimen is viscoelastic instead: Kelvin-Voigt strain-rate
damping (a viscous stress eta d(eps)/dt beside every elastic one, eta = E tau, nominal
retardation time tau = 2 ms) and no mass damping; the measurement is made with E = 1.35 x
nominal and tau = 1.6 x nominal, and the unknowns are (log E scale, log tau scale), the second's
gradient the adjoint's `kelvin_voigt_scale`.

    PYTHONPATH=build/python python3 apps/examples/system_id.py [--damping mass|kelvin-voigt]
        [--compare] [--plot out.png]
"""

import argparse
import os
import sys
import time

import numpy as np

import slender

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from real2sim import lbfgs  # noqa: E402  (the same optimiser as the shapes' fit)

L_ROD, NODES, RADIUS, RHO, E_NOMINAL = 0.2, 21, 5e-3, 1200.0, 2e7
DT, STEPS, EVERY = 2e-3, 500, 5  # 1 s; a frame every 5 steps (100 Hz)
UNIT = 1e-4  # the loss's length unit [m]
TRUTH = (1.35, 2.5)  # E scale, mass damping alpha [1/s]
START = (1.0, 0.5)
TAU_NOMINAL = 2e-3  # Kelvin-Voigt's retardation time [s] (--damping kelvin-voigt)
# the second unknown's truth and start for each kind of damping: alpha [1/s], or tau's scale
MODES = {"mass": (TRUTH, START), "kelvin-voigt": ((1.35, 1.6), (1.0, 1.0))}


def specimen(damping="mass"):
    b = slender.SceneBuilder("specimen")
    b.material("rubber", RHO, E_NOMINAL, 0.45)
    b.straight_rod("rod", [0, 0, 0], [L_ROD, 0, 0], NODES, "rubber",
                   slender.SceneBuilder.circle(RADIUS))
    b.fix_edges("rod", [0])
    b.gravity([0, 0, -9.81])
    if damping == "kelvin-voigt":
        b.kelvin_voigt(E_NOMINAL * TAU_NOMINAL)
    b.integrator(type="implicit_euler", dt=DT)
    return b.build()


class Specimen:
    """Rollouts of the released rod: its tip trajectory, the loss of (log E scale, alpha) (or
    (log E scale, log tau scale) with Kelvin-Voigt damping) and the loss's gradient."""

    def __init__(self, damping="mass"):
        self.truth, self.start = MODES[damping]
        self.model = specimen(damping)
        self.rollout = slender.Rollout(self.model)
        tip = 3 * (NODES - 1)
        self.cols = [tip, tip + 2]  # the tip's x and z in q
        self.frames = np.arange(EVERY, STEPS + 1, EVERY)
        self.rollouts = 0
        # the second unknown: Rollout's argument and gradient, and whether it is fitted as a log
        mass = damping == "mass"
        self.second = "mass_damping" if mass else "kelvin_voigt_scale"
        self.second_log = not mass
        self.fixed = {} if mass else {"mass_damping": 0.0}

    def theta(self, values):
        """The unknowns of (E scale, alpha or tau scale)."""
        v = np.asarray(values, dtype=float)
        return np.array([np.log(v[0]), np.log(v[1]) if self.second_log else v[1]])

    def estimate(self, theta):
        """(E scale, alpha or tau scale) of the unknowns."""
        return np.array([np.exp(theta[0]), np.exp(theta[1]) if self.second_log else theta[1]])

    def run(self, theta):
        v = self.estimate(theta)
        q, _ = self.rollout.run(STEPS, youngs_scale=float(v[0]),
                                **{self.second: float(v[1])}, **self.fixed)
        self.rollouts += 1
        return q

    def tip(self, theta):
        """The measured coordinates, (frames, 2)."""
        return self.run(theta)[np.ix_(self.frames, self.cols)]

    def loss(self, theta, target, gradient=False):
        q = self.run(theta)
        r = (q[np.ix_(self.frames, self.cols)] - target) / UNIT
        L = 0.5 * float(np.sum(r * r))
        if not gradient:
            return L
        dq = np.zeros_like(q)
        dq[np.ix_(self.frames, self.cols)] = r / UNIT
        g = self.rollout.gradient(dq)
        # d/d(theta) of the scales: d/d(log s) = s d/ds
        return L, np.array([g["youngs_scale"], g[self.second]]) * self.dvalue(theta)

    def dvalue(self, theta):
        """d(E scale, alpha or tau scale)/d(theta), elementwise."""
        return np.array([np.exp(theta[0]), np.exp(theta[1]) if self.second_log else 1.0])

    def loss_fd(self, theta, target, h=(1e-5, 1e-4)):
        """Central differences of the loss: two rollouts per unknown."""
        L = self.loss(theta, target)
        g = np.zeros(2)
        for j in range(2):
            e = np.zeros(2)
            e[j] = h[j]
            g[j] = (self.loss(theta + e, target) - self.loss(theta - e, target)) / (2 * h[j])
        return L, g

    def standard_errors(self, theta, sigma, h=(1e-5, 1e-4)):
        """The Gauss-Newton standard errors of (E scale, alpha or tau scale) at theta for noise
        sigma."""
        J = np.zeros((2 * len(self.frames), 2))
        for j in range(2):
            e = np.zeros(2)
            e[j] = h[j]
            J[:, j] = ((self.tip(theta + e) - self.tip(theta - e)) / (2 * h[j])).ravel()
        cov = sigma * sigma * np.linalg.inv(J.T @ J)
        return np.sqrt(np.diag(cov)) * self.dvalue(theta)  # (log scale -> scale)


def fit(spec, target, finite_differences=False, rtol=1e-8):
    fun = (lambda t: spec.loss_fd(t, target)) if finite_differences else \
        (lambda t: spec.loss(t, target, gradient=True))
    spec.rollouts = 0
    t0 = time.perf_counter()
    theta, iters = lbfgs(fun, spec.theta(spec.start), rtol=rtol)
    return theta, iters, spec.rollouts, time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sigma", type=float, default=2e-4, help="measurement noise [m]")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--compare", action="store_true", help="also fit with central differences")
    p.add_argument("--plot", help="a PNG of the tip's trajectories")
    p.add_argument("--damping", choices=sorted(MODES), default="mass",
                   help="the specimen's damping: mass-proportional or Kelvin-Voigt")
    args = p.parse_args()
    spec = Specimen(args.damping)
    TRUTH, START = spec.truth, spec.start  # noqa: N806 (this mode's)
    second = "alpha" if args.damping == "mass" else "tau scale"
    unit = " /s" if args.damping == "mass" else ""
    clean = spec.tip(spec.theta(TRUTH))
    noisy = clean + np.random.default_rng(args.seed).normal(0, args.sigma, clean.shape)
    th_clean, *_ = fit(spec, clean)
    print(f"noise-free trajectory: E scale {spec.estimate(th_clean)[0]:.6f}, {second} "
          f"{spec.estimate(th_clean)[1]:.6f}{unit} (truth {TRUTH[0]}, {TRUTH[1]})")
    theta, iters, rollouts, wall = fit(spec, noisy)
    est = spec.estimate(theta)
    se = spec.standard_errors(theta, args.sigma)
    rms = np.sqrt(np.mean((spec.tip(theta) - noisy) ** 2))
    print(f"adjoint: {iters} iterations, {rollouts} rollouts, {wall:.2f} s")
    print(f"  E scale {est[0]:.5f} +- {se[0]:.5f} (truth {TRUTH[0]}: "
          f"{(est[0] - TRUTH[0]) / se[0]:+.2f} standard errors)")
    print(f"  {second} {est[1]:.4f} +- {se[1]:.4f}{unit} (truth {TRUTH[1]}: "
          f"{(est[1] - TRUTH[1]) / se[1]:+.2f} standard errors)")
    print(f"  residual {rms * 1e3:.3f} mm RMS (noise {args.sigma * 1e3:.3f} mm)")
    if args.compare:
        th_fd, it_fd, r_fd, w_fd = fit(spec, noisy, finite_differences=True)
        print(f"differences: {it_fd} iterations, {r_fd} rollouts, {w_fd:.2f} s; the two fits "
              f"differ by {np.abs(spec.estimate(th_fd) - est).max():.2e}")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        t = spec.frames * DT
        start = spec.tip(spec.theta(START))
        fit_z = spec.tip(theta)
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(t, noisy[:, 1] * 1e3, ".", ms=3, label="measured (truth + noise)")
        ax.plot(t, start[:, 1] * 1e3, "--",
                label=f"start: E x{START[0]}, {second} {START[1]}{unit}")
        ax.plot(t, fit_z[:, 1] * 1e3, "-", label=f"fit: E x{est[0]:.3f}, {second} {est[1]:.2f}{unit}")
        ax.set_xlabel("time [s]")
        ax.set_ylabel("tip height [mm]")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print(args.plot)


if __name__ == "__main__":
    main()
