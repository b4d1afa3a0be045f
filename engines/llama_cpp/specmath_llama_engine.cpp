// specmath's JSON-lines driver for llama.cpp's own speculative loop, for `specmath audit-generate --engine-cmd`.
//
// Notation: p = target law, q = draft law, gamma = draft tokens per round.
//
// Arguments are llama.cpp's own (common_params_parse, the flags of examples/speculative-simple):
//   -m TARGET.gguf [-md DRAFT.gguf] --spec-type draft-simple|ngram-simple [--spec-draft-n-max 4] -t 1 -c 512
// One JSON object per line on stdin, one reply per line on stdout (protocol: specmath/audit/engines/protocol.py):
//   {"op": "info"}                      -> vocabulary size, the sampler chain's order, what it promises
//   {"op": "logits", "contexts": [[ids]]} -> the target's raw next-token logits after each context (float32, base64),
//                                          from the plain path (context[:-1] in one batch, then its last token)
//   {"op": "generate", "prompt": [ids], "n": N, "seed": S, "max_new_tokens": M, "options": {...},
//    "speculative": true|false, "control": null|{"drafted": {...}, "stale_history": bool}}
//                                       -> {"tokens": [[M ids] x N], "drafted": d, "accepted": a}
// A request it cannot take (a bad field, an unknown op) is answered {"error", "refused": true}; a failure while
// running one (llama_decode) {"error"}.
// Call i samples with seed S + i. Each call is a fresh generation: a new sampler that first accepts the prompt
// (as llama-server does, so penalties see the prompt), then llama.cpp's loop: draft with common_speculative_draft,
// evaluate [last, draft...] in one batch, keep common_sampler_sample_and_accept_n's tokens (sample-match: the
// target's sampler draws at each position, drafts are kept while they match). The plain path is the same loop with
// no draft, so one emitted token per uniform in both.
// With -np B (llama.cpp's own flag; llama-server's slots) the calls run B at a time, one sequence each, as a
// server's B parallel slots do: every round drafts for all B sequences in one common_speculative_draft and verifies
// all their [last, draft...] rows in one llama_decode. Why: on one CPU thread a pass over B sequences' rows costs
// far less than B passes (benchmarks/gguf_engine_throughput.py), so the audit gains samples per second. The
// prompt but its last token is evaluated once per sequence and kept from call to call, as llama-server's prompt
// cache does for each slot. Each sequence has a KV stream of its own (-c / -np cells), as llama-server's slots have
// when -np is given: with one unified cache shared by sequences at different positions, llama.cpp b1-0ad4a86 gave
// the second sequence other tokens than it gives alone (tests/audit/engines/test_gguf_engines.py checks this).
//
// "control" makes the loop lossy on purpose (a negative control for the audit): at drafted positions (batch
// index >= 1, sampled only because the previous draft matched) it samples with the options in "drafted" and,
// with "stale_history", with the penalty history of the batch's start. Bugs of that shape: min_p and logit
// bias skipped on verified tokens, argmax acceptance at T > 0, penalties not updated position by position.
// A control may also set "history" ("generated": the prompt is not counted) and "ignored" (tokens never
// counted), so that it samples another engine's penalty semantics (node-llama-cpp's) with llama.cpp's loop.
#include "arg.h"
#include "build-info.h"
#include "common.h"
#include "ggml-backend.h"
#include "llama.h"
#include "sampling.h"
#include "speculative.h"
#include "nlohmann/json.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

using json = nlohmann::json;

struct engine {
    common_params params;
    common_init_result_ptr init_tgt;
    common_speculative_init_result_ptr init_dft;
    llama_model * model = nullptr;
    llama_context * ctx = nullptr;
    llama_context * ctx_dft = nullptr;
    common_speculative_ptr spec;  // one for the engine's life, as a llama-server slot keeps one
    llama_tokens cached;          // the tokens in the target's memory, positions 0, 1, ...: reused across requests
    bool spec_synced = false;     // the draft side (its memory, spec) has processed exactly `cached` too
    int n_vocab = 0;
    int n_parallel = 1;           // calls run side by side, one sequence each (-np)
    int n_loaded = 0;             // sequences 0 .. n_loaded-1 hold the prompt head `cached`
};

