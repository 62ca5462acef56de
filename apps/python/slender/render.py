"""Pictures and videos of a run, drawn without a display (docs/rendering.md).

    python3 -m slender.render OUT_DIR [--out VIDEO.mp4|VIDEO.gif] [--stills DIR]
                              [--scene SCENE.json] [--color speed|none|FIELD]
                              [--camera fit|AZ,EL[,DIST[,TX,TY,TZ]]] [--fps N] [--size WxH]
                              [--every K | --frame I ...]

    from slender.render import render_run
    paths = render_run("out/rod_drop", video="out/rod_drop/rod_drop.mp4",
                       scene="apps/scenes/rod_drop.json")

OUT_DIR is the folder a run wrote (``slender run SCENE --out OUT_DIR``): its ``NAME.pvd`` lists
the frames ``frames/NAME_NNNNNN.vtp`` (ASCII VTK PolyData) with their times. Each frame is drawn
as a picture: every polyline (a rod) as a tube of the radius stored per point, every polygon (a
shell triangle) as a surface, both lit by one light fixed to the camera and coloured by a field
of the frame (the speed by default). The ground of the scene (``--scene``: the frames do not
carry it) is drawn as a tiled floor with the bodies' shadows straight below them. The camera is
fixed for the whole run and, unless given, fitted to the bounding box of every frame.

The pictures are drawn by matplotlib (its Agg canvas, no display, no pyplot) from polygons that
this module builds, projects through a perspective camera and sorts far to near (the painter's
algorithm): there is no depth buffer, so polygons that cross each other may be drawn in the
wrong order where they meet. Videos are encoded by ffmpeg through imageio-ffmpeg (MP4, H.264)
or by Pillow (GIF). This file imports nothing from the rest of the package: it also runs as
``python3 apps/python/slender/render.py`` without the native module.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

__all__ = ["RenderError", "Frame", "Camera", "RunRenderer", "find_pvd", "read_pvd", "read_frame",
           "read_scene", "render_run", "main"]

VIDEO_SUFFIXES = (".mp4", ".gif")
DEFAULT_SIZE = (800, 600)
DEFAULT_FPS = 25.0
FOV_DEG = 30.0  # vertical field of view of the camera
BODY_RGB = (0.90, 0.45, 0.12)  # the colour of every body with --color none
BACKGROUND = (1.0, 1.0, 1.0)
GROUND_RGB = ((0.86, 0.86, 0.84), (0.76, 0.76, 0.74))  # the two tiles of the checkerboard
SHADOW_RGB = (0.58, 0.58, 0.57)
UNITS = {"speed": "m/s", "velocity": "m/s", "radius": "m"}


class RenderError(ValueError):
    """A run folder, a frame, a scene or an option that cannot be rendered (the message says
    which file or option, and what is wrong)."""


def _need(module, pip_name):
    """Import an optional dependency or say how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise RenderError(f"slender.render needs {pip_name} ({e}): "
                          f"python3 -m pip install {pip_name}") from None


# ---------------------------------------------------------------------------------------------
# reading a run: the .pvd series and its .vtp frames


@dataclass
class Frame:
    """One frame of a run, as read from its .vtp file.

    ``points`` is (n, 3); ``point_data`` and ``cell_data`` map array names to (n,) or (n, k)
    arrays (cell data runs over the lines first, then the polygons, as VTK orders cells);
    ``lines`` lists each polyline's point indices; ``tris`` (m, 3) are the polygons cut into
    triangles and ``tri_cell`` the cell index of each."""

    path: str
    time: float
    points: np.ndarray
    point_data: dict = field(default_factory=dict)
    cell_data: dict = field(default_factory=dict)
    field_data: dict = field(default_factory=dict)
    lines: list = field(default_factory=list)
    line_cell: list = field(default_factory=list)
    tris: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int64))
    tri_cell: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def find_pvd(out_dir):
    """The .pvd file of a run folder (or the file itself when given one)."""
    path = os.fspath(out_dir)
    if os.path.isfile(path):
        if not path.endswith(".pvd"):
            raise RenderError(f"{path}: not a .pvd file (give the run's output folder)")
        return path
    if not os.path.isdir(path):
        raise RenderError(f"{path}: no such folder")
    found = sorted(f for f in os.listdir(path) if f.endswith(".pvd"))
    if not found:
        raise RenderError(f"{path}: no .pvd file in this folder (is it the --out folder of a "
                          f"run with VTK output on, \"output\": {{\"vtk\": true}}?)")
    if len(found) > 1:
        raise RenderError(f"{path}: several .pvd files ({', '.join(found)}): give one of them "
                          f"instead of the folder")
    return os.path.join(path, found[0])


def read_pvd(pvd_path):
    """The frames listed by a .pvd collection: a list of (time, absolute .vtp path)."""
    try:
        root = ET.parse(pvd_path).getroot()
    except ET.ParseError as e:
        raise RenderError(f"{pvd_path}: not a readable .pvd file ({e})") from None
    except OSError as e:
        raise RenderError(f"{pvd_path}: cannot read ({e.strerror})") from None
    if root.tag != "VTKFile" or root.get("type") != "Collection":
        raise RenderError(f"{pvd_path}: not a VTK Collection file (root <{root.tag}>)")
    base = os.path.dirname(os.path.abspath(pvd_path))
    entries = []
    for k, ds in enumerate(root.iter("DataSet")):
        rel = ds.get("file")
        if not rel:
            raise RenderError(f"{pvd_path}: DataSet {k} has no file attribute")
        try:
            t = float(ds.get("timestep", "nan"))
        except ValueError:
            raise RenderError(f"{pvd_path}: DataSet {k} has a timestep that is not a number: "
                              f"{ds.get('timestep')!r}") from None
        entries.append((t, os.path.join(base, rel)))
    if not entries:
        raise RenderError(f"{pvd_path}: lists no frames")
    return entries


def _array(el, path, where, count=None, integer=False):
    """The values of one ASCII DataArray, shaped (tuples,) or (tuples, components)."""
    name = el.get("Name", "?")
    fmt = el.get("format", "ascii")
    if fmt != "ascii":
        raise RenderError(f"{path}: {where} array '{name}' is stored as {fmt!r}; only ASCII "
                          f"frames (what slender writes) are read")
    words = (el.text or "").split()
    try:
        values = np.array(words, dtype=np.int64 if integer else np.float64)
    except ValueError:
        bad = next(w for w in words if not _is_number(w, integer))
        kind = "an integer" if integer else "a number"
        raise RenderError(f"{path}: {where} array '{name}' holds {bad!r}, which is not "
                          f"{kind}") from None
    try:
        ncomp = int(el.get("NumberOfComponents", "1"))
    except ValueError:
        ncomp = 0
    if ncomp < 1:
        raise RenderError(f"{path}: {where} array '{name}' has a bad NumberOfComponents "
                          f"{el.get('NumberOfComponents')!r}")
    if values.size % ncomp:
        raise RenderError(f"{path}: {where} array '{name}' has {values.size} values, not a "
                          f"multiple of its {ncomp} components")
    tuples = values.size // ncomp
    if count is not None and tuples != count:
        raise RenderError(f"{path}: {where} array '{name}' has {tuples} tuples, expected "
                          f"{count}")
    return values if ncomp == 1 else values.reshape(tuples, ncomp)


