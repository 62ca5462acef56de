"""A PI controller outside the FMU drives the snake's curvature (docs/fmu.md): the snake
(apps/scenes/snake.json) packed by `slender fmu`, stepped by FMPy's FMI 3.0 co-simulation API
(FMU3Slave). At every communication step the controller reads the body's measured curvature
(the mean of the output strain_bend_twist's kappa2, the x-z plane) and sets the input
natural_curvature's kappa2 on every bend-twist stencil:

    u = kp e + ki integral(e) dt,   e = reference - measured.

The body lies in a resistive-force medium, so its curvature follows the natural one with a lag;
the integral term removes the steady error. Prints the time, the measured curvature and the
command every few steps.

    python3 apps/examples/fmu_pi_snake.py [--fmu snake.fmu] [--reference 0.02] [--seconds 1]
"""

import argparse
import os
import shutil
import subprocess
import tempfile

import numpy as np
from fmpy import extract, read_model_description
from fmpy.fmi3 import FMU3Slave

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SNAKE = os.path.join(ROOT, "apps", "scenes", "snake.json")
BIN = os.environ.get("SLENDER_BIN", os.path.join(ROOT, "build", "slender"))


def build_fmu(path, scene=SNAKE):
    """`slender fmu SCENE --out path` (the default outputs)."""
    subprocess.run([BIN, "fmu", scene, "--out", path, "-q"], check=True)
    return path


def run(fmu_path, reference=0.02, seconds=1.0, control_dt=0.02, kp=1.0, ki=10.0, umax=1.0):
    """The closed loop for `seconds` of simulated time; returns (times, measured, commands),
    each sampled at the start of every communication step and at the end."""
    md = read_model_description(fmu_path)
    var = {v.name: v for v in md.modelVariables}
    kappa_in, strain_out = var["natural_curvature"], var["strain_bend_twist"]
    nbend = int(kappa_in.dimensions[0].start)
    unzipped = extract(fmu_path)
    fmu = FMU3Slave(guid=md.guid, unzipDirectory=unzipped,
                    modelIdentifier=md.coSimulation.modelIdentifier, instanceName="snake")
    try:
        fmu.instantiate()
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        kappa = np.zeros((nbend, 2))
        integral, t = 0.0, 0.0
        times, measured, commands = [], [], []
        for _ in range(int(round(seconds / control_dt))):
            strain = np.array(fmu.getFloat64([strain_out.valueReference], 3 * nbend))
            y = strain.reshape(nbend, 3)[:, 1].mean()
            e = reference - y
            integral += e * control_dt
            u = float(np.clip(kp * e + ki * integral, -umax, umax))
            kappa[:, 1] = u
            fmu.setFloat64([kappa_in.valueReference], kappa.ravel())
            times.append(t)
            measured.append(y)
            commands.append(u)
            fmu.doStep(t, control_dt)
            t += control_dt
        strain = np.array(fmu.getFloat64([strain_out.valueReference], 3 * nbend))
        times.append(t)
        measured.append(strain.reshape(nbend, 3)[:, 1].mean())
        commands.append(commands[-1])
        fmu.terminate()
    finally:
        fmu.freeInstance()
        shutil.rmtree(unzipped, ignore_errors=True)
    return np.array(times), np.array(measured), np.array(commands)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fmu", help="the snake's FMU (default: packed into a temporary folder)")
    ap.add_argument("--reference", type=float, default=0.02,
                    help="the curvature to hold (discrete kappa2, curvature times 5 mm)")
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--kp", type=float, default=1.0)
    ap.add_argument("--ki", type=float, default=10.0, help="[1/s]")
    args = ap.parse_args()
    tmp = None
    path = args.fmu
    if path is None:
        tmp = tempfile.mkdtemp()
        path = build_fmu(os.path.join(tmp, "snake.fmu"))
    try:
        t, y, u = run(path, args.reference, args.seconds, kp=args.kp, ki=args.ki)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'t [s]':>8} {'measured':>10} {'command':>10}")
    for k in range(0, len(t), 5):
        print(f"{t[k]:8.2f} {y[k]:10.5f} {u[k]:10.5f}")
    print(f"final error {args.reference - y[-1]:+.2e} (reference {args.reference})")


if __name__ == "__main__":
    main()