static std::string base64(const unsigned char * data, size_t n) {
    static const char * abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((n + 2) / 3 * 4);
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = data[i] << 16 | (i + 1 < n ? data[i + 1] << 8 : 0) | (i + 2 < n ? data[i + 2] : 0);
        out += abc[v >> 18 & 63];
        out += abc[v >> 12 & 63];
        out += i + 1 < n ? abc[v >> 6 & 63] : '=';
        out += i + 2 < n ? abc[v & 63] : '=';
    }
    return out;
}

// the request's options as llama.cpp sampling parameters; everything not asked for is switched off
static common_params_sampling sampling_params(const json & o, uint32_t seed) {
    common_params_sampling s;
    s.seed = seed;
    s.temp = o.value("temperature", 1.0f);
    s.top_k = o.value("top_k", 0);
    s.top_p = o.value("top_p", 1.0f);
    s.min_p = o.value("min_p", 0.0f);
    s.penalty_repeat = o.value("repetition_penalty", 1.0f);
    s.penalty_last_n = o.value("penalty_window", 64);
    s.penalty_present = o.value("presence_penalty", 0.0f);
    s.penalty_freq = o.value("frequency_penalty", 0.0f);
    s.typ_p = 1.0f;
    s.xtc_probability = 0.0f;
    s.dry_multiplier = 0.0f;
    s.top_n_sigma = -1.0f;
    s.min_keep = 0;
    s.logit_bias.clear();
    for (const auto & pair : o.value("logit_bias", json::array())) {
        s.logit_bias.push_back({pair.at(0).get<llama_token>(), pair.at(1).get<float>()});
    }
    return s;
}

static void clear_memory(engine & e) {
    llama_memory_clear(llama_get_memory(e.ctx), true);
    if (e.ctx_dft) {
        llama_memory_clear(llama_get_memory(e.ctx_dft), true);
    }
    e.cached.clear();
    e.spec_synced = false;
    e.n_loaded = 0;
}

// the target's memory cut back to the longest common prefix with `tokens` (llama-server's prompt cache): how many
// tokens of `tokens` it still holds
static size_t keep_common_prefix(engine & e, const llama_tokens & tokens) {
    size_t k = 0;
    while (k < e.cached.size() && k < tokens.size() && e.cached[k] == tokens[k]) {
        ++k;
    }
    llama_memory_seq_rm(llama_get_memory(e.ctx), 0, k, -1);
    e.cached.resize(k);
    return k;
}

// both memories hold exactly the prompt but its last token (llama.cpp's speculative-simple layout) in each of the
// sequences 0 .. n_seq-1: evaluated once per prompt and sequence and cut back to it for every call, as
// llama-server's prompt cache does for each slot
static void load_prompt_head(engine & e, const llama_tokens & prompt, int n_seq) {
    const llama_tokens head_tokens(prompt.begin(), prompt.end() - 1);
    if (head_tokens.size() + 2 > llama_n_ctx_seq(e.ctx)) {
        throw std::invalid_argument("the prompt holds " + std::to_string(prompt.size()) + " tokens; a sequence holds " +
                                    std::to_string(llama_n_ctx_seq(e.ctx)) + " (-c divided by -np): shorten it");
    }
    if (!(e.spec_synced && e.cached == head_tokens)) {
        clear_memory(e);
        e.cached = head_tokens;
        e.spec_synced = true;
        e.n_loaded = 0;
    }
    for (llama_seq_id s = 0; s < e.n_loaded; ++s) {
        llama_memory_seq_rm(llama_get_memory(e.ctx), s, head_tokens.size(), -1);
        if (e.ctx_dft) {
            llama_memory_seq_rm(llama_get_memory(e.ctx_dft), s, head_tokens.size(), -1);
        }
    }
    // a sequence of its own per call (one KV stream each): one head batch per sequence, the first time it is used
    for (; e.n_loaded < n_seq; ++e.n_loaded) {
        if (head_tokens.empty()) {
            continue;
        }
        llama_batch head = llama_batch_init(head_tokens.size(), 0, 1);
        for (size_t i = 0; i < head_tokens.size(); ++i) {
            common_batch_add(head, head_tokens[i], i, {e.n_loaded}, false);
        }
        const bool ok = llama_decode(e.ctx, head) == 0 && (!e.spec || common_speculative_process(e.spec.get(), head));
        llama_batch_free(head);
        if (!ok) {
            e.spec_synced = false;
            throw std::runtime_error("decoding the prompt failed");
        }
    }
}