def _is_number(word, integer):
    try:
        int(word) if integer else float(word)
        return True
    except ValueError:
        return False


def _cells(piece, tag, path, npoints):
    """The cells of a <Lines> or <Polys> element: a list of point-index arrays."""
    el = piece.find(tag)
    if el is None:
        return []
    arrays = {a.get("Name"): a for a in el.findall("DataArray")}
    if "connectivity" not in arrays or "offsets" not in arrays:
        raise RenderError(f"{path}: <{tag}> needs 'connectivity' and 'offsets' arrays")
    conn = _array(arrays["connectivity"], path, tag, integer=True)
    offsets = _array(arrays["offsets"], path, tag, integer=True)
    if conn.size and (conn.min() < 0 or conn.max() >= npoints):
        raise RenderError(f"{path}: <{tag}> connectivity refers to point {conn.max()}, but the "
                          f"frame has {npoints} points")
    prev = 0
    cells = []
    for off in offsets:
        if off < prev or off > conn.size:
            raise RenderError(f"{path}: <{tag}> offsets are not increasing up to the "
                              f"connectivity's length {conn.size}")
        cells.append(conn[prev:off])
        prev = off
    if prev != conn.size:
        raise RenderError(f"{path}: <{tag}> offsets end at {prev}, the connectivity has "
                          f"{conn.size} entries")
    return cells


def _count(piece, key, path):
    try:
        return int(piece.get(key, "0"))
    except ValueError:
        raise RenderError(f"{path}: <Piece> {key} is not an integer: {piece.get(key)!r}") from None


def read_frame(path, time=None):
    """Read one ASCII .vtp frame; ``time`` is used when the file has no TimeValue."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise RenderError(f"{path}: not a readable VTK XML file ({e})") from None
    except OSError as e:
        raise RenderError(f"{path}: cannot read ({e.strerror})") from None
    if root.tag != "VTKFile" or root.get("type") != "PolyData":
        raise RenderError(f"{path}: not a VTK PolyData file (root <{root.tag}> "
                          f"type={root.get('type')!r})")
    poly = root.find("PolyData")
    piece = poly.find("Piece") if poly is not None else None
    if piece is None:
        raise RenderError(f"{path}: no <PolyData><Piece>")
    npoints = _count(piece, "NumberOfPoints", path)
    pts_el = piece.find("Points/DataArray")
    if pts_el is None:
        raise RenderError(f"{path}: no <Points> array")
    points = _array(pts_el, path, "Points", count=npoints)
    points = points.reshape(npoints, 3) if npoints else np.zeros((0, 3))
    if not np.isfinite(points).all():
        raise RenderError(f"{path}: the point positions are not all finite (the run diverged?)")

    fdata = {}
    fd = poly.find("FieldData")
    for a in (fd.findall("DataArray") if fd is not None else []):
        fdata[a.get("Name")] = _array(a, path, "FieldData")
    pdata = {}
    pd = piece.find("PointData")
    for a in (pd.findall("DataArray") if pd is not None else []):
        pdata[a.get("Name")] = _array(a, path, "PointData", count=npoints,
                                      integer=a.get("type", "").startswith(("Int", "UInt")))

    nverts = _count(piece, "NumberOfVerts", path)
    lines = _cells(piece, "Lines", path, npoints)
    polys = _cells(piece, "Polys", path, npoints)
    if len(lines) != _count(piece, "NumberOfLines", path):
        raise RenderError(f"{path}: NumberOfLines is {piece.get('NumberOfLines')}, <Lines> "
                          f"holds {len(lines)}")
    if len(polys) != _count(piece, "NumberOfPolys", path):
        raise RenderError(f"{path}: NumberOfPolys is {piece.get('NumberOfPolys')}, <Polys> "
                          f"holds {len(polys)}")
    ncells = nverts + len(lines) + len(polys) + _count(piece, "NumberOfStrips", path)
    cdata = {}
    cd = piece.find("CellData")
    for a in (cd.findall("DataArray") if cd is not None else []):
        cdata[a.get("Name")] = _array(a, path, "CellData", count=ncells,
                                      integer=a.get("type", "").startswith(("Int", "UInt")))

    # VTK numbers cells verts first, then lines, then polygons
    tris, tri_cell = [], []
    for k, cell in enumerate(polys):
        for j in range(1, len(cell) - 1):  # a fan: polygons of more than 3 points too
            tris.append((cell[0], cell[j], cell[j + 1]))
            tri_cell.append(nverts + len(lines) + k)
    t = fdata.get("TimeValue")
    if t is not None and np.size(t) >= 1:
        time = float(np.ravel(t)[0])
    return Frame(path=path, time=float("nan") if time is None else float(time), points=points,
                 point_data=pdata, cell_data=cdata, field_data=fdata,
                 lines=[c for c in lines if len(c) >= 2],
                 line_cell=[nverts + k for k, c in enumerate(lines) if len(c) >= 2],
                 tris=np.array(tris, dtype=np.int64).reshape(-1, 3),
                 tri_cell=np.array(tri_cell, dtype=np.int64))


# ---------------------------------------------------------------------------------------------
# the scene's ground and up direction


@dataclass
class Ground:
    """A plane (a point and its normal) or the wavy ground z = offset + A sin() sin()."""

    wavy: bool = False
    point: np.ndarray = field(default_factory=lambda: np.zeros(3))
    normal: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    amplitude: float = 0.0
    length_x: float = 0.0
    length_y: float = 0.0
    phase_x: float = 0.0
    phase_y: float = 0.0
    offset: float = 0.0

    def height(self, x, y):
        """The wavy ground's height at (x, y); a length of 0 freezes that factor."""
        fx = np.sin(2 * np.pi * x / self.length_x + self.phase_x) if self.length_x else \
            np.full_like(x, math.sin(self.phase_x))
        fy = np.sin(2 * np.pi * y / self.length_y + self.phase_y) if self.length_y else \
            np.full_like(y, math.sin(self.phase_y))
        return self.offset + self.amplitude * fx * fy


def _vec3(value, where, path):
    try:
        v = np.array(value, dtype=float).reshape(3)
    except (TypeError, ValueError):
        raise RenderError(f"{path}: {where} is not 3 numbers: {value!r}") from None
    if not np.isfinite(v).all():
        raise RenderError(f"{path}: {where} is not finite: {value!r}")
    return v


def read_scene_camera(scene_path):
    """The camera a scene file gives its pictures (output.camera: azimuth, elevation, and
    optionally distance and target), as a Camera, or None when it gives none."""
    try:
        with open(scene_path, encoding="utf-8") as f:
            scene = json.load(f)
    except (OSError, json.JSONDecodeError):
        return None  # read_scene says what is wrong with the file
    out = scene.get("output", {}) if isinstance(scene, dict) else {}
    spec = out.get("camera") if isinstance(out, dict) else None
    if spec is None:
        return None
    if not isinstance(spec, dict) or not {"azimuth", "elevation"} <= set(spec):
        raise RenderError(f"{scene_path}: output.camera needs azimuth and elevation [deg]")
    if "target" in spec and "distance" not in spec:
        raise RenderError(f"{scene_path}: output.camera.target needs a distance")
    try:
        vals = [float(spec["azimuth"]), float(spec["elevation"])]
        if "distance" in spec:
            vals.append(float(spec["distance"]))
    except (TypeError, ValueError):
        raise RenderError(f"{scene_path}: output.camera: not a number") from None
    if "target" in spec:
        vals += list(_vec3(spec["target"], "output.camera.target", scene_path))
    return Camera.parse(vals)


