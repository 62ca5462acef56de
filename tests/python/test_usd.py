"""USD export (issue 52, item 2; docs/usd.md) read back with usd-core (`pxr`): a parachute (six
ropes as BasisCurves, a canopy as a Mesh) is run with `slender run --usd`, and the stage is
checked against the run's own VTK frames: its units, up axis and time codes, the points at
every time code, the widths, the topology of curves and mesh, the primvars; then
`slender export-usd` of the same run folder gives the same stage, a scene with gravity along -y
an up axis Y, and the Python package's Simulator.run(usd=...) and slender.export_usd do the
same. Skipped where usd-core is not installed (`pip install usd-core`)."""

import json
import os
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest

try:
    from pxr import Usd, UsdGeom
except ImportError:
    Usd = UsdGeom = None
# each test skipped, not the module: a module skipped as it is collected makes pytest exit with
# 5 (no tests collected), which the suite's runner would count as a failure
pytestmark = pytest.mark.skipif(Usd is None, reason="usd-core (pxr) is not installed")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCENES = os.path.join(ROOT, "apps", "scenes")
PARACHUTE = os.path.join(SCENES, "parachute.json")
BIN = os.environ.get("SLENDER_BIN", os.path.join(ROOT, "build", "slender"))
DT, EVERY = 0.005, 2  # the parachute's dt; records every 2nd step
ULP = 2.0**-23  # a float's relative spacing: USD stores floats, the frames print 12 digits


def _slender(*args, **kw):
    if not os.access(BIN, os.X_OK):
        pytest.skip(f"no simulator at {BIN} (build the project first)")
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=120,
                          **kw)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("usd") / "parachute"
    usd = out / "parachute_run.usda"
    res = _slender("run", PARACHUTE, "--out", out, "--duration", 0.03, "--every", EVERY,
                   "--usd", usd, "-q")
    assert res.returncode == 0, res.stderr
    return out, usd


def _frames(out):
    """(time, arrays by name, lines, polys) of each VTK frame, the cells as lists of node ids."""
    pvd = ET.parse(out / "parachute.pvd").getroot()
    frames = []
    for ds in pvd.iter("DataSet"):
        root = ET.parse(out / ds.get("file")).getroot()
        arrays, cells = {}, {}
        for section in root.iter():
            for da in section.findall("DataArray"):
                values = np.array(da.text.split(), dtype=np.float64)
                if section.tag in ("Lines", "Polys"):
                    cells.setdefault(section.tag, {})[da.get("Name")] = values.astype(int)
                else:
                    arrays[da.get("Name")] = values
        split = {}
        for tag, c in cells.items():
            ends = c["offsets"]
            starts = np.concatenate([[0], ends[:-1]])
            split[tag] = [tuple(c["connectivity"][b:e]) for b, e in zip(starts, ends)]
        frames.append((float(ds.get("timestep")), arrays, split.get("Lines", []),
                       split.get("Polys", [])))
    return frames


def _prims(stage, kind):
    return [p for p in stage.Traverse() if p.GetTypeName() == kind]


def _nodes(prim):
    return np.array(prim.GetAttribute("primvars:node").Get(), dtype=int)


def _same_floats(usd_values, exact):
    """the USD floats are the frame's numbers to one float spacing"""
    u = np.asarray(usd_values, dtype=np.float64)
    x = np.asarray(exact, dtype=np.float64)
    assert u.shape == x.shape
    assert np.all(np.abs(u - x) <= ULP * np.abs(x) + 1e-45), np.max(np.abs(u - x))


def test_stage_units_up_axis_and_time_codes(run):
    out, usd = run
    stage = Usd.Stage.Open(str(usd))
    frames = _frames(out)
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z  # gravity along -z
    tcps = stage.GetTimeCodesPerSecond()
    assert tcps == pytest.approx(1 / (EVERY * DT), rel=1e-12)  # one time code per record
    codes = [t * tcps for t, *_ in frames]
    assert stage.GetStartTimeCode() == pytest.approx(codes[0], abs=1e-9)
    assert stage.GetEndTimeCode() == pytest.approx(codes[-1], abs=1e-9)
    assert stage.GetDefaultPrim().GetName() == "parachute"
    assert len(frames) >= 4
    for prim in stage.Traverse():
        if prim.IsA(UsdGeom.PointBased):
            samples = UsdGeom.PointBased(prim).GetPointsAttr().GetTimeSamples()
            assert samples == pytest.approx(codes, abs=1e-9), prim.GetName()


