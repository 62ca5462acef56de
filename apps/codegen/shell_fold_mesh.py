#!/usr/bin/env python3
"""Writes the curled strip of apps/scenes/shell_fold.json as a Wavefront OBJ mesh.

The strip (Py-DiSMech Fig. 9: a rectangular shell resting partly on the ground that folds onto
itself under gravity) is a flat rectangle, `length` (on its centre line) by `width`, meshed as
SceneBuilder's unstructured rectangle (rows of near-equilateral triangles along the length, half
cells at the row ends). It is then curled about a family of parallel crease lines, which run
across the strip at `skew` degrees from its width direction; with w the distance across them,

  w up to the start of the curl      flat on the ground (the start is at s = base on the
                                     strip's centre line)
  the next radius * angle            a circular arc of `radius` turning up and back by `angle`
  beyond                             straight: the flap, leaving the arc at `angle`

and lifted by `lift` (half the thickness plus a small gap). The mesh is stress-free in this
shape (hinge angles take their natural values from it); gravity then pulls the flap down onto
the base. Why the skew: a fold mirrors the flap's edges onto the base, and with creases square to
the lattice rows every edge of the flap would lie parallel to an edge below it. Two parallel
edges have no unique closest points; their contact distance switches between end points with a
jump in its gradient, on which Newton's method cycles (see docs/scene_format.md). Skewed creases
turn the folded flap by twice the skew against the base, so the two layers' edges cross at 16
degrees or more. Triangles are wound counterclockwise about the length x width normal: upward
(+z) on the base.

    python3 apps/codegen/shell_fold_mesh.py > apps/scenes/data/shell_fold.obj
"""

import argparse
import math
import sys


def lattice(length, width, edge):
    """Nodes (s, y) and triangles of the unstructured rectangle [0, length] x [0, width]."""
    nu = max(1, round(length / edge))
    nv = max(1, round(width / (edge * math.sqrt(3) / 2)))
    rows = []
    nodes = []
    for j in range(nv + 1):
        y = width * j / nv
        if j % 2 == 0:
            s = [length * i / nu for i in range(nu + 1)]
        else:
            s = [0.0] + [length * (i - 0.5) / nu for i in range(1, nu + 1)] + [length]
        rows.append(list(range(len(nodes), len(nodes) + len(s))))
        nodes += [(si, y) for si in s]
    tris = []
    for j in range(nv):
        lo, hi = rows[j], rows[j + 1]
        if j % 2 == 0:  # even row below (nu + 1 nodes), odd above (nu + 2)
            for k in range(nu):
                tris.append((lo[k], lo[k + 1], hi[k + 1]))
            for k in range(nu + 1):
                tris.append((lo[k], hi[k + 1], hi[k]))
        else:  # odd row below, even above
            for k in range(nu + 1):
                tris.append((lo[k], lo[k + 1], hi[k]))
            for k in range(nu):
                tris.append((lo[k + 1], hi[k + 1], hi[k]))
    return nodes, tris


def profile(w, w0, radius, angle):
    """(x, z) of the curl's profile at distance w across the crease lines."""
    if w <= w0:
        return w, 0.0
    arc = radius * angle
    if w <= w0 + arc:
        phi = (w - w0) / radius
        return w0 + radius * math.sin(phi), radius * (1 - math.cos(phi))
    x0, z0 = w0 + radius * math.sin(angle), radius * (1 - math.cos(angle))
    d = w - w0 - arc
    return x0 + d * math.cos(angle), z0 + d * math.sin(angle)


def bend(s, y, a):
    """3D position of the flat strip's point (s, y) once curled about the oblique crease lines."""
    k = math.radians(a.skew)
    c = (math.sin(k), math.cos(k))  # crease direction in the flat strip
    n = (math.cos(k), -math.sin(k))  # across the creases
    t, w = s * c[0] + y * c[1], s * n[0] + y * n[1]
    w0 = a.base * n[0] + 0.5 * a.width * n[1]  # the curl starts at s = base on the centre line
    xw, z = profile(w, w0, a.radius, math.radians(a.angle))
    return t * c[0] + xw * n[0], t * c[1] + xw * n[1], z + a.lift


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base", type=float, default=0.45, help="flat part on the ground [m]")
    p.add_argument("--radius", type=float, default=0.06, help="radius of the curl [m]")
    p.add_argument("--angle", type=float, default=190, help="turn of the curl [degrees]")
    p.add_argument("--flap", type=float, default=0.4, help="straight part after the curl [m]")
    p.add_argument("--skew", type=float, default=8,
                   help="angle of the crease lines from the y axis [degrees]")
    p.add_argument("--width", type=float, default=0.3, help="width of the strip [m]")
    p.add_argument("--edge", type=float, default=0.04, help="target edge length [m]")
    p.add_argument("--lift", type=float, default=1.2e-3, help="height of the base [m]")
    a = p.parse_args()
    angle = math.radians(a.angle)
    length = a.base + a.radius * angle + a.flap
    nodes, tris = lattice(length, a.width, a.edge)
    out = sys.stdout
    out.write("# generated by apps/codegen/shell_fold_mesh.py; do not edit. Command:\n")
    out.write("#   python3 apps/codegen/shell_fold_mesh.py " + " ".join(sys.argv[1:]) + "\n")
    out.write(
        f"# base {a.base} m, curl radius {a.radius} m through {a.angle} deg, crease skew "
        f"{a.skew} deg, flap {a.flap} m, "
        f"width {a.width} m, edge {a.edge} m, lift {a.lift} m: "
        f"{len(nodes)} nodes, {len(tris)} triangles\n")
    for s, y in nodes:
        x, y3, z = bend(s, y, a)
        out.write(f"v {x:.9g} {y3:.9g} {z:.9g}\n")
    for t in tris:
        out.write(f"f {t[0] + 1} {t[1] + 1} {t[2] + 1}\n")


if __name__ == "__main__":
    main()