def read_scene(scene_path):
    """The ground (or None) and the up direction (against gravity, +z without gravity) of a
    scene file (docs/scene_format.md, "Ground")."""
    try:
        with open(scene_path, encoding="utf-8") as f:
            scene = json.load(f)
    except OSError as e:
        raise RenderError(f"{scene_path}: cannot read the scene ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise RenderError(f"{scene_path}:{e.lineno}: not valid JSON ({e.msg})") from None
    forces = scene.get("forces", {}) if isinstance(scene, dict) else {}
    if not isinstance(forces, dict):
        raise RenderError(f"{scene_path}: forces is not an object")
    up = np.array([0.0, 0.0, 1.0])
    if "gravity" in forces:
        g = _vec3(forces["gravity"], "forces.gravity", scene_path)
        if np.linalg.norm(g) > 0:
            up = -g / np.linalg.norm(g)
    spec = forces.get("ground")
    if spec is None:
        return None, up
    if not isinstance(spec, dict):
        raise RenderError(f"{scene_path}: forces.ground is not an object")
    kind = spec.get("type", "plane")
    if kind not in ("plane", "wavy"):
        raise RenderError(f"{scene_path}: forces.ground.type {kind!r} is not plane or wavy")
    g = Ground(wavy=kind == "wavy")
    if "point" in spec:
        g.point = _vec3(spec["point"], "forces.ground.point", scene_path)
    if "normal" in spec:
        n = _vec3(spec["normal"], "forces.ground.normal", scene_path)
        if np.linalg.norm(n) == 0:
            raise RenderError(f"{scene_path}: forces.ground.normal is zero")
        g.normal = n / np.linalg.norm(n)
    for key in ("amplitude", "length_x", "length_y", "phase_x", "phase_y", "offset"):
        if key in spec:
            try:
                setattr(g, key, float(spec[key]))
            except (TypeError, ValueError):
                raise RenderError(f"{scene_path}: forces.ground.{key} is not a number") from None
    return g, up


# ---------------------------------------------------------------------------------------------
# fields to colour by


@dataclass
class _Field:
    """How a frame's polygons get a value: from point data, cell data, or none."""

    name: str  # what the user asked for ('speed', 'none', an array name)
    array: str | None  # the array read (velocity for speed)
    where: str  # 'point', 'cell' or 'none'

    def node_values(self, frame):
        """Per point (where 'point') or per cell (where 'cell') values: vectors by magnitude."""
        data = frame.point_data if self.where == "point" else frame.cell_data
        a = np.asarray(data[self.array], dtype=float)
        return np.linalg.norm(a, axis=1) if a.ndim == 2 else a


def available_fields(frame):
    """The names --color accepts for this frame."""
    names = ["none"]
    if "velocity" in frame.point_data:
        names.append("speed")
    names += sorted(frame.point_data) + sorted(n for n in frame.cell_data
                                               if n not in frame.point_data)
    return names


def _resolve_field(name, frame):
    if name in (None, "none"):
        return _Field("none", None, "none")
    if name == "speed" and "velocity" in frame.point_data:
        return _Field("speed", "velocity", "point")
    if name in frame.point_data:
        return _Field(name, name, "point")
    if name in frame.cell_data:
        return _Field(name, name, "cell")
    raise RenderError(f"no field {name!r} to colour by in {frame.path}; available: "
                      f"{', '.join(available_fields(frame))}")


# ---------------------------------------------------------------------------------------------
# geometry: tubes around polylines, triangles, the ground


def _unit(v, axis=-1):
    n = np.linalg.norm(v, axis=axis, keepdims=True)
    return v / np.where(n > 0, n, 1.0)


def _tube(points, radii, sides, closed=False):
    """A tube around one polyline: (quads (m-1, sides, 4, 3), outward normals of each quad,
    end caps as fans (2 or 0, sides, 4, 3) and their normals). The rings' frames are carried
    along the polyline by parallel transport, so that the tube does not twist. A closed
    polyline (its last point is its first) gets no caps."""
    m = len(points)
    seg = np.diff(points, axis=0)
    seg_len = np.linalg.norm(seg, axis=1)
    seg_t = np.zeros_like(seg)
    ok = seg_len > 0
    seg_t[ok] = seg[ok] / seg_len[ok, None]
    for i in range(len(seg_t)):  # zero-length segments take their neighbour's direction
        if not ok[i]:
            seg_t[i] = seg_t[i - 1] if i > 0 else np.array([1.0, 0.0, 0.0])
    tang = np.empty_like(points)
    tang[0], tang[-1] = seg_t[0], seg_t[-1]
    tang[1:-1] = _unit(seg_t[:-1] + seg_t[1:])
    if closed:
        tang[0] = tang[-1] = _unit(seg_t[0] + seg_t[-1])
    bad = np.linalg.norm(tang, axis=1) < 0.5  # a full reversal: use the incoming segment
    tang[bad] = np.vstack([seg_t[:1], seg_t])[bad]

    normals = np.empty_like(points)
    a = np.eye(3)[np.argmin(np.abs(tang[0]))]
    normals[0] = _unit(a - a.dot(tang[0]) * tang[0])
    for i in range(1, m):
        n = normals[i - 1] - normals[i - 1].dot(tang[i]) * tang[i]
        ln = np.linalg.norm(n)
        if ln < 1e-9:
            a = np.eye(3)[np.argmin(np.abs(tang[i]))]
            n, ln = a - a.dot(tang[i]) * tang[i], None
        normals[i] = n / (ln or np.linalg.norm(n))
    binormals = np.cross(tang, normals)

    ang = 2 * np.pi * np.arange(sides + 1) / sides
    dirs = (np.cos(ang)[None, :, None] * normals[:, None, :]
            + np.sin(ang)[None, :, None] * binormals[:, None, :])  # (m, sides + 1, 3)
    rings = points[:, None, :] + radii[:, None, None] * dirs
    quads = np.stack([rings[:-1, :-1], rings[:-1, 1:], rings[1:, 1:], rings[1:, :-1]], axis=2)
    qn = _unit(dirs[:-1, :-1] + dirs[:-1, 1:] + dirs[1:, 1:] + dirs[1:, :-1])
    if closed:
        return quads, qn, np.zeros((0, sides, 4, 3)), np.zeros((0, 3))
    caps, cap_n = [], []
    for i, sign in ((0, -1.0), (m - 1, 1.0)):
        c = np.broadcast_to(points[i], (sides, 3))
        fan = np.stack([c, rings[i, :-1], rings[i, 1:], rings[i, 1:]], axis=1)
        caps.append(fan)
        cap_n.append(sign * tang[i])
    return quads, qn, np.array(caps), np.array(cap_n)


def _nice_step(x):
    """1, 2 or 5 times a power of ten, near x."""
    if x <= 0 or not np.isfinite(x):
        return 1.0
    p = 10.0 ** math.floor(math.log10(x))
    for k in (1, 2, 5, 10):
        if x <= k * p * 1.5:
            return k * p
    return 10 * p


def _ground_quads(ground, up, center, half):
    """Tiles of the ground around ``center``: quads (n, 4, 3), normals (n, 3) and 0/1 for
    the checkerboard. Tiles lie on a grid fixed in space, so that they stay put."""
    step = _nice_step(2 * half / 12)
    if ground.wavy:
        ea, eb = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
        origin = np.zeros(3)
        cu, cv = center[0], center[1]
    else:
        n = ground.normal
        ea = np.array([1.0, 0, 0]) - n[0] * n
        if np.linalg.norm(ea) < 1e-6:
            ea = np.array([0, 1.0, 0]) - n[1] * n
        ea = _unit(ea)
        eb = np.cross(n, ea)
        origin = ground.point
        d = center - origin
        cu, cv = d.dot(ea), d.dot(eb)
    iu = np.arange(math.floor((cu - half) / step), math.ceil((cu + half) / step))
    iv = np.arange(math.floor((cv - half) / step), math.ceil((cv + half) / step))
    # each tile is cut 3 x 3 or finer, so that a wavy ground's waves show (12 pieces a wave)
    sub = 3
    if ground.wavy:
        waves = [abs(w) for w in (ground.length_x, ground.length_y) if w]
        if waves:
            sub = int(min(12, max(3, math.ceil(12 * step / min(waves)))))
    gu, gv = np.meshgrid(np.arange(iu[0] * sub, (iu[-1] + 1) * sub + 1) * step / sub,
                         np.arange(iv[0] * sub, (iv[-1] + 1) * sub + 1) * step / sub,
                         indexing="ij")
    pts = origin + gu[..., None] * ea + gv[..., None] * eb
    if ground.wavy:
        pts[..., 2] = ground.height(pts[..., 0], pts[..., 1])
    quads = np.stack([pts[:-1, :-1], pts[1:, :-1], pts[1:, 1:], pts[:-1, 1:]], axis=2)
    quads = quads.reshape(-1, 4, 3)
    cell_u = (np.arange(gu.shape[0] - 1) // sub + iu[0])[:, None]
    cell_v = (np.arange(gu.shape[1] - 1) // sub + iv[0])[None, :]
    checker = ((cell_u + cell_v) % 2).reshape(-1)
    normals = _unit(np.cross(quads[:, 2] - quads[:, 0], quads[:, 3] - quads[:, 1]))
    normals *= np.sign(normals.dot(up) + 1e-12)[:, None]
    return quads, normals, checker


def _on_ground(pts, ground, up):
    """Points moved along ``up`` onto the ground (their shadows under a light from above);
    None where that cannot be done (up parallel to the plane, a wavy ground not along z)."""
    if ground.wavy:
        if abs(up[2]) < 0.999:
            return None
        out = pts.copy()
        out[..., 2] = ground.height(pts[..., 0], pts[..., 1])
        return out
    un = up.dot(ground.normal)
    if abs(un) < 1e-3:
        return None
    s = (pts - ground.point).dot(ground.normal) / un
    return pts - s[..., None] * up


def _above_ground(p, ground):
    """Whether a point is on the free side of the ground."""
    if ground.wavy:
        return p[2] > float(ground.height(np.array(p[0]), np.array(p[1])))
    return float((p - ground.point).dot(ground.normal)) > 0


# ---------------------------------------------------------------------------------------------
# the camera


@dataclass
class Camera:
    """A perspective camera looking at ``target`` from ``azimuth`` and ``elevation`` (degrees,
    about the up direction: azimuth 0 puts the camera on the +x side, -90 on the -y side,
    elevation 90 straight above) at ``distance``; None fields are fitted to the run."""

    azimuth: float | None = None
    elevation: float | None = None
    distance: float | None = None
    target: np.ndarray | None = None

    @staticmethod
    def parse(spec):
        """'fit', 'AZ,EL', 'AZ,EL,DIST' or 'AZ,EL,DIST,TX,TY,TZ' (or such a sequence)."""
        if spec is None or isinstance(spec, Camera):
            return spec or Camera()
        if isinstance(spec, str):
            if spec.strip().lower() in ("fit", ""):
                return Camera()
            parts = spec.split(",")
        else:
            parts = list(spec)
        try:
            vals = [float(p) for p in parts]
        except (TypeError, ValueError):
            vals = []
        if len(vals) not in (2, 3, 6) or not all(map(math.isfinite, vals)):
            raise RenderError(f"camera {spec!r}: expected 'fit', 'AZ,EL', 'AZ,EL,DIST' or "
                              f"'AZ,EL,DIST,TX,TY,TZ' (degrees, metres)")
        cam = Camera(vals[0], vals[1])
        if len(vals) >= 3:
            if vals[2] <= 0:
                raise RenderError(f"camera {spec!r}: the distance must be > 0")
            cam.distance = vals[2]
        if len(vals) == 6:
            cam.target = np.array(vals[3:6])
        return cam


@dataclass
class _View:
    """A resolved camera: eye, orthonormal axes, focal length, and the image window."""

    eye: np.ndarray
    right: np.ndarray
    up: np.ndarray
    forward: np.ndarray
    focal: float
    xlim: tuple
    ylim: tuple
    pixel: float  # the size of one pixel at the target's distance [m]

    def project(self, p):
        """Image coordinates (..., 2) and depth (...) of points (..., 3)."""
        rel = p - self.eye
        depth = rel @ self.forward
        safe = np.where(depth > 0, depth, np.inf)
        xy = np.stack([rel @ self.right, rel @ self.up], axis=-1) * (self.focal / safe)[..., None]
        return xy, depth


def _world_axes(up):
    """Horizontal axes e1, e2 and up, with e1 as close to +x as up allows."""
    e1 = np.array([1.0, 0, 0]) - up[0] * up
    if np.linalg.norm(e1) < 1e-6:
        e1 = np.array([0, 1.0, 0]) - up[1] * up
    e1 = _unit(e1)
    return e1, np.cross(up, e1), up


def _resolve_view(cam, bbox, up, size, region):
    """Fit the camera: the view direction (a default chosen from the run's shape), and the
    distance at which every corner of the bounding box lies inside ``region`` (fractions of
    the image: left, bottom, right, top)."""
    lo, hi = bbox
    center = (lo + hi) / 2
    e1, e2, e3 = _world_axes(up)
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                        for z in (lo[2], hi[2])])
    ext = np.ptp(corners @ np.stack([e1, e2, e3]).T, axis=0)
    big = max(ext.max(), 1e-6)
    az, el = cam.azimuth, cam.elevation
    if az is None:
        if ext[1] < 0.05 * big:  # a run in the e1-up plane (x-z): look at it from the side
            az, el = -90.0, 10.0
        elif ext[2] < 0.05 * big:  # flat: look down on it
            az, el = -60.0, 55.0
        else:
            az, el = -60.0, 25.0
    a, b = math.radians(az), math.radians(el)
    back = math.cos(b) * (math.cos(a) * e1 + math.sin(a) * e2) + math.sin(b) * e3
    forward = -_unit(back)
    right = np.cross(forward, up)
    if np.linalg.norm(right) < 1e-6:  # straight down or up: keep e2 up the picture
        right = np.cross(forward, e2)
    right = _unit(right)
    cam_up = np.cross(right, forward)
    focal = 1.0 / math.tan(math.radians(FOV_DEG) / 2)
    w, h = size
    aspect = w / h
    left, bottom, rgt, top = region
    hw_x, hw_y = aspect * (rgt - left), (top - bottom)  # half sizes in image units (y: 1)
    target = cam.target if cam.target is not None else center
    if cam.distance is not None:
        dist = cam.distance
    else:
        rel = corners - target
        cr, cu, cf = np.abs(rel @ right), np.abs(rel @ cam_up), rel @ forward
        dist = max(np.max(focal * cr / hw_x - cf), np.max(focal * cu / hw_y - cf),
                   np.max(-cf) + 1e-3 * big, 1e-6)
    eye = target - dist * forward
    view = _View(eye, right, cam_up, forward, focal, (0, 0), (0, 0),
                 pixel=2 * dist * math.tan(math.radians(FOV_DEG) / 2) / h)
    # put the projected box (or the given target) in the middle of the region
    if cam.distance is None:
        xy, _ = view.project(corners)
        pc = (xy.min(axis=0) + xy.max(axis=0)) / 2
    else:
        pc = np.zeros(2)
    fx, fy = (left + rgt) / 2, (bottom + top) / 2
    x0, y0 = pc[0] - fx * 2 * aspect, pc[1] - fy * 2
    view.xlim, view.ylim = (x0, x0 + 2 * aspect), (y0, y0 + 2)
    return view, (az, el)


# ---------------------------------------------------------------------------------------------
# drawing


def _shade(rgb, normals_cam, light):
    """Lambert plus a Blinn-Phong highlight, for a light fixed to the camera."""
    ndl = np.clip(normals_cam @ light, 0, None)
    half = _unit(light + np.array([0.0, 0.0, 1.0]))
    spec = np.clip(normals_cam @ half, 0, None) ** 24
    out = rgb * (0.38 + 0.62 * ndl)[:, None] + 0.22 * spec[:, None]
    return np.clip(out, 0, 1)


class _Painter:
    """A matplotlib figure of fixed size that draws frames of one run."""

    def __init__(self, run):
        _need("matplotlib", "matplotlib")
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.collections import PolyCollection
        from matplotlib.colors import LightSource
        from matplotlib.figure import Figure

        self.run = run
        self.PolyCollection = PolyCollection
        w, h = run.size
        dpi = 100
        self.fig = Figure(figsize=(w / dpi, h / dpi), dpi=dpi, facecolor=BACKGROUND)
        self.canvas = FigureCanvasAgg(self.fig)
        ax = self.fig.add_axes((0, 0, 1, 1))
        ax.set_axis_off()
        ax.set_xlim(*run.view.xlim)
        ax.set_ylim(*run.view.ylim)
        ax.set_autoscale_on(False)
        self.ax = ax
        # light from the upper left, in the camera's axes (x right, y up, z towards the viewer)
        self.light = np.asarray(LightSource(azdeg=315, altdeg=45).direction, dtype=float)
        if run.ground is not None and run.ground_visible:
            self._draw_ground()
        scale = h / 600
        self.label = self.fig.text(0.015, 0.985, "", ha="left", va="top",
                                   fontsize=13 * scale, family="DejaVu Sans")
        self.dynamic = []
        if run.colors.field.where != "none":
            self._colorbar(scale)

    def _colorbar(self, scale):
        from matplotlib.cm import ScalarMappable

        c = self.run.colors
        cax = self.fig.add_axes((0.87, 0.06, 0.022, 0.8))
        cb = self.fig.colorbar(ScalarMappable(norm=c.norm, cmap=c.cmap), cax=cax)
        if hasattr(c.norm, "boundaries"):  # categories (parts): a tick in each one's middle
            edges = c.norm.boundaries
            cb.set_ticks((edges[:-1] + edges[1:]) / 2)
            cb.set_ticklabels([str(int(round(v))) for v in (edges[:-1] + edges[1:]) / 2])
        cb.ax.tick_params(labelsize=9 * scale)
        cb.ax.yaxis.get_offset_text().set_fontsize(8 * scale)
        unit = UNITS.get(c.field.name)
        # the field's name above the bar, right-aligned, so that a long name stays in the picture
        self.fig.text(0.985, 0.985, c.field.name + (f" [{unit}]" if unit else ""), ha="right",
                      va="top", fontsize=11 * scale)

    def _draw_ground(self):
        run = self.run
        quads, normals, checker = run.ground_mesh
        xy, depth = run.view.project(quads)
        keep = (depth > 1e-3 * run.dist).all(axis=1)
        order = np.argsort(-depth[keep].mean(axis=1))
        rgb = np.array(GROUND_RGB)[checker[keep]]
        nc = self._to_cam(normals[keep])
        nc *= np.sign(nc[:, 2:3] + 1e-12)
        col = np.clip(rgb * (0.75 + 0.25 * np.clip(nc @ self.light, 0, None))[:, None], 0, 1)
        pc = self.PolyCollection(xy[keep][order], facecolors=col[order], edgecolors=col[order],
                                 linewidths=0.3, zorder=1)
        self.ax.add_collection(pc)
        # the ground does not move: draw it once, and keep the pixels as the background
        self.canvas.draw()
        background = np.asarray(self.canvas.buffer_rgba()).copy()
        pc.remove()
        self.fig.figimage(background, xo=0, yo=0, origin="upper", zorder=-1)

    def _to_cam(self, n):
        v = self.run.view
        return np.stack([n @ v.right, n @ v.up, -(n @ v.forward)], axis=-1)

    def draw(self, frame):
        """The frame as an (h, w, 3) uint8 image."""
        run = self.run
        for artist in self.dynamic:
            artist.remove()
        self.dynamic = []
        polys, normals, values, double = run.polygons(frame)
        view = run.view
        if len(polys):
            xy, depth = view.project(polys)
            near = (depth > 1e-3 * run.dist).all(axis=1)
            center = polys.mean(axis=1)
            to_eye = view.eye - center
            facing = np.einsum("ij,ij->i", normals, to_eye)
            normals = np.where((double & (facing < 0))[:, None], -normals, normals)
            keep = near & ((facing >= 0) | double)
            if run.shadows and run.ground is not None and run.ground_visible:
                self._draw_shadows(polys[keep])
            xy, depth, normals, values = xy[keep], depth[keep], normals[keep], values[keep]
            order = np.argsort(-depth.mean(axis=1), kind="stable")
            rgb = run.colors.rgb(values)
            col = _shade(rgb, self._to_cam(normals), self.light)[order]
            pc = self.PolyCollection(xy[order], facecolors=col, edgecolors=col,
                                     linewidths=0.25, zorder=3)
            self.ax.add_collection(pc)
            self.dynamic.append(pc)
        self.label.set_text(f"{run.name}    t = {frame.time:.{run.time_digits}f} s")
        self.canvas.draw()
        return np.asarray(self.canvas.buffer_rgba())[..., :3].copy()

    def _draw_shadows(self, polys):
        run = self.run
        flat = _on_ground(polys, run.ground, run.up)
        if flat is None or not len(flat):
            return
        xy, depth = run.view.project(flat)
        ok = (depth > 1e-3 * run.dist).all(axis=1)
        pc = self.PolyCollection(xy[ok], facecolors=SHADOW_RGB, edgecolors=SHADOW_RGB,
                                 linewidths=0.25, zorder=2)
        self.ax.add_collection(pc)
        self.dynamic.append(pc)


@dataclass
class _Colors:
    """A field mapped through a colour map with a range fixed for the whole run."""

    field: _Field
    cmap: object = None
    norm: object = None

    def rgb(self, values):
        if self.field.where == "none":
            return np.broadcast_to(np.array(BODY_RGB), (len(values), 3))
        return np.asarray(self.cmap(self.norm(values)))[:, :3]


class _Run:
    """Everything fixed over one run's pictures: frames, field, camera, ground, size."""

    def __init__(self, pvd, entries, *, color, camera, size, scene, sides,
                 min_width_px, radius_scale, value_range, shadows, quiet):
        self.name = os.path.splitext(os.path.basename(pvd))[0]
        self.entries = entries
        self.size = size
        self.sides = sides
        self.radius_scale = radius_scale
        self.min_width_px = min_width_px
        self.shadows = shadows
        cam = Camera.parse(camera)
        self.ground, self.up = (None, np.array([0.0, 0.0, 1.0]))
        if scene is not None:
            self.ground, self.up = read_scene(scene)
            # the scene's own camera, unless one was given here
            if camera is None or (isinstance(camera, str) and camera.strip().lower() == "fit"):
                cam = read_scene_camera(scene) or cam

        # pass 1: every frame, for the bounding box and the colour range (the same colours in
        # every picture of a run, whichever frames are drawn)
        first = read_frame(entries[0][1], entries[0][0])
        self.colors = _Colors(_resolve_field(color, first))
        lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
        vmin, vmax = np.inf, -np.inf
        times = []
        for k, (t, path) in enumerate(entries):
            fr = first if k == 0 else read_frame(path, t)
            times.append(fr.time)
            used = self._used_points(fr)
            if used.size:
                r = self.radius_scale * self._radii(fr)[used][:, None]
                lo = np.minimum(lo, (fr.points[used] - r).min(axis=0))
                hi = np.maximum(hi, (fr.points[used] + r).max(axis=0))
            if self.colors.field.where != "none":
                f = self.colors.field
                if f.array not in (fr.point_data if f.where == "point" else fr.cell_data):
                    raise RenderError(f"{path}: no array {f.array!r} (the first frame has it)")
                v = f.node_values(fr)
                v = v[used] if f.where == "point" and used.size else v
                if v.size:
                    vmin, vmax = min(vmin, np.nanmin(v)), max(vmax, np.nanmax(v))
        if not np.isfinite(lo).all():
            raise RenderError(f"{pvd}: no frame has a rod or a shell to draw")
        self.bbox = (lo, hi)
        steps = np.diff(np.array(times))
        steps = steps[np.isfinite(steps) & (steps > 0)]
        dt = steps.min() if steps.size else 1.0
        self.time_digits = int(min(6, max(0, math.ceil(-math.log10(dt) - 1e-9)))) if dt > 0 else 3

        self._setup_colors(value_range, vmin, vmax)
        region = (0.03, 0.03, 0.84 if self.colors.field.where != "none" else 0.97, 0.9)
        self.view, self.angles = _resolve_view(cam, self.bbox, self.up, size, region)
        self.target = cam.target if cam.target is not None else (lo + hi) / 2
        self.dist = float(np.linalg.norm(self.view.eye - self.target))
        self.ground_visible = False
        if self.ground is not None:
            self.ground_visible = _above_ground(self.view.eye, self.ground)
            if not self.ground_visible and not quiet:
                print("slender.render: the camera is below the ground; the ground is not drawn",
                      file=sys.stderr)
            half = 2.5 * max(np.ptp(np.stack([lo, hi]), axis=0).max(), 1e-3)
            self.ground_mesh = _ground_quads(self.ground, self.up, (lo + hi) / 2, half)

    def _setup_colors(self, value_range, vmin, vmax):
        from matplotlib import colormaps
        from matplotlib.colors import BoundaryNorm, Normalize

        f = self.colors.field
        if f.where == "none":
            return
        if value_range is not None:
            vmin, vmax = value_range
        elif not np.isfinite([vmin, vmax]).all():
            vmin, vmax = 0.0, 1.0
        elif f.name == "speed":
            vmin = 0.0  # a speed scale starts at rest
        if f.name == "part":  # categories
            lo, hi = int(math.floor(vmin)), int(math.ceil(vmax))
            n = hi - lo + 1
            self.colors.cmap = colormaps["tab10" if n <= 10 else "tab20"].resampled(max(n, 2))
            self.colors.norm = BoundaryNorm(np.arange(lo - 0.5, hi + 1.0), self.colors.cmap.N)
            return
        if vmax <= vmin:
            pad = abs(vmin) * 0.05 or 1.0
            vmin, vmax = vmin - pad, vmax + pad
        self.colors.cmap = colormaps["viridis"]
        self.colors.norm = Normalize(vmin=vmin, vmax=vmax, clip=True)

    @staticmethod
    def _used_points(fr):
        idx = [np.concatenate(fr.lines)] if fr.lines else []
        if len(fr.tris):
            idx.append(fr.tris.reshape(-1))
        return np.unique(np.concatenate(idx)) if idx else np.zeros(0, dtype=np.int64)

    @staticmethod
    def _radii(fr):
        r = fr.point_data.get("radius")
        if r is None or np.ndim(r) != 1:
            return np.zeros(len(fr.points))
        return np.asarray(r, dtype=float)

    def polygons(self, fr):
        """Every polygon of a frame as quads (n, 4, 3), with outward normals, values and
        whether each is two-sided (shell triangles) or one side of a closed tube."""
        f = self.colors.field
        vals = f.node_values(fr) if f.where != "none" else None
        radii = np.maximum(self._radii(fr) * self.radius_scale,
                           0.5 * self.min_width_px * self.view.pixel)
        quads, normals, values, double = [], [], [], []
        for cell, ids in zip(fr.line_cell, fr.lines):
            pts = fr.points[ids]
            closed = len(ids) > 3 and ids[0] == ids[-1]
            q, qn, caps, cn = _tube(pts, radii[ids], self.sides, closed)
            n_quads, n_caps = q.shape[0] * self.sides, caps.shape[0] * self.sides
            quads += [q.reshape(-1, 4, 3), caps.reshape(-1, 4, 3)]
            normals += [qn.reshape(-1, 3), np.repeat(cn, self.sides, axis=0)]
            if f.where == "point":
                mid = (vals[ids[:-1]] + vals[ids[1:]]) / 2
                ends = vals[[ids[0], ids[-1]]][: caps.shape[0]]
                values += [np.repeat(mid, self.sides), np.repeat(ends, self.sides)]
            else:
                v = vals[cell] if vals is not None else 0.0
                values += [np.full(n_quads, v), np.full(n_caps, v)]
            double.append(np.zeros(n_quads + n_caps, dtype=bool))
        if len(fr.tris):
            tri = fr.points[fr.tris]
            quads.append(np.concatenate([tri, tri[:, 2:3]], axis=1))
            normals.append(_unit(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])))
            if f.where == "point":
                values.append(vals[fr.tris].mean(axis=1))
            elif f.where == "cell":
                values.append(vals[fr.tri_cell])
            else:
                values.append(np.zeros(len(tri)))
            double.append(np.ones(len(tri), dtype=bool))
        if not quads:
            return (np.zeros((0, 4, 3)), np.zeros((0, 3)), np.zeros(0), np.zeros(0, dtype=bool))
        return (np.concatenate(quads), np.concatenate(normals),
                np.concatenate(values).astype(float), np.concatenate(double))


