"""The three phases, each a small class with one entry method ``run``, instantiated from config:
exploration (observations), selection (trajectories), synthesis (records)."""
