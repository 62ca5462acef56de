"""The docs stay true (issue 19, item 5): every fenced code block in docs/*.md and README.md is
run or checked, one test per block, named by file and line.

- ```python: runs as a script (python3, PYTHONPATH = the built module's folder).
- ```json: parses; a whole scene (materials and a part list) loads with slender.load_model.
  ```jsonc, and a fence without a language whose text starts like JSON: the `//` notes are
  removed, then the same checks.
- ```bash / ```sh: each command line that runs the slender program, python3 or a built bench
  runs and must exit with 0; set-up and build lines (scripts/*.sh, pip, apt-get, cmake, git),
  synopses with placeholders (SCENE.json, [--out DIR], ...) and pytest runs are skipped, each
  skip counted in the test's report.
- ```cpp: compiled against the built library and run; a block without `main` is wrapped in one
  (its #include lines kept in front, the public headers included).
- a fence without a language that is not JSON (error messages, geometry files) is text: counted,
  not run.

The blocks of one page share a working folder and run in the page's order, as a reader would
type them: the folder holds links `apps`, `bench`, `build`, `include`, `host`, `tests` to the
repository (so that `apps/scenes/...` and `./build/slender` work) and receives every output.

A marker on the line right before a fence changes how its block is treated:
    <!-- docs-test: skip (reason) -->          not run (a fragment, a long run, another machine)
    <!-- docs-test: parse-only (reason) -->    JSON that parses but is not loaded as a scene
    <!-- docs-test: save (NAME) -->             the block is also written to NAME in the page's
                                               folder, for the blocks after it (a scene file)
docs/rl.md is edited elsewhere, so its few exceptions are listed in EXCEPTIONS below, matched by
a text the block or the command line contains.

`python3 tests/python/test_docs.py` prints, without running anything, each page's blocks and
how each one is treated.
"""

import atexit
import glob
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def find_build():
    """$SLENDER_BUILD, else the build folder whose python/ the slender module comes from (as
    ctest sets PYTHONPATH), else build/."""
    if os.environ.get("SLENDER_BUILD"):
        return os.path.abspath(os.environ["SLENDER_BUILD"])
    try:
        import slender

        here = os.path.abspath(os.path.join(os.path.dirname(slender.__file__), "..", ".."))
        if os.path.exists(os.path.join(here, "slender")):
            return here
    except ImportError:
        pass
    return os.path.join(ROOT, "build")


BUILD = find_build()
BIN = os.environ.get("SLENDER_BIN", os.path.join(BUILD, "slender"))
PAGES = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) + [os.path.join(ROOT, "README.md")]
TIMEOUT_S = 120  # one block; the whole file takes well under a minute

MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(skip|parse-only|save)\s*(?:\((.*)\))?\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")

# pages whose exceptions are kept here rather than in markers (docs/rl.md is written elsewhere),
# by a text the block or the command line contains
EXCEPTIONS = {
    "docs/rl.md": {
        "apps/examples/snake_ppo.py": "trains for minutes; test_rl.py runs PPO",
        "PPO(": "trains PPO; test_rl.py does",
    },
}
# optional Python modules a block may import; without them the block is skipped
OPTIONAL_MODULES = ("gymnasium", "torch", "stable_baselines3", "ray", "matplotlib", "imageio",
                    "fmpy", "pxr")
# bash lines that set up or build rather than use Slender
SETUP_WORDS = ("./scripts/", "scripts/", "pip", "apt-get", "sudo", "cmake", "git", "ctest")
# placeholders of a synopsis: such a line shows a form, it is not a command to run
PLACEHOLDER = re.compile(r"\bSCENE\b|\bFILE\b|\bDIR\b|\.\.\.|\[--|\bADDR\b|\bN\b")


# ---- finding the blocks -------------------------------------------------------------------