# ---------------------------------------------------------------------------------------------
# writing


def _partial(path):
    """A temporary name beside ``path`` with the same suffix (ffmpeg reads the format from it)."""
    d, base = os.path.split(os.path.abspath(path))
    stem, ext = os.path.splitext(base)
    return os.path.join(d, f".{stem}.{os.getpid()}.part{ext}")


def _prepare_file(path, what):
    """Create the folder of an output file and check that the file can be written."""
    path = os.path.abspath(os.fspath(path))
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.isdir(path):
            raise IsADirectoryError(21, "is a folder")
        tmp = _partial(path)
        with open(tmp, "wb"):
            pass
        os.remove(tmp)
    except OSError as e:
        raise RenderError(f"cannot write the {what} {path}: {e.strerror or e}") from None
    return path


def _prepare_dir(path):
    """Create a folder for stills and check that files can be written in it."""
    path = os.path.abspath(os.fspath(path))
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, f".slender-render-{os.getpid()}.probe")
        with open(probe, "wb"):
            pass
        os.remove(probe)
    except OSError as e:
        raise RenderError(f"cannot write stills into {path}: {e.strerror or e}") from None
    return path


def _save_png(image, path):
    """Write a PNG under a temporary name, then rename it: a still is whole or absent."""
    from PIL import Image

    tmp = _partial(path)
    try:
        Image.fromarray(image).save(tmp, format="PNG")
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        if isinstance(e, OSError):
            raise RenderError(f"cannot write {path}: {e.strerror or e}") from None
        raise


