"""The audit of an engine's whole generate path: its first tokens against the exact law of the target.

Notation: p = target law, w = the engine's sampling chain, N = generate calls.

Modules, one idea each:

* ``protocol``        one protocol for any engine (``EngineClient``): a Python function, ``jsonl`` (a
                      subprocess: llama.cpp's loop and node-llama-cpp from ``make engines``, or the user's),
                      ``endpoint`` (an OpenAI-compatible server), ``torch_engines`` (specmath and HF on a pair's
                      models); ``registry`` names every engine, torch-free, and how each is opened
* ``semantics``       how each engine applies ``SamplingOptions`` (its order, its penalty history); ``penalties``
                      and ``law`` the exact law under them, position by position
* ``checks``          the G-tests of N samples and the result record; ``runner`` the audit of any engine
* ``rows``            the options table's rows (options, control, prompt choice); ``pathwise`` speculative
                      against plain output, seed by seed
* ``pairs``, ``target`` the models an audit is held to
* ``table_runs``, ``table`` the runs (an engine on a pair, an option row, the two tables), then rendered
"""
