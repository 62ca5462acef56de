"""Pictures, videos and plots of a run (slender.render, slender.plot): a rod dropped on the
ground and a falling cloth are run with the simulator, then drawn; the images are checked for
their size, for not being blank, and for showing the body where the camera projects it (and
lower once it has fallen); the videos are read back for their frame count; bad input gets a
clear error and leaves no video behind."""

import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("PIL")
from PIL import Image  # noqa: E402

from slender import plot, render  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCENES = os.path.join(ROOT, "apps", "scenes")
ROD_DROP = os.path.join(SCENES, "rod_drop.json")
CLOTH = os.path.join(SCENES, "cloth_drop.json")
BIN = os.environ.get("SLENDER_BIN", os.path.join(ROOT, "build", "slender"))
SIZE = (320, 240)


def _run(scene, out, duration):
    if not os.access(BIN, os.X_OK):
        pytest.skip(f"no simulator at {BIN} (build the project first)")
    subprocess.run([BIN, "run", scene, "--out", str(out), "--duration", str(duration), "-q"],
                   check=True, timeout=120)
    return str(out)


@pytest.fixture(scope="module")
def rod_run(tmp_path_factory):
    """rod_drop: 0.3 s, 31 frames; the rod starts tilted 5 to 15 cm up and lies flat at the end."""
    return _run(ROD_DROP, tmp_path_factory.mktemp("rod_drop"), 0.3)


@pytest.fixture(scope="module")
def cloth_run(tmp_path_factory):
    """cloth_drop: a disk of shell triangles falling towards the ground, 0.06 s, 4 frames."""
    return _run(CLOTH, tmp_path_factory.mktemp("cloth_drop"), 0.06)


def _body_mask(img):
    """Pixels of the bodies drawn with --color none (orange): red well above blue."""
    return img[..., 0].astype(int) - img[..., 2].astype(int) > 60


def _near(mask, xy, r=2):
    x, y = int(round(xy[0])), int(round(xy[1]))
    return mask[max(0, y - r):y + r + 1, max(0, x - r):x + r + 1].any()


def test_rod_stills_show_the_rod_where_the_camera_sees_it(rod_run, tmp_path):
    r = render.RunRenderer(rod_run, color="none", scene=ROD_DROP, size=SIZE)
    assert len(r) == 31 and r.field == "none"
    centroids = []
    for k in (0, -1):
        img = r.image(k)
        assert img.shape == (SIZE[1], SIZE[0], 3) and img.dtype == np.uint8
        assert img.std() > 10  # not blank
        mask = _body_mask(img)
        assert mask.sum() > 200
        ys, xs = np.nonzero(mask)
        # the whole rod is in the picture, away from its borders (the camera fits the run)
        assert xs.min() > 2 and xs.max() < SIZE[0] - 3 and ys.min() > 2 and ys.max() < SIZE[1] - 3
        # every 5th node projects onto rod pixels
        px = r.pixels(r.frame(k).points)
        assert np.isfinite(px).all()
        assert all(_near(mask, p) for p in px[::5])
        centroids.append((xs.mean(), ys.mean()))
    (x0, y0), (x1, y1) = centroids
    w, h = SIZE
    assert 0.2 * w < x0 < 0.8 * w and 0.2 * h < y0 < 0.8 * h  # the start: mid-picture
    assert y1 > y0 + 0.1 * h  # it fell: lower in the picture
    assert abs(x1 - x0) < 0.15 * w


def test_stills_files_and_colour_by_speed(rod_run, tmp_path):
    out = tmp_path / "stills"
    paths = render.render_run(rod_run, stills_dir=out, frames=[0, 10, -1], scene=ROD_DROP,
                              size=SIZE)
    assert [os.path.basename(p) for p in paths] == [
        "rod_drop_000000.png", "rod_drop_000010.png", "rod_drop_000030.png"]
    for p in paths:
        with Image.open(p) as im:
            assert im.size == SIZE
            a = np.asarray(im.convert("RGB"))
        assert a.std() > 10
    # coloured by speed (viridis from 0 to the run's top speed): purple at rest, and at
    # t = 0.1 s, falling at about 1 m/s, towards teal
    def body_rgb(p):
        a = np.asarray(Image.open(p).convert("RGB")).astype(int)[:, : int(0.85 * SIZE[0])]
        coloured = a.max(axis=2) - a.min(axis=2) > 30  # not the grey ground, not the text
        assert coloured.sum() > 100
        return a[coloured].mean(axis=0)

    rest, falling = body_rgb(paths[0]), body_rgb(paths[1])
    assert rest[2] > rest[1] + 20  # blue above green: purple
    assert falling[1] > falling[0] + 20  # green above red: teal


