"""The mutation check: apply each realistic bug of tests/mutants.toml to a clean copy of the tree, run the
tests that must catch it, and say which did; `make mutants` runs it, CI too.

    python scripts/mutants.py                   # every mutant, two at a time; exit 1 if one survives
    python scripts/mutants.py --only g-test-dof no-min-one --jobs 1
    python scripts/mutants.py --list            # the table: name, file, bug
    python scripts/mutants.py --json results.json   # also every outcome, the machine and the load, as JSON

For each mutant: the search text must occur exactly once in its file; the file of a private copy of the
tree (the files git tracks or would track, as they are in the working tree) gets the replacement; the
mutant's tests run there with ``pytest -x`` (``PYTHONPATH`` = the copy, so the copy's ``specmath`` is the
one imported); a mutant is *killed* when a test fails, a *survivor* when every test passes, and an *error*
when pytest could not run them (a collection error, no such test, a timeout): an error is no kill, so the
table must name tests that exist and run. Mutants of the exact side (``verify = true``) also run
``specmath verify --all``, whose exit status and summary line are reported beside (a lossless mutant,
such as a round without its bonus token, is rightly LOSSLESS there). Then the file is restored byte for
byte, so the next mutant starts from a clean tree.

Why a curated table rather than mutmut or cosmic-ray (both on PyPI): those generate every syntactic
mutation of every line (thousands here: each operator, constant and comparison of 20,000 lines) and run
the whole suite, or its covering tests, for each; most mutants are equivalent or absurd (a shape check
flipped), and at a few seconds per mutant the run takes hours, not the 6 minutes CI allows. The bugs that
matter here are the ones that ship in speculative decoders (resampling from p, the bonus from the wrong
row, u <= p/q, a warp on one side only, a G-test's degrees of freedom): a table of them, each with the
direct test that must catch it, is small enough to run on every CI build and says, when one survives,
exactly which claim has no test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own dependency reads TOML the same way
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "tests" / "mutants.toml"
#: one mutant's tests (or its verify --all) may run this long before the mutant counts as an error
TIMEOUT_S = 240
#: the fields a table entry has, and the groups it may be in
FIELDS = {"name", "group", "bug", "file", "search", "replace", "tests", "verify"}
GROUPS = ("core", "torch", "statistics", "audit")


@dataclass(frozen=True)
class Mutant:
    """One realistic bug: replace ``search`` (exactly once in ``file``) by ``replace``; ``tests`` must fail."""

    name: str
    group: str
    bug: str
    file: str
    search: str
    replace: str
    tests: tuple[str, ...]
    verify: bool = False

    def apply(self, text: str) -> str:
        """The file's text with the bug in; ValueError unless the search text occurs exactly once."""
        found = text.count(self.search)
        if found != 1:
            raise ValueError(f"mutant {self.name}: the search text occurs {found} times in {self.file}, not once")
        return text.replace(self.search, self.replace)


@dataclass
class Outcome:
    """What the tests (and verify --all) did with one mutant."""

    name: str
    file: str
    status: str  # killed | survived | error
    killed_by: str = ""  # the first failing test's node id
    detail: str = ""  # the error, or the survivor's test summary line
    verify_status: int | None = None  # exit status of `specmath verify --all` (verify = true only)
    verify_line: str = ""  # its summary line (or the last line it wrote)
    seconds: float = 0.0
    verify_seconds: float = 0.0
    tests: list[str] = field(default_factory=list)


def load_table(path: Path = TABLE) -> list[Mutant]:
    """The table's mutants, checked: known fields and groups, unique names, a search text and tests each."""
    with open(path, "rb") as f:
        entries = tomllib.load(f)["mutant"]
    mutants, names = [], set()
    for entry in entries:
        unknown = set(entry) - FIELDS
        missing = FIELDS - {"verify"} - set(entry)
        if unknown or missing:
            raise ValueError(f"mutant {entry.get('name', '?')}: unknown fields {sorted(unknown)}, missing {sorted(missing)}")
        if entry["group"] not in GROUPS:
            raise ValueError(f"mutant {entry['name']}: group {entry['group']!r} is not one of {', '.join(GROUPS)}")
        if entry["name"] in names:
            raise ValueError(f"mutant {entry['name']} is listed twice")
        if not entry["search"] or entry["search"] == entry["replace"] or not entry["tests"]:
            raise ValueError(f"mutant {entry['name']}: needs a search text, a different replacement and tests")
        names.add(entry["name"])
        mutants.append(Mutant(**{**entry, "tests": tuple(entry["tests"])}))
    return mutants