class Block:
    def __init__(self, path, line, lang, text, marker):
        self.path, self.line, self.lang, self.text, self.marker = path, line, lang, text, marker

    @property
    def page(self):
        return os.path.relpath(self.path, ROOT)

    @property
    def id(self):
        return f"{self.page}:{self.line}"

    def kind(self):
        """python, json, jsonc, bash, cpp or text."""
        lang = self.lang.lower()
        if lang in ("python", "py"):
            return "python"
        if lang in ("bash", "sh", "shell", "console"):
            return "bash"
        if lang in ("cpp", "c++", "cxx"):
            return "cpp"
        if lang in ("json", "jsonc"):
            return lang
        if lang == "" and self.text.lstrip()[:1] in ("{", "[", '"'):
            return "jsonc"
        return "text"

    def exception(self):
        """(action, reason) from the block's marker or EXCEPTIONS, or None."""
        if self.marker:
            return self.marker
        if self.kind() != "bash":
            for key, why in EXCEPTIONS.get(self.page, {}).items():
                if key in self.text:
                    return ("skip", why)
        return None


def find_blocks(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        body = [ln[len(indent):] if ln.startswith(indent) else ln for ln in lines[i + 1:j]]
        marker = None
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        if k >= 0:
            mm = MARKER.match(lines[k])
            if mm:
                marker = (mm.group(1), mm.group(2) or "")
        blocks.append(Block(path, i + 1, lang, "\n".join(body) + "\n", marker))
        i = j + 1
    return blocks


ALL_BLOCKS = [b for p in PAGES for b in find_blocks(p)]


# ---- the working folder of each page ------------------------------------------------------

_workdirs = {}


def workdir(page):
    """One folder per page, with links to the repository's folders; kept for the session."""
    if page not in _workdirs:
        d = tempfile.mkdtemp(prefix="slender-docs-")
        atexit.register(shutil.rmtree, d, True)
        for name in ("apps", "bench", "include", "host", "tests"):
            os.symlink(os.path.join(ROOT, name), os.path.join(d, name))
        os.symlink(BUILD, os.path.join(d, "build"))
        _workdirs[page] = d
    return _workdirs[page]


def python_path():
    import slender  # the module under test: build/python, or wherever it was installed

    here = os.path.dirname(os.path.dirname(os.path.abspath(slender.__file__)))
    return os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])