def test_points_at_each_time_code_are_the_vtk_frames(run):
    out, usd = run
    stage = Usd.Stage.Open(str(usd))
    tcps = stage.GetTimeCodesPerSecond()
    curves, meshes = _prims(stage, "BasisCurves"), _prims(stage, "Mesh")
    assert [p.GetName() for p in curves] == [f"rope{i}" for i in range(6)]
    assert [p.GetName() for p in meshes] == ["canopy"]
    for t, arrays, _, _ in _frames(out):
        code = t * tcps
        x = arrays["position"].reshape(-1, 3)
        v = arrays["velocity"].reshape(-1, 3)
        for prim in curves + meshes:
            n = _nodes(prim)
            geom = UsdGeom.PointBased(prim)
            _same_floats(geom.GetPointsAttr().Get(code), x[n])
            _same_floats(geom.GetVelocitiesAttr().Get(code), v[n])
            speed = UsdGeom.PrimvarsAPI(prim).GetPrimvar("speed")
            assert speed.GetInterpolation() == "vertex"
            np.testing.assert_allclose(speed.Get(code), np.linalg.norm(v[n], axis=1),
                                       rtol=2 * ULP, atol=1e-30)
            # the extent bounds the points (and the curves' half widths)
            lo, hi = np.array(geom.GetExtentAttr().Get(code))
            pts = np.array(geom.GetPointsAttr().Get(code))
            assert np.all(pts >= lo) and np.all(pts <= hi)
        for prim in curves:
            for name in ("curvature", "twist", "twist_angle"):
                pv = UsdGeom.PrimvarsAPI(prim).GetPrimvar(name)
                _same_floats(pv.Get(code), arrays[name][_nodes(prim)])


def test_widths_and_topology_are_the_frames(run):
    out, usd = run
    stage = Usd.Stage.Open(str(usd))
    _, arrays, lines, polys = _frames(out)[0]
    radius = arrays["radius"]
    curves = []
    for prim in _prims(stage, "BasisCurves"):
        c = UsdGeom.BasisCurves(prim)
        assert c.GetTypeAttr().Get() == "linear"
        assert c.GetWidthsInterpolation() == "vertex"
        n = _nodes(prim)
        _same_floats(c.GetWidthsAttr().Get(), 2 * radius[n])
        counts = np.array(c.GetCurveVertexCountsAttr().Get())
        curves += [tuple(n[b:e]) for b, e in zip(np.cumsum(counts) - counts, np.cumsum(counts))]
    assert sorted(curves) == sorted(lines)  # the frames' polylines, one curve each
    (canopy,) = _prims(stage, "Mesh")
    mesh = UsdGeom.Mesh(canopy)
    assert mesh.GetSubdivisionSchemeAttr().Get() == "none"
    counts = np.array(mesh.GetFaceVertexCountsAttr().Get())
    assert np.all(counts == 3) and len(counts) == len(polys)
    n = _nodes(canopy)
    faces = n[np.array(mesh.GetFaceVertexIndicesAttr().Get())].reshape(-1, 3)
    assert [tuple(f) for f in faces] == polys  # same triangles, same winding, same order


def test_mesh_normals_and_energy_density(run):
    out, usd = run
    stage = Usd.Stage.Open(str(usd))
    tcps = stage.GetTimeCodesPerSecond()
    mesh = UsdGeom.Mesh(stage.GetPrimAtPath("/parachute/canopy"))
    assert mesh.GetNormalsInterpolation() == "vertex"
    idx = np.array(mesh.GetFaceVertexIndicesAttr().Get()).reshape(-1, 3)
    for t, arrays, lines, polys in _frames(out):
        code = t * tcps
        pts = np.array(mesh.GetPointsAttr().Get(code), dtype=np.float64)
        normals = np.array(mesh.GetNormalsAttr().Get(code))
        # area-weighted vertex normals of the triangles, from the stored points
        area = np.cross(pts[idx[:, 1]] - pts[idx[:, 0]], pts[idx[:, 2]] - pts[idx[:, 0]])
        want = np.zeros_like(pts)
        for k in range(3):
            np.add.at(want, idx[:, k], area)
        want /= np.linalg.norm(want, axis=1)[:, None]
        # (the stored normals come from the double positions: 1e-5 covers float points)
        np.testing.assert_allclose(normals, want, atol=1e-5)
        density = UsdGeom.PrimvarsAPI(mesh.GetPrim()).GetPrimvar("bending_energy_density")
        assert density.GetInterpolation() == "uniform"
        _same_floats(density.Get(code), arrays["bending_energy_density"][len(lines):])