def test_mp4_has_every_kth_frame(rod_run, tmp_path):
    iio = pytest.importorskip("imageio.v2")
    pytest.importorskip("imageio_ffmpeg")
    video = tmp_path / "drop.mp4"
    paths = render.render_run(rod_run, video=video, every=4, size=SIZE, fps=10)
    assert paths == [str(video)] and video.stat().st_size > 1000
    reader = iio.get_reader(str(video))
    try:
        assert reader.count_frames() == math.ceil(31 / 4)
        frame = reader.get_data(0)
        assert frame.shape == (SIZE[1], SIZE[0], 3) and frame.std() > 10
    finally:
        reader.close()
    assert sorted(os.listdir(tmp_path)) == ["drop.mp4"]  # no temporary file left


def test_cloth_gif_and_cell_field(cloth_run, tmp_path):
    gif = tmp_path / "cloth.gif"
    paths = render.render_run(cloth_run, video=gif, stills_dir=tmp_path / "png", scene=CLOTH,
                              color="bending_energy_density", size=SIZE)
    assert paths[0] == str(gif) and len(paths) == 1 + 4
    with Image.open(gif) as im:
        assert im.size == SIZE and im.n_frames == 4
    r = render.RunRenderer(cloth_run, color="none", scene=CLOTH, size=SIZE)
    img = r.image(-1)
    mask = _body_mask(img)
    assert mask.sum() > 0.03 * SIZE[0] * SIZE[1]  # a surface, not a line
    px = r.pixels(r.frame(-1).points)
    inside = sum(_near(mask, p) for p in px)
    assert inside > 0.9 * len(px)


