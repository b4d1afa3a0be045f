"""Beyond the article: samplers that come close to the entropy limit (Knuth-Yao, recycling, extractors).

Layer 2 (samplers) of the layers in docs/explanation/architecture.md: imports the core and
``specmath.classic`` (the samplers it improves on).
"""
