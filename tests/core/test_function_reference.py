"""A user's function named as module:function or file.py:function resolves to that function, once."""

from __future__ import annotations

import pytest

from specmath.function_reference import resolve_function
from specmath.validation import InvalidArgument, InvalidFile


def test_a_dotted_module_and_a_file_resolve_to_their_functions(tmp_path):
    from specmath.speculative.step import standard_rule

    assert resolve_function("specmath.speculative.step:standard_rule") is standard_rule
    path = tmp_path / "user_rules.py"
    path.write_text("CALLS = []\nCALLS.append(1)\n\ndef rule(p, q, x):\n    return 1, None\n")
    rule = resolve_function(f"{path}:rule", "rule")
    assert rule(None, None, None) == (1, None)
    # a file is run once, as an import is: resolving it again gives the same function
    assert resolve_function(f"{path}:rule") is rule and rule.__globals__["CALLS"] == [1]


def test_a_file_that_changed_is_loaded_again(tmp_path):
    path = tmp_path / "changing.py"
    path.write_text("def f():\n    return 1\n")
    assert resolve_function(f"{path}:f")() == 1
    path.write_text("def f():\n    return 22\n")  # another size: a new version of the file
    assert resolve_function(f"{path}:f")() == 22


def test_each_mistake_is_its_own_error_type(tmp_path):
    with pytest.raises(InvalidFile, match="no such file"):
        resolve_function(f"{tmp_path}/absent.py:f")
    folder = tmp_path / "folder.py"
    folder.mkdir()
    with pytest.raises(InvalidFile, match=r"folder\.py' is not a file"):
        resolve_function(f"{folder}:f")
    with pytest.raises(InvalidArgument, match="must be module:function"):
        resolve_function(["not", "a", "string"])
    with pytest.raises(InvalidArgument, match=r"module:function or path/to/file\.py:function, got 'module:'"):
        resolve_function("module:")