// decode tokens[from, to) at their positions; logits only for the last one when `last_logits`
static void decode(llama_context * ctx, const llama_tokens & tokens, size_t from, size_t to, bool last_logits) {
    llama_batch batch = llama_batch_init(to - from, 0, 1);
    for (size_t i = from; i < to; ++i) {
        common_batch_add(batch, tokens[i], i, {0}, last_logits && i + 1 == to);
    }
    const int rc = llama_decode(ctx, batch);
    llama_batch_free(batch);
    if (rc != 0) {
        throw std::runtime_error("llama_decode failed with " + std::to_string(rc));
    }
}

// which tokens the penalties count (llama.cpp: the prompt and every emitted token); a request may ask for the
// emitted tokens only, and name tokens never counted: another engine's semantics, for its control
struct history_rule {
    bool prompt = true;
    std::vector<llama_token> ignored;
    bool counts(llama_token t) const { return std::find(ignored.begin(), ignored.end(), t) == ignored.end(); }
};

// the control's sampling at drafted positions: its own chain, fed the history it is meant to see
static std::vector<llama_token> sample_and_accept_lossy(engine & e, common_sampler * smpl, const std::vector<int> & idxs,
                                                        const llama_tokens & draft, const json & control,
                                                        const json & options, uint32_t seed, const llama_tokens & seen,
                                                        const history_rule & rule) {
    json drafted = options;
    drafted.update(control.value("drafted", json::object()));
    common_params_sampling sp = sampling_params(drafted, seed ^ 0x9e3779b9u);
    common_sampler_ptr at_drafts(common_sampler_init(e.model, sp));
    for (llama_token t : seen) {
        common_sampler_accept(at_drafts.get(), t, false);
    }
    const bool stale = control.value("stale_history", false);
    std::vector<llama_token> out;
    for (size_t i = 0; i <= draft.size(); ++i) {
        const llama_token id = common_sampler_sample(i == 0 ? smpl : at_drafts.get(), e.ctx, idxs[i]);
        if (rule.counts(id)) {
            common_sampler_accept(smpl, id, true);
            if (!stale) {
                common_sampler_accept(at_drafts.get(), id, true);
            }
        }
        out.push_back(id);
        if (i == draft.size() || draft[i] != id) {
            break;
        }
    }
    return out;
}

struct call_stats {
    long drafted = 0;
    long accepted = 0;
};

// one call in flight: its sequence, sampler, penalty history and tokens so far
struct call_state {
    llama_seq_id seq = 0;
    uint32_t seed = 0;
    common_sampler_ptr smpl;
    llama_tokens seen;     // the tokens the penalties count so far
    llama_tokens context;  // the tokens before `last`
    llama_tokens out, draft;
    llama_token last = 0;
    int n_past = 0;
    int at = 0;            // the batch index of `last` in this round's batch
};