class _VideoWriter:
    """Frames to an MP4 (ffmpeg, H.264) or a GIF (Pillow), under a temporary name until
    ``close``; ``discard`` removes what was written."""

    def __init__(self, path, fps):
        self.path, self.fps = path, fps
        self.tmp = _partial(path)
        self.gif = path.lower().endswith(".gif")
        self.images = []  # a GIF's frames, kept until close
        if not self.gif:
            iio = _need("imageio.v2", "imageio imageio-ffmpeg")
            _need("imageio_ffmpeg", "imageio-ffmpeg")
            self.writer = iio.get_writer(self.tmp, format="FFMPEG", mode="I", fps=fps,
                                         codec="libx264", pixelformat="yuv420p", quality=8,
                                         macro_block_size=2, ffmpeg_log_level="error")

    def add(self, image):
        """Append one (h, w, 3) uint8 frame."""
        if self.gif:
            from PIL import Image

            self.images.append(Image.fromarray(image).convert("P",
                                                              palette=Image.Palette.ADAPTIVE))
        else:
            self.writer.append_data(image)

    def close(self):
        """Finish the file and give it its name."""
        if self.gif:
            first, rest = self.images[0], self.images[1:]
            first.save(self.tmp, format="GIF", save_all=True, append_images=rest, loop=0,
                       duration=max(20, int(round(1000 / self.fps))))
        else:
            self.writer.close()
        os.replace(self.tmp, self.path)

    def discard(self):
        """Stop and remove the unfinished file."""
        try:
            if not self.gif:
                self.writer.close()
        except Exception:  # noqa: BLE001 - the partial file goes either way
            pass
        if os.path.exists(self.tmp):
            os.remove(self.tmp)


