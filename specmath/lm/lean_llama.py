"""The forward pass of a Llama-architecture model without Hugging Face's per-call machinery.

Notation: p = target law, q = draft law, gamma = draft tokens per round, alpha = sum_x min(p(x), q(x)),
c = t_draft / t_target for one forward pass.

Speculative decoding pays (gamma c + k(gamma)) target passes per round, so a draft's cost c counts
gamma times. A small model's pass on a CPU is mostly fixed cost per call, not arithmetic: the bundled
1-layer draft's Hugging Face forward takes about 0.85 ms, of which the layer's own tensor work is
about 0.4 ms. The rest is ``LlamaModel``'s wrapper (keyword-argument merging, output capturing, the
causal-mask builder, the rotary module) and one Python module call per projection and norm.

``LeanLlama(model)`` runs the same weights through the same arithmetic, one function per layer:

* RMSNorm: y = w * x / sqrt(mean(x^2) + eps), computed in float32 as ``LlamaRMSNorm`` does;
* q, k, v from ONE matrix product (the three weights stacked, [W_q; W_k; W_v]) and gate, up from one
  ([W_gate; W_up]): each output element is the same dot product as in three (two) separate products;
* RoPE: q' = q cos(m theta) + rotate_half(q) sin(m theta) at position m (``rope_type`` "default");
* attention through ``torch.nn.functional.scaled_dot_product_attention`` with scale 1/sqrt(head_dim);
* MLP: down(silu(gate(x)) * up(x)); the output layer is the model's own ``lm_head`` module.

It keeps the call signature ``cache.RowCache`` uses (input ids, a 2-D slot mask or None, position
ids, a Hugging Face ``Cache``), so the decoders, the KV-cache rollback and ``packed_linear`` work on
it unchanged, and ``hf_model`` keeps the model it was built from (Hugging Face ``generate`` runs
that one). It is a different implementation of the same function: logits agree with the Hugging
Face forward up to floating-point summation order (the tests state the tolerance). Used as a draft it
is lossless whatever its rounding, because accept/reject uses the q it sampled from; used as a target,
plain and speculative decoding must both run it so that they sample the same p.

Supported: ``LlamaForCausalLM`` (SmolLM2, the bundled pair, layer-skip and early-exit self-drafts),
with default RoPE, SiLU, no sliding window; ``lean_unsupported(model)`` names what else it meets.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from specmath.lm.streamed_products import library_attention, module_product

__all__ = ["LeanLlama", "lean_unsupported", "hf_model", "last_logits"]


@dataclass
class LeanOutput:
    logits: torch.Tensor  # (B, n, V) or (B, 1, V) with logits_to_keep=1


def hf_model(model: torch.nn.Module) -> torch.nn.Module:
    """The Hugging Face model behind ``model`` (itself unless it is a ``LeanLlama``)."""
    return getattr(model, "hf_model", model)


def lean_unsupported(model: torch.nn.Module) -> str | None:
    """Why ``LeanLlama`` cannot run ``model`` exactly as Hugging Face does, or None if it can."""
    config = getattr(model, "config", None)
    if config is None or getattr(config, "model_type", None) != "llama":
        return f"{type(model).__name__} is not a Llama-architecture model (config.model_type {getattr(config, 'model_type', None)!r})"
    rope = getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {}
    if rope.get("rope_type", "default") != "default":
        return f"rope_type {rope.get('rope_type')!r} (only the default RoPE is implemented)"
    if getattr(config, "hidden_act", "silu") != "silu":
        return f"hidden_act {config.hidden_act!r} (only silu is implemented)"
    if getattr(config, "pretraining_tp", 1) != 1:
        return f"pretraining_tp {config.pretraining_tp} (only 1 is implemented)"
    if getattr(config, "_attn_implementation", "sdpa") not in ("sdpa", "eager", None):
        return f"attention implementation {config._attn_implementation!r}"
    rotary = getattr(getattr(model, "model", None), "rotary_emb", None)
    if rotary is None or float(getattr(rotary, "attention_scaling", 1.0)) != 1.0:
        return "no rotary embedding with attention_scaling 1"
    return None


def _stacked(*linears: torch.nn.Module) -> torch.nn.Linear | None:
    """One Linear computing [l_1(x), l_2(x), ...] when all are plain float Linears; None otherwise."""
    if not all(type(m) is torch.nn.Linear for m in linears):
        return None  # quantised or packed projections keep their own modules
    weight = torch.cat([m.weight for m in linears]).detach()  # cat copies: the stacked weight is its own
    biases = [m.bias for m in linears]
    # built on the meta device: no weight is allocated only to be replaced
    stacked = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=biases[0] is not None, device="meta")
    stacked.weight = torch.nn.Parameter(weight, requires_grad=False)
    if biases[0] is not None:
        stacked.bias = torch.nn.Parameter(torch.cat(biases).detach(), requires_grad=False)
    return stacked


class _RMSNorm(torch.nn.Module):
    """y = w * x / sqrt(mean(x^2) + eps) in float32, cast back before the weight (as ``LlamaRMSNorm``)."""

    def __init__(self, norm: torch.nn.Module) -> None:
        super().__init__()
        self.weight = norm.weight
        self.eps = float(getattr(norm, "variance_epsilon", getattr(norm, "eps", 1e-6)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype == torch.float32:
            return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)
        return self.weight * F.rms_norm(x.float(), (x.shape[-1],), None, self.eps).to(x.dtype)


class _LeanLayer(torch.nn.Module):
    """One ``LlamaDecoderLayer``: h += attn(norm1(h)); h += mlp(norm2(h)), with stacked projections."""

    def __init__(self, layer: torch.nn.Module, index: int) -> None:
        super().__init__()
        attn, mlp = layer.self_attn, layer.mlp
        self.index = index
        self.norm1, self.norm2 = _RMSNorm(layer.input_layernorm), _RMSNorm(layer.post_attention_layernorm)
        self.head_dim = attn.head_dim
        config = attn.config
        self.heads = config.num_attention_heads
        self.kv_heads = config.num_key_value_heads
        self.scaling = float(attn.scaling)
        self.qkv = _stacked(attn.q_proj, attn.k_proj, attn.v_proj)
        if self.qkv is None:
            self.q_proj, self.k_proj, self.v_proj = attn.q_proj, attn.k_proj, attn.v_proj
        self.o_proj = attn.o_proj
        self.gate_up = _stacked(mlp.gate_proj, mlp.up_proj)
        if self.gate_up is None:
            self.gate_proj, self.up_proj = mlp.gate_proj, mlp.up_proj
        self.down_proj = mlp.down_proj

    def forward(self, h: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor | None, cache,
                product=module_product, attention=library_attention) -> torch.Tensor:
        """``product(module, x)`` computes each projection and ``attention`` the attention (``streamed_products``:
        how a compiled batch-1 pass streams the weights); by default ``module(x)`` and
        ``F.scaled_dot_product_attention``."""
        B, n, _ = h.shape
        H, KV, D = self.heads, self.kv_heads, self.head_dim
        x = self.norm1(h)
        if self.qkv is not None:
            q, k, v = product(self.qkv, x).view(B, n, H + 2 * KV, D).transpose(1, 2).split([H, KV, KV], dim=1)
        else:
            q = product(self.q_proj, x).view(B, n, H, D).transpose(1, 2)
            k = product(self.k_proj, x).view(B, n, KV, D).transpose(1, 2)
            v = product(self.v_proj, x).view(B, n, KV, D).transpose(1, 2)
        q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        if cache is not None:
            k, v = cache.update(k, v, self.index)  # every slot so far, this block's included
        attn = attention(q, k, v, mask, self.scaling, KV != H)
        h = h + product(self.o_proj, attn.transpose(1, 2).reshape(B, n, H * D))
        x = self.norm2(h)
        if self.gate_up is not None:
            gate, up = product(self.gate_up, x).chunk(2, dim=-1)
        else:
            gate, up = product(self.gate_proj, x), product(self.up_proj, x)
        return h + product(self.down_proj, F.silu(gate) * up)


def _rotate(t: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """RoPE: t cos + rotate_half(t) sin, rotate_half(t) = [-t_2, t_1] for t = [t_1, t_2] (Su et al. 2021)."""
    half = t.shape[-1] // 2
    return t * cos + torch.cat([-t[..., half:], t[..., :half]], dim=-1) * sin


class LeanLlama(torch.nn.Module):
    """``model``'s forward (a ``LlamaForCausalLM``) in one function per layer; see the module docstring."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        reason = lean_unsupported(model)
        if reason is not None:
            raise ValueError(f"LeanLlama cannot run this model: {reason}")
        self.config = model.config
        # kept out of the module tree so that .parameters() and pack_linears see only what the lean pass runs
        self.__dict__["hf_model"] = model
        inner = model.model
        self.embed_tokens = inner.embed_tokens
        self.layers = torch.nn.ModuleList(_LeanLayer(layer, i) for i, layer in enumerate(inner.layers[: model.config.num_hidden_layers]))
        self.norm = _RMSNorm(inner.norm)
        self.lm_head = model.lm_head
        self.register_buffer("inv_freq", inner.rotary_emb.inv_freq.detach().float().clone(), persistent=False)

    def get_output_embeddings(self) -> torch.nn.Module:
        return self.lm_head

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                position_ids: torch.Tensor | None = None, cache=None, use_cache: bool = True,
                logits_to_keep: int | torch.Tensor = 0, past_key_values=None) -> LeanOutput:
        """Logits of ``input_ids`` (B, n) after the cached slots; ``attention_mask`` (B, slots + n): 1 = real token.
        ``logits_to_keep``, as Hugging Face's forward takes it: an int k > 0 keeps the last k positions, a 1-d tensor
        the positions it holds, 0 all of them."""
        cache = cache if cache is not None else past_key_values
        if not use_cache:
            cache = None
        B, n = input_ids.shape
        past = cache.get_seq_length() if cache is not None else 0
        device = input_ids.device
        if position_ids is None:
            position_ids = torch.arange(past, past + n, device=device)[None, :].expand(B, n)
        h = self.embed_tokens(input_ids)
        # RoPE angles m theta_j in float32, as LlamaRotaryEmbedding computes them, then the model's dtype
        angles = position_ids[..., None].float() * self.inv_freq
        angles = torch.cat([angles, angles], dim=-1)
        cos, sin = angles.cos().to(h.dtype)[:, None], angles.sin().to(h.dtype)[:, None]  # (B, 1, n, D)
        mask = _attention_mask(attention_mask, past, n, device)
        for layer in self.layers:
            h = layer(h, cos, sin, mask, cache)
        h = self.norm(h)
        if isinstance(logits_to_keep, torch.Tensor):
            return LeanOutput(self.lm_head(h[:, logits_to_keep]))  # indexing copies the rows: (B, k, H) of its own
        if logits_to_keep:
            return LeanOutput(last_logits(self.lm_head, h, logits_to_keep))
        return LeanOutput(self.lm_head(h))


