"""What a claim about another project is: the engine, the version checked, the date, the status, how we know.

A tool that says another engine loses the target law must say exactly what it checked. A ``Claim`` names

* the engine and its repository, and the release or commit that was checked, and the date;
* its status, one of ``STATUSES``:

  - ``open``: the engine does it at that version, and no upstream change fixes it;
  - ``latent``: the code does it, but the engine's own configurations do not reach it (or reach it with
    a probability such as 2^-53 per draw);
  - ``unconfirmed``: seen in a review or on a tracker, not confirmed in the engine's current source;
  - ``fixed``: the engine did it, and ``fixed_by`` names the change that stopped it;
  - ``lossy by design``: the engine documents the rule as trading the target law for speed;
  - ``sound``: the engine does the right thing (a statement a page relies on, checked like the others);

* the evidence, one of ``EVIDENCE`` (run here, read in the source, read in the tracker), and ``where``:
  the file and lines at that version, the thread, or the command that was run;
* a reproducer where one exists (a command that shows it here), and for an open finding that nobody
  has filed upstream, a ready-to-file ``Report``.

The records are data: one JSON file per engine beside this module (``EngineRecords.from_json`` reads
one: the engine and its repository, a paragraph about what was read or run, then its claims, prose
either one string or a list of lines joined by spaces); ``docs/explanation/engine-findings.md`` is
written from them (``scripts/claim_pages.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from datetime import date
from pathlib import Path
from typing import Any

__all__ = ["STATUSES", "EVIDENCE", "GROUPS", "Report", "Claim", "EngineRecords"]

#: what a claim can say about the engine at the version checked (see the module docstring)
STATUSES = ("open", "latent", "unconfirmed", "fixed", "lossy by design", "sound")
#: how we know
EVIDENCE = ("run here", "read in the source", "read in the tracker")
#: the group a status falls in, as ``specmath bugzoo`` prints them
GROUPS = {"open": "engine bugs", "latent": "engine bugs", "unconfirmed": "engine bugs", "fixed": "fixed upstream",
          "lossy by design": "lossy by design", "sound": "sound"}
_KEY = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def _text(value: Any, joiner: str = " ") -> str:
    """Prose from a JSON record: a string, or a list of lines joined (by spaces; code by new lines)."""
    return joiner.join(value) if isinstance(value, list) else value


def _known(record: dict, names: set[str], what: str) -> None:
    unknown = set(record) - names
    if unknown:
        raise ValueError(f"{what} has fields {sorted(unknown)}; known: {sorted(names)}")


@dataclass(frozen=True)
class Report:
    """A finding written up as its upstream tracker would want it: title, versions, reproducer, expected, observed."""

    title: str
    versions: str  # the engine, its dependencies and the machine it was run on
    reproducer: str  # commands or code, verbatim (rendered as a code block)
    expected: str
    observed: str
    language: str = "bash"  # the reproducer's language, for the code block

    @classmethod
    def from_json(cls, record: dict) -> Report:
        _known(record, {f.name for f in fields(cls)}, "a report")
        return cls(**{k: _text(v, "\n" if k == "reproducer" else " ") for k, v in record.items()})


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One statement about another project, with its version, date, status and evidence (module docstring)."""

    key: str  # a slug, unique across every engine's module; pages refer to it as "claim KEY"
    engine: str  # the project as its users name it ("SGLang")
    repository: str  # owner/name on GitHub
    version: str  # the release or commit checked
    checked: date
    status: str  # one of STATUSES
    claim: str  # what the engine does, in the present tense of that version
    evidence: str  # one of EVIDENCE
    where: tuple[str, ...]  # file:lines at the version, the tracker thread, or the command that was run
    reproducer: str = ""  # a command that shows it here
    fixed_by: str = ""  # the change that fixed it (status "fixed")
    upstream: str = ""  # where it is tracked upstream ("owner/name#N"), if anywhere
    report: Report | None = None  # a ready-to-file report (open and not yet filed upstream)
    note: str = ""  # what was not checked, or what a reader should not conclude

    def __post_init__(self) -> None:
        problems = []
        if not _KEY.match(self.key):
            problems.append(f"key {self.key!r} is not a lower-case slug")
        if self.status not in STATUSES:
            problems.append(f"status {self.status!r} is not one of {STATUSES}")
        if self.evidence not in EVIDENCE:
            problems.append(f"evidence {self.evidence!r} is not one of {EVIDENCE}")
        if not isinstance(self.checked, date):
            problems.append("checked must be a datetime.date")
        if not (self.engine and self.repository and self.version and self.claim and self.where):
            problems.append("engine, repository, version, claim and where are all required")
        if self.status == "fixed" and not self.fixed_by:
            problems.append("a fixed claim names the change that fixed it (fixed_by)")
        if self.evidence == "run here" and not self.reproducer:
            problems.append("a claim run here carries the command that ran it (reproducer)")
        if self.status == "open" and not (self.upstream or self.report):
            problems.append("an open finding is tracked upstream or carries a ready-to-file report")
        if problems:
            raise ValueError(f"claim {self.key!r}: " + "; ".join(problems))

    @classmethod
    def from_json(cls, record: dict, engine: str, repository: str) -> Claim:
        """A claim from its JSON record; ``engine`` and ``repository`` are the file's, unless the record names its own."""
        _known(record, {f.name for f in fields(cls)}, f"claim {record.get('key')!r}")
        values = {"engine": engine, "repository": repository, **record}
        values["checked"] = date.fromisoformat(values["checked"])
        values["where"] = tuple(values["where"])
        if "report" in values:
            values["report"] = Report.from_json(values["report"])
        return cls(**{k: (_text(v) if k in ("claim", "fixed_by", "note", "version") else v) for k, v in values.items()})

    @property
    def group(self) -> str:
        """The group ``specmath bugzoo`` prints it in: engine bugs, fixed upstream, lossy by design, sound."""
        return GROUPS[self.status]

    def provenance(self) -> str:
        """One line: engine, version, date, status (and the fix), evidence."""
        status = f"fixed by {self.fixed_by}" if self.status == "fixed" else self.status
        return f"{self.engine}, {self.version}, checked {self.checked.isoformat()}: {status}; {self.evidence}"

    def to_json(self) -> dict:
        """Every field, the date as ISO text, the report as a dict (or None)."""
        out = {name: getattr(self, name) for name in ("key", "engine", "repository", "version", "status", "group",
                                                      "claim", "evidence", "reproducer", "fixed_by", "upstream", "note")}
        out["checked"] = self.checked.isoformat()
        out["where"] = list(self.where)
        out["report"] = None if self.report is None else dict(vars(self.report))
        return out


@dataclass(frozen=True)
class EngineRecords:
    """One engine's file: the engine, its repository, what was read or run (``about``), and its claims."""

    engine: str
    repository: str
    about: tuple[str, ...]  # paragraphs
    claims: tuple[Claim, ...]

    @classmethod
    def from_json(cls, path: Path) -> EngineRecords:
        import json

        record = json.loads(Path(path).read_text(encoding="utf-8"))
        _known(record, {"engine", "repository", "about", "claims"}, str(path))
        claims = tuple(Claim.from_json(c, record["engine"], record["repository"]) for c in record["claims"])
        return cls(record["engine"], record["repository"], tuple(_text(p) for p in record["about"]), claims)
