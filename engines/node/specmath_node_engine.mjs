// node-llama-cpp's speculative decoding as an engine under specmath's audit (`specmath audit-generate --engine-cmd`).
//
// Notation: p = target law, q = draft law, gamma = draft tokens per round.
//
//   node specmath_node_engine.mjs --model TARGET.gguf --predictor lookup|draft [--draft DRAFT.gguf]
//                                 [--gamma 4] [--threads 1] [--context 512] [--parallel 1]
//
// One JSON object per line on stdin, one reply per line on stdout (protocol: specmath/audit/engines/protocol.py):
// "info", "logits" (raw next-token logits of a plain sequence, float32 base64) and "generate".
//
// generate: call i runs `sequence.evaluate(prompt, options)` with seed S + i on a sequence that has node-llama-cpp's
// token predictor (InputLookupTokenPredictor: prompt lookup; DraftSequenceTokenPredictor: a draft model, made to draft
// every round), or, with
// "speculative": false, on a sequence without one; it keeps the first M yielded tokens (end-of-generation tokens
// included: the audit counts them as tokens). The sequence keeps the prompt from call to call (its state is cut back
// to the common prefix, as LlamaCompletion does). Penalties follow LlamaCompletion's definition: the last
// `penalty_window` (default 64) *generated* tokens, the newline token left out (penalizeNewLine off).
// With --parallel B the calls run B at a time, each on a sequence of its own (a context of B speculative and B
// plain sequences, each speculative one with its own predictor and, for a draft model, its own draft sequence):
// node-llama-cpp evaluates the sequences of one context together, in one batch, as it does for any parallel use.
// With the lookup predictor a call's tokens depend on its seed alone, not on the sequence or batch that ran it
// (tests/audit/engines/test_gguf_engines.py). The draft predictor drafts in the background: how many drafted tokens
// are ready when a round is verified depends on timing, so its tokens for a seed may differ between runs and
// between batch sizes (node-llama-cpp promises no more; the law is what the audit tests).
import { getLlama, InputLookupTokenPredictor, DraftSequenceTokenPredictor, TokenBias } from "node-llama-cpp";
import { parseArgs } from "node:util";
import readline from "node:readline";

const { values: args } = parseArgs({
    options: {
        model: { type: "string" },
        draft: { type: "string" },
        predictor: { type: "string", default: "lookup" },
        gamma: { type: "string", default: "4" },
        threads: { type: "string", default: "1" },
        context: { type: "string", default: "512" },
        parallel: { type: "string", default: "1" },
    },
});
if (!args.model || !["lookup", "draft"].includes(args.predictor)) {
    process.stderr.write("usage: specmath_node_engine.mjs --model FILE.gguf --predictor lookup|draft [--draft FILE]\n");
    process.exit(2);
}
const gamma = Number(args.gamma);
const threads = Number(args.threads);
const contextSize = Number(args.context);
const parallel = Number(args.parallel);
if (!Number.isInteger(parallel) || parallel < 1) {
    process.stderr.write(`--parallel must be an integer >= 1, not ${args.parallel}\n`);
    process.exit(2);
}

// prebuilt CPU binaries only: never compile llama.cpp at run time, never reach for a GPU
const llama = await getLlama({ gpu: false, build: "never" });
const model = await llama.loadModel({ modelPath: args.model });
const context = await model.createContext({ contextSize, threads, sequences: 2 * parallel });

let newPredictor;
if (args.predictor === "lookup") {
    newPredictor = () => new InputLookupTokenPredictor({ predictionLength: { max: gamma } });
} else {
    const draftModel = args.draft && args.draft !== args.model ? await llama.loadModel({ modelPath: args.draft }) : model;
    const draftContext = await draftModel.createContext({ contextSize, threads, sequences: parallel });
    // minTokens 1: wait for a draft each round; minConfidence 0: draft whatever the draft model's confidence.
    // With the defaults (0 and 0.6) the predictor drafts in the background, when ready and confident, which within
    // the first two tokens of a call is almost never: the audit would see plain decoding.
    newPredictor = () => new DraftSequenceTokenPredictor(draftContext.getSequence(),
        { minTokens: 1, maxTokens: gamma, minConfidence: 0 });
}
const speculativeSequences = Array.from({ length: parallel }, () => context.getSequence({ tokenPredictor: newPredictor() }));
const plainSequences = Array.from({ length: parallel }, () => context.getSequence());
const plainSequence = plainSequences[0];
const newline = model.tokens.nl;

// the sequence's state cut back to the prompt but its last token, which evaluate() then feeds (LlamaCompletion's way)
async function loadPrompt(sequence, prompt) {
    const head = prompt.slice(0, -1);
    await sequence.adaptStateToTokens(head, false);
    const kept = sequence.nextTokenIndex;
    return prompt.slice(kept);
}