def last_logits(head: torch.nn.Module, h: torch.Tensor, keep: int) -> torch.Tensor:
    """Logits (B, keep, V) of the last ``keep`` positions of ``h`` (B, n, H), the head applied to them as one
    (B keep, H) matrix. Why not ``head(h[:, -keep:])``: that slice keeps h's stride n H on its first dimension, and
    torch's CPU ``F.linear`` takes such a 3-d input through a batched product that copies the weight first. For
    SmolLM2's bfloat16 head (49,152 x 576) and one row's last position (a prefill of 61 tokens) it took 73.2 ms,
    against 3.4 ms for the same product on the 2-d (1, 576) row; in float32 both took 6.7 ms (torch 2.13.0, 1
    thread, a 2-core AMD EPYC of family 26, 2026-12-07; ``python benchmarks/head_input.py``, results in
    ``benchmarks/results/cpu_2026-12-07_head_input.json``)."""
    B, _, H = h.shape
    return head(h[:, -keep:].reshape(B * keep, H)).view(B, keep, -1)


def _attention_mask(slots: torch.Tensor | None, past: int, n: int, device: torch.device) -> torch.Tensor | None:
    """Boolean (B or 1, 1, n, past + n): query i sees key j iff j <= past + i and slot j holds a real token."""
    if slots is None and n == 1:
        return None  # one new token after a hole-free cache sees every slot
    total = past + n
    causal = torch.arange(total, device=device)[None, :] <= torch.arange(past, total, device=device)[:, None]  # (n, total)
    if slots is None:
        return causal[None, None]
    if slots.shape[-1] != total:
        raise ValueError(f"attention_mask covers {slots.shape[-1]} slots, the cache and the new tokens {total}")
    mask = causal[None, None] & slots[:, None, None, :].bool()
    # a query with nothing to see (a padding slot of an empty row) would give NaN: let it see everything
    return mask | ~mask.any(-1, keepdim=True)