// calls seeds[0], seeds[1], ... run side by side, call k in sequence k (k < n_parallel); their tokens, in order
static std::vector<llama_tokens> generate_group(engine & e, const llama_tokens & prompt, const std::vector<uint32_t> & seeds,
                                                int max_new, const json & options, bool speculative,
                                                const json & control, call_stats & stats) {
    common_speculative * spec = speculative ? e.spec.get() : nullptr;
    if (speculative && !spec) {
        throw std::runtime_error("no speculative decoding configured: start the engine with --spec-type (and -md)");
    }
    const int n_seq = seeds.size();
    load_prompt_head(e, prompt, n_seq);
    history_rule rule;
    if (!control.is_null()) {
        rule.prompt = control.value("history", std::string("prompt+generated")) == "prompt+generated";
        rule.ignored = control.value("ignored", std::vector<llama_token>());
    }
    std::vector<call_state> calls(n_seq);
    for (int k = 0; k < n_seq; ++k) {
        call_state & c = calls[k];
        c.seq = k;
        c.seed = seeds[k];
        common_params_sampling sp = sampling_params(options, c.seed);
        c.smpl.reset(common_sampler_init(e.model, sp));
        for (llama_token t : prompt) {
            if (rule.prompt && rule.counts(t)) {
                common_sampler_accept(c.smpl.get(), t, false);
                c.seen.push_back(t);
            }
        }
        c.context.assign(prompt.begin(), prompt.end() - 1);
        c.last = prompt.back();
        c.n_past = prompt.size() - 1;
        if (spec) {
            common_speculative_begin(spec, c.seq, c.context);
        }
    }
    llama_memory_t mem = llama_get_memory(e.ctx);
    llama_batch batch = llama_batch_init(llama_n_batch(e.ctx), 0, 1);
    std::vector<call_state *> running;
    for (auto & c : calls) {
        running.push_back(&c);
    }
    std::vector<llama_pos> pos_max(n_seq);
    while (!running.empty()) {
        bool any_room = false;
        if (spec) {
            for (call_state * c : running) {
                c->draft.clear();
                pos_max[c->seq] = llama_memory_seq_pos_max(mem, c->seq);
                const int room = std::min((int) llama_n_ctx_seq(e.ctx) - c->n_past - 2, max_new - (int) c->out.size() - 1);
                // no room, no draft, as llama-server drafts only where its n_draft_max > 0: to common_speculative
                // an n_max of 0 means no limit (only n_max > 0 caps a draft), so a sequence's last token would be
                // verified behind 4 drafted ones it cannot keep
                common_speculative_get_draft_params(spec, c->seq) =
                    {room > 0, room, c->n_past, c->last, &c->context, &c->draft};
                any_room = any_room || room > 0;
            }
        }
        if (any_room) {  // (a draft call with no sequence drafting would decode an empty batch)
            common_speculative_draft(spec);
            if (e.ctx_dft) {
                for (call_state * c : running) {
                    llama_memory_seq_rm(llama_get_memory(e.ctx_dft), c->seq, pos_max[c->seq] + 1, -1);
                }
            }
        }
        common_batch_clear(batch);
        for (call_state * c : running) {
            if (batch.n_tokens + 1 + (int) c->draft.size() > (int) llama_n_batch(e.ctx)) {
                throw std::runtime_error("a round's batch exceeds -b: lower -np or raise -b");
            }
            c->at = batch.n_tokens;
            common_batch_add(batch, c->last, c->n_past++, {c->seq}, true);
            for (size_t i = 0; i < c->draft.size(); ++i) {
                common_batch_add(batch, c->draft[i], c->n_past + i, {c->seq}, true);
            }
        }
        if (llama_decode(e.ctx, batch) != 0) {
            throw std::runtime_error("llama_decode failed on a draft batch");
        }
        if (spec && !common_speculative_process(spec, batch)) {
            throw std::runtime_error("common_speculative_process failed");
        }
        std::vector<call_state *> still;
        for (call_state * c : running) {
            std::vector<int> idxs(c->draft.size() + 1);
            for (size_t i = 0; i < idxs.size(); ++i) {
                idxs[i] = c->at + i;
            }
            const llama_tokens ids = control.is_null()
                ? common_sampler_sample_and_accept_n(c->smpl.get(), e.ctx, idxs, c->draft)
                : sample_and_accept_lossy(e, c->smpl.get(), idxs, c->draft, control, options, c->seed, c->seen, rule);
            stats.drafted += c->draft.size();
            stats.accepted += ids.size() - 1;
            if (spec) {
                common_speculative_accept(spec, c->seq, ids.size() - 1);
            }
            c->n_past += ids.size() - 1;
            for (llama_token id : ids) {
                c->context.push_back(c->last);
                c->last = id;
                if (rule.counts(id)) {
                    c->seen.push_back(id);
                }
                c->out.push_back(id);
            }
            llama_memory_seq_rm(mem, c->seq, c->n_past, -1);
            if (e.ctx_dft) {
                llama_memory_seq_rm(llama_get_memory(e.ctx_dft), c->seq, c->n_past, -1);
            }
            if ((int) c->out.size() < max_new) {
                still.push_back(c);
            }
        }
        running.swap(still);
    }
    llama_batch_free(batch);
    std::vector<llama_tokens> tokens;
    for (auto & c : calls) {
        c.out.resize(max_new);  // a round may emit more than asked for
        tokens.push_back(std::move(c.out));
    }
    return tokens;
}

