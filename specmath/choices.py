"""Internal: The names the command line offers, written once and importing nothing.

The commands build their parsers from these tuples (``choices=`` and help texts), so ``specmath --help``
and ``specmath verify`` stay free of torch; the code that implements each choice imports the same
tuple (its registry is keyed by it, or it checks a name against it) or ``tests/test_choices.py``
compares the two, so they cannot drift apart. A command checks a user's names against these tuples
before it imports the code behind them, which for the audit's cases means scipy: seconds on a busy machine.

Names a registry offers are not repeated here: the audit's adapters and tree adapters are
``specmath.registry.Registry`` entries (``specmath.audit.rounds.adapters.adapter_names``,
``specmath.audit.trees.adapters.tree_adapter_names``) and the bug zoo's names are its dicts' keys,
all read without importing torch or scipy; so are the engines ``specmath audit-generate`` audits, with
what each runs on and how it samples, in their own registry (``specmath.audit.engines.registry``).
"""

from __future__ import annotations

__all__ = [
    "LEAN",
    "VERIFY",
    "DTYPES",
    "MEASURED_DTYPES",
    "GAMMA_AUTO",
    "BENCH_PAIRS",
    "SMOLLM2_DRAFTS",
    "PAIR_FORMS",
    "ENGINE_SEMANTICS",
    "OPTION_ROWS",
    "AUDIT_PAIRS",
    "AUDIT_CASES",
    "TREE_CHILDREN",
    "TREE_AUDIT_CASES",
    "GENERATOR_KINDS",
    "SYMBOLIC_RULES",
]

#: which models of a bench pair run ``specmath.lm.lean_llama.LeanLlama``: none, the model draft, or target and draft
LEAN = ("none", "draft", "all")

#: how speculative decoding verifies a drafted block (``specmath.lm.block_verify.VERIFIERS``): token by token
#: (Leviathan et al. 2023) or jointly (Sun et al. 2024)
VERIFY = ("token", "block")

#: the dtypes the committed measurements compare (``benchmarks/lm_goals.py``, ``scripts/gpu_check.py``)
MEASURED_DTYPES = ("float32", "bfloat16")

#: the floating dtypes a bench loads its models in (``torch.<name>``)
DTYPES = (*MEASURED_DTYPES, "float16")

#: ``--gamma auto``: a short calibration picks gamma (``specmath.lm.bench.choose_gamma``)
GAMMA_AUTO = "auto"

#: what ``specmath bench`` times by (``specmath.lm.stopwatch.CLOCKS``): the wall, or this process's CPU time
BENCH_CLOCKS = ("wall", "cpu")

#: the named pairs ``specmath bench`` runs by default (``specmath.lm.pairs.load_named_pair``)
BENCH_PAIRS = ("bundled", "smollm2")

#: the drafts of ``smollm2:DRAFT`` (K: a number of layers; PATH: another weights or table file)
SMOLLM2_DRAFTS = ("int8", "lookup", "skipK", "trained[=PATH]", "ngram[=PATH]", "lookup+ngram[=PATH]")

#: every form a bench pair name takes
PAIR_FORMS = f"bundled, smollm2[:{'|'.join(SMOLLM2_DRAFTS)}] or TARGET,DRAFT (two paths or hub names)"

#: how an engine applies its sampling options (``specmath.audit.engines.semantics.SEMANTICS``)
ENGINE_SEMANTICS = ("hf", "llama.cpp", "vllm")

#: the rows of the options table (``specmath.audit.engines.rows.OPTION_ROWS``)
OPTION_ROWS = ("T=1", "T=0.7 top-k 20", "top-p 0.9", "min-p 0.1", "logit bias", "repetition 1.5",
               "repetition 1.5 window 4", "presence 1.5", "frequency 1.5", "repeat ban")

#: the pairs an engine audit runs on (``specmath.audit.engines.pairs.PAIRS``)
AUDIT_PAIRS = ("tiny", "bundled", "smollm2")

#: the cases of the audit battery (``specmath.audit.rounds.cases.BATTERY``), for ``specmath audit --cases``
AUDIT_CASES = ("context-g1", "context-g3", "context-g5", "p-equals-q", "equal-up-to-rounding", "disjoint-supports",
               "one-hot-draft", "zeros-in-target", "zeros-in-draft", "top-k-target-only", "top-k-draft-only",
               "near-underflow", "vocab-2", "vocab-1000")

#: how the auditor draws a tree node's children (``specmath.speculative.tree.CHILDREN``), ``specmath audit --tree``
TREE_CHILDREN = ("iid", "without-replacement", "top-k")

#: the cases of the tree battery (``specmath.audit.trees.cases.TREE_BATTERY``), for ``specmath audit --cases``
TREE_AUDIT_CASES = ("tree-example-2x2", "tree-context-2", "tree-context-3", "tree-context-3x1", "tree-context-2x1x1",
                    "tree-zeros-in-target-2x2", "tree-zeros-in-draft-3", "tree-disjoint-supports-2", "tree-p-equals-q-2x2",
                    "tree-sparse-v64-2x2")

#: the generators a ``module:function`` sampler may draw from (``specmath.audit.rounds.adapters.make_generator``)
GENERATOR_KINDS = ("numpy", "torch")

#: the rules ``specmath verify symbolic-step --rule`` proves (``specmath.speculative.symbolic_step.SYMBOLIC_RULES``)
SYMBOLIC_RULES = ("standard", "resample-from-target")
