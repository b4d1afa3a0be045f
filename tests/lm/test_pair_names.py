"""Bench pair names are read without torch: each form parses to what its loader needs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from specmath.lm.pair_names import PairName, parse_pair_name
from specmath.validation import InvalidArgument, InvalidFile, UnknownName


def _safetensors(path, header: dict) -> None:
    # the format: 8 bytes of little-endian header length, the JSON header, then the tensor bytes
    data = json.dumps(header).encode()
    path.write_bytes(len(data).to_bytes(8, "little") + data)


def test_each_form_parses_to_its_loader_and_arguments(tmp_path):
    table = tmp_path / "table.safetensors"
    _safetensors(table, {"__metadata__": {"info": "{}"}})
    assert parse_pair_name("bundled") == PairName("bundled", "bundled")
    assert parse_pair_name("smollm2") == PairName("smollm2", "smollm2")
    assert parse_pair_name("smollm2:skip4") == PairName("smollm2:skip4", "smollm2", "skip", layers=4)
    assert parse_pair_name("smollm2:lookup+ngram") == PairName("smollm2:lookup+ngram", "smollm2", "lookup+ngram")
    assert parse_pair_name(f"smollm2:trained={table}").path == table
    hub = parse_pair_name("HuggingFaceTB/SmolLM2-1.7B-Instruct,HuggingFaceTB/SmolLM2-135M-Instruct")
    assert hub.kind == "hf" and hub.models == ("HuggingFaceTB/SmolLM2-1.7B-Instruct", "HuggingFaceTB/SmolLM2-135M-Instruct")
    assert parse_pair_name(f"{tmp_path},{tmp_path}").models == (str(tmp_path), str(tmp_path))


@pytest.mark.parametrize("name,error,message", [
    ("smollm", UnknownName, r"unknown pair 'smollm' \(did you mean 'smollm2'\?\)"),
    ("smollm2:skip", UnknownName, r"unknown SmolLM2 draft 'skip' \(did you mean 'skipK'\?\)"),
    ("smollm2:int8=x", UnknownName, r"unknown SmolLM2 draft 'int8=x'"),
    ("a,b,c", UnknownName, r"unknown pair 'a,b,c'"),
    ("", InvalidArgument, r"a pair name must be one of"),
    ("smollm2:ngram=", InvalidFile, r"ngram file '\.' is not a file"),
])
def test_a_mistaken_name_is_named_with_what_is_allowed(name, error, message):
    with pytest.raises(error, match=message):
        parse_pair_name(name)


def test_an_int8_draft_is_refused_on_cuda_before_anything_loads():
    parse_pair_name("smollm2:int8").check_device("cpu")
    parse_pair_name("smollm2").check_device("cuda")  # no draft named: lookup is the CUDA default
    with pytest.raises(InvalidArgument, match="runs on the CPU only"):
        parse_pair_name("smollm2:int8").check_device("cuda:0")


def test_parsing_a_pair_name_imports_no_torch():
    code = "import sys; from specmath.lm.pair_names import parse_pair_name; parse_pair_name('smollm2:skip3'); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
