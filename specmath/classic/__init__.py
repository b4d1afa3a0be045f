"""The article's classic samplers: rand_a -> rand_b, von Neumann's coin, reservoir and rejection sampling.

Layer 2 (samplers) of the layers in docs/explanation/architecture.md: imports only the core.
"""
