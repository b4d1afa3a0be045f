"""Internal: One module per ``specmath`` subcommand, each with ``configure(parser)`` and ``run(args)`` (``specmath.cli``).

Layer 6 (front ends) of the layers in docs/explanation/architecture.md: imports any layer and
``specmath.cli``; a command imports what it runs inside ``run``, so a mistake is found before torch.
"""
