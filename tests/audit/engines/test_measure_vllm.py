"""scripts/measure_vllm.py's run logic, with fake engines: a crashed engine is replaced before the next row, every
row is written as it finishes, and each row runs at the N its tests need (vLLM itself is not needed here)."""

import json
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))  # measure_vllm

import measure_vllm  # noqa: E402

from specmath.audit.engines.checks import GenerateAudit  # noqa: E402
from specmath.sampling_options import SamplingOptions  # noqa: E402


class FakeOpened:
    """What ``open_engine`` returns, counting its closes."""

    def __init__(self, number: int) -> None:
        self.number, self.closed = number, 0
        self.engine = SimpleNamespace(info={"opened": number})
        self.description = f"fake engine {number}"

    def close(self) -> None:
        self.closed += 1


def _args(**kw):
    return SimpleNamespace(**{"n": None, "tv": 0.05, "seed": 0, "target": "bundled", **kw})


def test_an_offline_row_that_kills_the_engine_is_followed_by_a_fresh_engine(monkeypatch, tmp_path):
    opened, seen = [], []

    def open_engine(name, opening):
        opened.append(FakeOpened(len(opened)))
        return opened[-1]

    def run_row(engine, target, row, n, seed, target_tv):
        seen.append((row.name, engine.number, n))
        audit = GenerateAudit("vllm-ngram", "bundled", row.name, n or 8483)
        if row.name == "T=0.7 top-k 20":
            audit.error = "RuntimeError: selected index k out of range"
        elif row.name == "min-p 0.1":
            audit.refused = "ValueError: min_p is not yet supported with speculative decoding"
        return audit, SamplingOptions(1.0), 0.5

    monkeypatch.setattr(measure_vllm, "open_engine", open_engine)
    monkeypatch.setattr(measure_vllm, "run_row", run_row)
    path = tmp_path / "vllm-bundled.json"
    earlier = [{"engine_name": "vllm-ngram", "row": "min-p 0.1", "verdict": "an earlier run's"},
               {"engine_name": "vllm-draft", "row": "min-p 0.1", "verdict": "another engine's"}]
    target = SimpleNamespace(tokenizer=None)
    rows = ["T=1", "T=0.7 top-k 20", "min-p 0.1", "top-p 0.9"]
    records = measure_vllm.offline(_args(), "vllm-ngram", target, Path("draft"), rows, earlier, path)

    # the crash closes its engine and the next row opens another; the refusal does not (its engine lives on)
    assert [(name, number) for name, number, _ in seen] == [("T=1", 0), ("T=0.7 top-k 20", 0), ("min-p 0.1", 1),
                                                            ("top-p 0.9", 1)]
    assert [o.closed for o in opened] == [1, 1]
    # the T = 1 row at its fixed N, the others at the N their tests need (run_row's None)
    assert [n for *_, n in seen] == [measure_vllm.T1_CALLS, None, None, None]
    # an engine x row's new record replaces its old one; another engine's stays; the file holds what was returned
    assert [(r["engine_name"], r["row"]) for r in records] == [("vllm-draft", "min-p 0.1"), ("vllm-ngram", "T=1"),
                                                               ("vllm-ngram", "T=0.7 top-k 20"),
                                                               ("vllm-ngram", "min-p 0.1"), ("vllm-ngram", "top-p 0.9")]
    assert json.loads(path.read_text()) == json.loads(json.dumps(records))
    verdicts = {r["row"]: r["verdict"] for r in records if r["engine_name"] == "vllm-ngram"}
    assert verdicts["T=0.7 top-k 20"].startswith("ENGINE ERROR")
    assert verdicts["min-p 0.1"].startswith("REFUSED")
    assert [r["engine_info"] for r in records[1:]] == [{"opened": 0}, {"opened": 0}, {"opened": 1}, {"opened": 1}]


def test_every_row_is_written_as_it_finishes(monkeypatch, tmp_path):
    # a run cut short (killed at a later row) keeps the rows it finished
    path = tmp_path / "vllm-bundled.json"
    written = []

    def run_row(engine, target, row, n, seed, target_tv):
        written.append([r["row"] for r in json.loads(path.read_text())] if path.exists() else [])
        return GenerateAudit("vllm-draft", "bundled", row.name, 100), SamplingOptions(1.0), 0.5

    monkeypatch.setattr(measure_vllm, "open_engine", lambda name, opening: FakeOpened(0))
    monkeypatch.setattr(measure_vllm, "run_row", run_row)
    measure_vllm.offline(_args(), "vllm-draft", SimpleNamespace(tokenizer=None), Path("draft"),
                         ["T=1", "top-p 0.9", "presence 1.5"], [], path)
    assert written == [[], ["T=1"], ["T=1", "top-p 0.9"]]


def test_a_rows_n_is_the_one_asked_for_or_the_one_its_tests_need():
    assert measure_vllm.row_calls(_args(n=6000), "T=1") == 6000
    assert measure_vllm.row_calls(_args(n=6000), "presence 1.5") == 6000
    assert measure_vllm.row_calls(_args(), "T=1") == measure_vllm.T1_CALLS
    assert measure_vllm.row_calls(_args(), "presence 1.5") is None


def test_the_mixed_batch_runs_each_request_at_the_largest_n_its_five_requests_need(monkeypatch):
    needs = {r.options: n for r, n in zip(measure_vllm.MIXED, (3000, 4000, 9000, 5000, 6000), strict=True)}
    asked = []

    def n_for_tv(law, prompt, options, semantics, tv, most):
        asked.append((options, tv))
        return needs[options]

    def mixed_batch_audit(engine, name, law, prompt, requests, n, seed, control, control_engine):
        audit = GenerateAudit("vllm-ngram", name, "mixed batch", n * len(requests))
        audit.requests = [{"role": "engine"}]
        return audit

    monkeypatch.setattr(measure_vllm, "n_for_tv", n_for_tv)
    monkeypatch.setattr(measure_vllm, "mixed_batch_audit", mixed_batch_audit)
    engine = SimpleNamespace(semantics="vllm")
    opened = SimpleNamespace(engine=engine, control_engine=engine)
    target = SimpleNamespace(encode=lambda text: [1, 2, 3], reference=None, name="bundled")
    audit = measure_vllm.batch_row(opened, target, "mixed batch", _args())
    assert [o for o, _ in asked] == [r.options for r in measure_vllm.MIXED] and {tv for _, tv in asked} == {0.05}
    assert audit.n == 9000 * len(measure_vllm.MIXED)
    audit = measure_vllm.batch_row(opened, target, "mixed batch", _args(n=10000))  # --n: split over the five
    assert audit.n == 2000 * len(measure_vllm.MIXED)
