// A repeat penalty at a validated prediction does not count the token sampled just before it (node-llama-cpp).
//
//   node engines/node/repeat_penalty_with_predictor.mjs --model SmolLM2-135M-Instruct.Q4_1.gguf [--calls 100]
//
// node-llama-cpp only (`make engines` installs 3.22.1 in engines/node/node_modules). The prompt "ha ha ... ha"
// (tokens [3250] + [421] x 10 in SmolLM2's vocabulary) is evaluated with temperature 1, tokenBias +10 on " ha" (421)
// and repeatPenalty {punishTokens: the generated tokens, presencePenalty: 100}, the history LlamaCompletion passes.
// The first token is " ha" (nothing generated yet: no penalty); the second must not be " ha" again, since a presence
// penalty of 100 takes 100 from its logit. Each call keeps the first two tokens, seeds 0 .. calls - 1, once on a
// sequence without a token predictor and once with InputLookupTokenPredictor, which predicts " ha" from the prompt.
//
// Expected: " ha ha" in no call either way. Observed with 3.22.1 (linux-x64 CPU): no call without the predictor,
// every call with it. Why: _speculativeEvaluate samples every row of [last, prediction, ...] in one _decodeTokens,
// resolving punishTokens() per row before any token is yielded, so at the row after the first token the history
// lacks it. Exits 0 when that is what it observes, 1 otherwise; prints the counts.
import { getLlama, InputLookupTokenPredictor, TokenBias } from "node-llama-cpp";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({ options: { model: { type: "string" }, calls: { type: "string", default: "100" } } });
if (!args.model) {
    process.stderr.write("usage: repeat_penalty_with_predictor.mjs --model SmolLM2-135M-Instruct.Q4_1.gguf [--calls 100]\n");
    process.exit(2);
}
const HA = 421;
const prompt = [3250, ...Array(10).fill(HA)];
const calls = Number(args.calls);

const llama = await getLlama({ gpu: false, build: "never" });
const model = await llama.loadModel({ modelPath: args.model });
const context = await model.createContext({ contextSize: 512, threads: 1, sequences: 2 });

async function repeatedHa(sequence, seed) {
    sequence.tokenPredictor?.updateInputTokens?.(prompt.slice());
    await sequence.clearHistory();
    const generated = [];
    const tokenBias = new TokenBias(model.tokenizer);
    tokenBias.set(HA, { logit: 10 });
    const options = {
        temperature: 1, topK: 0, topP: 1, seed, tokenBias,
        repeatPenalty: { punishTokens: () => generated, presencePenalty: 100, penalty: 1 },
    };
    for await (const token of sequence.evaluate(prompt, options)) {
        generated.push(token);
        if (generated.length === 2) break;
    }
    return generated[0] === HA && generated[1] === HA;
}

const counts = {};
for (const [name, sequence] of [
    ["no predictor", context.getSequence()],
    ["InputLookupTokenPredictor", context.getSequence({ tokenPredictor: new InputLookupTokenPredictor({ predictionLength: { max: 4 } }) })],
]) {
    let n = 0;
    for (let seed = 0; seed < calls; seed++) if (await repeatedHa(sequence, seed)) n++;
    counts[name] = n;
    console.log(`${name}: " ha ha" in ${n} of ${calls} calls`);
}
// the installed package's own version (its package.json sits one folder above its entry point, dist/index.js)
const entry = createRequire(import.meta.url).resolve("node-llama-cpp");
const version = JSON.parse(readFileSync(new URL("../package.json", `file://${entry}`))).version;
console.log(`node-llama-cpp ${version}, node ${process.version}, ${process.platform}-${process.arch}`);
process.exit(counts["no predictor"] === 0 && counts["InputLookupTokenPredictor"] === calls ? 0 : 1);
