"""Training prompts for the SmolLM2 early-exit draft: edit requests and open questions, none from data/prompts.

The draft must agree with SmolLM2 on the answers ``specmath bench`` times: copy-heavy edits of a given
text and open-ended writing. The prompts are built from material every Python has (functions of the
standard library, paragraphs of the FSF licence texts in ``data/fsf-licenses/``, word lists below),
mixed with task templates, so that training never sees a benchmark prompt (``data/prompts/*.jsonl``
are excluded explicitly). Deterministic for a given seed and Python version.
"""

from __future__ import annotations

import ast
import inspect
import random
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STDLIB_MODULES = ["bisect", "heapq", "textwrap", "statistics", "fractions", "colorsys", "calendar", "shlex", "glob",
                  "fnmatch", "string", "random", "json.encoder", "csv", "difflib", "functools", "operator", "copy",
                  "pprint", "base64", "html", "quopri", "uu", "reprlib", "keyword", "posixpath", "ntpath", "tokenize",
                  "gettext", "locale", "decimal", "datetime", "ipaddress", "zipfile", "tarfile", "argparse"]

TOPICS = ["a lighthouse", "a lost umbrella", "the moon landing", "a city garden", "a robot chef", "an old map",
          "a thunderstorm", "a school trip", "a bakery at dawn", "a mountain village", "a chess tournament",
          "a talking parrot", "the first day of spring", "a broken clock", "a night train", "a desert oasis",
          "a library cat", "a snowy forest", "a birthday surprise", "a time traveller", "a river journey",
          "a small bookshop", "a football match", "a music festival", "a friendly dragon", "an island market"]

CONCEPTS = ["photosynthesis", "gravity", "how vaccines work", "why the sky is blue", "compound interest",
            "how a compiler works", "the water cycle", "supply and demand", "how batteries store energy",
            "recursion in programming", "what a database index is", "how bees make honey", "plate tectonics",
            "why we sleep", "how the internet routes messages", "inflation", "the greenhouse effect",
            "how a bicycle stays upright", "binary numbers", "what an API is", "how memory caching works",
            "the difference between weather and climate", "how sound travels", "what a hash table is"]

OPEN_TEMPLATES = ["Write a short story about {t}.", "Write a poem about {t}.", "Describe {t} in a few sentences.",
                  "Explain {c} in simple words.", "Explain {c} to a ten-year-old.", "Give three facts about {c}.",
                  "What are the advantages and disadvantages of {c}?", "Write a short dialogue about {t}.",
                  "Give five tips for someone interested in {c}.", "Summarize what you know about {c}."]

ITEMS = ["apples", "bread", "coffee", "soap", "paper towels", "carrots", "rice", "olive oil", "tea", "eggs", "milk",
         "batteries", "light bulbs", "tomatoes", "cheese", "pasta", "onions", "garlic", "yogurt", "honey", "lemons"]

TYPOS = {"the": "teh", "and": "adn", "receive": "recieve", "which": "wich", "their": "thier", "software": "sofware",
         "program": "progam", "license": "licence", "because": "becuase", "distribute": "distribtue",
         "modify": "modfy", "copies": "copys", "public": "pubilc", "that": "taht", "with": "wiht", "free": "fre"}


def _functions() -> list[str]:
    """Sources of short standard-library functions (4 to 24 lines)."""
    import importlib

    out = []
    for name in STDLIB_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for _, fn in sorted(inspect.getmembers(module, inspect.isfunction)):
            if getattr(fn, "__module__", None) != module.__name__:
                continue
            try:
                src = textwrap.dedent(inspect.getsource(fn))
            except (OSError, TypeError):
                continue
            if 4 <= src.count("\n") <= 24 and len(src) < 900:
                out.append(src)
    return out


def _paragraphs() -> list[str]:
    out = []
    for path in sorted((ROOT / "data" / "fsf-licenses").glob("*.txt")):
        for block in path.read_text(encoding="utf-8").split("\n\n"):
            text = " ".join(block.split())
            if 200 <= len(text) <= 700:
                out.append(text)
    return out


def _misspell(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    for i, w in enumerate(words):
        if w.lower() in TYPOS and rng.random() < 0.7:
            words[i] = TYPOS[w.lower()]
        elif len(w) > 5 and w.isalpha() and rng.random() < 0.06:
            j = rng.randrange(1, len(w) - 2)
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    return " ".join(words)


def _edit_prompt(rng: random.Random, functions: list[str], paragraphs: list[str]) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        return ("Fix the spelling mistakes in this paragraph and return the whole corrected paragraph:\n\n"
                + _misspell(rng.choice(paragraphs), rng))
    if kind == 1:
        src = rng.choice(functions)
        names = sorted({n.id for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Name) and len(n.id) > 1} or {"x"})
        old = rng.choice(names)
        return f"Repeat this Python code exactly, but rename {old} to {old}_value everywhere. Return the full code:\n\n{src}"
    if kind == 2:
        return f"Repeat this Python function exactly, with a one-line docstring added. Return the complete function:\n\n{rng.choice(functions)}"
    if kind == 3:
        items = rng.sample(ITEMS, rng.randrange(5, 10))
        return ("Rewrite this list so that every item starts with a capital letter. Return the full list, one item per line:"
                "\n\n" + "\n".join(f"- {i}" for i in items))
    if kind == 4:
        return f"Rewrite this paragraph in plain English, keeping every point:\n\n{rng.choice(paragraphs)}"
    return f"Add type hints to this Python function and return only the code:\n\n{rng.choice(functions)}"


def training_prompts(n: int, seed: int = 0) -> list[str]:
    """n prompts, two edit requests for each open question, none equal to a shipped benchmark prompt."""
    import json

    rng = random.Random(seed)
    functions, paragraphs = _functions(), _paragraphs()
    held = set()
    for name in ("edit", "open"):
        for line in (ROOT / "data" / "prompts" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                held.add(json.loads(line))
    out: list[str] = []
    while len(out) < n:
        if len(out) % 3 == 2:
            p = rng.choice(OPEN_TEMPLATES).format(t=rng.choice(TOPICS), c=rng.choice(CONCEPTS))
        else:
            p = _edit_prompt(rng, functions, paragraphs)
        if p not in held:
            out.append(p)
    return out