def env_for_docs(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = python_path()
    env.setdefault("MPLBACKEND", "Agg")
    env.setdefault("OMP_NUM_THREADS", "2")
    env.update(extra or {})
    return env


def run(cmd, cwd, env, what, shell=False):
    try:
        r = subprocess.run(cmd, cwd=cwd, env=env, shell=shell, capture_output=True, text=True,
                           timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what}: still running after {TIMEOUT_S} s")
    if r.returncode != 0:
        pytest.fail(f"{what}: exit code {r.returncode}\n--- stdout\n{r.stdout[-3000:]}"
                    f"\n--- stderr\n{r.stderr[-3000:]}")
    return r


def missing_modules(text):
    return [m for m in OPTIONAL_MODULES
            if re.search(rf"^\s*(import|from)\s+{m}\b|^\s*import .*\b{m}\b", text, re.M)
            and importlib.util.find_spec(m) is None]


def needs_cuda(text):
    return re.search(r"""backend\s*=\s*["']cuda["']|--backend cuda""", text) is not None


def cuda_devices():
    import slender

    try:
        return slender.cuda_device_count()
    except Exception:  # a build without CUDA
        return 0


# ---- python ---------------------------------------------------------------------------------


def check_python(block):
    missing = missing_modules(block.text)
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    if needs_cuda(block.text) and cuda_devices() == 0:
        pytest.skip("needs a CUDA device")
    d = workdir(block.page)
    script = os.path.join(d, f"block_{block.line}.py")
    with open(script, "w") as f:
        f.write(block.text)
    run([sys.executable, script], d, env_for_docs(), block.id)


# ---- json -----------------------------------------------------------------------------------


def strip_notes(text):
    """The text without `//` notes (outside strings)."""
    out = []
    for line in text.split("\n"):
        in_str, esc, cut = False, False, len(line)
        for i, c in enumerate(line):
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = not in_str
            elif not in_str and line.startswith("//", i):
                cut = i
                break
        out.append(line[:cut])
    return "\n".join(out)


PART_KEYS = ("rods", "networks", "shells")


def check_json(block, notes):
    text = strip_notes(block.text) if notes else block.text
    stripped = text.strip()
    if stripped.startswith('"'):  # a member or members of an object: "key": value, ...
        text = "{" + stripped.rstrip(",") + "}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        pytest.fail(f"{block.id}: not JSON{' after removing // notes' if notes else ''}: {e}")
    is_scene = isinstance(value, dict) and "materials" in value and any(k in value
                                                                        for k in PART_KEYS)
    if not is_scene or (block.marker and block.marker[0] == "parse-only"):
        return
    import slender

    d = workdir(block.page)
    path = os.path.join(d, f"block_{block.line}.json")
    with open(path, "w") as f:
        json.dump(value, f)
    try:
        model = slender.load_model(path)
    except ValueError as e:
        pytest.fail(f"{block.id}: the scene does not load: {e}")
    assert model.ndof > 0


# ---- bash -----------------------------------------------------------------------------------


def bash_lines(text):
    """Command lines, continuations joined, with the line number within the block."""
    lines, cur, start = [], "", 0
    for n, raw in enumerate(text.split("\n")):
        if not cur:
            start = n
        if raw.rstrip().endswith("\\"):
            cur += raw.rstrip()[:-1] + " "
            continue
        cur += raw
        if cur.strip():
            lines.append((start, cur.strip()))
        cur = ""
    return lines


def command_words(line):
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return line.split()


def classify_bash(block, line):
    """('run', None), ('env', None) or ('skip', reason) for one command line."""
    words = command_words(line)
    if not words:
        return ("skip", "comment")
    for key, why in EXCEPTIONS.get(block.page, {}).items():
        if key in line:
            return ("skip", why)
    while words and re.match(r"^[A-Z_]+=", words[0]):  # VAR=value command
        words = words[1:]
    if not words:
        return ("env", None)
    head = words[0]
    if head == "export":
        return ("env", None)
    if head.startswith(SETUP_WORDS) or words[:3] == ["python3", "-m", "pip"]:
        return ("skip", "set-up or build")
    if "pytest" in words:
        return ("skip", "a test suite of its own")
    if PLACEHOLDER.search(line.split("#")[0]):
        return ("skip", "synopsis with placeholders")
    if head in ("head", "tail", "ls", "cat", "wc"):  # looking at outputs
        return ("run", None)
    if head in ("g++", "c++", "clang++") or (head.startswith("./") and "/" not in head[2:]):
        return ("run", None)  # compiling an example of the page, and running it
    if head in ("python3", "python") or head.endswith(("build/slender", "slender")) \
            or "/bench/" in head:
        if needs_cuda(line) and cuda_devices() == 0:
            return ("skip", "needs a CUDA device")
        return ("run", None)
    return ("skip", f"not a Slender command ({head})")


def check_bash(block):
    d = workdir(block.page)
    env = env_for_docs()
    ran, skipped = 0, []
    for n, line in bash_lines(block.text):
        action, why = classify_bash(block, line)
        if action == "env":
            for w in command_words(line):
                if re.match(r"^[A-Z_]+=", w):
                    key, val = w.split("=", 1)
                    if key == "PYTHONPATH":
                        val = os.pathsep.join([python_path(), val])
                    env[key] = val
            continue
        if action == "skip":
            skipped.append(f"line {block.line + 1 + n}: {why}")
            continue
        cmd = line if " #" not in line else line[:line.index(" #")]
        cmd = cmd.replace("PYTHONPATH=build/python", f"PYTHONPATH={python_path()}")
        cmd = cmd.replace("python3 ", f"{sys.executable} ", 1) if cmd.startswith("python3 ") \
            else cmd
        run(["bash", "-c", cmd], d, env, f"{block.page}:{block.line + 1 + n}: {line}")
        ran += 1
    if ran == 0:
        pytest.skip("; ".join(skipped) or "no command")


# ---- cpp ------------------------------------------------------------------------------------


def compile_flags():
    """Include folders of the built library (Eigen's as the build found it)."""
    flags = ["-I", os.path.join(ROOT, "include"), "-I", os.path.join(ROOT, "host"),
             "-I", os.path.join(BUILD, "generated")]
    eigen = "/usr/include/eigen3"
    try:
        with open(os.path.join(BUILD, "compile_commands.json")) as f:
            for entry in json.load(f):
                m = re.search(r"-isystem (\S*eigen3\S*)", entry.get("command", ""))
                if m:
                    eigen = m.group(1)
                    break
    except (OSError, ValueError):
        pass
    return flags + ["-isystem", eigen]


HEADERS = ("slender/builder.h", "slender/simulator.h", "slender/batch.h", "slender/run.h")


def as_program(text):
    if re.search(r"\bint\s+main\s*\(", text):
        return text
    lines = text.split("\n")
    head = [ln for ln in lines if ln.startswith("#include")]
    body = [ln for ln in lines if not ln.startswith("#include")]
    includes = [f'#include "{h}"' for h in HEADERS] + ["#include <cstdio>", "#include <iostream>"]
    return "\n".join(head + includes + ["int main() {"] + ["  " + ln for ln in body] + ["}"])


def check_cpp(block):
    lib = os.path.join(BUILD, "libslender_host.so")
    if not os.path.exists(lib):
        pytest.skip(f"no library at {lib} (build the project first)")
    d = workdir(block.page)
    src = os.path.join(d, f"block_{block.line}.cpp")
    exe = os.path.join(d, f"block_{block.line}")
    with open(src, "w") as f:
        f.write(as_program(block.text))
    cxx = os.environ.get("CXX", "g++")
    base = os.path.join(BUILD, "libslender_base.so")
    run([cxx, "-std=c++17", "-O0", *compile_flags(), src, "-o", exe, lib, base,
         f"-Wl,-rpath,{os.path.dirname(lib)}"], d, os.environ.copy(), f"{block.id}: compiling")
    run([exe], d, os.environ.copy(), f"{block.id}: running")


# ---- the tests ------------------------------------------------------------------------------


def treatment(block):
    """How a block is treated, in words (for the listing)."""
    exc = block.exception()
    if exc and exc[0] == "skip":
        return f"skipped: {exc[1]}"
    kind = block.kind()
    if kind == "bash":
        parts = []
        for n, line in bash_lines(block.text):
            action, why = classify_bash(block, line)
            if action != "env":
                parts.append("run" if action == "run" else f"skip ({why})")
        return "bash: " + ", ".join(parts)
    return {"python": "run", "cpp": "compiled and run", "json": "parsed, loaded if a scene",
            "jsonc": "parsed without // notes, loaded if a scene",
            "text": "text, not code"}[kind] + (f" ({exc[0]} {exc[1]})" if exc else "")


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=[b.id for b in ALL_BLOCKS])
def test_block(block):
    exc = block.exception()
    if exc and exc[0] == "save":
        with open(os.path.join(workdir(block.page), exc[1]), "w") as f:
            f.write(block.text)
    if exc and exc[0] == "skip":
        pytest.skip(exc[1])
    kind = block.kind()
    if kind == "text":
        pytest.skip("text, not code")
    if kind != "bash" and not os.path.exists(BIN):
        pytest.skip(f"no simulator at {BIN} (build the project first)")
    {"python": check_python, "json": lambda b: check_json(b, notes=False),
     "jsonc": lambda b: check_json(b, notes=True), "bash": check_bash,
     "cpp": check_cpp}[kind](block)


def test_every_page_is_on_the_index():
    """docs/index.md names every page of docs/."""
    with open(os.path.join(ROOT, "docs", "index.md")) as f:
        index = f.read()
    for page in glob.glob(os.path.join(ROOT, "docs", "*.md")):
        name = os.path.basename(page)
        if name != "index.md":
            assert f"({name})" in index, f"docs/index.md does not link {name}"


if __name__ == "__main__":
    counts = {}
    for b in ALL_BLOCKS:
        t = treatment(b)
        print(f"{b.id:32} {b.kind():6} {t}")
        c = counts.setdefault(b.page, [0, 0, 0])
        c[0] += 1
        runs = t.startswith("bash: ") and "run" in t[len("bash: "):].split(", ")
        checked = runs if t.startswith("bash: ") else not t.startswith(("skipped", "text"))
        c[1 if checked else 2] += 1
    print("\npage                      blocks  checked  skipped/text")
    for page, (n, ok, sk) in counts.items():
        print(f"{page:26} {n:6} {ok:8} {sk:8}")
