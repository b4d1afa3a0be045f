"""The README's install lines as a new user meets them: specmath's wheel with [testing] in a fresh venv, no torch.

Steps, each timed and printed as it goes (``.ci/run`` runs this after ``make test``):

1. build specmath's sdist and wheel (``python -m build``: the wheel is built from the sdist, so both are checked);
   the wheel must hold every tracked file of ``specmath/`` but the trained weights (those are specmath-models',
   ``models/``), and nothing else;
2. a fresh venv (``python -m venv``, no site packages, no PYTHONPATH), ``pip install "specmath-V-py3-none-any.whl[testing]"``;
   torch must not be importable there, the entry points' modules must be;
3. in an empty folder outside the clone, the README's engineers' test file as written (``test_my_sampler.py``)
   against ``my_engine.py``, the correct rule and round of docs/how-to/test-your-sampler.md's complete test file:
   pytest passes both tests;
4. ``specmath verify --all``, ``specmath verify-rule my_engine:my_rule``, ``specmath audit my_engine:my_round --n 2000``
   and ``specmath audit --list`` exit 0; ``specmath bench`` says in one line which extra it needs and exits 2.

``--timings`` adds, in the same venv, medians of 5 of: ``import specmath``, ``import specmath.testing``,
``specmath --version``, and ``pytest --co -q`` on an empty test file with and without ``-p no:specmath`` (the
plugin's cost), each pair interleaved. ``--wheel FILE`` installs a wheel built elsewhere instead of step 1 (its
contents are still checked). ``--torch`` also builds specmath-models and installs ``specmath[models]`` (torch as
``.ci/constraints.txt`` pins it) into a second fresh venv, and loads the bundled pair and SmolLM2's n-gram table
from the installed package.

Run: .venv/bin/python scripts/wheel_install_check.py [--timings] [--torch] [--wheel FILE] [--keep DIR]
Exit status 0 when every check passes, 1 otherwise (each failure printed).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / ".ci" / "constraints.txt"
#: the folders of trained weights, which go into specmath-models and never into specmath's wheel
WEIGHT_DIRS = ("specmath/lm/bundled/", "specmath/lm/smollm2_draft/")

failures: list[str] = []


def check(ok: bool, what: str) -> bool:
    print(f"  {'ok  ' if ok else 'FAIL'} {what}", flush=True)
    if not ok:
        failures.append(what)
    return ok


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 900) -> tuple[subprocess.CompletedProcess, float]:
    """(the finished process, its wall seconds)."""
    result, wall, _ = run_timed(command, cwd, env, timeout)
    return result, wall


def run_timed(command: list[str], cwd: Path, env: dict[str, str] | None = None,
              timeout: int = 900) -> tuple[subprocess.CompletedProcess, float, float]:
    """(the finished process, wall seconds, CPU seconds: user + system of the child and its children)."""
    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    start, start_cpu = time.perf_counter(), cpu()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return result, time.perf_counter() - start, cpu() - start_cpu


def step(title: str) -> None:
    print(f"\n== {title}", flush=True)


def python_block(text: str, after: str) -> str:
    """The first ```python block after the line ``after``."""
    return re.findall(r"```python\n(.*?)```", text.split(after, 1)[1], flags=re.S)[0]


def clean_copy(dest: Path) -> Path:
    """The checkout's files (tracked, and untracked ones git does not ignore) copied into ``dest``, so a build sees
    what a fresh clone holds: a stale ``specmath.egg-info/SOURCES.txt`` left by an older editable install is read
    back by setuptools' sdist and would put files pyproject.toml now excludes (the weights) into the wheel."""
    if not dest.exists():
        listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout
        for name in filter(None, listed.split("\0")):
            source = ROOT / name
            if source.is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest / name)
    return dest


def build(out: Path, project: Path) -> tuple[Path, float]:
    """(the wheel, seconds): ``python -m build`` of ``project`` (a folder of a clean copy of the checkout, see
    ``clean_copy``) into the empty folder ``out``."""
    out.mkdir(parents=True)
    result, seconds = run([sys.executable, "-m", "build", "--outdir", str(out), str(project)], cwd=project)
    if result.returncode != 0:
        print(result.stdout[-3000:], result.stderr[-3000:])
        raise SystemExit(f"python -m build {project} failed")
    (wheel,) = out.glob("*.whl")
    return wheel, seconds


def packaged_files() -> set[str] | None:
    """What specmath's wheel must hold besides its dist-info: the tracked files of specmath/ but the weights, and
    the top-level modules pyproject.toml names; None outside a git checkout."""
    tracked = subprocess.run(["git", "ls-files", "specmath"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        return None
    modules = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"].get("py-modules", [])
    return {n for n in tracked.stdout.split() if not n.startswith(WEIGHT_DIRS)} | {f"{m}.py" for m in modules}


def check_wheel_contents(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    package = {n for n in names if not n.startswith("specmath-")}
    weights = sorted(n for n in package if n.startswith(WEIGHT_DIRS) or n.endswith((".safetensors", ".gguf", ".bin", ".pt")))
    check(not weights, f"no trained weights in {wheel.name} ({len(weights)} found{': ' + ', '.join(weights[:3]) if weights else ''})")
    wanted = packaged_files()
    if wanted is not None:
        missing, extra = sorted(wanted - package), sorted(package - wanted)
        check(not missing, f"every tracked file of specmath/ is in the wheel ({len(wanted)} files; missing: {missing[:5]})")
        check(not extra, f"nothing else is ({extra[:5]})")
    size = wheel.stat().st_size
    print(f"  {wheel.name}: {size:,} bytes, {len(names)} files ({len(package)} of the package)")


def fresh_venv(where: Path) -> tuple[Path, float]:
    result, seconds = run([sys.executable, "-m", "venv", str(where)], cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"python -m venv failed: {result.stderr}")
    return where / "bin", seconds


def user_env() -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH (the clone is not importable), offline hub."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    return {**env, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


def pip_install(bin_dir: Path, requirements: list[str], cwd: Path) -> float:
    command = [str(bin_dir / "python"), "-m", "pip", "install", "-q", "-c", str(CONSTRAINTS), *requirements]
    result, seconds = run(command, cwd=cwd, env=user_env(), timeout=1800)
    if not check(result.returncode == 0, f"pip install {' '.join(Path(r).name for r in requirements)} ({seconds:.1f} s)"):
        print(result.stdout[-3000:], result.stderr[-3000:])
        raise SystemExit(1)
    return seconds


def timings(bin_dir: Path, work: Path, repeats: int = 5) -> None:
    step(f"timings: medians of {repeats}, interleaved")
    py = str(bin_dir / "python")
    (work / "test_empty.py").write_text("", encoding="utf-8")
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "import specmath": [py, "-c", "import specmath"],
        "import specmath.testing": [py, "-c", "import specmath.testing"],
        "specmath --version": [str(bin_dir / "specmath"), "--version"],
        "pytest --co -q (empty file)": [py, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", "test_empty.py"],
        "pytest --co -q -p no:specmath": [py, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", "-p", "no:specmath",
                                          "test_empty.py"],
    }
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeats):
        for name, command in commands.items():
            _, seconds, cpu_seconds = run_timed(command, work, user_env())
            wall[name].append(seconds)
            cpu[name].append(cpu_seconds)
    medians = {name: (statistics.median(wall[name]), statistics.median(cpu[name])) for name in commands}
    print(f"  {'':34s} {'wall':>7s} {'CPU':>7s}")
    for name, (w, c) in medians.items():
        print(f"  {name:34s} {w:6.3f}s {c:6.3f}s   (wall runs: {', '.join(f'{v:.3f}' for v in wall[name])})")
    (w1, c1), (w0, c0) = medians["pytest --co -q (empty file)"], medians["pytest --co -q -p no:specmath"]
    print(f"  the plugin's cost: wall {w1 - w0:+.3f} s (ratio {w1 / w0:.2f}), CPU {c1 - c0:+.3f} s (ratio {c1 / c0:.2f})")
    # what the plugin makes pytest import, from -X importtime (each module once, with its own import time)
    imported = {}
    for flag in ([], ["-p", "no:specmath"]):
        trace = run([py, "-X", "importtime", *commands["pytest --co -q (empty file)"][1:-1], *flag, "test_empty.py"],
                    cwd=work, env=user_env())[0]
        lines = [line.split("|") for line in trace.stderr.splitlines() if line.startswith("import time:")]
        imported[bool(flag)] = {name.strip(): int(own.split(":")[1]) for own, _, name in lines[1:]}
    extra = {name: us for name, us in imported[False].items() if name not in imported[True]}
    tops = sorted({name.split(".")[0] for name in extra})
    print(f"  modules pytest imports because of the plugin: {len(extra)} ({', '.join(tops) or 'none'}), "
          f"{sum(extra.values()) / 1000:.0f} ms of their own import time")
    header = run([py, "-m", "pytest", "--co", "-p", "no:cacheprovider", "test_empty.py"], cwd=work, env=user_env())[0]
    print(f"  specmath's header line in a run without audits: {'yes' if 'specmath: audits run' in header.stdout else 'no'}")


def testing_user(bin_dir: Path, work: Path) -> None:
    step("the README's engineers' example and the torch-free commands, in the fresh venv")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    guide = (ROOT / "docs" / "how-to" / "test-your-sampler.md").read_text(encoding="utf-8")
    (work / "my_engine.py").write_text(python_block(guide, "## A complete test file"), encoding="utf-8")
    (work / "test_my_sampler.py").write_text(python_block(readme, "**Engineers.**"), encoding="utf-8")
    py, cli, env = str(bin_dir / "python"), str(bin_dir / "specmath"), user_env()
    probe = run([py, "-c", "import importlib.util as u, specmath; print(u.find_spec('torch') is None, specmath.__file__)"],
                cwd=work, env=env)[0]
    absent, where = (probe.stdout.split() + ["", ""])[:2]
    check(absent == "True", "torch is not importable in the venv")
    check(where.startswith(str(bin_dir.parent)), f"specmath is the wheel's ({where})")
    entry = ("import importlib.metadata as m, importlib.util as u\n"
             "eps = [e for e in m.distribution('specmath').entry_points]\n"
             "print(len(eps), [e.value for e in eps if u.find_spec(e.module) is None])")
    result = run([py, "-c", entry], cwd=work, env=env)[0]
    check(result.returncode == 0 and result.stdout.split(" ", 1)[1].strip() == "[]",
          f"every entry point's module is installed ({result.stdout.strip() or result.stderr.strip()[-200:]})")
    cases = [
        ("pytest test_my_sampler.py (the README's file as written)", [py, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                                                     "test_my_sampler.py"], 0, "2 passed"),
        ("specmath verify --all", [cli, "verify", "--all"], 0, "lossless"),
        ("specmath verify-rule my_engine:my_rule", [cli, "verify-rule", "my_engine:my_rule"], 0, "lossless"),
        ("specmath audit my_engine:my_round --n 2000", [cli, "audit", "my_engine:my_round", "--n", "2000"], 0, "PASS"),
        ("specmath audit --list", [cli, "audit", "--list"], 0, "reference"),
        ("specmath bench (needs torch)", [cli, "bench"], 2, 'install the extra specmath[torch] (from a clone: pip install ".[torch]")'),
    ]
    for title, command, status, expected in cases:
        result, seconds = run(command, cwd=work, env=env)
        output = result.stdout + result.stderr
        ok = result.returncode == status and expected in output and "Traceback" not in output
        if status == 2:
            ok = ok and len(output.strip().splitlines()) == 1
        if not check(ok, f"{title}: exit {result.returncode} ({seconds:.1f} s)"):
            print(output[-2000:])
        elif status == 2:
            print(f"       {output.strip()}")


def torch_user(out: Path, wheel: Path, tmp: Path) -> None:
    step("specmath[models] from the two wheels, torch as .ci/constraints.txt pins it, in a second fresh venv")
    models_wheel, seconds = build(out / "specmath-models", clean_copy(out.parent / "src") / "models")
    print(f"  built {models_wheel.name}: {models_wheel.stat().st_size:,} bytes ({seconds:.1f} s)")
    bin_dir, _ = fresh_venv(tmp / "venv-torch")
    pip_install(bin_dir, [f"{wheel}[models]", str(models_wheel)], cwd=tmp)
    code = ("from specmath.lm.bundled import bundled_dir, load_bundled_pair\n"
            "from specmath.lm.ngram_draft import NgramTable, default_table_file\n"
            "target, draft, tok = load_bundled_pair()\n"
            "table = NgramTable.load(default_table_file())\n"
            "print(bundled_dir()); print(default_table_file()); print(len(tok), sum(table.sizes().values()))")
    result, seconds = run([str(bin_dir / "python"), "-c", code], cwd=tmp, env=user_env())
    lines = result.stdout.split()
    ok = result.returncode == 0 and len(lines) == 4 and all("site-packages/specmath_models/" in line for line in lines[:2])
    if not check(ok, f"the bundled pair and the n-gram table load from specmath_models ({seconds:.1f} s)"):
        print(result.stdout[-2000:], result.stderr[-2000:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="install this wheel instead of building one")
    parser.add_argument("--timings", action="store_true", help="import times and the pytest plugin's cost, medians of 5")
    parser.add_argument("--torch", action="store_true", help="also install specmath[models] with torch in a second venv")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    tmp = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="specmath-wheel-"))
    tmp.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    try:
        step("specmath's wheel")
        if args.wheel:
            wheel = args.wheel.resolve()
        else:
            wheel, seconds = build(tmp / "dist" / "specmath", clean_copy(tmp / "src"))
            print(f"  python -m build: {seconds:.1f} s")
        check_wheel_contents(wheel)
        step("a fresh venv with specmath[testing] from the wheel")
        bin_dir, seconds = fresh_venv(tmp / "venv")
        print(f"  python -m venv: {seconds:.1f} s")
        work = tmp / "user"
        work.mkdir(exist_ok=True)
        pip_install(bin_dir, [f"{wheel}[testing]"], cwd=work)
        testing_user(bin_dir, work)
        if args.timings:
            timings(bin_dir, work)
        if args.torch:
            torch_user(tmp / "dist", wheel, tmp)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nwheel check: {'FAILED: ' + '; '.join(failures) if failures else 'every check passed'} "
          f"({time.perf_counter() - start:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
