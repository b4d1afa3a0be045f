"""Workloads for ``specmath bench``: prompt files in JSON Lines, turned into token ids.

A prompt file holds one JSON string per line (UTF-8): the user message. Blank lines are skipped;
anything else (a number, an object, broken JSON, an empty string, bytes that are not UTF-8) is an
``InvalidFile`` naming the file and line.
For a chat model (a tokenizer with a chat template, e.g. SmolLM2-Instruct) the message is wrapped
in the template with the assistant turn opened; otherwise its plain token ids are used.

The repository ships two sets in ``data/prompts/``: ``edit.jsonl`` (copy-heavy: code refactors,
spelling fixes, reformatting; the answer repeats most of the prompt, the case where prompt lookup
proposes long correct drafts) and ``open.jsonl`` (open-ended questions, where it cannot).
Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)).
"""

from __future__ import annotations

import json
from pathlib import Path

from specmath.validation import InvalidFile, check_choice, check_file

__all__ = ["read_prompts_file", "shipped_prompts_file", "encode_prompts", "PROMPT_SETS"]

PROMPT_SETS = ("edit", "open")


def shipped_prompts_file(name: str) -> Path:
    """Path of a prompt set shipped in the repository's ``data/prompts/`` (``edit`` or ``open``)."""
    check_choice(name, "prompt set", PROMPT_SETS)
    path = Path(__file__).resolve().parents[2] / "data" / "prompts" / f"{name}.jsonl"
    if not path.is_file():
        raise InvalidFile(f"prompt set {name!r} not found at {path} (it ships with the source repository)")
    return path


def read_prompts_file(path: str | Path) -> list[str]:
    """The user messages of a JSON Lines file: one JSON string per non-blank line."""
    path = check_file(path, "prompts file")
    where = f"prompts file {str(path)!r}"
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark, as some editors write, is not part of line 1
    except UnicodeDecodeError as error:
        line = path.read_bytes()[: error.start].count(b"\n") + 1
        raise InvalidFile(f"{where}, line {line}: not UTF-8 text (byte {error.object[error.start]:#x}); "
                          "expected one JSON string per line") from None
    prompts = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise InvalidFile(f"{where}, line {number}: not valid JSON ({error.msg}); expected one JSON string") from None
        if not isinstance(value, str):
            raise InvalidFile(f"{where}, line {number}: expected a JSON string (the user message), got {type(value).__name__}")
        if not value.strip():
            raise InvalidFile(f"{where}, line {number}: the prompt is empty")
        prompts.append(value)
    if not prompts:
        raise InvalidFile(f"{where} holds no prompt (one JSON string per line)")
    return prompts


def encode_prompts(tokenizer, texts: list[str]) -> list[list[int]]:
    """Token ids per message: the chat template with the assistant turn opened, or the plain text ids."""
    if getattr(tokenizer, "chat_template", None):
        out = []
        for text in texts:
            ids = tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True)
            out.append(list(ids["input_ids"] if hasattr(ids, "keys") else ids))
        return out
    return [list(tokenizer(text, add_special_tokens=False)["input_ids"]) for text in texts]
