"""How a decoding run samples, drafts and verifies, as one frozen record: ``DecodeOptions``.

Notation: p = target law, q = draft law, gamma = draft tokens per round, w = the warp of ``sampling``.

``speculative_generate``, ``plain_generate`` (which reads ``sampling``, ``seed``, ``eos_token_id`` and
``vocab_size``), ``histogram.sample_prefixes`` / ``lossless_report``, the bench and its cost
measurement all take one ``DecodeOptions`` (the way Hugging Face's ``GenerationConfig`` and vLLM's
``SamplingParams`` travel), so a new option is one field here, read where it acts. Every option is
lossless: each emitted token has law w(p) given its prefix, whatever the values. The lossy negative
controls of the tests are not options: they are injected as ``accept_reject=`` by name.

Importing this module needs no torch (the accept/reject step ``verify`` names is imported when asked for).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from specmath.choices import VERIFY
from specmath.sampling_options import SamplingOptions
from specmath.validation import InvalidArgument, check_choice, check_integer, check_probability, check_seed

__all__ = ["DecodeOptions"]


@dataclass(frozen=True)
class DecodeOptions:
    """How decoding runs (every field lossless); ``replace`` changes some. Hashable when ``gamma`` and ``seed`` are."""

    gamma: int | Callable[[int], int] = 4  # most draft tokens per round (>= 1), or round index -> that round's (>= 0)
    sampling: SamplingOptions = SamplingOptions()  # the warp w of p and q: temperature, top-k, top-p
    verify: str = "token"  # "token": accept/reject position by position; "block": the block jointly (Sun et al. 2024)
    draft_threshold: float = 0.0  # a model draft stops a row before position i when max_x q_i(x) < this (0: never)
    seed: int | Sequence[int] | Any = 0  # an int (or a torch.Generator) for the batch, or one int per row
    eos_token_id: int | None = None  # a row stops after emitting it (None: every row emits max_new_tokens)
    vocab_size: int | None = None  # the shared vocabulary, when the models' logits are padded to different widths
    compile: bool = False  # run the passes on a static KV cache, compiled (``static_cache``, ``compiled_steps``)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not callable(self.gamma):
            check_integer(self.gamma, "gamma (draft tokens per round, or a function of the round)", min_value=1)
        if not isinstance(self.sampling, SamplingOptions):
            raise InvalidArgument(f"sampling must be a SamplingOptions, got {type(self.sampling).__name__}")
        check_choice(self.verify, "verifier", VERIFY)
        set_(self, "draft_threshold", check_probability(self.draft_threshold, "draft_threshold (a bound on max_x q(x))"))
        if isinstance(self.seed, (list, tuple)):
            set_(self, "seed", tuple(check_seed(s, "a row's seed") for s in self.seed))
        elif not hasattr(self.seed, "manual_seed"):  # a torch.Generator passes as it is
            check_seed(self.seed)
        if self.eos_token_id is not None:
            check_integer(self.eos_token_id, "eos_token_id", min_value=0)
        if self.vocab_size is not None:
            check_integer(self.vocab_size, "vocab_size", min_value=1)
        if not isinstance(self.compile, bool):
            raise InvalidArgument(f"compile must be True or False, got {self.compile!r}")

    @property
    def accept_reject(self) -> Callable:
        """The accept/reject step ``verify`` names (``block_verify.VERIFIERS``)."""
        from specmath.lm.block_verify import verifier

        return verifier(self.verify)

    def replace(self, **changes: Any) -> DecodeOptions:
        """These options with ``changes`` (field name -> value); an unknown name is an error naming the fields."""
        for name in changes:
            check_choice(name, "decode option", [f.name for f in fields(self)])
        return replace(self, **changes)

    def to_json(self, reported: Sequence[str] = ("gamma", "sampling", "verify", "eos_token_id", "vocab_size", "compile")) -> dict:
        """The options that differ from their defaults, but those ``reported`` elsewhere (the bench JSON has keys
        of its own for gamma, sampling, verify and compile; eos and the vocabulary are the pair's)."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name not in reported and getattr(self, f.name) != f.default}
