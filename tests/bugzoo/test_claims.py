"""Every claim about another engine is a complete record: version, date, status, evidence, where, and more by status."""

import json
from dataclasses import replace
from datetime import date

import pytest

from specmath.bugzoo import BUGS, TREE_BUGS
from specmath.bugzoo.claims import (
    CLAIMS,
    ENGINE_FILES,
    ENGINES,
    EVIDENCE,
    STATUSES,
    Claim,
    EngineRecords,
    Report,
    claims_by_key,
)


def _claim(**changes) -> Claim:
    fields = dict(key="x-y", engine="X", repository="o/x", version="1.0", checked=date(2026, 12, 1), status="latent",
                  claim="does y", evidence="read in the source", where=("x.py lines 1-2",))
    return Claim(**{**fields, **changes})


@pytest.mark.parametrize("key", sorted(CLAIMS))
def test_each_claim_names_version_date_status_evidence_and_where(key):
    claim = CLAIMS[key]
    assert claim.key == key and claim.status in STATUSES and claim.evidence in EVIDENCE
    assert claim.engine and claim.repository.count("/") == 1 and claim.version and claim.where
    assert isinstance(claim.checked, date) and claim.checked.year >= 2026
    if claim.status == "fixed":
        assert claim.fixed_by
    if claim.evidence == "run here":
        assert claim.reproducer
    if claim.status == "open":
        assert claim.upstream or claim.report
    if claim.report is not None:
        assert all(vars(claim.report).values())


def test_every_open_finding_that_nobody_filed_has_a_ready_to_file_report():
    unfiled = [c.key for c in CLAIMS.values() if c.status == "open" and not c.upstream]
    assert unfiled and all(CLAIMS[k].report is not None for k in unfiled)
    assert {"node-llama-cpp-penalty-at-predictions", "transformers-zero-residual",
            "medusa-typical-type-error"} <= set(unfiled)
    assert CLAIMS["transformers-accept-at-u-zero"].status == "fixed"  # by transformers 5.25.0, run here


def test_a_record_without_what_its_status_needs_is_refused_with_the_problem_named():
    with pytest.raises(ValueError, match="names the change that fixed it"):
        _claim(status="fixed")
    with pytest.raises(ValueError, match="carries the command that ran it"):
        _claim(evidence="run here")
    with pytest.raises(ValueError, match="ready-to-file report"):
        _claim(status="open")
    with pytest.raises(ValueError, match="status 'buggy' is not one of"):
        _claim(status="buggy")
    with pytest.raises(ValueError, match="not a lower-case slug"):
        _claim(key="X Y")
    report = Report("t", "v", "r", "e", "o")
    assert _claim(status="open", report=report).group == "engine bugs"
    assert _claim(status="lossy by design").group == "lossy by design"


def test_claims_are_joined_from_the_engines_files_and_a_key_is_refused_twice():
    assert list(CLAIMS.values()) == [c for engine in ENGINES for c in engine.claims]
    assert len(ENGINES) == len(ENGINE_FILES) and all(engine.about and engine.claims for engine in ENGINES)
    with pytest.raises(ValueError, match="two claims are keyed"):
        claims_by_key(ENGINES[0].claims, ENGINES[0].claims[:1])


def test_an_engine_file_is_read_strictly(tmp_path):
    record = {"key": "x-y", "version": "1.0", "checked": "2026-12-01", "status": "latent", "evidence": "read in the source",
              "claim": ["does y", "at row 2"], "where": ["x.py lines 1-2"]}
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"engine": "X", "repository": "o/x", "about": ["read"], "claims": [record]}))
    engine = EngineRecords.from_json(path)
    assert engine.claims[0].claim == "does y at row 2" and engine.claims[0].checked == date(2026, 12, 1)
    path.write_text(json.dumps({"engine": "X", "repository": "o/x", "about": [], "claims": [{**record, "stauts": "x"}]}))
    with pytest.raises(ValueError, match=r"has fields \['stauts'\]"):
        EngineRecords.from_json(path)


def test_every_zoo_entry_has_a_registered_claim_or_says_what_it_is_modelled_on():
    entries = [*BUGS.values(), *TREE_BUGS]
    for entry in entries:
        if entry.claim is not None:
            assert CLAIMS[entry.claim.key] is entry.claim
        else:
            assert entry.modelled_on and entry.group == "modelled (no engine claimed)"
    assert {e.group for e in entries} == {"engine bugs", "lossy by design", "fixed upstream", "modelled (no engine claimed)"}
    with pytest.raises(ValueError, match="exactly one of claim and modelled_on"):
        replace(BUGS["residual-softmax"], modelled_on="something")


def test_the_json_of_a_claim_carries_every_field():
    claim = CLAIMS["medusa-typical-type-error"]
    out = claim.to_json()
    assert out["checked"] == "2026-12-01" and out["status"] == "open" and out["report"]["title"]
    assert set(out) == {f for f in Claim.__dataclass_fields__} | {"group"}