def test_export_usd_of_the_run_folder_is_the_same_stage(run):
    out, usd = run
    exported = out / "exported.usda"
    res = _slender("export-usd", out, "--scene", PARACHUTE, "--out", exported)
    assert res.returncode == 0, res.stderr
    a, b = Usd.Stage.Open(str(usd)), Usd.Stage.Open(str(exported))
    assert b.GetTimeCodesPerSecond() == pytest.approx(a.GetTimeCodesPerSecond(), rel=1e-12)
    assert UsdGeom.GetStageUpAxis(b) == UsdGeom.GetStageUpAxis(a)
    paths = [p.GetPath() for p in a.Traverse()]
    assert paths == [p.GetPath() for p in b.Traverse()]
    for path in paths:
        pa, pb = a.GetPrimAtPath(path), b.GetPrimAtPath(path)
        if not pa.IsA(UsdGeom.PointBased):
            continue
        ta = UsdGeom.PointBased(pa).GetPointsAttr()
        tb = UsdGeom.PointBased(pb).GetPointsAttr()
        assert tb.GetTimeSamples() == pytest.approx(ta.GetTimeSamples(), abs=1e-9)
        for code in ta.GetTimeSamples():
            # the recorder rounds the doubles to floats, the export their 12 printed digits
            _same_floats(tb.Get(code), np.array(ta.Get(code)))


def test_up_axis_follows_gravity_and_names_are_escaped(tmp_path):
    with open(os.path.join(SCENES, "rod_drop.json")) as f:
        scene = json.load(f)
    scene["name"] = "rod drop #2"
    scene["forces"] = {"gravity": [0, -9.8, 0]}
    path = tmp_path / "sideways.json"
    path.write_text(json.dumps(scene))
    usd = tmp_path / "sideways.usda"
    res = _slender("run", path, "--out", tmp_path / "out", "--duration", 0.002, "--usd", usd, "-q")
    assert res.returncode == 0, res.stderr
    stage = Usd.Stage.Open(str(usd))
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y
    assert stage.GetPrimAtPath("/rod_drop__2/rod").IsA(UsdGeom.BasisCurves)
    # the export takes the up axis it is given
    res = _slender("export-usd", tmp_path / "out", "--up-axis", "z", "-q")
    assert res.returncode == 0, res.stderr
    exported = Usd.Stage.Open(str(tmp_path / "out" / "rod_drop__2.usda"))
    assert UsdGeom.GetStageUpAxis(exported) == UsdGeom.Tokens.z


def test_a_folder_without_frames_is_a_clear_error(tmp_path):
    res = _slender("export-usd", tmp_path)
    assert res.returncode == 2
    assert f"{tmp_path}: no .pvd series in this folder: no frames to export" in res.stderr
    res = _slender("export-usd", tmp_path / "missing")
    assert res.returncode == 2
    assert f"{tmp_path / 'missing'}: no such run folder" in res.stderr
    assert not list(tmp_path.iterdir())


def test_python_run_and_export_usd(tmp_path):
    slender = pytest.importorskip("slender")
    sim = slender.Simulator(slender.load_model(os.path.join(SCENES, "rod_drop.json")))
    usd = tmp_path / "py.usda"
    r = sim.run(out_dir=str(tmp_path / "out"), duration=0.005, every=5, usd=str(usd))
    assert r["ok"] and str(usd) in r["files"]
    stage = Usd.Stage.Open(str(usd))
    rod = UsdGeom.BasisCurves(stage.GetPrimAtPath("/rod_drop/rod"))
    last = rod.GetPointsAttr().GetTimeSamples()[-1]
    assert last == 1.0  # records at steps 0 and 5: one time code apart
    _same_floats(rod.GetPointsAttr().Get(last), np.asarray(sim.positions)[_nodes(rod.GetPrim())])
    # the export of the same folder, as `slender export-usd --up-axis y`
    d = slender.export_usd(tmp_path / "out", up_axis="y")
    assert d["frames"] == 2 and d["path"] == str(tmp_path / "out" / "rod_drop.usda")
    assert UsdGeom.GetStageUpAxis(Usd.Stage.Open(d["path"])) == UsdGeom.Tokens.y
    with pytest.raises(ValueError, match="no such run folder"):
        slender.export_usd(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="up_axis"):
        slender.export_usd(tmp_path / "out", up_axis="x")