# ---------------------------------------------------------------------------------------------
# the API and the command line


def _parse_size(size):
    if isinstance(size, str):
        try:
            w, h = (int(s) for s in size.lower().split("x"))
        except ValueError:
            raise RenderError(f"size {size!r}: expected WIDTHxHEIGHT, e.g. 800x600") from None
    else:
        w, h = (int(s) for s in size)
    if w < 64 or h < 64 or w > 8192 or h > 8192:
        raise RenderError(f"size {w}x{h}: width and height must be 64 to 8192 pixels")
    return w, h


def select_frames(n, every=1, frames=None):
    """Indices of the frames to draw: ``frames`` (negative from the end) or every k-th."""
    if frames is not None:
        out = []
        for i in frames:
            j = int(i) + n if int(i) < 0 else int(i)
            if not 0 <= j < n:
                raise RenderError(f"frame {i}: the run has {n} frames (0 to {n - 1}, or -1 "
                                  f"for the last)")
            out.append(j)
        return sorted(set(out))
    if int(every) < 1:
        raise RenderError(f"every {every}: must be >= 1")
    return list(range(0, n, int(every)))


class RunRenderer:
    """Draws the frames of one run (``out_dir``: a folder with one .pvd, or the .pvd itself)
    with one camera, one colour range and one size for all of them.

    Reading it goes once through every frame, for the bounding box that the camera is fitted
    to and for the colour range. Options as for ``render_run``.

        r = RunRenderer("out/rod_drop", scene="apps/scenes/rod_drop.json")
        img = r.image(-1)                       # (height, width, 3) uint8, the last frame
        xy = r.pixels(r.frame(-1).points)       # where its points are in that picture
    """

    def __init__(self, out_dir, *, color="speed", camera="fit", size=DEFAULT_SIZE, scene=None,
                 sides=12, min_width_px=2.0, radius_scale=1.0, value_range=None,
                 shadows=True, quiet=True):
        self.pvd = find_pvd(out_dir)
        self.entries = read_pvd(self.pvd)
        self.name = os.path.splitext(os.path.basename(self.pvd))[0]
        self.size = _parse_size(size)
        if int(sides) < 3:
            raise RenderError(f"sides {sides}: a tube needs at least 3")
        if not float(radius_scale) > 0 or not float(min_width_px) >= 0:
            raise RenderError("radius_scale must be > 0 and min_width_px >= 0")
        if value_range is not None:
            value_range = tuple(float(v) for v in value_range)
            if len(value_range) != 2 or not value_range[0] < value_range[1]:
                raise RenderError(f"range {value_range}: expected MIN,MAX with MIN < MAX")
        _need("matplotlib", "matplotlib")
        self._run = _Run(self.pvd, self.entries, color=color, camera=camera, size=self.size,
                         scene=scene, sides=int(sides), min_width_px=float(min_width_px),
                         radius_scale=float(radius_scale), value_range=value_range,
                         shadows=shadows, quiet=quiet)
        self._painter = None

    def __len__(self):
        return len(self.entries)

    @property
    def times(self):
        """The time of each frame, as the .pvd lists it."""
        return [t for t, _ in self.entries]

    @property
    def camera(self):
        """The camera in use: (azimuth, elevation) in degrees, distance and target in metres."""
        v = self._run.view
        return {"azimuth": self._run.angles[0], "elevation": self._run.angles[1],
                "distance": float(np.linalg.norm(v.eye - self._run.target)),
                "target": self._run.target.tolist()}

    @property
    def field(self):
        """The name of the field the bodies are coloured by ('none' for one colour)."""
        return self._run.colors.field.name

    def frame(self, k):
        """Frame k of the run (negative from the end), read from its file."""
        t, path = self.entries[select_frames(len(self.entries), frames=[k])[0]]
        return read_frame(path, t)

    def image(self, k):
        """Frame k drawn as an (height, width, 3) uint8 array."""
        if self._painter is None:
            self._painter = _Painter(self._run)
        return self._painter.draw(self.frame(k))

    def pixels(self, points):
        """Pixel coordinates (x to the right, y down, from the top-left corner) of world
        points (..., 3) in this renderer's pictures; NaN for points behind the camera."""
        v = self._run.view
        xy, depth = v.project(np.asarray(points, dtype=float))
        w, h = self.size
        px = (xy[..., 0] - v.xlim[0]) / (v.xlim[1] - v.xlim[0]) * w
        py = (v.ylim[1] - xy[..., 1]) / (v.ylim[1] - v.ylim[0]) * h
        out = np.stack([px, py], axis=-1)
        out[depth <= 0] = np.nan
        return out