def test_cli_renders_and_plots(rod_run, tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    res = subprocess.run([sys.executable, "-m", "slender.render", rod_run, "--stills",
                          str(tmp_path), "--frame", "-1", "--size", "200x160", "--color",
                          "radius", "--camera=-60,30", "-q"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    png = res.stdout.strip()
    assert png == str(tmp_path / "rod_drop_000030.png")
    with Image.open(png) as im:
        assert im.size == (200, 160)
    res = subprocess.run([sys.executable, "-m", "slender.plot", rod_run, "--out",
                          str(tmp_path / "plots")],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.split()) == 3


def test_the_slender_program_forwards_render_and_plot(tmp_path):
    # `slender run --render` ends with the run's video; `slender render` and `slender plot` are
    # the Python commands behind the C++ program; --render with --no-output is refused at once
    if not os.path.exists(BIN):
        pytest.skip("the slender program is not built")
    out = tmp_path / "run"
    res = subprocess.run([BIN, "run", os.path.join(SCENES, "rod_drop.json"), "--out", str(out),
                          "--duration", "0.05", "-q", "--render"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == str(out / "rod_drop.mp4")
    assert (out / "rod_drop.mp4").stat().st_size > 0
    res = subprocess.run([BIN, "plot", str(out), "--out", str(tmp_path / "plots")],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "plots" / "energies.png").exists()
    res = subprocess.run([BIN, "render", str(tmp_path / "nothing")], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode != 0 and "no such folder" in res.stderr
    res = subprocess.run([BIN, "run", os.path.join(SCENES, "rod_drop.json"), "--out",
                          str(tmp_path / "none"), "--no-output", "--render"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "--render" in res.stderr
    assert not (tmp_path / "none").exists()


def test_the_scene_gives_the_camera(rod_run, tmp_path):
    # output.camera of the scene is the camera unless one is given; the slender program takes
    # the same key (and checks it)
    with open(ROD_DROP) as f:
        scene = json.load(f)
    scene["output"]["camera"] = {"azimuth": -60, "elevation": 25, "distance": 0.5,
                                 "target": [0.1, 0, 0.02]}
    path = tmp_path / "with_camera.json"
    path.write_text(json.dumps(scene))
    cam = render.RunRenderer(rod_run, color="none", scene=str(path), size=SIZE).camera
    assert cam["azimuth"] == pytest.approx(-60) and cam["elevation"] == pytest.approx(25)
    assert cam["distance"] == pytest.approx(0.5)
    assert cam["target"] == pytest.approx([0.1, 0, 0.02])
    given = render.RunRenderer(rod_run, color="none", scene=str(path), size=SIZE,
                               camera="30,10").camera
    assert given["azimuth"] == pytest.approx(30)
    if os.path.exists(BIN):
        res = subprocess.run([BIN, "info", str(path)], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        del scene["output"]["camera"]["distance"]
        path.write_text(json.dumps(scene))
        res = subprocess.run([BIN, "info", str(path)], capture_output=True, text=True)
        assert res.returncode == 2 and "output.camera.target" in res.stderr
        with pytest.raises(render.RenderError, match="needs a distance"):
            render.RunRenderer(rod_run, color="none", scene=str(path), size=SIZE)


def test_plots(rod_run, tmp_path):
    paths = plot.plot_run(rod_run, out=tmp_path, size=(600, 400))
    assert [os.path.basename(p) for p in paths] == [
        "energies.png", "nodes_rod_n0.png", "nodes_rod_n50.png"]
    for p in paths:
        with Image.open(p) as im:
            assert im.size == (600, 400)
            assert np.asarray(im.convert("L")).std() > 5
    assert plot.node_groups(["time", "a_b_n-1_x", "n31_vz", "energy"]) == {
        "a_b_n-1": {"x": 1}, "n31": {"vz": 2}, "other": {"energy": 3}}


def test_plot_errors(tmp_path):
    with pytest.raises(plot.PlotError, match="neither energies.csv nor nodes.csv"):
        plot.plot_run(tmp_path)
    (tmp_path / "energies.csv").write_text("time,kinetic\n0,1\n0.1,abc\n")
    with pytest.raises(plot.PlotError, match=r"energies.csv:3: column 'kinetic' holds 'abc'"):
        plot.plot_run(tmp_path)
    (tmp_path / "energies.csv").write_text("time,kinetic\n0,1,2\n")
    with pytest.raises(plot.PlotError, match=r"energies.csv:2: 3 values"):
        plot.plot_run(tmp_path)


def test_render_errors(rod_run, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(render.RenderError, match="no .pvd file"):
        render.render_run(empty)
    with pytest.raises(render.RenderError, match="no such folder"):
        render.render_run(tmp_path / "missing")
    with pytest.raises(render.RenderError,
                       match=r"no field 'stress' .* available: none, speed, .*radius"):
        render.render_run(rod_run, stills_dir=tmp_path / "s", color="stress")
    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(render.RenderError, match="cannot write the video"):
        render.render_run(rod_run, video=afile / "x.mp4")
    with pytest.raises(render.RenderError, match="cannot write stills"):
        render.render_run(rod_run, stills_dir=afile / "stills")
    with pytest.raises(render.RenderError, match=r"must end in \.mp4 or \.gif"):
        render.render_run(rod_run, video=tmp_path / "x.avi")
    with pytest.raises(render.RenderError, match="camera"):
        render.render_run(rod_run, stills_dir=tmp_path / "s", camera="10,north")
    with pytest.raises(render.RenderError, match="frame 99: the run has 31 frames"):
        render.render_run(rod_run, stills_dir=tmp_path / "s", frames=[99])
    with pytest.raises(render.RenderError, match="size"):
        render.render_run(rod_run, video=tmp_path / "odd.mp4", size="321x240")


def test_a_bad_frame_is_named_and_leaves_no_video(rod_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(rod_run, run)
    bad = run / "frames" / "rod_drop_000020.vtp"
    text = bad.read_text()
    bad.write_text(text[: len(text) // 2])  # cut off mid-file, as by a full disk
    video = tmp_path / "out" / "v.mp4"
    with pytest.raises(render.RenderError, match=r"rod_drop_000020\.vtp: not a readable"):
        render.render_run(run, video=video, size=SIZE)
    assert not video.exists() and os.listdir(video.parent) == []
    bad.write_text(text.replace("0.001 0.001", "0.001 oops", 1))
    with pytest.raises(render.RenderError,
                       match=r"rod_drop_000020\.vtp: PointData array 'radius' holds 'oops'"):
        render.render_run(run, video=video, size=SIZE)
    bad.write_text(text)
    os.remove(run / "frames" / "rod_drop_000007.vtp")
    with pytest.raises(render.RenderError, match=r"rod_drop_000007\.vtp: cannot read"):
        render.render_run(run, video=video, size=SIZE)
    assert not video.exists() and os.listdir(video.parent) == []
    assert render.main([str(run), "--out", str(video)]) == 2


def test_a_failure_while_encoding_leaves_no_video(rod_run, tmp_path, monkeypatch):
    pytest.importorskip("imageio_ffmpeg")
    read = render.read_frame
    calls = []

    def failing(path, time=None):
        calls.append(path)
        if len(calls) > 31 + 3:  # the first pass, then three frames into the video
            raise render.RenderError(f"{path}: made to fail")
        return read(path, time)

    monkeypatch.setattr(render, "read_frame", failing)
    for name in ("v.mp4", "v.gif"):
        with pytest.raises(render.RenderError, match="made to fail"):
            render.render_run(rod_run, video=tmp_path / name, size=SIZE)
        calls.clear()
    assert os.listdir(tmp_path) == []


def test_ground_and_camera_parsing(tmp_path):
    scene = tmp_path / "s.json"
    scene.write_text('{"forces": {"gravity": [0, 0, -9.81], "ground": {"type": "wavy", '
                     '"amplitude": 0.01, "length_x": 0.5, "phase_y": 1.5707963}}}')
    g, up = render.read_scene(scene)
    assert g.wavy and np.allclose(up, [0, 0, 1])
    assert np.isclose(g.height(np.array([0.125]), np.array([3.0]))[0], 0.01)
    scene.write_text('{"forces": {"ground": {"normal": [0, 0, 0]}}}')
    with pytest.raises(render.RenderError, match="normal is zero"):
        render.read_scene(scene)
    scene.write_text('{"forces": {"ground": ')
    with pytest.raises(render.RenderError, match="not valid JSON"):
        render.read_scene(scene)
    cam = render.Camera.parse("30,20,1.5,0,0,0.1")
    assert (cam.azimuth, cam.elevation, cam.distance) == (30, 20, 1.5)
    assert np.allclose(cam.target, [0, 0, 0.1])
    assert render.Camera.parse("fit").azimuth is None
    with pytest.raises(render.RenderError, match="distance must be > 0"):
        render.Camera.parse("30,20,-1")


def test_plot_takes_a_folder_whose_name_is_not_utf8(rod_run, tmp_path):
    # issue 49, item 10: a byte that is not UTF-8 in the run folder's name (kept by Python as a
    # lone surrogate) ended `slender plot` in a matplotlib traceback; the title shows U+FFFD
    odd = os.fsdecode(os.path.join(os.fsencode(str(tmp_path)), b"run\xff"))
    shutil.copytree(rod_run, odd)
    written = plot.plot_run(odd, out=str(tmp_path / "plots"))
    assert len(written) == 3 and all(os.path.getsize(p) > 0 for p in written)
    # the command line, its plots under the folder (its printed paths are the folder's bytes)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    res = subprocess.run([sys.executable, "-m", "slender.plot", odd], capture_output=True,
                         env=env, timeout=120)
    assert res.returncode == 0, res.stderr.decode(errors="replace")
    assert res.stdout.split(b"\n")[0].startswith(os.fsencode(odd))
