"""Prompt files for ``specmath bench --prompts-file``: JSON Lines of user messages, clear errors per line."""

from __future__ import annotations

import json

import pytest

from specmath.lm.workloads import PROMPT_SETS, encode_prompts, read_prompts_file, shipped_prompts_file


def test_a_prompts_file_is_one_json_string_per_line_blank_lines_skipped(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps("Fix: teh cat") + "\n\n" + json.dumps("line one\nline two") + "\n", encoding="utf-8")
    assert read_prompts_file(path) == ["Fix: teh cat", "line one\nline two"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('"ok"\n{"prompt": "x"}\n', r"line 2: expected a JSON string \(the user message\), got dict"),
        ('"ok"\n"ok"\nnot json\n', r"line 3: not valid JSON"),
        ('"ok"\n""\n', r"line 2: the prompt is empty"),
        ("42\n", r"line 1: expected a JSON string .* got int"),
        ("\n\n", r"holds no prompt"),
    ],
)
def test_a_bad_line_is_an_error_naming_the_file_and_line(tmp_path, text, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        read_prompts_file(path)
    assert "bad.jsonl" in str(info.value)


def test_a_missing_file_or_set_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        read_prompts_file(tmp_path / "nope.jsonl")
    with pytest.raises(ValueError, match="unknown prompt set"):
        shipped_prompts_file("poems")


def test_the_shipped_edit_set_is_copy_heavy_and_asks_for_long_answers():
    edit = read_prompts_file(shipped_prompts_file("edit"))
    assert len(edit) >= 8
    for text in edit:
        # an instruction line, then the text to repeat with changes: most of the answer is in the prompt
        instruction, _, given = text.partition("\n\n")
        # >= 240 characters: >= 64 tokens of SmolLM2 text at <= 3.75 characters a token
        assert len(given) >= 240, f"too little to copy in: {instruction}"
        assert "return" in instruction.lower()
    assert len(read_prompts_file(shipped_prompts_file("open"))) >= 8
    assert set(PROMPT_SETS) == {"edit", "open"}


class _ChatTokenizer:
    chat_template = "{{ messages }}"

    def apply_chat_template(self, messages, add_generation_prompt):
        assert add_generation_prompt
        return {"input_ids": [1] + [ord(ch) for ch in messages[0]["content"]] + [2]}


class _PlainTokenizer:
    chat_template = None

    def __call__(self, text, add_special_tokens):
        return {"input_ids": [ord(ch) for ch in text]}


def test_chat_models_get_the_template_others_the_plain_ids():
    assert encode_prompts(_ChatTokenizer(), ["ab"]) == [[1, 97, 98, 2]]
    assert encode_prompts(_PlainTokenizer(), ["ab"]) == [[97, 98]]
