"""The cache of dequantised GGUF models (``specmath.lm.dequantised_cache``), without reading a GGUF file.

The GGUF reader is replaced by the bundled draft (a small Llama, with its tokenizer), so these run in seconds;
tests/lm/test_lm_smollm2.py checks the real SmolLM2 read back from the cache against the one read from its GGUF.
"""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import specmath.lm.dequantised_cache as dequantised_cache  # noqa: E402
from specmath.lm.bundled import load_bundled_pair  # noqa: E402
from specmath.lm.dequantised_cache import CACHE_ENV, cache_root, entry_for, load_dequantised  # noqa: E402


@pytest.fixture
def fake_gguf(tmp_path, monkeypatch):
    """A file standing for a GGUF, and a reader that returns the bundled draft for it (counting its calls)."""
    _, draft, tokenizer = load_bundled_pair()
    calls = []

    def read(path):
        calls.append(path)
        return draft, tokenizer

    monkeypatch.setattr(dequantised_cache, "_from_gguf", read)
    path = tmp_path / "files" / "model.gguf"
    path.parent.mkdir()
    path.write_bytes(b"GGUF standing in")
    return path, draft, tokenizer, calls


def test_the_first_load_reads_the_file_and_every_later_one_the_entry(fake_gguf, tmp_path):
    path, draft, original_tokenizer, calls = fake_gguf
    cache = tmp_path / "cache"
    first, _ = load_dequantised(path, cache)
    assert first is draft and len(calls) == 1
    entry = entry_for(path, cache)
    assert sorted(p.name for p in cache.iterdir()) == [f".{entry.name}.lock", entry.name]  # no temporary folder
    again, tokenizer = load_dequantised(path, cache)
    assert len(calls) == 1 and again is not draft
    ours, theirs = again.state_dict(), draft.state_dict()
    assert ours.keys() == theirs.keys() and all(torch.equal(ours[k], theirs[k]) for k in ours)
    assert again.lm_head.weight.data_ptr() == again.model.embed_tokens.weight.data_ptr()  # still tied
    text = "It was the best of times, the Program"
    assert tokenizer(text)["input_ids"] == original_tokenizer(text)["input_ids"]


def test_a_process_that_finds_the_entry_missing_while_another_writes_it_waits_and_reads_the_entry(
        fake_gguf, tmp_path, monkeypatch):
    # two threads stand in for two processes (an flock lock belongs to the open file, not the process): the first
    # is reading the file, holding the lock, when the second looks, finds no entry and goes for the lock; the
    # first's read ends only then. Without the lock the second would read the file too.
    import threading

    path, draft, _, calls = fake_gguf
    cache = tmp_path / "cache"
    first_reads, second_waits, done = threading.Event(), threading.Event(), []
    fake_read, real_lock = dequantised_cache._from_gguf, dequantised_cache._writer_lock

    def slow_read(gguf):
        first_reads.set()
        assert second_waits.wait(120), "the second loader never went for the lock"
        return fake_read(gguf)

    def lock(entry):
        if threading.current_thread().name == "second":
            second_waits.set()
        return real_lock(entry)

    monkeypatch.setattr(dequantised_cache, "_from_gguf", slow_read)
    monkeypatch.setattr(dequantised_cache, "_writer_lock", lock)
    loaders = [threading.Thread(target=lambda: done.append(load_dequantised(path, cache)[0]), name=name)
               for name in ("first", "second")]
    loaders[0].start()
    assert first_reads.wait(120)
    loaders[1].start()
    for loader in loaders:
        loader.join(180)
    assert len(done) == 2 and len(calls) == 1, "both loaders read the file"
    assert done[0] is draft and done[1] is not draft  # the first returned what it read, the second the entry


def test_a_changed_file_gets_an_entry_of_its_own(fake_gguf, tmp_path):
    path, _, _, calls = fake_gguf
    cache = tmp_path / "cache"
    load_dequantised(path, cache)
    entry = entry_for(path, cache)
    path.write_bytes(b"GGUF standing in, longer")  # another size
    assert entry_for(path, cache) != entry
    load_dequantised(path, cache)
    assert len(calls) == 2
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # the same size, another time
    assert entry_for(path, cache) != entry
    load_dequantised(path, cache)
    assert len(calls) == 3


def test_no_cache_writes_nothing_and_an_unwritable_one_is_no_error(fake_gguf, tmp_path):
    path, draft, _, calls = fake_gguf
    assert load_dequantised(path, None)[0] is draft
    assert sorted(p.name for p in tmp_path.iterdir()) == ["files"]
    blocked = tmp_path / "a file"
    blocked.write_text("not a folder")
    assert load_dequantised(path, blocked / "cache")[0] is draft  # mkdir fails: loaded from the file all the same
    assert load_dequantised(path, blocked / "cache")[0] is draft and len(calls) == 3


def test_the_cache_folder_is_named_by_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "here"))
    assert cache_root() == tmp_path / "here"
    for off in ("off", "OFF", ""):
        monkeypatch.setenv(CACHE_ENV, off)
        assert cache_root() is None
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "specmath"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "specmath"
