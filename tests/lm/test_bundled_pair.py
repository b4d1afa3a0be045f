"""The bundled character-level pair: loads without pickle, one vocabulary, shapes, determinism, sizes,
the model card's numbers reproduced from the committed weights, and the training script end to end.

Notation: p = target law, q = draft law, alpha = sum_x min(p(x), q(x)).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from specmath.lm.bundled import WEIGHT_FILES, bundled_dir, load_bundled_pair  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "train_bundled_pair.py"
VOCAB = 100


def _script():
    if str(SCRIPT.parent) not in sys.path:  # the script imports its sibling bundled_pair_metrics
        sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("train_bundled_pair", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    # batch-1 forwards of tiny models: a second thread only adds synchronisation (5x slower on shared cores);
    # when .ci/run sets SPECMATH_TORCH_THREADS the session's thread count is the point, so keep it
    if os.environ.get("SPECMATH_TORCH_THREADS"):
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def pair():
    return load_bundled_pair()


@pytest.fixture(scope="module")
def metrics():
    return json.loads((bundled_dir() / "metrics.json").read_text())["metrics"]


def test_bundled_pair_loads_from_safetensors_without_calling_torch_load(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("torch.load (pickle) was called")

    monkeypatch.setattr(torch, "load", refuse)
    target, draft, tokenizer = load_bundled_pair()
    assert target.config.num_hidden_layers > draft.config.num_hidden_layers == 1
    pickles = [p for p in bundled_dir().rglob("*") if p.suffix in {".bin", ".pt", ".pth", ".pkl", ".ckpt"}]
    assert pickles == []


def test_target_draft_and_tokenizer_share_one_100_symbol_vocabulary(pair):
    target, draft, tokenizer = pair
    assert len(tokenizer) == target.config.vocab_size == draft.config.vocab_size == VOCAB
    assert target.get_output_embeddings().weight.shape[0] == draft.get_output_embeddings().weight.shape[0] == VOCAB


def test_tokenizer_round_trips_ascii_one_id_per_character_and_marks_other_characters_unknown(pair):
    _, _, tokenizer = pair
    text = "Everyone is permitted to copy\n  and distribute verbatim copies (GPL-3)!"
    ids = tokenizer(text, add_special_tokens=False).input_ids
    assert len(ids) == len(text)
    assert tokenizer.decode(ids) == text
    assert tokenizer.decode(tokenizer("a\x0cb").input_ids) == "a\nb"  # form feed -> newline
    assert tokenizer("é").input_ids == [tokenizer.unk_token_id]


def test_forward_shapes_are_batch_by_length_by_vocabulary(pair):
    target, draft, _ = pair
    x = torch.randint(4, VOCAB, (3, 17), generator=torch.Generator().manual_seed(0))
    assert target(x).logits.shape == draft(x).logits.shape == (3, 17, VOCAB)


def test_greedy_continuation_reproduces_the_one_recorded_at_training_time(pair, metrics):
    target, draft, tokenizer = pair
    script = _script()
    recorded = metrics["greedy"]
    assert script.greedy_continuation(target, tokenizer, recorded["prompt"], 40) == recorded["target"]
    assert script.greedy_continuation(draft, tokenizer, recorded["prompt"], 40) == recorded["draft"]


def test_seeded_sampling_gives_the_same_tokens_twice_and_other_tokens_for_another_seed(pair):
    target, _, tokenizer = pair
    ids = tokenizer("the Program", return_tensors="pt").input_ids.repeat(4, 1)

    def sample(seed):
        gen, out = torch.Generator().manual_seed(seed), ids
        with torch.no_grad():
            for _ in range(8):
                probs = torch.softmax(target(out).logits[:, -1], -1)
                out = torch.cat([out, torch.multinomial(probs, 1, generator=gen)], dim=1)
        return out

    assert torch.equal(sample(1), sample(1))
    assert not torch.equal(sample(1), sample(2))


def test_weight_files_total_at_most_20_mb():
    sizes = [(bundled_dir() / rel).stat().st_size for rel in WEIGHT_FILES]
    total = sum(p.stat().st_size for p in bundled_dir().rglob("*") if p.is_file())
    assert all(s > 0 for s in sizes)
    assert total <= 20 * 1024 * 1024


def test_model_card_alpha_is_reproduced_from_the_committed_weights(pair, metrics):
    # alpha = E[sum_x min(p(x), q(x))] over the held-out tenth of the corpus, at the training window length
    target, draft, tokenizer = pair
    script = _script()
    _, held = script.load_corpus(tokenizer)
    seq = json.loads((bundled_dir() / "metrics.json").read_text())["args"]["seq"]
    again = script.held_out_metrics(target, draft, held, seq)
    assert again["alpha_held_out"] == pytest.approx(metrics["alpha_held_out"], abs=1e-4)
    assert again["target_nats_per_char"] == pytest.approx(metrics["target_nats_per_char"], abs=1e-4)
    # the target learned the corpus: far below log(100) = 4.6 nats of a uniform guess
    assert again["target_nats_per_char"] < 2.0


def test_training_corpus_files_are_shipped_and_inside_the_vocabulary():
    script = _script()
    for name in script.CORPUS_FILES:
        path = script.CORPUS_DIR / f"{name}.txt"
        assert path.is_file() and path.stat().st_size > 5000
        assert "verbatim copies" in path.read_text(encoding="ascii")
    train, held = script.load_corpus(script.char_tokenizer())  # raises on a character outside the vocabulary
    assert len(held) * 8 < len(train)


def test_distillation_loss_is_soft_cross_entropy_plus_tv_and_tv_is_one_minus_alpha():
    script = _script()
    logits = torch.randn(2, 5, VOCAB, generator=torch.Generator().manual_seed(0))
    p = torch.softmax(torch.randn(2, 5, VOCAB, generator=torch.Generator().manual_seed(1)), -1)
    q = torch.softmax(logits, -1)
    soft_ce = -(p * q.log()).sum(-1).mean()
    alpha = torch.minimum(p, q).sum(-1).mean()  # alpha = sum_x min(p(x), q(x)) = 1 - TV(p, q)
    assert script.distill_loss(logits, p, 0.0).item() == pytest.approx(soft_ce.item(), rel=1e-5)
    assert script.distill_loss(logits, p, 2.0).item() == pytest.approx((soft_ce + 2 * (1 - alpha)).item(), rel=1e-5)


def test_load_bundled_pair_rejects_a_non_float_dtype():
    with pytest.raises(ValueError, match="dtype"):
        load_bundled_pair(dtype=torch.int64)


def test_training_script_rejects_non_positive_steps(capsys):
    with pytest.raises(SystemExit):
        _script().parse_args(["--target-steps", "0"])
    assert "--target-steps" in capsys.readouterr().err


@pytest.mark.slow
def test_training_script_runs_end_to_end_on_a_tiny_setting(tmp_path):
    # The run's size is pinned by its log (3 target steps logged at 0 and 2, 2 distillation steps), not by timing it:
    # its CPU seconds grow with the machine's load (caches and cores shared with other processes), and a speed goal
    # belongs to a benchmark, not to a test
    cmd = [sys.executable, str(SCRIPT), "--out", str(tmp_path), "--target-steps", "3", "--distill-steps", "2", "--pool", "3",
           "--batch", "4", "--seq", "16", "--target-layers", "2", "--target-hidden", "32", "--draft-hidden", "32",
           "--timing-repeats", "3", "--alpha-samples", "2", "--threads", "1"]
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600)
    report = json.loads((tmp_path / "metrics.json").read_text())
    assert [(row["phase"], row["step"]) for row in report["log"]] == [("target", 0), ("target", 2), ("draft", 0), ("draft", 1)]
    m = report["metrics"]
    assert 0 < m["alpha_held_out"] <= 1 and 0 < m["alpha_target_samples"] <= 1 and m["c"] > 0
    assert set(m["predicted_speedup"]) == {f"gamma={g}" for g in range(2, 7)}
    from transformers import AutoModelForCausalLM, AutoTokenizer

    for name in ("target", "draft"):
        model = AutoModelForCausalLM.from_pretrained(tmp_path / name, use_safetensors=True)
        assert model.config.vocab_size == len(AutoTokenizer.from_pretrained(tmp_path / name)) == VOCAB