def tree_files(root: Path) -> list[str]:
    """The files git tracks, or would track (untracked but not ignored), as they are in the working tree."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=root,
                         capture_output=True, check=True).stdout
    return [name for name in out.decode().split("\0") if name and (root / name).is_file()]


def copy_tree(root: Path, into: Path) -> Path:
    """A private copy of the tree's files under ``into`` (no caches, no build outputs)."""
    for name in tree_files(root):
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)
    return into


def _forget_bytecode(source: Path) -> None:
    # a pyc is trusted when its source's size and mtime (whole seconds) match: a same-size mutant written
    # within the second would run the old code, so the mutated module's cached bytecode is removed
    for pyc in (source.parent / "__pycache__").glob(f"{source.stem}.*.pyc"):
        pyc.unlink()


#: what every mutant's run sets: the copy's specmath first on the path, one torch thread, no model hub
RUN_ENVIRONMENT = {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                   "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
#: imported once by the forking runner before any mutant, so that each forked run imports only specmath and
#: the tests (a fresh interpreter spends 2-8 s of CPU on these, most of a mutant's time)
PRELOAD = ("numpy", "scipy.stats", "scipy.optimize", "sympy", "hypothesis", "pytest", "torch", "transformers")


def pytest_arguments(mutant: Mutant) -> list[str]:
    """``pytest -x`` over the mutant's tests, quiet, the failing node ids listed (-rf), no cache written."""
    # a forked run finds pytest's plugins (hypothesis, anyio) imported already: not rewriting their asserts is fine
    return ["-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-rf", "--no-header",
            "-W", "ignore::pytest.PytestAssertRewriteWarning", *mutant.tests]


def read_pytest(status: int | None, output: str) -> tuple[str, str, str]:
    """(status, killed_by, detail) from pytest's exit status and output: 1 with a FAILED line is a kill,
    0 a survivor, anything else (a collection error, no such test, a timeout) an error."""
    failed = re.findall(r"^FAILED (\S+)", output, flags=re.M)
    last = output.strip().splitlines()[-1] if output.strip() else ""
    if status == 1 and failed:
        return "killed", failed[0], last
    if status == 0:
        return "survived", "", last
    return "error", "", f"pytest exit {status}: {last}" if status is not None else f"timed out after {TIMEOUT_S} s"


def read_verify(status: int | None, output: str) -> str:
    """The summary line of ``specmath verify --all``, with the names it found NOT LOSSLESS or in ERROR."""
    if status is None:
        return f"timed out after {TIMEOUT_S} s"
    lines = output.strip().splitlines()
    summary = next((line for line in reversed(lines) if "samplers lossless" in line), lines[-1] if lines else "")
    off = [line.split(":")[0] for line in lines if re.match(r"^\S+: ERROR ", line)]
    lossy, current = [], None
    for line in lines:
        if line and not line.startswith(" "):
            current = line.split(":")[0]
        elif line.strip() == "verdict: NOT LOSSLESS":
            lossy.append(current)
    named = "; ".join(part for part in (f"NOT LOSSLESS: {', '.join(lossy)}" if lossy else "",
                                         f"ERROR: {', '.join(off)}" if off else "") if part)
    return f"{summary} ({named})" if named else summary


class Run:
    """One run in a tree copy (the mutant's tests, or verify --all), its output in a log file; ``poll`` gives
    its exit status once it ended, None while it runs; ``kill`` ends it and everything it started."""

    def __init__(self, kind: str, arguments: list[str], copy: Path, log: Path, fork: bool) -> None:
        self.kind, self.log, self.started = kind, log, time.perf_counter()
        environment = {**RUN_ENVIRONMENT, "PYTHONPATH": str(copy)}
        if fork:
            sys.stdout.flush()
            sys.stderr.flush()
            self.pid = os.fork()
            if self.pid == 0:
                _forked_run(kind, arguments, copy, log, environment)
            self.process = None
        else:
            command = [sys.executable, "-m", "pytest" if kind == "pytest" else "specmath", *arguments]
            with open(log, "wb") as out:
                self.process = subprocess.Popen(command, cwd=copy, env={**os.environ, **environment}, stdout=out,
                                                stderr=subprocess.STDOUT, start_new_session=True)
            self.pid = self.process.pid

    def poll(self) -> int | None:
        if self.process is not None:
            return self.process.poll()
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        return None if pid == 0 else os.waitstatus_to_exitcode(status)

    def kill(self) -> None:
        try:
            os.killpg(self.pid, 9)
        except ProcessLookupError:
            pass
        if self.process is not None:
            self.process.wait()
        else:
            os.waitpid(self.pid, 0)

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def _forked_run(kind: str, arguments: list[str], copy: Path, log: Path, environment: dict) -> None:
    """In the forked child: the copy first on the path, output to the log, pytest or the CLI in-process; exit."""
    status = 3
    try:
        os.setpgrp()  # its own process group, so a timeout ends whatever the tests started too
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.chdir(copy)
        os.environ.update(environment)  # subprocesses the tests start import the copy's specmath too
        sys.path.insert(0, str(copy))
        if kind == "pytest":
            import pytest

            status = int(pytest.main(arguments))
        else:
            from specmath.cli import main

            status = int(main(arguments))
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def preload() -> None:
    """Import the heavy third-party modules once, before forking (never specmath: each run imports its copy's)."""
    import importlib

    os.environ.update(RUN_ENVIRONMENT)
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    if "specmath" in sys.modules:
        raise RuntimeError("specmath was imported before forking: the runs would test it, not their copies")


@dataclass
class _Job:
    """A mutant being checked in one tree copy: its file's original bytes, its outcome so far, its run."""

    mutant: Mutant
    copy: Path
    original: bytes
    outcome: Outcome
    run: Run | None = None


def run_all(mutants: list[Mutant], root: Path, jobs: int, with_verify: bool, fork: bool,
            report=print) -> list[Outcome]:
    """Every mutant, ``jobs`` at a time (one private copy of the tree per job); outcomes in the table's order.

    ``fork``: each run is a fork of this process after ``preload`` (fast); else a fresh interpreter."""
    scratch = Path(tempfile.mkdtemp(prefix="specmath-mutants-"))
    try:
        free = [copy_tree(root, scratch / f"tree{j}") for j in range(jobs)]
        if fork:
            preload()
        waiting, running, done = list(mutants), [], {}
        while waiting or running:
            while waiting and free:
                job = _start(waiting.pop(0), free.pop(0), scratch, fork)
                if job.run is None:
                    _finish(job, free, done, report)
                else:
                    running.append(job)
            time.sleep(0.02)
            for job in list(running):
                if _advance(job, scratch, with_verify, fork):
                    running.remove(job)
                    _finish(job, free, done, report)
        return [done[m.name] for m in mutants]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _start(mutant: Mutant, copy: Path, scratch: Path, fork: bool) -> _Job:
    """Write the mutant into the copy and start its tests (no run when the search text is not there once)."""
    path = copy / mutant.file
    job = _Job(mutant, copy, path.read_bytes(), Outcome(mutant.name, mutant.file, "error", tests=list(mutant.tests)))
    try:
        path.write_text(mutant.apply(job.original.decode()), encoding="utf-8")
    except ValueError as exc:
        job.outcome.detail = str(exc)
        return job
    _forget_bytecode(path)
    job.run = Run("pytest", pytest_arguments(mutant), copy, scratch / f"{copy.name}.log", fork)
    return job


def _advance(job: _Job, scratch: Path, with_verify: bool, fork: bool) -> bool:
    """Move a job on when its run ended (or timed out): read the tests, start verify --all; True when done."""
    status = job.run.poll()
    seconds = time.perf_counter() - job.run.started
    if status is None and seconds < TIMEOUT_S:
        return False
    if status is None:
        job.run.kill()
    output = job.run.output()
    o = job.outcome
    if job.run.kind == "pytest":
        o.status, o.killed_by, o.detail = read_pytest(status, output)
        o.seconds = seconds
        if job.mutant.verify and with_verify:
            job.run = Run("verify", ["verify", "--all"], job.copy, scratch / f"{job.copy.name}.log", fork)
            return False
        return True
    o.verify_status, o.verify_line, o.verify_seconds = status, read_verify(status, output), seconds
    return True


def _finish(job: _Job, free: list, done: dict, report) -> None:
    """Restore the mutated file byte for byte (checked), free the copy, report the outcome."""
    path = job.copy / job.mutant.file
    path.write_bytes(job.original)
    _forget_bytecode(path)
    if path.read_bytes() != job.original:
        raise RuntimeError(f"{job.mutant.file} was not restored after mutant {job.mutant.name}")
    free.append(job.copy)
    done[job.mutant.name] = job.outcome
    report(line_of(job.outcome))


def line_of(outcome: Outcome) -> str:
    """``killed   name (file, 3.1 s) by test; verify: exit 1 ...`` for one mutant."""
    where = f"({outcome.file}, {outcome.seconds:.1f} s)"
    what = f"by {outcome.killed_by}" if outcome.status == "killed" else outcome.detail
    verify = "" if outcome.verify_status is None else (
        f"\n{'':9}verify --all: exit {outcome.verify_status}, {outcome.verify_line} ({outcome.verify_seconds:.1f} s)")
    return f"{outcome.status:<9}{outcome.name} {where} {what}{verify}"


def summary(outcomes: list[Outcome], seconds: float) -> str:
    """The score, then every survivor and every error with what its tests printed."""
    killed = sum(o.status == "killed" for o in outcomes)
    lines = [f"score: {killed} of {len(outcomes)} mutants killed by their tests ({seconds:.0f} s)"]
    for o in outcomes:
        if o.status != "killed":
            lines.append(f"  {o.status.upper()}: {o.name} ({o.file}): {o.detail}; tests: {' '.join(o.tests)}")
    return "\n".join(lines)


def machine() -> dict:
    """The machine a run's seconds belong to: the CPU model, its cores, the date (UTC) and the commit."""
    model = platform.processor() or platform.machine()
    try:
        model = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    return {"cpu": model, "cores": os.cpu_count(), "platform": platform.machine(), "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d", time.gmtime()), "commit": commit.strip()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run these mutants only")
    parser.add_argument("--jobs", type=int, default=2, help="mutants at a time, one tree copy each (default 2)")
    parser.add_argument("--list", action="store_true", help="print the table and exit")
    parser.add_argument("--no-verify", action="store_true", help="skip specmath verify --all for the exact side")
    parser.add_argument("--no-fork", action="store_true",
                        help="run each in a fresh interpreter instead of a fork of a preloaded one (slower)")
    parser.add_argument("--json", type=Path, help="also write every outcome to this JSON file")
    parser.add_argument("--label", default="", help="what else ran beside it, for the JSON record (e.g. 'quiet')")
    parser.add_argument("--root", type=Path, default=ROOT, help="the tree to mutate (default: this checkout)")
    parser.add_argument("--table", type=Path, default=TABLE, help="the table (default: tests/mutants.toml)")
    args = parser.parse_args(argv)
    mutants = load_table(args.table)
    if args.list:
        for m in mutants:
            print(f"{m.name:<38}{m.group:<11}{m.file:<42}{m.bug}")
        return 0
    if args.only:
        unknown = sorted(set(args.only) - {m.name for m in mutants})
        if unknown:
            print(f"unknown mutants: {', '.join(unknown)}; see --list", file=sys.stderr)
            return 2
        mutants = [m for m in mutants if m.name in args.only]
    if args.jobs < 1:
        print(f"--jobs must be an int >= 1, got {args.jobs}", file=sys.stderr)
        return 2
    print(f"{len(mutants)} mutants, {args.jobs} at a time, each on a clean copy of {args.root}"
          f"{'' if hasattr(os, 'fork') and not args.no_fork else ', each in a fresh interpreter'}", flush=True)
    start, load = time.perf_counter(), os.getloadavg()
    fork = hasattr(os, "fork") and not args.no_fork
    outcomes = run_all(mutants, args.root.resolve(), args.jobs, not args.no_verify, fork,
                       report=lambda line: print(line, flush=True))
    seconds = time.perf_counter() - start
    print(summary(outcomes, seconds))
    if args.json:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)  # every run, forked or not, is a waited-for child
        record = {"label": args.label, "seconds": seconds, "cpu_seconds": children.ru_utime + children.ru_stime,
                  "jobs": args.jobs, "machine": machine(), "load_average": [load, os.getloadavg()],
                  "command": "python scripts/mutants.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                  "mutants": [asdict(o) for o in outcomes]}
        args.json.write_text(json.dumps(record, indent=2) + "\n")
    return 0 if all(o.status == "killed" for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