def render_run(out_dir, video=None, stills_dir=None, *, color="speed", camera="fit", fps=None,
               size=DEFAULT_SIZE, every=1, frames=None, scene=None, sides=12, min_width_px=2.0,
               radius_scale=1.0, value_range=None, shadows=True, quiet=True):
    """Render the frames of the run in ``out_dir`` (a folder with one .pvd, or the .pvd).

    video: an .mp4 or .gif path to encode the frames into; stills_dir: a folder that gets one
    PNG per frame (``NAME_NNNNNN.png``, the frame's number). With neither, the video is
    ``out_dir/NAME.mp4``. color: 'speed', 'none' or the name of a PointData or CellData array
    (vectors by their magnitude). camera: 'fit', 'AZ,EL', 'AZ,EL,DIST' or 'AZ,EL,DIST,TX,TY,TZ'
    (degrees about the up direction, metres). fps: frames per second of the video (25).
    size: (width, height) or 'WxH'. every: draw every k-th frame; frames: or these indices
    (negative from the end). scene: the scene file, for its ground and gravity (up).
    sides: the sides of a tube; min_width_px: the thinnest a tube is drawn [pixels];
    radius_scale: scales every tube. value_range: (min, max) of the colour map, else the
    range over the whole run. quiet: False prints progress to stderr.

    Returns the paths written: the video first (if any), then the stills. A video is written
    under a temporary name and renamed when complete: a failure leaves none behind."""
    pvd = find_pvd(out_dir)
    entries = read_pvd(pvd)
    size = _parse_size(size)
    fps = DEFAULT_FPS if fps is None else float(fps)
    if not (0 < fps <= 240):
        raise RenderError(f"fps {fps}: must be in (0, 240]")
    idx = select_frames(len(entries), every, frames)
    name = os.path.splitext(os.path.basename(pvd))[0]
    if video is None and stills_dir is None:
        video = os.path.join(os.path.dirname(pvd), name + ".mp4")
    if video is not None:
        video = os.fspath(video)
        if not video.lower().endswith(VIDEO_SUFFIXES):
            raise RenderError(f"video {video}: the name must end in .mp4 or .gif")
        if video.lower().endswith(".mp4") and (size[0] % 2 or size[1] % 2):
            raise RenderError(f"size {size[0]}x{size[1]}: an MP4 needs an even width and "
                              f"height")
        if video.lower().endswith(".mp4"):
            _need("imageio", "imageio imageio-ffmpeg")
            _need("imageio_ffmpeg", "imageio-ffmpeg")
        video = _prepare_file(video, "video")
    _need("PIL", "pillow")
    if stills_dir is not None:
        stills_dir = _prepare_dir(stills_dir)

    renderer = RunRenderer(pvd, color=color, camera=camera, size=size, scene=scene, sides=sides,
                           min_width_px=min_width_px, radius_scale=radius_scale,
                           value_range=value_range, shadows=shadows, quiet=quiet)
    writer = _VideoWriter(video, fps) if video is not None else None
    written = []
    try:
        for n, k in enumerate(idx):
            image = renderer.image(k)
            if writer is not None:
                writer.add(image)
            if stills_dir is not None:
                png = os.path.join(stills_dir, f"{name}_{k:06d}.png")
                _save_png(image, png)
                written.append(png)
            if not quiet and len(idx) > 25 and ((n + 1) % 25 == 0 or n + 1 == len(idx)):
                print(f"slender.render: {n + 1}/{len(idx)} frames", file=sys.stderr)
        if writer is not None:
            writer.close()
            written.insert(0, video)
    except BaseException:
        if writer is not None:
            writer.discard()
        raise
    return written