function evaluateOptions(options, seed, generated) {
    const window = options.penalty_window ?? 64;
    const out = {
        temperature: options.temperature ?? 1,
        topK: options.top_k ?? 0,
        topP: options.top_p ?? 1,
        minP: options.min_p ?? 0,
        seed,
        yieldEogToken: true,
    };
    if (options.repetition_penalty != null || options.presence_penalty != null || options.frequency_penalty != null) {
        out.repeatPenalty = {
            punishTokens: () => generated.slice(-window).filter((t) => t !== newline),
            maxPunishTokens: window,
            penalty: options.repetition_penalty ?? 1,
            presencePenalty: options.presence_penalty ?? 0,
            frequencyPenalty: options.frequency_penalty ?? 0,
        };
    }
    if (options.logit_bias?.length) {
        const bias = new TokenBias(model.tokenizer);
        for (const [token, logit] of options.logit_bias) bias.set(token, { logit });
        out.tokenBias = bias;
    }
    return out;
}

async function generateOne(prompt, seed, maxNew, options, speculative, slot) {
    const sequence = (speculative ? speculativeSequences : plainSequences)[slot];
    // what LlamaCompletion and LlamaChat tell the predictor before they generate (the lookup searches these tokens)
    sequence.tokenPredictor?.updateInputTokens?.(prompt.slice());
    const input = await loadPrompt(sequence, prompt);
    const generated = [];
    for await (const token of sequence.evaluate(input, evaluateOptions(options, seed, generated))) {
        generated.push(token);
        if (generated.length >= maxNew) break;
    }
    return generated;
}

// the raw logits after `tokens` (a Map over the whole vocabulary: no option truncates it, temperature 1); the
// plain sequence keeps the longest common prefix it holds (a first token's contexts share the prompt)
async function rawLogits(tokens) {
    await plainSequence.adaptStateToTokens(tokens.slice(0, -1), false);
    const input = tokens.slice(plainSequence.nextTokenIndex, -1);
    input.push([tokens.at(-1), { generateNext: { logits: true, options: { temperature: 1, topK: 0, topP: 1, minP: 0 } } }]);
    const result = await plainSequence.controlledEvaluate(input);
    return result.at(-1).next.logits;
}

// node-llama-cpp names no vocabulary size: the logits map of one evaluation covers every token
const vocabSize = (await rawLogits([model.tokens.bos ?? 0])).size;

async function logitsAfter(tokens) {
    const row = new Float32Array(vocabSize).fill(-Infinity);
    for (const [token, value] of await rawLogits(tokens)) row[token] = value;
    return Buffer.from(row.buffer).toString("base64");
}

// a request the engine cannot take: answered {"error", "refused": true} (the protocol's REFUSED); any other failure
// while running one is {"error"} (ENGINE ERROR)
class RefusedError extends Error {}

async function handle(request) {
    if (request.op === "info") {
        return {
            engine: `node-llama-cpp 3.22.1, ${args.predictor === "lookup" ? "InputLookupTokenPredictor" : "DraftSequenceTokenPredictor"}`,
            vocab_size: vocabSize,
            order: ["logit_bias", "penalties", "top_k", "top_p", "min_p", "temperature"],
            history: "generated",
            window: 64,
            ignored: newline == null ? [] : [newline],
            options: ["temperature", "top_k", "top_p", "min_p", "logit_bias", "repetition_penalty", "presence_penalty",
                "frequency_penalty", "penalty_window"],
            logits: true,
            plain: true,
            controls: false,
            same_tokens_as_plain: false,
            parallel,
        };
    }
    if (request.op === "logits") {
        const rows = [];
        for (const tokens of request.contexts) rows.push(await logitsAfter(tokens));
        return { logits_b64: rows };
    }
    if (request.op === "generate") {
        const start = process.hrtime.bigint();
        const predictions = () => speculativeSequences.reduce((sum, q) => ({
            validated: sum.validated + q.tokenPredictions.validated, refuted: sum.refuted + q.tokenPredictions.refuted,
        }), { validated: 0, refuted: 0 });
        const before = predictions();
        const tokens = [];
        for (let i = 0; i < request.n; i += parallel) {
            const group = [];
            for (let k = 0; k < parallel && i + k < request.n; k++) {
                group.push(generateOne(request.prompt, request.seed + i + k, request.max_new_tokens ?? 2,
                    request.options ?? {}, request.speculative !== false, k));
            }
            tokens.push(...await Promise.all(group));
        }
        const after = predictions();
        return {
            tokens,
            drafted: after.validated + after.refuted - before.validated - before.refuted,
            accepted: after.validated - before.validated,
            seconds: Number(process.hrtime.bigint() - start) / 1e9,
        };
    }
    throw new RefusedError(`unknown op '${request.op}': use info, logits or generate`);
}

const lines = readline.createInterface({ input: process.stdin, terminal: false });
for await (const line of lines) {
    if (!line.trim()) continue;
    let reply;
    try {
        reply = await handle(JSON.parse(line));
    } catch (error) {
        reply = { error: String(error?.message ?? error) };
        if (error instanceof RefusedError || error instanceof SyntaxError) reply.refused = true;
    }
    process.stdout.write(JSON.stringify(reply) + "\n");
}
await context.dispose();
await model.dispose();