static json handle(engine & e, const json & req) {
    const std::string op = req.at("op");
    if (op == "info") {
        const auto & types = e.params.speculative.types;
        return {{"engine", std::string("llama.cpp ") + llama_build_info()},
                {"vocab_size", e.n_vocab},
                {"speculative", common_speculative_type_name_str(types)},
                {"order", {"logit_bias", "penalties", "top_k", "top_p", "min_p", "temperature"}},
                {"history", "prompt+generated"}, {"window", 64}, {"plain", true},
                {"options", {"temperature", "top_k", "top_p", "min_p", "logit_bias", "repetition_penalty",
                             "penalty_window", "presence_penalty", "frequency_penalty"}},
                {"same_tokens_as_plain", true}, {"parallel", e.n_parallel},
                {"logits", true}, {"controls", true}};
    }
    if (op == "logits") {
        json rows = json::array();
        for (const auto & c : req.at("contexts")) {
            const llama_tokens ctx_tokens = c.get<llama_tokens>();
            if (ctx_tokens.empty()) {
                throw std::invalid_argument("a context must hold at least one token");
            }
            // as the plain path computes them: the context but its last token in one batch, then the last token;
            // a prefix already in memory is kept (a first token's contexts share the prompt)
            e.spec_synced = false;
            for (llama_seq_id s = 1; s < e.n_parallel; ++s) {  // the other sequences' calls are done with
                llama_memory_seq_rm(llama_get_memory(e.ctx), s, -1, -1);
            }
            e.n_loaded = 0;
            size_t k = keep_common_prefix(e, ctx_tokens);
            if (k == ctx_tokens.size()) {  // its logits are not kept: evaluate its last token again
                k = keep_common_prefix(e, llama_tokens(ctx_tokens.begin(), ctx_tokens.end() - 1));
            }
            if (k + 1 < ctx_tokens.size()) {
                decode(e.ctx, ctx_tokens, k, ctx_tokens.size() - 1, false);
            }
            decode(e.ctx, ctx_tokens, ctx_tokens.size() - 1, ctx_tokens.size(), true);
            e.cached = ctx_tokens;
            const float * z = llama_get_logits_ith(e.ctx, -1);
            rows.push_back(base64(reinterpret_cast<const unsigned char *>(z), sizeof(float) * e.n_vocab));
        }
        return {{"logits_b64", rows}};
    }
    if (op == "generate") {
        const llama_tokens prompt = req.at("prompt").get<llama_tokens>();
        if (prompt.empty()) {
            throw std::invalid_argument("the prompt must hold at least one token");
        }
        const int n = req.at("n"), max_new = req.value("max_new_tokens", 2);
        const uint32_t seed = req.at("seed").get<uint32_t>();
        const json options = req.value("options", json::object());
        const json control = req.contains("control") ? req.at("control") : json();
        const bool speculative = req.value("speculative", true);
        call_stats stats;
        json tokens = json::array();
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < n; i += e.n_parallel) {
            std::vector<uint32_t> seeds;
            for (int k = i; k < std::min(n, i + e.n_parallel); ++k) {
                seeds.push_back(seed + k);
            }
            for (auto & t : generate_group(e, prompt, seeds, max_new, options, speculative, control, stats)) {
                tokens.push_back(std::move(t));
            }
        }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return {{"tokens", tokens}, {"drafted", stats.drafted}, {"accepted", stats.accepted}, {"seconds", seconds}};
    }
    throw std::invalid_argument("unknown op '" + op + "': use info, logits or generate");
}

