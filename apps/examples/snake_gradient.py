"""Trajectory optimisation of the snake's crawling wave with exact gradients (issue 51, item 4).

The snake of apps/scenes/snake.json (resistive force theory, no ground) in 3-D, its natural
curvature the travelling wave of slender.snake,

    kappa(s, t) = A sin(2 pi (s / lambda - f t)),

with the three wave parameters theta = (A [1/m], lambda [m], f [Hz]) held over an episode of T
seconds. The reward is the forward speed of the centre of mass, (x_c(T) - x_c(0)) / T.

- gradient ascent: each iteration runs one rollout (slender.Rollout) and one adjoint sweep, which
  gives dR/dkappa_bar for every spring and step; the chain rule through the wave's closed form
  gives dR/dtheta; Adam steps in units of each parameter's range, kept within the range;
- the baseline: the cross-entropy method of slender.snake (a Gaussian over theta refitted to the
  best quarter of each population) on the same rollouts.

Both start from slender.snake.cem's initial distribution's mean and are given the same number of
rollouts; the printout compares their rewards. tests/python/test_adjoint.py runs a short version.

    PYTHONPATH=build/python python3 apps/examples/snake_gradient.py [--rollouts 24] [--seconds 1]
"""

import argparse
import json
import os

import numpy as np

import slender
from slender.snake import ACTION_HIGH, ACTION_LOW

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class SnakeWave:
    """The snake in 3-D, a rollout's reward and its exact gradient in the wave's parameters."""

    def __init__(self, seconds=1.0):
        scenes = os.path.join(ROOT, "apps", "scenes")
        with open(os.path.join(scenes, "snake.json")) as f:
            scene = json.load(f)
        # the 3-D snake, on which the figures of docs/gradients.md were measured (the adjoint
        # differentiates the 2D mode too)
        scene["integrator"]["two_d"] = False
        self.model = slender.build_model(scene, base_dir=scenes)
        m = self.model
        self.N = max(1, int(round(seconds / m.dt)))
        self.T = self.N * m.dt
        x0 = np.asarray(m.initial_positions)
        length = float(np.linalg.norm(x0[-1] - x0[0]))
        self.s = np.linspace(0.0, length, m.nnode)[1:-1]  # the bend springs' arc length
        self.dl = length / (m.nnode - 1)  # discrete curvature = curvature x Voronoi length
        self.t = (np.arange(self.N) + 1) * m.dt  # each step's end (implicit Euler)
        self.w = np.asarray(m.node_mass) / np.sum(m.node_mass)
        self.rollout = slender.Rollout(m)
        self.rollouts = 0

    def wave(self, theta):
        """kappa_bar (N, nbend, 2) and its derivatives in A, lambda, f (3, N, nbend)."""
        A, lam, f = theta
        arg = 2 * np.pi * (self.s[None, :] / lam - f * self.t[:, None])
        sn, cs = np.sin(arg), np.cos(arg)
        kappa = np.zeros((self.N, self.model.nbend, 2))
        kappa[:, :, 1] = A * self.dl * sn
        d = np.stack([self.dl * sn,
                      A * self.dl * cs * (-2 * np.pi * self.s[None, :] / lam**2),
                      A * self.dl * cs * (-2 * np.pi * self.t[:, None])])
        return kappa, d

    def reward(self, theta, gradient=False):
        kappa, d = self.wave(theta)
        q, _ = self.rollout.run(self.N, kappa_bar=kappa)
        self.rollouts += 1
        xc = q[:, 0:3 * self.model.nnode:3] @ self.w  # the centre of mass's x, every state
        r = (xc[-1] - xc[0]) / self.T
        if not gradient:
            return r
        dq = np.zeros_like(q)
        dq[-1, 0:3 * self.model.nnode:3] = self.w / self.T  # (x_c(0) is the fixed start)
        g = self.rollout.gradient(dq)["kappa_bar"][:, :, 1]
        return r, np.array([np.sum(g * d[k]) for k in range(3)])


def gradient_ascent(sw, theta0, iterations, rate=0.08, log=print):
    """Adam on theta in units of each parameter's range; returns the history of (theta, R)."""
    span = ACTION_HIGH - ACTION_LOW
    z = (np.asarray(theta0, float) - ACTION_LOW) / span
    m1, m2, history = np.zeros(3), np.zeros(3), []
    for it in range(iterations):
        theta = ACTION_LOW + z * span
        r, g = sw.reward(theta, gradient=True)
        history.append((theta.copy(), r))
        gz = g * span
        m1 = 0.9 * m1 + 0.1 * gz
        m2 = 0.999 * m2 + 0.001 * gz * gz
        step = rate * (m1 / (1 - 0.9 ** (it + 1))) / (np.sqrt(m2 / (1 - 0.999 ** (it + 1))) + 1e-12)
        z = np.clip(z + step, 0.0, 1.0)
        if log:
            log(f"gradient {it:3d}: reward {r:+.5f} m/s at A {theta[0]:.2f} 1/m, "
                f"lambda {theta[1]:.3f} m, f {theta[2]:+.2f} Hz")
    return history


def cem(sw, mean, std, population, iterations, seed=0, log=print):
    """slender.snake.cem's update on the same rollouts; the history of (mean, best R)."""
    rng = np.random.default_rng(seed)
    mean, std = np.asarray(mean, float), np.asarray(std, float)
    n_elite = max(2, int(round(0.25 * population)))
    history = []
    for it in range(iterations):
        a = np.clip(rng.normal(mean, std, size=(population, 3)), ACTION_LOW, ACTION_HIGH)
        r = np.array([sw.reward(x) for x in a])
        best = a[np.argmax(r)].copy()
        elite = a[np.argsort(r)[-n_elite:]]
        mean = elite.mean(axis=0)
        std = elite.std(axis=0) + np.array([0.5, 0.02, 0.05]) * 0.5 ** it
        history.append((best, float(r.max())))
        if log:
            log(f"cem {it:3d}: best reward {r.max():+.5f} m/s, population mean {r.mean():+.5f}")
    return history


def compare(rollouts=24, seconds=1.0, population=8, log=print):
    """Both methods on `rollouts` rollouts each: (best reward of each, their histories)."""
    start_mean, start_std = np.array([5.0, 0.5, 0.0]), np.array([5.0, 0.2, 1.0])
    sw = SnakeWave(seconds)
    ga = gradient_ascent(sw, start_mean, rollouts, log=log)
    n_grad = sw.rollouts
    sw.rollouts = 0
    ce = cem(sw, start_mean, start_std, population, max(1, rollouts // population), log=log)
    n_cem = sw.rollouts
    best_ga = max(r for _, r in ga)
    best_ce = max(r for _, r in ce)
    if log:
        log(f"best forward speed after {n_grad} rollouts (and as many adjoint sweeps): gradient "
            f"{best_ga:+.5f} m/s; CEM after {n_cem} rollouts: {best_ce:+.5f} m/s")
    return best_ga, best_ce, ga, ce


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rollouts", type=int, default=24)
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--population", type=int, default=8)
    args = p.parse_args()
    compare(args.rollouts, args.seconds, args.population)


if __name__ == "__main__":
    main()
