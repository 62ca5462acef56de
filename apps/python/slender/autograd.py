"""Gradients through time with PyTorch (docs/gradients.md): ``rollout`` runs a ``slender.Rollout``
inside a ``torch.autograd.Function``, so that ``loss.backward()`` reaches the actions and
parameters through the trajectory; ``batch_rollout`` does the same for a batch of environments
(``slender.BatchRollout``: each its own actions, parameters and gradient). The forward run and
the backward sweep are the C++ adjoint's (exact gradients of implicit Euler, midpoint and Newmark
steps; backend="cuda" runs the rollout and each step's linearization on the GPU, the sweep on the
host); the tensors are float64 on the CPU.
"""

import numpy as np
import torch

import slender

_GRADIENTS = ("kappa_bar", "tau_bar", "forces", "youngs_scale", "density_scale", "phi_bar",
              "fixed_targets", "loads")


def _np(t):
    return None if t is None else t.detach().cpu().double().numpy()


class _RolloutFunction(torch.autograd.Function):
    """A slender.Rollout or slender.BatchRollout run forward, its adjoint sweep backward."""

    @staticmethod
    def forward(ctx, roll, steps, kappa_bar, tau_bar, forces, youngs_scale, density_scale,
                phi_bar, fixed_targets, loads):
        scales = {}
        for name, t in (("youngs_scale", youngs_scale), ("density_scale", density_scale)):
            if isinstance(roll, slender.BatchRollout):
                scales[name] = _np(t)  # (num_envs,) or None: the model's
            else:
                scales[name] = 1.0 if t is None else float(t)
        q, u = roll.run(steps, kappa_bar=_np(kappa_bar), tau_bar=_np(tau_bar),
                        forces=_np(forces), phi_bar=_np(phi_bar),
                        fixed_targets=_np(fixed_targets), loads=_np(loads), **scales)
        ctx.roll = roll
        ctx.given = [t is not None for t in (kappa_bar, tau_bar, forces, youngs_scale,
                                             density_scale, phi_bar, fixed_targets, loads)]
        return torch.from_numpy(q), torch.from_numpy(u)

    @staticmethod
    def backward(ctx, dq, du):
        g = ctx.roll.gradient(_np(dq), _np(du))
        out = [torch.from_numpy(np.ascontiguousarray(g[k], dtype=np.float64)) for k in _GRADIENTS]
        return (None, None) + tuple(o if given else None for o, given in zip(out, ctx.given))


def rollout(model, steps, kappa_bar=None, tau_bar=None, forces=None, youngs_scale=None,
            density_scale=None, checkpoint_every=1, phi_bar=None, fixed_targets=None, loads=None,
            backend="cpu"):
    """q, u (each (steps + 1, ndof), float64 tensors) of a rollout of `model` from its initial
    state: natural curvatures kappa_bar (steps, nbend, 2), twists tau_bar (steps, nbend), hinge
    angles phi_bar (steps, nhinge), forces (steps, nnode, 3), the fixed DOFs' targets
    fixed_targets (steps, nfixed) and the actuators' loads (steps, nsignal: model.load_names)
    per step, Young's modulus and density scales (0-d tensors), each optional (None: the
    model's). Differentiable in every tensor given. backend: "cpu" or "cuda" (slender.Rollout's)."""
    roll = slender.Rollout(model, checkpoint_every=checkpoint_every, backend=backend)
    return _RolloutFunction.apply(roll, steps, kappa_bar, tau_bar, forces, youngs_scale,
                                  density_scale, phi_bar, fixed_targets, loads)


def batch_rollout(model, num_envs, steps, kappa_bar=None, tau_bar=None, forces=None,
                  youngs_scale=None, density_scale=None, checkpoint_every=1, phi_bar=None,
                  fixed_targets=None, loads=None, backend="cpu"):
    """q, u (each (num_envs, steps + 1, ndof), float64 tensors) of num_envs rollouts of `model`
    from its initial state, each environment with its own actions and parameters: kappa_bar
    (num_envs, steps, nbend, 2), tau_bar (num_envs, steps, nbend), forces (num_envs, steps,
    nnode, 3), youngs_scale and density_scale (num_envs,), phi_bar (num_envs, steps, nhinge),
    fixed_targets (num_envs, steps, nfixed) and loads (num_envs, steps, nsignal), each optional
    (None: the model's).
    Differentiable in every tensor given; each environment's gradient is its own. backend: "cpu"
    or "cuda" (the environments then one after another on the GPU)."""
    roll = slender.BatchRollout(model, num_envs, checkpoint_every=checkpoint_every,
                                backend=backend)
    return _RolloutFunction.apply(roll, steps, kappa_bar, tau_bar, forces, youngs_scale,
                                  density_scale, phi_bar, fixed_targets, loads)