int main(int argc, char ** argv) {
    // the CPU backends are separate libraries beside libllama: without them llama.cpp finds no device
    ggml_backend_load_all_from_path(SPECMATH_BACKEND_DIR);
    engine e;
    common_init();
    if (!common_params_parse(argc, argv, e.params, LLAMA_EXAMPLE_SPECULATIVE)) {
        return 2;
    }
    if (e.params.n_parallel < 1) {
        std::fprintf(stderr, "-np must be at least 1 (calls run side by side)\n");
        return 2;
    }
    e.n_parallel = e.params.n_parallel;
    e.params.kv_unified = false;  // a KV stream per sequence (see the header)
    const auto limits = common_speculative_get_output_limits(e.params.n_batch, e.params.n_parallel,
                                                             common_speculative_n_max(&e.params.speculative));
    e.params.n_outputs_max = limits.total;
    e.params.n_outputs_max_per_seq = limits.per_seq;
    llama_backend_init();
    e.init_tgt = common_init_from_params(e.params);
    e.model = e.init_tgt->model();
    e.ctx = e.init_tgt->context();
    if (!e.model || !e.ctx) {
        std::fprintf(stderr, "could not load the target model\n");
        return 2;
    }
    if (common_context_can_seq_rm(e.ctx) == COMMON_CONTEXT_SEQ_RM_TYPE_FULL) {
        std::fprintf(stderr, "this model's memory cannot drop a partial sequence (recurrent or hybrid): not supported here\n");
        return 2;
    }
    common_params params_dft = common_base_params_to_speculative(e.params);
    e.init_dft = common_speculative_init_from_params(params_dft, e.model, e.ctx);
    e.params.speculative.draft.ctx_tgt = e.ctx;
    e.params.speculative.draft.ctx_dft = e.init_dft->context();
    e.ctx_dft = e.params.speculative.draft.ctx_dft;
    e.n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(e.model));
    const auto & types = e.params.speculative.types;
    if (std::any_of(types.begin(), types.end(), [](auto t) { return t != COMMON_SPECULATIVE_TYPE_NONE; })) {
        e.spec.reset(common_speculative_init(e.params.speculative, e.n_parallel));
        if (!e.spec) {
            std::fprintf(stderr, "common_speculative_init failed for --spec-type %s\n",
                         common_speculative_type_name_str(types).c_str());
            return 2;
        }
    }
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) {
            continue;
        }
        json reply;
        try {
            reply = handle(e, json::parse(line));
        } catch (const std::invalid_argument & exc) {  // a request it cannot take (the protocol's REFUSED)
            reply = {{"error", exc.what()}, {"refused", true}};
        } catch (const json::exception & exc) {  // malformed JSON or a missing field: rejected as well
            reply = {{"error", exc.what()}, {"refused", true}};
        } catch (const std::exception & exc) {  // llama.cpp failed while running it: the engine's error
            reply = {{"error", exc.what()}};
        }
        std::cout << reply.dump() << std::endl;
    }
    llama_backend_free();
    return 0;
}