def _parse_range(text):
    try:
        lo, hi = (float(s) for s in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected MIN,MAX") from None
    return lo, hi


def main(argv=None):
    """The command line: ``python3 -m slender.render OUT_DIR [options]``."""
    p = argparse.ArgumentParser(
        prog="python3 -m slender.render",
        description="Render a run's frames (OUT_DIR/NAME.pvd) headless into PNG stills and an "
                    "MP4 or GIF video. With neither --out nor --stills: OUT_DIR/NAME.mp4.")
    p.add_argument("out_dir", help="the run's output folder (or its .pvd file)")
    p.add_argument("--out", dest="video", metavar="VIDEO",
                   help="the video to write: .mp4 (H.264) or .gif")
    p.add_argument("--stills", metavar="DIR",
                   help="write each rendered frame as DIR/NAME_NNNNNN.png")
    p.add_argument("--scene", metavar="SCENE.json",
                   help="the scene file: draws its ground, and its gravity sets 'up'")
    p.add_argument("--color", default="speed",
                   help="speed (default), none, or a PointData/CellData array of the frames "
                        "(radius, curvature, twist, bending_energy_density, part, ...)")
    p.add_argument("--range", dest="value_range", type=_parse_range, metavar="MIN,MAX",
                   help="the colour map's range (default: the field's range over the run)")
    p.add_argument("--camera", default="fit",
                   help="fit (default), or AZ,EL[,DIST[,TX,TY,TZ]]: azimuth and elevation "
                        "[deg] about the up direction, distance [m] and target [m]; a "
                        "negative azimuth needs the = form: --camera=-60,30")
    p.add_argument("--fps", type=float, default=DEFAULT_FPS, help="video frames per second (25)")
    p.add_argument("--size", default="%dx%d" % DEFAULT_SIZE,
                   help="WIDTHxHEIGHT in pixels (800x600)")
    sel = p.add_mutually_exclusive_group()
    sel.add_argument("--every", type=int, default=1, metavar="K", help="every K-th frame")
    sel.add_argument("--frame", type=int, action="append", metavar="I",
                     help="only frame I (repeatable; -1 is the last)")
    p.add_argument("--sides", type=int, default=12, help="sides of a rod's tube (12)")
    p.add_argument("--radius-scale", type=float, default=1.0,
                   help="draw every rod this many times thicker")
    p.add_argument("--no-shadows", action="store_true", help="no shadows on the ground")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the paths written")
    args = p.parse_args(argv)
    try:
        paths = render_run(args.out_dir, video=args.video, stills_dir=args.stills,
                           color=args.color, camera=args.camera, fps=args.fps, size=args.size,
                           every=args.every, frames=args.frame, scene=args.scene,
                           sides=args.sides, radius_scale=args.radius_scale,
                           value_range=args.value_range, shadows=not args.no_shadows,
                           quiet=args.quiet)
    except RenderError as e:
        print(f"slender.render: error: {e}", file=sys.stderr)
        return 2
    stills = [q for q in paths if q.endswith(".png")]
    for q in paths:
        if not q.endswith(".png"):
            print(q)
    if stills:
        if args.quiet or len(stills) <= 3:
            print("\n".join(stills))
        else:
            print(f"{len(stills)} stills: {stills[0]} ... {stills[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
