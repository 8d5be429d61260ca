"""burstbench: a polyglot test bench for message brokers (README.md, "Architecture")."""
