"""The round audit's adapters: a lazy registry, each entry an Adapter of its name, loaded only when asked for."""

from __future__ import annotations

import subprocess
import sys

import pytest

from specmath.audit.rounds.adapters import ADAPTERS, Adapter, adapter_named, adapter_names, adapters
from specmath.bugzoo import BUGS
from specmath.validation import UnknownName


@pytest.mark.parametrize("name", ADAPTERS.names)
def test_each_registry_entry_loads_as_an_adapter_of_its_name(name):
    adapter = ADAPTERS[name]
    assert isinstance(adapter, Adapter) and adapter.name == name and adapter.description
    assert adapter_named(name) is adapter


def test_the_bug_zoo_adapters_follow_the_registry_and_carry_each_bugs_sampler_and_warp():
    listed = adapters()
    assert tuple(listed) == adapter_names() == (*ADAPTERS.names, *(f"bug:{name}" for name in BUGS))
    for name, bug in BUGS.items():
        adapter = listed[f"bug:{name}"]
        assert adapter.sample_round is bug.sample_round and adapter.warp == bug.warp and adapter.generator_kind == "numpy"


def test_naming_the_adapters_imports_none_of_them_and_loading_one_imports_only_its_module():
    code = ("import sys\nfrom specmath.audit.rounds.adapters import adapter_names, adapter_named\n"
            "adapter_names()\nprint('builtin_adapters' in ' '.join(sys.modules), 'scipy' in sys.modules)\n"
            "adapter_named('specmath-torch')\nprint('builtin_adapters' in ' '.join(sys.modules), 'torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False", "True", "False"]


def test_a_near_miss_of_an_adapter_name_is_one_line_with_did_you_mean():
    with pytest.raises(UnknownName, match=r"^unknown adapter 'refrence' \(did you mean 'reference'\?\); choose from: reference, "):
        adapter_named("refrence")
    with pytest.raises(UnknownName, match=r"^unknown adapter 'bug:residual-softmx' \(did you mean 'bug:residual-softmax'\?\)"):
        adapter_named("bug:residual-softmx")
