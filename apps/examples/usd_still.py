"""A still of a Slender USD file (docs/usd.md), drawn from the file alone: what another tool
sees of a run. Reads the .usda with usd-core (`pip install usd-core`) and draws it with
matplotlib at one time code: curves as lines of their width, meshes as triangles coloured by a
primvar (bending energy density by default) and shaded by their normals, the view upright along
the stage's up axis.

    python3 apps/examples/usd_still.py out/parachute/parachute.usda still.png [--time CODE]
"""

import argparse
import sys

import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("usd", help="the .usda file")
    ap.add_argument("png", help="the picture to write")
    ap.add_argument("--time", type=float, default=None, help="time code (default: the last)")
    ap.add_argument("--primvar", default="bending_energy_density",
                    help="the meshes' colour (a primvar of theirs)")
    ap.add_argument("--elev", type=float, default=20.0, help="camera elevation [deg]")
    ap.add_argument("--azim", type=float, default=-60.0, help="camera azimuth [deg]")
    a = ap.parse_args(argv)
    try:
        from pxr import Usd, UsdGeom
    except ImportError:
        sys.exit("usd_still.py needs usd-core: python3 -m pip install usd-core")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection

    stage = Usd.Stage.Open(a.usd)
    code = stage.GetEndTimeCode() if a.time is None else a.time
    up = UsdGeom.GetStageUpAxis(stage).lower()
    fig = plt.figure(figsize=(6.4, 4.8), dpi=100)
    ax = fig.add_subplot(projection="3d")
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    cmap = plt.get_cmap("viridis")
    light = np.array([0.3, -0.5, 0.8]) if up == "z" else np.array([0.3, 0.8, -0.5])
    light /= np.linalg.norm(light)
    for prim in stage.Traverse():
        if not prim.IsA(UsdGeom.PointBased):
            continue
        pts = np.array(UsdGeom.PointBased(prim).GetPointsAttr().Get(code), dtype=float)
        lo, hi = np.minimum(lo, pts.min(axis=0)), np.maximum(hi, pts.max(axis=0))
        if prim.IsA(UsdGeom.BasisCurves):
            curves = UsdGeom.BasisCurves(prim)
            counts = np.array(curves.GetCurveVertexCountsAttr().Get())
            ends = np.cumsum(counts)
            segs = [np.stack([pts[k:e - 1], pts[k + 1:e]], axis=1)
                    for k, e in zip(ends - counts, ends)]
            ax.add_collection3d(Line3DCollection(np.concatenate(segs), colors="0.15",
                                                 linewidths=1.2))
        elif prim.IsA(UsdGeom.Mesh):
            mesh = UsdGeom.Mesh(prim)
            idx = np.array(mesh.GetFaceVertexIndicesAttr().Get()).reshape(-1, 3)
            tris = pts[idx]
            pv = UsdGeom.PrimvarsAPI(prim).GetPrimvar(a.primvar)
            value = np.array(pv.Get(code)) if pv and pv.HasValue() else np.zeros(len(idx))
            top = np.percentile(value, 95) if value.size else 0.0  # a few hot faces saturate
            scale = top if top > 0 else 1.0
            normals = np.array(mesh.GetNormalsAttr().Get(code))[idx].mean(axis=1)
            shade = 0.45 + 0.55 * np.abs(normals @ light)
            colours = cmap(np.clip(value / scale, 0, 1))[:, :3] * shade[:, None]
            ax.add_collection3d(Poly3DCollection(tris, facecolors=colours, edgecolors=colours,
                                                 linewidths=0.3))
    centre, half = (lo + hi) / 2, max(0.5 * (hi - lo).max(), 1e-9)
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_box_aspect((1, 1, 1), zoom=1.6)
    ax.view_init(elev=a.elev, azim=a.azim, vertical_axis=up)
    ax.set_axis_off()
    t = code / stage.GetTimeCodesPerSecond()
    ax.set_title(f"{stage.GetDefaultPrim().GetName()}: t = {t:.3g} s (time code {code:g})")
    fig.tight_layout()
    fig.savefig(a.png)
    print(a.png)


if __name__ == "__main__":
    main()
